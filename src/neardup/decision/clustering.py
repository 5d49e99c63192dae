"""Clusters of near-duplicates from a list of pairs (:func:`neardup.clusters`): the items ranked
by the representative asked for, then the components rule of ``index/components.py``, the one
:meth:`neardup.HammingIndex.clusters` and dedup's ``--cluster components`` use."""

from __future__ import annotations

import numpy as np

from .._errors import ConfigError
from ..index.components import linked_roots


def _int64(x: object, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.size == 0 and arr.dtype.kind == "f":
        arr = arr.astype(np.int64)  # an empty list
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise TypeError(f"{name} must be a 1-d integer array, got dtype {arr.dtype}, shape {arr.shape}")
    if arr.dtype == np.uint64 and arr.size and arr.max() >= 2**63:
        raise ValueError(f"{name} holds values above int64")
    return np.ascontiguousarray(arr, dtype=np.int64)


REPRESENTATIVES = ("lowest-id", "first", "longest")


def clusters(
    i: object, j: object, ids: object, *, representative: str = "lowest-id", lengths: object = None
) -> np.ndarray:
    """The cluster of every item: the representative of its connected component in the graph
    whose edges are the pairs ``(i[e], j[e])``.

    Args:
        i, j: int64, shape (m,): the two ends of each pair, e.g. from ``index.pairs()``.
        ids: int64, shape (n,), every item's id, distinct (e.g. ``index.ids``); or an int n,
            meaning ids ``0 .. n - 1``. Items in no pair are clusters of their own.
        representative: which member labels a cluster: ``"lowest-id"``; ``"first"``, the
            earliest in ``ids``; or ``"longest"``, the one with the largest ``lengths`` (ties:
            lowest id).
        lengths: int, shape (n,), aligned with ``ids``; needed for ``"longest"``.

    Returns int64, shape (n,): the label of ``ids[k]``, the id of its cluster's representative.
    The labels depend only on the components, never on the order of the pairs.
    """
    if representative not in REPRESENTATIVES:
        raise ConfigError(
            f"representative={representative!r} is not allowed; choose one of "
            + ", ".join(repr(r) for r in REPRESENTATIVES)
        )
    if isinstance(ids, (int, np.integer)) and not isinstance(ids, bool):
        if ids < 0:
            raise ValueError(f"ids={ids} must be a non-negative count or an array of ids")
        ids = np.arange(int(ids), dtype=np.int64)
    all_ids = _int64(ids, "ids")
    a, b = _int64(i, "i"), _int64(j, "j")
    if a.shape != b.shape:
        raise ValueError(f"i and j must have the same shape, got {a.shape} and {b.shape}")
    by_id = np.argsort(all_ids, kind="stable")
    sorted_ids = all_ids[by_id]
    if sorted_ids.size > 1 and (sorted_ids[1:] == sorted_ids[:-1]).any():
        raise ConfigError("ids repeat; every item needs a distinct id")
    ends = []
    for name, end in (("i", a), ("j", b)):
        at = np.searchsorted(sorted_ids, end)
        found = at < sorted_ids.size
        found[found] = sorted_ids[at[found]] == end[found]
        if not found.all():
            raise ValueError(f"{name} holds ids not in ids, e.g. {int(end[~found][0])}")
        ends.append(by_id[at])  # positions in ids
    priority = _priority(all_ids, by_id, representative, lengths)
    rank = np.empty(all_ids.size, dtype=np.int64)
    rank[priority] = np.arange(all_ids.size, dtype=np.int64)
    # Each component's root is its smallest rank: its representative.
    root = linked_roots(all_ids.size, [(rank[ends[0]], rank[ends[1]])]).roots
    return all_ids[priority[root[rank]]]


def _priority(all_ids: np.ndarray, by_id: np.ndarray, representative: str, lengths: object) -> np.ndarray:
    """Positions in ``ids``, best representative first."""
    if representative == "lowest-id":
        return by_id
    if representative == "first":
        return np.arange(all_ids.size, dtype=np.int64)
    if lengths is None:
        raise ValueError('representative="longest" needs lengths=, one per id')
    sizes = _int64(lengths, "lengths")
    if sizes.shape != all_ids.shape:
        raise ValueError(f"lengths has shape {sizes.shape}; expected {all_ids.shape}, one per id")
    return np.lexsort((all_ids, -sizes))
