"""Brute-force references for the Hamming index and clustering: XOR + popcount over every pair,
union-find, all in plain Python ints. Speed is no concern."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def as_ints(fps: np.ndarray) -> list[int]:
    """uint64 rows (n,) or (n, 2) as Python ints (column 0 holds bits 0-63)."""
    arr = np.asarray(fps, dtype=np.uint64)
    if arr.ndim == 1:
        return [int(v) for v in arr]
    return [sum(int(w) << (64 * c) for c, w in enumerate(row)) for row in arr]


def distance(a: int, b: int) -> int:
    return bin(a ^ b).count("1")


def query(values: list[int], ids: list[int], q: int, k: int) -> list[tuple[int, int]]:
    """(id, distance) of every stored item within k of q, sorted by distance then id."""
    found = [(ids[r], distance(v, q)) for r, v in enumerate(values) if distance(v, q) <= k]
    return sorted(found, key=lambda x: (x[1], x[0]))


def pairs(values: list[int], ids: list[int], k: int) -> list[tuple[int, int, int]]:
    """(smaller id, larger id, distance) of every pair within k, sorted."""
    out = []
    for a in range(len(values)):
        for b in range(a + 1, len(values)):
            d = distance(values[a], values[b])
            if d <= k:
                out.append((min(ids[a], ids[b]), max(ids[a], ids[b]), d))
    return sorted(out)


def clusters(i: list[int], j: list[int], ids: list[int]) -> list[int]:
    """Lowest id of each item's connected component."""
    parent = {v: v for v in ids}

    def find(v: int) -> int:
        while parent[v] != v:
            v = parent[v]
        return v

    for a, b in zip(i, j):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return [find(v) for v in ids]


def representatives(
    i: list[int], j: list[int], ids: list[int], rule: str, lengths: list[int] | None = None
) -> list[int]:
    """Each item's cluster representative under ``rule``: components from :func:`clusters`,
    then the lowest id, the earliest in ``ids``, or the longest (ties: lowest id)."""
    component = clusters(i, j, ids)
    members: dict[int, list[int]] = {}
    for position, c in enumerate(component):
        members.setdefault(c, []).append(position)
    best = {}
    for c, positions in members.items():
        if rule == "lowest-id":
            best[c] = min(ids[p] for p in positions)
        elif rule == "first":
            best[c] = ids[min(positions)]
        else:
            best[c] = ids[min(positions, key=lambda p: (-lengths[p], ids[p]))]
    return [best[c] for c in component]


def greedy(
    values: list[int], order: list[int], k: int, similar: Callable[[int, int], bool] | None = None
) -> tuple[list[bool], list[int]]:
    """Manku's online rule, one document at a time in ``order`` (positions, best first): a
    document is kept unless a kept one within k (and ``similar`` to it, when given: a kept
    position, then this one) came before it. Returns (kept, representative): each position's
    representative is itself when kept, else the first such kept one."""
    kept = [False] * len(values)
    representative = list(range(len(values)))
    chosen: list[int] = []
    for p in order:
        near = [
            c for c in chosen if distance(values[c], values[p]) <= k and (similar is None or similar(c, p))
        ]
        if near:
            representative[p] = near[0]
        else:
            kept[p] = True
            chosen.append(p)
    return kept, representative


def assert_streams(index: Any, expected: list[tuple[int, int, int]]) -> None:
    """iter_pairs gives the pairs of pairs() in chunks of at most chunk_size, and clusters()
    the connected components of those pairs."""
    for chunk_size in (1, 5, 1 << 20):
        chunks = list(index.iter_pairs(chunk_size=chunk_size))
        assert all(0 < len(c[0]) <= chunk_size and len(c[0]) == len(c[1]) == len(c[2]) for c in chunks)
        streamed = [p for c in chunks for p in zip(*(a.tolist() for a in c))]
        assert sorted(streamed) == expected  # each pair once
    ids, labels = index.clusters()
    assert ids.tolist() == sorted(index.ids.tolist())
    first, second = [p[0] for p in expected], [p[1] for p in expected]
    assert labels.tolist() == clusters(first, second, ids.tolist())
