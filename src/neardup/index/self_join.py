"""The self-join of an array of fingerprints holding one permuted table at a time.

A :class:`~neardup.HammingIndex` keeps every table to answer queries: about 100 bytes a
fingerprint at 100M. A self-join needs none of them afterwards, and no table while another
is joined: each pair is reported by the first table whose kept blocks it agrees on (the
pigeonhole of Manku et al.), which the pair's own XOR tells, so the tables can be made,
joined and dropped one after another. Peak memory is the fingerprints, one table's sorted
entries (8 bytes each) and a window of pairs: about 16 bytes a 64-bit fingerprint past a
few million, where the work is the same as the index's.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import numpy as np

from .._kernels import index as kernels
from .disk_join import DiskPlan, TableDone, disk_self_join, in_memory_bytes
from .hamming import _as_fingerprints
from .join import key_group_pairs, probed_pairs, rechunked
from .plan import MAX_DISTANCE, IndexPlan, _check_distance
from .tables import build, layout, probe_args

JOIN_WINDOW = 1 << 22
"""Candidate pairs examined at a time (the pairs of a window: at most three int64 arrays of
this length, 96 MiB)."""

MIN_WINDOW = 1024
"""Pairs examined at a time, at the least, however little memory is given."""

# What "auto" weighs to choose the join's tables (IndexPlan.for_join), measured on 2 shared
# cores (AMD EPYC): per fingerprint and table, its entry made and sorted (ROW_NS), and also
# partitioned to disk and read back out of core (DISK_ROW_NS: 89-90 ns at 100M and at 1B,
# `bench_self_join.py --resumable`); per candidate pair of a key group (CHECK_NS). ROW_NS and
# CHECK_NS are the least-squares fit of in-memory joins of 10M with 4 to 35 tables
# (`bench_self_join.py --calibrate`: 38.2 and 0.48; 4 tables joined 10M in 2.98 s, 10 in 3.81).
ROW_NS = 38.0
DISK_ROW_NS = 90.0
CHECK_NS = 0.5


def self_join(
    fingerprints: object,
    max_distance: int = 3,
    *,
    plan: object = "auto",
    chunk_size: int = JOIN_WINDOW,
    memory: int | None = None,
    work_dir: str | os.PathLike | None = None,
    on_table: TableDone | None = None,
    first_table: int = 0,
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Every pair of rows of ``fingerprints`` within ``max_distance`` bits, exactly once, in
    chunks ``(i, j, distances)``: int64 row numbers with ``i < j``, chunks and pairs in no
    particular order, each chunk at most ``chunk_size`` pairs.

    The pairs of ``HammingIndex.pairs`` over the same rows, in the memory of one table
    rather than all of them. ``fingerprints`` are uint64, (n,) for 64 bits or (n, 2) for 128
    (a memory-mapped array is read, not copied); ``plan`` as for :class:`HammingIndex`. A
    plan whose tables do not each find their pairs by key alone (multi-index hashing past
    its blocks' radius, ``max_distance`` 8 at 64 bits) is joined by probing all of its tables.

    ``memory`` (bytes) bounds the join: past it (``in_memory_bytes``), each table is
    written to a temporary folder inside ``work_dir`` (the system's temporary folder by
    default) partitioned by key, and joined a partition at a time (``disk_join.py``): up to
    ``disk_bytes_needed`` on disk; a window of pairs then takes at most an eighth of it
    (``chunk_size`` is lowered to fit), and fingerprints in a read-only memory-mapped file
    are read a slice at a time, each slice's pages released once it is partitioned, so the
    file's pages do not add to the budget. ``on_table(table, tables, seconds, bytes_written)`` is
    called as each table is done, once its pairs are yielded (``bytes_written`` 0 in memory).

    ``first_table`` resumes a join that stopped: the tables before it are skipped, and with
    them exactly the pairs they reported (each pair comes from the first table its XOR
    agrees on), so the pairs of a run that ``on_table`` saw finish tables ``0 .. t - 1``
    and of one from ``first_table=t`` are together the whole self-join, each once.
    """
    fps = _as_fingerprints(fingerprints, "fingerprints")
    bits = 64 * fps.shape[1]
    k = _check_distance(max_distance, bits)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ValueError(f"chunk_size={chunk_size!r} must be a positive integer")
    if memory is not None and (
        isinstance(memory, bool) or not isinstance(memory, (int, np.integer)) or memory < 1
    ):
        raise ValueError(f"memory={memory!r} must be a positive number of bytes")
    n = fps.shape[0]
    chosen = IndexPlan.choose(bits, k, plan, n)  # checks any plan, even where n < 2
    if memory is not None:
        chunk_size = _window(int(memory), int(chunk_size))
    out_of_core = memory is not None and goes_out_of_core(n, fps.shape[1], int(memory), int(chunk_size))
    if isinstance(plan, str) and plan == "auto" and k <= MAX_DISTANCE:  # the join's own "auto"
        chosen = IndexPlan.for_join(bits, k, n, DISK_ROW_NS if out_of_core else ROW_NS, CHECK_NS)
    if isinstance(first_table, bool) or not isinstance(first_table, (int, np.integer)):
        raise ValueError(f"first_table={first_table!r} must be an integer")
    if not 0 <= first_table <= chosen.num_tables:
        raise ValueError(f"first_table={first_table} must be in [0, {chosen.num_tables}]: the plan's tables")
    if n < 2:
        return
    if k // chosen.num_blocks:
        if out_of_core:
            raise ValueError(
                f"max_distance={k} with a plan of {chosen.num_blocks} blocks probes its tables "
                f"and cannot be joined out of core; give a plan of more than {k} blocks "
                f"(plan='auto'), or no memory="
            )
        if first_table:
            raise ValueError(f"first_table={first_table}: a join by probing every table cannot resume")
        yield from _by_probes(fps, k, chosen, int(chunk_size))
        return
    lay = layout(chosen, n)
    if out_of_core:
        assert memory is not None
        tables = range(int(first_table), chosen.num_tables)
        yield from disk_self_join(fps, k, lay, tables, int(memory), work_dir, int(chunk_size), on_table)
        return
    for t in range(int(first_table), chosen.num_tables):
        start = time.perf_counter()
        entries = np.empty((1, n), dtype=np.uint64)
        kept, widths = lay.kept[t : t + 1], lay.widths[t : t + 1]
        kernels.build_entries(fps, lay.starts, lay.sizes, kept, widths, lay.rowbits, entries)
        entries.sort(axis=1)
        for a, b, d in key_group_pairs(fps, entries, t, lay, k, chunk_size):
            if len(a):
                yield np.minimum(a, b), np.maximum(a, b), d
        del entries  # before the next table is made
        if on_table is not None:
            on_table(t, chosen.num_tables, time.perf_counter() - start, 0)


def _by_probes(
    fps: np.ndarray, k: int, plan: IndexPlan, chunk_size: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The pairs of a plan whose tables do not find them by key alone: every table of the
    rows built, as an index builds them, and each row probing them for the rows after it."""
    lay = layout(plan, fps.shape[0])
    entries, directory = build(np.ascontiguousarray(fps), lay)
    ids = np.arange(fps.shape[0], dtype=np.int64)
    pieces = probed_pairs(fps, ids, probe_args(entries, directory, lay), k, chunk_size)
    yield from rechunked(pieces, chunk_size)


def disk_bytes_needed(fingerprints: object) -> int:
    """The most bytes an out-of-core :func:`self_join` of ``fingerprints`` writes to its work
    folder at a time: one table's entries and fingerprints, and one partition being split."""
    fps = _as_fingerprints(fingerprints, "fingerprints")
    return DiskPlan(fps.shape[0], fps.shape[1], 0, 0).disk_bytes


def goes_out_of_core(rows: int, words: int, memory: int, chunk_size: int = JOIN_WINDOW) -> bool:
    """Whether :func:`self_join` of ``rows`` fingerprints of ``words`` words in ``memory``
    bytes writes its tables to disk."""
    return rows >= 2 and in_memory_bytes(rows, words, _window(memory, chunk_size)) > memory


def _window(memory: int, chunk_size: int) -> int:
    """Pairs examined at a time in ``memory`` bytes: at most an eighth of it (48 bytes a pair)."""
    return min(chunk_size, max(MIN_WINDOW, memory // (8 * 48)))
