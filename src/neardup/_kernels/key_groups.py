"""Pairs inside key groups of (table, fingerprint) rows: one partition's work in a join that
sends each fingerprint once per table to whoever holds that table's key (``neardup.spark``).

A partition holds rows of many tables and keys. Each row becomes one sortable uint64 *entry*,
``(t << tshift) | (key << rowbits) | row``: its table, the first ``tshift - rowbits`` bits of
that table's key (``index._key``) and its row, so one sort brings every key group together.
A key cut short only merges groups; a pair is reported by table ``t`` only when it agrees on all
of ``t``'s kept blocks and on no earlier table's (``index._owner``), as in the local index, so
each pair within the radius comes out once over all tables and partitions, d == k included.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from .index import _key, _owner, _word, popcount


@jit
def group_entries(fps, tables, starts, sizes, kept, rowbits, tshift):
    """The unsorted entries (uint64) of rows ``fps`` (uint64, (n, words)) in tables ``tables``
    (int, (n,)); ``kept[t]`` are table t's kept blocks."""
    n = fps.shape[0]
    out = np.empty(n, dtype=np.uint64)
    width = tshift - rowbits
    for r in range(n):
        t = tables[r]
        key = _key(fps[r, 0], _word(fps, r, 1), starts, sizes, kept[t], width)
        out[r] = (np.uint64(t) << np.uint64(tshift)) | (key << np.uint64(rowbits)) | np.uint64(r)
    return out


@jit
def group_pairs(fps, entries, rowbits, tshift, starts, sizes, masks, max_distance, cursor, capacity):
    """The pairs within ``max_distance`` inside the groups of the sorted ``entries``, each
    reported by its first agreeing table (``masks[t]``: table t's kept blocks as a bitmask),
    resumable: ``cursor`` (int64, shape (2,): first and second position, starting at (0, 1))
    says where to go on from and is advanced; at most ``capacity`` pairs are returned, as
    (first rows, second rows, distances), int64."""
    first = np.empty(capacity, dtype=np.int64)
    second = np.empty(capacity, dtype=np.int64)
    distance = np.empty(capacity, dtype=np.int64)
    row_mask = (np.uint64(1) << np.uint64(rowbits)) - np.uint64(1)
    n = entries.shape[0]
    count = 0
    i, j = cursor[0], cursor[1]
    while i < n:
        group = entries[i] >> np.uint64(rowbits)
        t = np.int64(entries[i] >> np.uint64(tshift))
        a = np.int64(entries[i] & row_mask)
        lo, hi = fps[a, 0], _word(fps, a, 1)
        while j < n and entries[j] >> np.uint64(rowbits) == group:
            if count == capacity:
                cursor[0], cursor[1] = i, j
                return first[:count], second[:count], distance[:count]
            b = np.int64(entries[j] & row_mask)
            xlo = lo ^ fps[b, 0]
            xhi = hi ^ _word(fps, b, 1)
            d = np.int64(popcount(xlo) + popcount(xhi))
            if d <= max_distance and _owner(xlo, xhi, starts, sizes, masks, 0) == t:
                first[count] = a
                second[count] = b
                distance[count] = d
                count += 1
            j += 1
        i += 1
        j = i + 1
    cursor[0], cursor[1] = i, j
    return first[:count], second[:count], distance[:count]
