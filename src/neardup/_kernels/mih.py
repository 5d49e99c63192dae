"""Multi-index hashing: batch query and self-join (Norouzi, Punjani & Fleet, "Fast Search in
Hamming Space with Multi-Index Hashing", CVPR 2012, sec. 3).

The b bits are cut into m contiguous blocks (``starts``, ``sizes`` as in ``index.py``); table
``t`` is one sorted uint64 array of entries ``(key << rowbits) | row`` keyed on block ``t``
alone, its first ``widths[t]`` bits (``index._key``). Two fingerprints within distance k differ
in at most ``r = k // m`` bits of some block (pigeonhole, the paper's Proposition 1), so a query
probes, in each table, every key within r bits of its own key: all combinations of up to r of
the key's bits flipped (``_next_combination``), each a binary search.

Exactly once. A stored row sits under one key per table, and distinct flip sets give distinct
keys, so a table meets a row at most once per query. The row is reported only from the *first*
block whose full-block distance to the query is at most r (``_first_block``): that block's key
(the block cut to ``widths[t]`` bits) is then within r bits of the query's, so its probe is
made; every other meeting is skipped. A key cut short thus only admits more candidates, never
loses one. Every reported row is verified with XOR + popcount.

The self-join queries every stored row against the tables and keeps the rows after it, so each
pair comes out once, from its smaller row.
"""

from __future__ import annotations

import numba
import numpy as np

from ._jit import jit, jit_inline, jit_parallel
from .index import _field, _key, _lower_bound, _sort_by_distance_then_id, _word, popcount


@jit_inline
def _next_combination(mask):
    """The next larger uint64 with as many set bits (Gosper's hack, HAKMEM item 175); ``mask``
    is non-zero and below 2**63, so nothing overflows."""
    low = mask & (~mask + np.uint64(1))
    ripple = mask + low
    return (((ripple ^ mask) >> np.uint64(2)) // low) | ripple


@jit_inline
def _first_block(xlo, xhi, starts, sizes, radius):
    """The first block with at most ``radius`` bits set in the XOR ``xhi:xlo``; -1 when none."""
    for b in range(starts.shape[0]):
        if np.int64(popcount(_field(xlo, xhi, starts[b], sizes[b]))) <= radius:
            return b
    return -1


@jit_inline
def _probe(
    queries,
    i,
    fps,
    entries,
    directory,
    starts,
    sizes,
    kept,
    widths,
    rowbits,
    dbits,
    max_distance,
    after,
    rows_out,
    dist_out,
    at,
    write,
):
    """Rows within ``max_distance`` of query ``i``, each once, only rows above ``after``
    (-1: all). Writes them from ``at`` when ``write``. Returns the count."""
    qlo = queries[i, 0]
    qhi = _word(queries, i, 1)
    shift = np.uint64(rowbits)
    rowmask = (np.uint64(1) << shift) - np.uint64(1)
    n = entries.shape[1]
    radius = max_distance // starts.shape[0]
    count = 0
    for t in range(kept.shape[0]):
        width = widths[t]
        own = _key(qlo, qhi, starts, sizes, kept[t], width)
        end = np.uint64(1) << np.uint64(width)  # width <= 63
        for flips in range(min(radius, width) + 1):
            mask = (np.uint64(1) << np.uint64(flips)) - np.uint64(1)
            while mask < end:
                key = own ^ mask
                p = _lower_bound(entries, directory, t, shift, key, width, dbits)
                while p < n:
                    e = entries[t, p]
                    if (e >> shift) != key:
                        break
                    p += 1
                    r = np.int64(e & rowmask)
                    if r <= after:
                        continue
                    xlo = qlo ^ fps[r, 0]
                    xhi = qhi ^ _word(fps, r, 1)
                    d = np.int64(popcount(xlo) + popcount(xhi))
                    if d > max_distance or _first_block(xlo, xhi, starts, sizes, radius) != t:
                        continue
                    if write:
                        rows_out[at + count] = r
                        dist_out[at + count] = d
                    count += 1
                if flips == 0:
                    break
                mask = _next_combination(mask)
    return count


@jit_parallel
def query_count(queries, fps, entries, directory, starts, sizes, kept, widths, rowbits, dbits, max_distance):
    """Matches per query: int64, shape (q,)."""
    q = queries.shape[0]
    counts = np.zeros(q, dtype=np.int64)
    none = np.empty(0, dtype=np.int64)
    for i in numba.prange(q):
        counts[i] = _probe(
            queries,
            i,
            fps,
            entries,
            directory,
            starts,
            sizes,
            kept,
            widths,
            rowbits,
            dbits,
            max_distance,
            -1,
            none,
            none,
            0,
            False,
        )
    return counts


@jit_parallel
def query_fill(
    queries, fps, ids, entries, directory, starts, sizes, kept, widths, rowbits, dbits, max_distance, offsets
):
    """Matched ids and distances in CSR form by ``offsets`` (from ``query_count``), each query's
    run sorted by (distance, id): two int64 arrays of length ``offsets[-1]``."""
    q = queries.shape[0]
    ids_out = np.empty(offsets[q], dtype=np.int64)
    dist_out = np.empty(offsets[q], dtype=np.int64)
    for i in numba.prange(q):
        s = offsets[i]
        e = offsets[i + 1]
        _probe(
            queries,
            i,
            fps,
            entries,
            directory,
            starts,
            sizes,
            kept,
            widths,
            rowbits,
            dbits,
            max_distance,
            -1,
            ids_out,
            dist_out,
            s,
            True,
        )
        for m in range(s, e):
            ids_out[m] = ids[ids_out[m]]  # rows to ids
        _sort_by_distance_then_id(ids_out, dist_out, s, e)
    return ids_out, dist_out


@jit
def query_serial(
    queries, fps, ids, entries, directory, starts, sizes, kept, widths, rowbits, dbits, max_distance
):
    """``query_count`` then ``query_fill`` on the calling thread, for a few queries. Returns
    (offsets, ids, distances)."""
    q = queries.shape[0]
    none = np.empty(0, dtype=np.int64)
    offsets = np.zeros(q + 1, dtype=np.int64)
    for i in range(q):
        offsets[i + 1] = offsets[i] + _probe(
            queries,
            i,
            fps,
            entries,
            directory,
            starts,
            sizes,
            kept,
            widths,
            rowbits,
            dbits,
            max_distance,
            -1,
            none,
            none,
            0,
            False,
        )
    ids_out = np.empty(offsets[q], dtype=np.int64)
    dist_out = np.empty(offsets[q], dtype=np.int64)
    for i in range(q):
        s = offsets[i]
        e = offsets[i + 1]
        _probe(
            queries,
            i,
            fps,
            entries,
            directory,
            starts,
            sizes,
            kept,
            widths,
            rowbits,
            dbits,
            max_distance,
            -1,
            ids_out,
            dist_out,
            s,
            True,
        )
        for m in range(s, e):
            ids_out[m] = ids[ids_out[m]]
        _sort_by_distance_then_id(ids_out, dist_out, s, e)
    return offsets, ids_out, dist_out


@jit_parallel
def join_count(fps, entries, directory, starts, sizes, kept, widths, rowbits, dbits, max_distance):
    """Pairs per row, counted from the pair's smaller row: int64, shape (n,)."""
    n = fps.shape[0]
    counts = np.zeros(n, dtype=np.int64)
    none = np.empty(0, dtype=np.int64)
    for i in numba.prange(n):
        counts[i] = _probe(
            fps,
            i,
            fps,
            entries,
            directory,
            starts,
            sizes,
            kept,
            widths,
            rowbits,
            dbits,
            max_distance,
            i,
            none,
            none,
            0,
            False,
        )
    return counts


@jit_parallel
def join_fill(
    fps, ids, entries, directory, starts, sizes, kept, widths, rowbits, dbits, max_distance, offsets
):
    """Every pair within ``max_distance`` once, as (smaller id, larger id, distance), int64
    arrays in row order (``offsets`` from ``join_count``)."""
    n = fps.shape[0]
    total = offsets[n]
    i_out = np.empty(total, dtype=np.int64)
    j_out = np.empty(total, dtype=np.int64)
    d_out = np.empty(total, dtype=np.int64)
    for i in numba.prange(n):
        s = offsets[i]
        _probe(
            fps,
            i,
            fps,
            entries,
            directory,
            starts,
            sizes,
            kept,
            widths,
            rowbits,
            dbits,
            max_distance,
            i,
            j_out,
            d_out,
            s,
            True,
        )
        a = ids[i]
        for m in range(s, offsets[i + 1]):
            b = ids[j_out[m]]
            i_out[m] = min(a, b)
            j_out[m] = max(a, b)
    return i_out, j_out, d_out
