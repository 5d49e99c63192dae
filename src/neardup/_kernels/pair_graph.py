"""Connected components of a pair graph by union-find (Tarjan 1975), with path halving.

Roots are always the smallest vertex of their component: a union links the larger root under
the smaller one, so the representative does not depend on the order of the edges.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit, jit_inline


@jit_inline
def _find(parent, v):
    while parent[v] != v:
        parent[v] = parent[parent[v]]
        v = parent[v]
    return v


@jit
def union_pairs(parent, a, b):
    """Links the components of each edge ``(a[e], b[e])`` in the union-find ``parent`` (int64,
    shape (n,), every vertex its own parent at first): edges can arrive in chunks."""
    for e in range(a.shape[0]):
        x = _find(parent, a[e])
        y = _find(parent, b[e])
        if x < y:
            parent[y] = x
        elif y < x:
            parent[x] = y


@jit
def flatten(parent):
    """The root (smallest vertex) of each vertex's component, from ``union_pairs``'s forest."""
    roots = parent.copy()
    for v in range(roots.shape[0]):
        roots[v] = _find(roots, v)
    return roots


@jit
def same_root(parent, a, b):
    """bool per edge: are ``a[e]`` and ``b[e]`` in one component of ``parent`` already?"""
    out = np.empty(a.shape[0], dtype=np.bool_)
    for e in range(a.shape[0]):
        out[e] = _find(parent, a[e]) == _find(parent, b[e])
    return out


def components(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    """Smallest vertex of each vertex's component: int64, shape (n,). ``a`` and ``b`` are int64
    edge ends in ``[0, n)``."""
    parent = np.arange(n, dtype=np.int64)
    union_pairs(parent, a, b)
    return flatten(parent)


UNDECIDED, KEPT, REMOVED = 0, 1, 2


@jit
def keep_in_order(candidates, offsets, found, distance, state, representative, rep_distance):
    """Manku's online rule over ``candidates`` (int64 ranks, best first): a candidate still
    UNDECIDED is KEPT, and every UNDECIDED item within the radius of it (``found[offsets[i]:
    offsets[i + 1]]``, with ``distance``) is REMOVED, its ``representative`` that candidate.

    Kept in rank order, an item is removed exactly when a kept item ranked before it lies
    within the radius: every item ranked before a candidate is decided before it. ``state``,
    ``representative`` and ``rep_distance`` (int8, int64, int64; shape (m,)) are updated."""
    for i in range(candidates.shape[0]):
        c = candidates[i]
        if state[c] != UNDECIDED:
            continue
        state[c] = KEPT
        representative[c] = c
        rep_distance[c] = 0
        for e in range(offsets[i], offsets[i + 1]):
            f = found[e]
            if state[f] == UNDECIDED:
                state[f] = REMOVED
                representative[f] = c
                rep_distance[f] = distance[e]
