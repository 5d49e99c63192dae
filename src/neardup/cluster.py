"""Clusters of near-duplicates: connected components of the pairs from
:meth:`neardup.HammingIndex.pairs`, by union-find (kernel in ``_kernels/cluster.py``)."""

from __future__ import annotations

import numpy as np

from ._errors import ConfigError
from ._kernels.cluster import components


def _int64(x: object, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.size == 0 and arr.dtype.kind == "f":
        arr = arr.astype(np.int64)  # an empty list
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise TypeError(f"{name} must be a 1-d integer array, got dtype {arr.dtype}, shape {arr.shape}")
    if arr.dtype == np.uint64 and arr.size and arr.max() >= 2**63:
        raise ValueError(f"{name} holds values above int64")
    return np.ascontiguousarray(arr, dtype=np.int64)


def clusters(i: object, j: object, ids: object) -> np.ndarray:
    """The cluster of every item: the lowest id of its connected component in the graph whose
    edges are the pairs ``(i[e], j[e])``.

    Args:
        i, j: int64, shape (m,): the two ends of each pair, e.g. from ``index.pairs()``.
        ids: int64, shape (n,), every item's id, distinct (e.g. ``index.ids``); or an int n,
            meaning ids ``0 .. n - 1``. Items in no pair are clusters of their own.

    Returns int64, shape (n,): the label of ``ids[k]`` is the lowest id in its cluster.
    """
    if isinstance(ids, (int, np.integer)) and not isinstance(ids, bool):
        if ids < 0:
            raise ValueError(f"ids={ids} must be a non-negative count or an array of ids")
        ids = np.arange(int(ids), dtype=np.int64)
    all_ids = _int64(ids, "ids")
    a, b = _int64(i, "i"), _int64(j, "j")
    if a.shape != b.shape:
        raise ValueError(f"i and j must have the same shape, got {a.shape} and {b.shape}")
    order = np.argsort(all_ids, kind="stable")
    ranked = all_ids[order]
    if ranked.size > 1 and (ranked[1:] == ranked[:-1]).any():
        raise ConfigError("ids repeat; every item needs a distinct id")
    ra = np.searchsorted(ranked, a)
    rb = np.searchsorted(ranked, b)
    for name, ends, at in (("i", a, ra), ("j", b, rb)):
        found = at < ranked.size
        found[found] = ranked[at[found]] == ends[found]
        if not found.all():
            raise ValueError(f"{name} holds ids not in ids, e.g. {int(ends[~found][0])}")
    # Rank order is id order, so the smallest rank of a component is its lowest id.
    root = components(ra.astype(np.int64), rb.astype(np.int64), ranked.size)
    labels = np.empty(all_ids.size, dtype=np.int64)
    labels[order] = ranked[root]
    return labels
