"""Searching a :class:`HammingIndex`: the main rows through their tables (probes on the calling
thread for a few queries, in parallel for more), the tombstoned ones filtered out, and the
delta by a scan (XOR + popcount), merged into one CSR result per batch of queries."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._kernels import index as kernels
from .tables import csr_offsets, member

if TYPE_CHECKING:
    from .hamming_index import HammingIndex


def _merge_csr(
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]], q: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One CSR result (offsets, ids, distances) from several over the same q queries, each
    query's run sorted by (distance, id)."""
    qidx = np.concatenate([np.repeat(np.arange(q, dtype=np.int64), np.diff(o)) for o, _, _ in parts])
    ids = np.concatenate([f for _, f, _ in parts])
    dist = np.concatenate([d for _, _, d in parts])
    order = np.lexsort((ids, dist, qidx))
    return csr_offsets(np.bincount(qidx, minlength=q)), ids[order], dist[order]


# Up to this many queries run on the calling thread: starting the parallel kernels costs
# more than a few probes (a single query went from milliseconds to microseconds).
_SERIAL_QUERIES = 16


def search(index: HammingIndex, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR matches (offsets, ids, distances) of ``queries`` within ``k`` among the live items:
    the main rows through the tables, tombstones filtered out, and the delta by a scan, each
    query's run sorted by (distance, id)."""
    q = queries.shape[0]
    if len(index) == 0 or q == 0:
        empty = np.empty(0, dtype=np.int64)
        return np.zeros(q + 1, dtype=np.int64), empty, empty.copy()
    queries = np.ascontiguousarray(queries, dtype=np.uint64)
    parts = []
    if index._ids.shape[0] > index._dead.shape[0]:
        offsets, found, dist = search_main(index, queries, k)
        if not len(index._dead) and not len(index._delta_ids):
            return offsets, found, dist
        if len(index._dead):
            qidx = np.repeat(np.arange(q, dtype=np.int64), np.diff(offsets))
            keep = ~member(index._dead, found)
            offsets = csr_offsets(np.bincount(qidx[keep], minlength=q))
            found, dist = found[keep], dist[keep]
        parts.append((offsets, found, dist))
    if len(index._delta_ids):
        if q <= _SERIAL_QUERIES:
            offsets, rows, dist = kernels.scan_serial(queries, index._delta_fps, k, -1)
        else:
            offsets = csr_offsets(kernels.scan_count(queries, index._delta_fps, k, -1))
            rows, dist = kernels.scan_fill(queries, index._delta_fps, k, -1, offsets)
        parts.append((offsets, index._delta_ids[rows], dist))
    return parts[0] if len(parts) == 1 and not len(index._delta_ids) else _merge_csr(parts, q)


def search_main(
    index: HammingIndex, queries: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR matches among the main rows (tombstones included)."""
    table = index._table_args()
    if queries.shape[0] <= _SERIAL_QUERIES:
        return kernels.query_serial(queries, index._fps, index._ids, *table, k)
    offsets = csr_offsets(kernels.query_count(queries, index._fps, *table, k, -1))
    found, dist = kernels.query_fill(queries, index._fps, index._ids, *table, k, -1, offsets)
    return offsets, found, dist
