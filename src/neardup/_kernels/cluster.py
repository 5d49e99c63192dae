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
def components(a, b, n):
    """Smallest vertex of each vertex's component: int64, shape (n,). ``a`` and ``b`` are int64
    edge ends in ``[0, n)``."""
    parent = np.arange(n, dtype=np.int64)
    for e in range(a.shape[0]):
        x = _find(parent, a[e])
        y = _find(parent, b[e])
        if x < y:
            parent[y] = x
        elif y < x:
            parent[x] = y
    for v in range(n):
        parent[v] = _find(parent, v)
    return parent
