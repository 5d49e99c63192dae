"""``skip_if_duplicate`` within one batch: a batch is decided as if its documents came one at a
time, in order, so the first of two near-identical documents is stored and the second is not."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..index.hamming_index import HammingIndex

SCAN_MAX = 1024
"""Up to this many documents, every pair is compared with numpy (a 1024 x 1024 table of
distances, about a millisecond); above it, the batch goes into a HammingIndex of its own (its
parallel kernels cost tens of milliseconds to start on a busy machine, even for two
documents)."""


def keep_first_of_near_copies(
    found: list[list[dict[str, Any]]],
    ids: list[str | None],
    fps: np.ndarray,
    k: int,
    bits: int,
    max_distance: int,
) -> list[bool]:
    """Which documents of a ``skip_if_duplicate`` batch to store: those with no near-duplicate
    stored before the batch (``found``, each document's, nearest first) nor stored earlier in
    it. Each document's ``found`` gains the earlier documents of the batch stored within ``k``
    of it, merged in by distance. ``fps``: uint64, shape (n, bits // 64); ``max_distance``: the
    service's radius (a large batch's index takes the plan the service warmed up)."""
    keep = [not dups for dups in found]
    earlier, later, distance = _pairs(fps, k, bits, max_distance)
    order = np.lexsort((earlier, distance, later))  # by document, then nearest first
    start = np.searchsorted(later[order], np.arange(len(found) + 1))
    pairs_q, pairs_d = earlier[order].tolist(), distance[order].tolist()
    for p in range(len(found)):
        a, b = int(start[p]), int(start[p + 1])
        stored = [{"id": ids[q], "distance": d} for q, d in zip(pairs_q[a:b], pairs_d[a:b]) if keep[q]]
        if stored:
            keep[p] = False
            # Sorted by distance, the ones stored before the batch first at a tie (a stable sort).
            found[p] = sorted([*found[p], *stored], key=lambda dup: dup["distance"])
    return keep


def _pairs(fps: np.ndarray, k: int, bits: int, max_distance: int) -> tuple[np.ndarray, ...]:
    """Every pair of the batch within ``k``: int64 (earlier, later, distance), earlier < later."""
    n = fps.shape[0]
    if n <= SCAN_MAX:
        distance = np.zeros((n, n), dtype=np.uint8)  # at most 128: 1 MiB at 1024
        for word in fps.T:
            distance += np.bitwise_count(word[:, None] ^ word[None, :])
        earlier, later = np.nonzero(np.triu(distance <= k, 1))
        return earlier, later, distance[earlier, later].astype(np.int64)
    index = HammingIndex(bits=bits, max_distance=max_distance)
    rows = np.ascontiguousarray(fps if bits > 64 else fps[:, 0])
    index.add(rows, ids=np.arange(n, dtype=np.int64))
    offsets, near, distance = index.query_batch(rows, max_distance=k)
    later = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
    before = near < later
    return near[before].astype(np.int64), later[before], distance[before].astype(np.int64)
