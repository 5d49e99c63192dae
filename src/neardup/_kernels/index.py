"""Hamming search over sorted tables: table keys, the one probe loop of permuted tables (Manku,
Jain & Das Sarma, WWW 2007, sec. 3) and multi-index hashing (``mih.py``), batch query and
self-join.

The b bits are cut into B contiguous blocks; block ``j`` is bits ``starts[j]`` to
``starts[j] + sizes[j] - 1`` (bit 0 is the lowest bit of word 0; a 128-bit fingerprint is the
row ``[lo, hi]``). Two fingerprints within distance k differ in at most k blocks, so they agree
on all blocks of at least one table that keeps B - k of them.

A table is one sorted array of *entries* ``(key << rowbits) | row``: ``key`` is the first
``widths[t]`` bits of the concatenation of the table's kept blocks, ``row`` the fingerprint's row.
A key cut short only lets more candidates through, every one of which is verified with XOR +
popcount, so search stays exact. Each table has a *directory* of where each value of the key's
top ``dbits`` bits starts, so an entry need not hold those bits: the index stores each entry's
low ``widths[t] - dbits + rowbits`` bits only, in uint32 where they fit (``tables.py``), and
every kernel compares the key *remainder* below the directory's bits within one bucket (the
key groups of the self-join end where their bucket ends). Entries that keep their full key
(the self-join's, with a directory of one bucket) are read the same way.

A pair within the radius can agree on the full key of several tables. It is reported only by the
first table (in table order) whose kept blocks it agrees on entirely (``_owner``; for
multi-index hashing, whose kept block is within the probe radius), so each pair comes out exactly
once, whatever the truncation.

Fingerprint arrays are uint64, shape (n, words) with words 1 or 2, C-contiguous; the wrappers in
``neardup.index`` coerce and validate.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.extending import intrinsic

from ._jit import jit, jit_inline, jit_parallel
from ._memory import prefetch
from .mih import next_flips

JOIN_CHUNK = 1024
"""Sorted positions per self-join work unit: small enough to spread a table over the threads."""


@intrinsic
def popcount(typingctx, x):
    """Set bits of a uint64 (one ``popcnt``)."""

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen


def _popcount_python(x: int) -> np.uint64:
    return np.uint64(int(x).bit_count())


if numba.config.DISABLE_JIT:
    # Intrinsics exist only in compiled code (see _memory.py).
    popcount = _popcount_python


@jit_inline
def _word(fps, r, w):
    """Word ``w`` of row ``r``; a 64-bit row has a zero high word."""
    if w < fps.shape[1]:
        return fps[r, w]
    return np.uint64(0)


@jit_inline
def _field(lo, hi, start, size):
    """Bits ``start .. start + size - 1`` (1 <= size <= 64) of the 128-bit value ``hi:lo``."""
    if start >= 64:
        v = hi >> np.uint64(start - 64)
    elif start == 0:
        v = lo
    else:
        v = (lo >> np.uint64(start)) | (hi << np.uint64(64 - start))
    if size < 64:
        v &= (np.uint64(1) << np.uint64(size)) - np.uint64(1)
    return v


@jit_inline
def _key(lo, hi, starts, sizes, kept, width):
    """The first ``width`` (<= 63) bits of the kept blocks, concatenated in ``kept`` order."""
    key = np.uint64(0)
    left = width
    for m in range(kept.shape[0]):
        if left == 0:
            break
        b = kept[m]
        size = sizes[b]
        v = _field(lo, hi, starts[b], size)
        if size > left:
            v >>= np.uint64(size - left)
            size = left
        key = (key << np.uint64(size)) | v
        left -= size
    return key


@jit_inline
def _owner(xlo, xhi, starts, sizes, masks, radius):
    """The first table whose kept blocks (bitmask ``masks[t]``) each differ in at most ``radius``
    bits in the XOR ``xhi:xlo``; -1 when there is none (the pair is farther apart than the index
    serves). Permuted tables have radius 0: all kept blocks agree."""
    far = np.uint64(0)
    for b in range(starts.shape[0]):
        v = _field(xlo, xhi, starts[b], sizes[b])
        if v != 0 and np.int64(popcount(v)) > radius:
            far |= np.uint64(1) << np.uint64(b)
    for t in range(masks.shape[0]):
        if masks[t] & far == 0:
            return t
    return -1


@jit_parallel
def build_entries(fps, starts, sizes, kept, widths, rowbits, out):
    """Fills ``out`` (uint64, shape (tables, n)) with unsorted table entries:
    ``(key << rowbits) | row``."""
    n = fps.shape[0]
    tables = kept.shape[0]
    shift = np.uint64(rowbits)
    for r in numba.prange(n):
        lo = fps[r, 0]
        hi = _word(fps, r, 1)
        for t in range(tables):
            out[t, r] = (_key(lo, hi, starts, sizes, kept[t], widths[t]) << shift) | np.uint64(r)


@jit_parallel
def fill_directory(entries, widths, rowbits, dbits, directory):
    """Fills ``directory`` (shape (tables, 2**dbits + 1)): ``directory[t, b]`` is the first
    position of table ``t`` whose key's top ``dbits`` bits are >= ``b``; the last column is n."""
    tables, n = entries.shape
    buckets = directory.shape[1] - 1
    for t in numba.prange(tables):
        b = 0
        if dbits > 0:  # a shift by 64 would be undefined
            shift = np.uint64(rowbits + widths[t] - dbits)
            for p in range(n):
                top = np.int64(entries[t, p] >> shift)
                while b <= top:
                    directory[t, b] = p
                    b += 1
        while b <= buckets:
            directory[t, b] = n if b > 0 else 0
            b += 1


@jit_inline
def _remainder_mask(width, dbits):
    """The key bits an entry holds below the directory's top ``dbits`` of a ``width``-bit key."""
    return (np.uint64(1) << np.uint64(width - dbits)) - np.uint64(1)


@jit_inline
def _entry_key(entry, shift, remmask):
    """An entry's key remainder (a uint32 or uint64 entry)."""
    return (np.uint64(entry) >> shift) & remmask


@jit_inline
def _lower_bound(entries, directory, t, shift, key, width, dbits):
    """The first position of table ``t`` whose key is >= ``key`` (a ``width``-bit key), and the
    end of its bucket.

    The directory jumps to the bucket of keys that share the top ``dbits`` bits of ``key``
    (~16-32 entries, a few adjacent cache lines) where a search over the whole table would make
    several scattered probes at 10^8 entries, each a cache and TLB miss. Binary search within
    the bucket keeps a skewed table (a giant bucket) at O(log n)."""
    b = np.int64(key >> np.uint64(width - dbits))
    lo = np.int64(directory[t, b])
    end = np.int64(directory[t, b + 1])
    remmask = _remainder_mask(width, dbits)
    rem = key & remmask
    hi = end
    while lo < hi:
        mid = (lo + hi) >> 1
        if _entry_key(entries[t, mid], shift, remmask) < rem:
            lo = mid + 1
        else:
            hi = mid
    return lo, end


SLOT_LEAD = 16
BUCKET_LEAD = 8
"""Probes ahead of the one being searched whose directory slot, and whose bucket, a query has
already started to load (``_probe``)."""

QUERY_CHUNK = 64
"""Queries per parallel work unit: each unit allocates one scratch buffer for its probe keys."""


@jit_inline
def _probe_count(widths, radius):
    """Probes one query makes: per table of ``w`` key bits, every key within ``radius`` bits of
    the query's, ``sum(C(w, i) for i <= radius)``."""
    total = 0
    for t in range(widths.shape[0]):
        w = widths[t]
        c = 1
        for f in range(min(radius, w) + 1):
            if f > 0:
                c = c * (w - f + 1) // f
            total += c
    return total


@jit_inline
def _scratch(table, max_distance):
    """Room for the probes of one query (``_probe``): (keys uint64, tables int64), each of
    ``_probe_count`` entries."""
    starts, widths = table[2], table[5]
    probes = _probe_count(widths, max_distance // starts.shape[0])
    return np.empty(probes, dtype=np.uint64), np.empty(probes, dtype=np.int64)


@jit_inline
def _probe_keys(qlo, qhi, starts, sizes, kept, widths, radius, keys, tabs):
    """Writes the probes of a query, table by table: ``keys[j]`` the key, ``tabs[j]`` its table
    (each table's own key, then the keys within ``radius`` bits of it, ``mih.next_flips``).
    Returns their number."""
    j = 0
    for t in range(kept.shape[0]):
        width = widths[t]
        own = _key(qlo, qhi, starts, sizes, kept[t], width)
        mask = np.uint64(0)
        flips = 0
        while flips >= 0:
            keys[j] = own ^ mask
            tabs[j] = t
            j += 1
            mask, flips = next_flips(mask, flips, width, radius)
    return j


@jit_inline
def _prefetch_slot(directory, widths, dbits, keys, tabs, j):
    """Start loading the directory slot of probe ``j``."""
    t = tabs[j]
    prefetch(directory, t, np.int64(keys[j] >> np.uint64(widths[t] - dbits)))


@jit_inline
def _prefetch_bucket(entries, directory, widths, dbits, keys, tabs, j):
    """Read the directory slot of probe ``j`` and start loading its bucket's first entries."""
    t = tabs[j]
    first = np.int64(directory[t, np.int64(keys[j] >> np.uint64(widths[t] - dbits))])
    if first < entries.shape[1]:
        prefetch(entries, t, first)


@jit_inline
def _probe(queries, i, fps, table, max_distance, after, keys, tabs, rows_out, dist_out, at):
    """Rows within ``max_distance`` of query ``i``, each once, only rows above ``after`` (-1:
    all); writes them from ``at`` as far as ``rows_out`` and ``dist_out`` reach (empty arrays:
    count only). Returns the count. ``keys`` and ``tabs`` are scratch from ``_scratch``.

    ``table`` is ``(entries, directory, starts, sizes, kept, widths, masks, rowbits, dbits)``.
    Each table is probed at every key within ``radius = max_distance // blocks`` bits of the
    query's (``mih.py``; 0 for permuted tables, which have more blocks than max_distance): one
    directory slot, then a search of one bucket. The probes are independent, so their keys are
    listed first and the loop starts cache misses ahead of the probe it searches: the directory
    slot ``SLOT_LEAD`` probes ahead, the bucket ``BUCKET_LEAD`` ahead. The misses overlap
    instead of queueing one behind another (a single k = 3 query 1.8x faster at 10M
    fingerprints)."""
    entries, directory, starts, sizes, kept, widths, masks, rowbits, dbits = table
    qlo = queries[i, 0]
    qhi = _word(queries, i, 1)
    shift = np.uint64(rowbits)
    rowmask = (np.uint64(1) << shift) - np.uint64(1)
    radius = max_distance // starts.shape[0]
    probes = _probe_keys(qlo, qhi, starts, sizes, kept, widths, radius, keys, tabs)
    for j in range(min(SLOT_LEAD, probes)):
        _prefetch_slot(directory, widths, dbits, keys, tabs, j)
    for j in range(min(BUCKET_LEAD, probes)):
        _prefetch_bucket(entries, directory, widths, dbits, keys, tabs, j)
    count = 0
    for j in range(probes):
        if j + SLOT_LEAD < probes:
            _prefetch_slot(directory, widths, dbits, keys, tabs, j + SLOT_LEAD)
        if j + BUCKET_LEAD < probes:
            _prefetch_bucket(entries, directory, widths, dbits, keys, tabs, j + BUCKET_LEAD)
        t = tabs[j]
        p, end = _lower_bound(entries, directory, t, shift, keys[j], widths[t], dbits)
        remmask = _remainder_mask(widths[t], dbits)
        rem = keys[j] & remmask
        while p < end:
            e = entries[t, p]
            if _entry_key(e, shift, remmask) != rem:
                break
            p += 1
            r = np.int64(np.uint64(e) & rowmask)
            if r <= after:
                continue
            xlo = qlo ^ fps[r, 0]
            xhi = qhi ^ _word(fps, r, 1)
            d = np.int64(popcount(xlo) + popcount(xhi))
            if d > max_distance or _owner(xlo, xhi, starts, sizes, masks, radius) != t:
                continue
            if at + count < rows_out.shape[0]:
                rows_out[at + count] = r
                dist_out[at + count] = d
            count += 1
    return count


@jit_parallel
def query_count(
    queries,
    fps,
    entries,
    directory,
    starts,
    sizes,
    kept,
    widths,
    masks,
    rowbits,
    dbits,
    max_distance,
    self_from,
):
    """Matches per query: int64, shape (q,). ``self_from`` >= 0 says the queries are rows
    ``self_from ..`` of ``fps`` itself (the self-join by probing): only later rows count."""
    q = queries.shape[0]
    counts = np.zeros(q, dtype=np.int64)
    none = np.empty(0, dtype=np.int64)
    table = (entries, directory, starts, sizes, kept, widths, masks, rowbits, dbits)
    for c in numba.prange((q + QUERY_CHUNK - 1) // QUERY_CHUNK):
        keys, tabs = _scratch(table, max_distance)
        for i in range(c * QUERY_CHUNK, min(q, (c + 1) * QUERY_CHUNK)):
            after = self_from + i if self_from >= 0 else -1
            counts[i] = _probe(queries, i, fps, table, max_distance, after, keys, tabs, none, none, 0)
    return counts


@jit_inline
def _sort_by_distance_then_id(ids_out, dist_out, s, e):
    """Orders ``[s, e)`` of both arrays by (distance, id); ids are distinct."""
    if e - s < 32:
        for a in range(s + 1, e):
            idv = ids_out[a]
            dv = dist_out[a]
            b = a - 1
            while b >= s and (dist_out[b] > dv or (dist_out[b] == dv and ids_out[b] > idv)):
                ids_out[b + 1] = ids_out[b]
                dist_out[b + 1] = dist_out[b]
                b -= 1
            ids_out[b + 1] = idv
            dist_out[b + 1] = dv
        return
    idv = ids_out[s:e].copy()
    dv = dist_out[s:e].copy()
    by_id = np.argsort(idv, kind="mergesort")
    order = by_id[np.argsort(dv[by_id], kind="mergesort")]
    for m in range(e - s):
        ids_out[s + m] = idv[order[m]]
        dist_out[s + m] = dv[order[m]]


@jit_parallel
def query_fill(
    queries,
    fps,
    ids,
    entries,
    directory,
    starts,
    sizes,
    kept,
    widths,
    masks,
    rowbits,
    dbits,
    max_distance,
    self_from,
    offsets,
):
    """Matched ids and distances in CSR form by ``offsets`` (from ``query_count``), each query's
    run sorted by (distance, id): two int64 arrays of length ``offsets[-1]``."""
    q = queries.shape[0]
    total = offsets[q]
    ids_out = np.empty(total, dtype=np.int64)
    dist_out = np.empty(total, dtype=np.int64)
    table = (entries, directory, starts, sizes, kept, widths, masks, rowbits, dbits)
    for c in numba.prange((q + QUERY_CHUNK - 1) // QUERY_CHUNK):
        keys, tabs = _scratch(table, max_distance)
        for i in range(c * QUERY_CHUNK, min(q, (c + 1) * QUERY_CHUNK)):
            s = offsets[i]
            e = offsets[i + 1]
            after = self_from + i if self_from >= 0 else -1
            _probe(queries, i, fps, table, max_distance, after, keys, tabs, ids_out, dist_out, s)
            for m in range(s, e):
                ids_out[m] = ids[ids_out[m]]  # rows to ids
            _sort_by_distance_then_id(ids_out, dist_out, s, e)
    return ids_out, dist_out


@jit_inline
def _bucket_at(directory, t, p, b):
    """The bucket of table ``t`` that holds position ``p``, searched from bucket ``b`` (at or
    before it): a walk, amortised O(1) over positions visited in order."""
    while directory[t, b + 1] <= p:
        b += 1
    return b


@jit_inline
def _group_end(entries, t, p, shift, remmask, limit):
    """The first sorted position after ``p`` in table ``t`` whose key differs from ``p``'s,
    at most ``limit`` (the end of ``p``'s bucket): a galloping search, O(log g) in the group's
    size g."""
    key = _entry_key(entries[t, p], shift, remmask)
    lo = p
    hi = p + 1
    step = 1
    while hi < limit and _entry_key(entries[t, hi], shift, remmask) == key:
        lo = hi
        step *= 2
        hi = p + step
    hi = min(hi, limit)
    while hi - lo > 1:  # entries[t, lo] has the key; hi is past the group
        mid = (lo + hi) // 2
        if _entry_key(entries[t, mid], shift, remmask) == key:
            lo = mid
        else:
            hi = mid
    return hi


@jit_inline
def _first_bucket(directory, t, p):
    """The bucket of table ``t`` that holds position ``p`` (binary search of the directory)."""
    return np.int64(np.searchsorted(directory[t], p, side="right")) - 1


@jit_parallel
def join_unit_candidates(entries, directory, widths, rowbits, dbits):
    """Candidate pairs of the self-join by key groups, per work unit (``JOIN_CHUNK`` sorted
    positions of one table, in table order): a position's candidates are the later positions
    of its group, a group being one key within one directory bucket. int64, shape
    (tables * ceil(n / JOIN_CHUNK),); no pair is formed."""
    tables, n = entries.shape
    per = (n + JOIN_CHUNK - 1) // JOIN_CHUNK
    counts = np.zeros(tables * per, dtype=np.int64)
    shift = np.uint64(rowbits)
    for u in numba.prange(tables * per):
        t = u // per
        remmask = _remainder_mask(widths[t], dbits)
        first = (u % per) * JOIN_CHUNK
        b = _first_bucket(directory, t, first)
        end = 0
        total = 0
        for p in range(first, min(first + JOIN_CHUNK, n)):
            if p >= end:
                b = _bucket_at(directory, t, p, b)
                end = _group_end(entries, t, p, shift, remmask, np.int64(directory[t, b + 1]))
            total += end - p - 1
        counts[u] = total
    return counts


@jit_inline
def _join_span(
    fps,
    entries,
    directory,
    widths,
    dbits,
    first_table,
    starts,
    sizes,
    masks,
    rowbits,
    max_distance,
    unit_offsets,
    c0,
    c1,
    a_out,
    b_out,
    d_out,
    at,
):
    """Pairs among candidates ``[c0, c1)`` of the self-join by key groups, candidates numbered
    in (table, sorted position, later position) order with ``unit_offsets`` (the running sum
    of ``join_unit_candidates``). Writes rows (a, b) and distances from ``at``; returns the
    count. A pair is reported by the first table whose kept blocks it agrees on (``_owner``):
    ``entries[t]`` is the plan's table ``first_table + t`` (all of them, or one at a time)."""
    n = entries.shape[1]
    per = (n + JOIN_CHUNK - 1) // JOIN_CHUNK
    shift = np.uint64(rowbits)
    rowmask = (np.uint64(1) << shift) - np.uint64(1)
    # Find the candidate c0: its unit by bisection, then its position by walking the unit.
    u = np.searchsorted(unit_offsets, c0, side="right") - 1
    t = u // per
    p = (u % per) * JOIN_CHUNK
    remmask = _remainder_mask(widths[t], dbits)
    b = _first_bucket(directory, t, p)
    end = _group_end(entries, t, p, shift, remmask, np.int64(directory[t, b + 1]))
    skip = c0 - unit_offsets[u]
    while skip >= end - p - 1:
        skip -= end - p - 1
        p += 1
        if p >= end:
            b = _bucket_at(directory, t, p, b)
            end = _group_end(entries, t, p, shift, remmask, np.int64(directory[t, b + 1]))
    q = p + 1 + skip
    left = c1 - c0
    count = 0
    while left > 0:
        a = np.int64(np.uint64(entries[t, p]) & rowmask)
        alo = fps[a, 0]
        ahi = _word(fps, a, 1)
        stop = min(end, q + left)
        left -= stop - q
        for q2 in range(q, stop):
            r = np.int64(np.uint64(entries[t, q2]) & rowmask)
            xlo = alo ^ fps[r, 0]
            xhi = ahi ^ _word(fps, r, 1)
            d = np.int64(popcount(xlo) + popcount(xhi))
            if d > max_distance or _owner(xlo, xhi, starts, sizes, masks, 0) != first_table + t:
                continue
            a_out[at + count] = a
            b_out[at + count] = r
            d_out[at + count] = d
            count += 1
        p += 1
        if p == n:
            t += 1
            p = 0
            end = 0
            b = 0
            if t < entries.shape[0]:
                remmask = _remainder_mask(widths[t], dbits)
        if left > 0 and p >= end:
            b = _bucket_at(directory, t, p, b)
            end = _group_end(entries, t, p, shift, remmask, np.int64(directory[t, b + 1]))
        q = p + 1
    return count


@jit_parallel
def join_span(
    fps,
    entries,
    directory,
    widths,
    dbits,
    first_table,
    starts,
    sizes,
    masks,
    rowbits,
    max_distance,
    unit_offsets,
    c0,
    c1,
    parts,
):
    """Every pair within ``max_distance`` among candidates ``[c0, c1)`` (see ``_join_span``),
    split into ``parts`` equal runs for the threads: rows (a, b) and distances, int64 arrays,
    at most ``c1 - c0`` long (a window of candidates bounds the memory, whatever the groups).
    ``directory``, ``widths`` and ``dbits`` describe ``entries`` as the index's tables
    (``widths`` from table ``first_table`` on)."""
    size = c1 - c0
    a_out = np.empty(size, dtype=np.int64)
    b_out = np.empty(size, dtype=np.int64)
    d_out = np.empty(size, dtype=np.int64)
    counts = np.zeros(parts, dtype=np.int64)
    for s in numba.prange(parts):
        lo = c0 + size * s // parts
        hi = c0 + size * (s + 1) // parts
        if hi > lo:
            counts[s] = _join_span(
                fps,
                entries,
                directory,
                widths,
                dbits,
                first_table,
                starts,
                sizes,
                masks,
                rowbits,
                max_distance,
                unit_offsets,
                lo,
                hi,
                a_out,
                b_out,
                d_out,
                lo - c0,
            )
    at = 0
    for s in range(parts):  # close the gaps between the runs' outputs
        lo = size * s // parts
        for m in range(counts[s]):
            a_out[at + m] = a_out[lo + m]
            b_out[at + m] = b_out[lo + m]
            d_out[at + m] = d_out[lo + m]
        at += counts[s]
    return a_out[:at].copy(), b_out[:at].copy(), d_out[:at].copy()


@jit_inline
def _scan(queries, i, fps, max_distance, self_from, rows_out, dist_out, at, write):
    """Rows of ``fps`` within ``max_distance`` of query ``i`` by XOR + popcount over every row
    (only rows after the query's own when ``self_from`` >= 0: the queries are rows
    ``self_from ..`` of ``fps``, a self-join). Writes them from ``at`` when ``write``. Returns
    the count."""
    qlo = queries[i, 0]
    qhi = _word(queries, i, 1)
    count = 0
    first = self_from + i + 1 if self_from >= 0 else 0
    for r in range(first, fps.shape[0]):
        d = np.int64(popcount(qlo ^ fps[r, 0]) + popcount(qhi ^ _word(fps, r, 1)))
        if d <= max_distance:
            if write:
                rows_out[at + count] = r
                dist_out[at + count] = d
            count += 1
    return count


@jit_parallel
def scan_count(queries, fps, max_distance, self_from):
    """Brute-force matches per query over every row of ``fps`` (a small, unindexed delta):
    int64, shape (q,)."""
    q = queries.shape[0]
    counts = np.zeros(q, dtype=np.int64)
    none = np.empty(0, dtype=np.int64)
    for i in numba.prange(q):
        counts[i] = _scan(queries, i, fps, max_distance, self_from, none, none, 0, False)
    return counts


@jit_parallel
def scan_fill(queries, fps, max_distance, self_from, offsets):
    """Matched rows and distances in CSR form by ``offsets`` (from ``scan_count``), each query's
    run in row order: two int64 arrays of length ``offsets[-1]``."""
    q = queries.shape[0]
    total = offsets[q]
    rows_out = np.empty(total, dtype=np.int64)
    dist_out = np.empty(total, dtype=np.int64)
    for i in numba.prange(q):
        _scan(queries, i, fps, max_distance, self_from, rows_out, dist_out, offsets[i], True)
    return rows_out, dist_out


@jit
def query_serial(
    queries, fps, ids, entries, directory, starts, sizes, kept, widths, masks, rowbits, dbits, max_distance
):
    """Matches of a few queries on the calling thread (waking the thread pool costs far more
    than one probe), in one pass: a query's matches rarely overflow the buffer, which then
    grows and the query is probed again. Returns (offsets, ids, distances)."""
    q = queries.shape[0]
    rows = np.empty(64, dtype=np.int64)
    dist = np.empty(64, dtype=np.int64)
    offsets = np.zeros(q + 1, dtype=np.int64)
    table = (entries, directory, starts, sizes, kept, widths, masks, rowbits, dbits)
    keys, tabs = _scratch(table, max_distance)
    for i in range(q):
        at = offsets[i]
        count = _probe(queries, i, fps, table, max_distance, -1, keys, tabs, rows, dist, at)
        if at + count > rows.shape[0]:
            size = max(2 * rows.shape[0], at + count)
            rows = _grown(rows, at, size)
            dist = _grown(dist, at, size)
            _probe(queries, i, fps, table, max_distance, -1, keys, tabs, rows, dist, at)
        offsets[i + 1] = at + count
    total = offsets[q]
    ids_out = np.empty(total, dtype=np.int64)
    dist_out = dist[:total].copy()
    for m in range(total):
        ids_out[m] = ids[rows[m]]
    for i in range(q):
        _sort_by_distance_then_id(ids_out, dist_out, offsets[i], offsets[i + 1])
    return offsets, ids_out, dist_out


@jit_inline
def _grown(values, keep, size):
    """A longer copy of ``values`` (its first ``keep`` entries)."""
    out = np.empty(size, dtype=values.dtype)
    out[:keep] = values[:keep]
    return out


@jit
def scan_serial(queries, fps, max_distance, self_from):
    """``scan_count`` then ``scan_fill`` on the calling thread. Returns (offsets, rows, distances)."""
    q = queries.shape[0]
    none = np.empty(0, dtype=np.int64)
    offsets = np.zeros(q + 1, dtype=np.int64)
    for i in range(q):
        offsets[i + 1] = offsets[i] + _scan(queries, i, fps, max_distance, self_from, none, none, 0, False)
    rows_out = np.empty(offsets[q], dtype=np.int64)
    dist_out = np.empty(offsets[q], dtype=np.int64)
    for i in range(q):
        _scan(queries, i, fps, max_distance, self_from, rows_out, dist_out, offsets[i], True)
    return offsets, rows_out, dist_out


@jit
def partition_by_key(entries, fps, shift, mask, entries_out, fps_out):
    """A counting sort of table entries (and their rows' fingerprints) by the partition
    ``(entry >> shift) & mask`` of their key, into ``entries_out`` and ``fps_out``: the
    out-of-core self-join's split, in one pass where a sort would take log n. Returns each
    partition's end in the output (int64, mask + 1 of them)."""
    n = entries.shape[0]
    fanout = np.int64(mask) + 1
    ends = np.zeros(fanout, dtype=np.int64)
    for i in range(n):
        ends[np.int64((entries[i] >> shift) & mask)] += 1
    at = np.empty(fanout, dtype=np.int64)
    total = 0
    for p in range(fanout):
        at[p] = total
        total += ends[p]
        ends[p] = total
    words = fps.shape[1]
    for i in range(n):
        p = np.int64((entries[i] >> shift) & mask)
        q = at[p]
        entries_out[q] = entries[i]
        for w in range(words):
            fps_out[q, w] = fps[i, w]
        at[p] = q + 1
    return ends
