"""The self-join of a :class:`HammingIndex` in bounded memory: the main rows by their tables'
key groups (or by probes, past what a key group finds), the delta against the main rows and
against itself, a window of pairs at a time, tombstoned rows left out; and the join of sorted
tables by key groups (``key_group_pairs``) that ``self_join`` and its out-of-core form share."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import numba
import numpy as np

from .._kernels import index as kernels
from .._system import available_memory
from .tables import Layout, csr_offsets, member, whole_key_directory

if TYPE_CHECKING:
    from .hamming_index import HammingIndex

PAIR_BYTES = 80
"""Peak bytes a pair of :meth:`HammingIndex.pairs` costs: its chunk (24), the joined arrays
(24), the sort order (8) and the sorted result (24)."""


def pairs_memory_limit() -> int:
    """How many pairs :meth:`HammingIndex.pairs` may hold: the memory available now over the
    bytes a pair costs."""
    return available_memory() // PAIR_BYTES


def pair_chunks(
    index: HammingIndex, k: int, window: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The self-join within ``k`` in pieces of at most ``window`` pairs (but one item's
    matches when probing): (smaller id, larger id, distance), tombstones left out."""
    n_main, m = index._ids.shape[0], index._delta_ids.shape[0]
    if n_main >= 2:
        for a, b, d in _join_main(index, k, window):
            yield _without_dead(index, a, b, d)
    if n_main and m:  # delta x main, through the tables
        table = index._table_args()

        def count_main(lo: int, hi: int) -> np.ndarray:
            return kernels.query_count(index._delta_fps[lo:hi], index._fps, *table, k, -1)

        for lo, hi, offsets in batched(m, window, count_main):
            found, d = kernels.query_fill(
                index._delta_fps[lo:hi], index._fps, index._ids, *table, k, -1, offsets
            )
            other = np.repeat(index._delta_ids[lo:hi], np.diff(offsets))
            if len(index._dead):  # a tombstoned main row; its id may be back in the delta
                keep = ~member(index._dead, found)
                found, other, d = found[keep], other[keep], d[keep]
            yield np.minimum(found, other), np.maximum(found, other), d
    if m >= 2:  # delta x delta, every later row

        def count_delta(lo: int, hi: int) -> np.ndarray:
            return kernels.scan_count(index._delta_fps[lo:hi], index._delta_fps, k, lo)

        for lo, hi, offsets in batched(m, window, count_delta):
            rows, d = kernels.scan_fill(index._delta_fps[lo:hi], index._delta_fps, k, lo, offsets)
            a = np.repeat(index._delta_ids[lo:hi], np.diff(offsets))
            b = index._delta_ids[rows]
            yield np.minimum(a, b), np.maximum(a, b), d


def _join_main(
    index: HammingIndex, k: int, window: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Pairs among the main rows (tombstones included), at most ``window`` at a time. Where
    each table is probed at its own key alone (``k // num_blocks == 0``: permuted tables,
    and multi-index hashing at a small enough radius), by table groups: the rows sharing a
    key meet each other there, with no probe at all, a window of candidates at a time.
    Otherwise each row probes the tables for the rows after it, in batches."""
    if k // index.plan.num_blocks == 0:
        groups = key_group_pairs(index._fps, index._tables, 0, index._layout, k, window, index._directory)
        for a, b, d in groups:
            a, b = index._ids[a], index._ids[b]
            yield np.minimum(a, b), np.maximum(a, b), d
        return
    yield from probed_pairs(index._fps, index._ids, index._table_args(), k, window)


def probed_pairs(
    fps: np.ndarray, ids: np.ndarray, table: tuple[object, ...], k: int, window: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The pairs among the rows ``fps`` (named ``ids``) within ``k``, each row probing the
    tables of them all (``tables.probe_args``) for the rows after it: (smaller id, larger id,
    distance) in pieces of at most ``window`` pairs (but one row's matches)."""

    def count(lo: int, hi: int) -> np.ndarray:
        return kernels.query_count(fps[lo:hi], fps, *table, k, lo)

    for lo, hi, offsets in batched(fps.shape[0], window, count):
        found, d = kernels.query_fill(fps[lo:hi], fps, ids, *table, k, lo, offsets)
        mine = np.repeat(ids[lo:hi], np.diff(offsets))
        yield np.minimum(mine, found), np.maximum(mine, found), d


def key_group_pairs(
    fps: np.ndarray,
    tables: np.ndarray,
    first_table: int,
    lay: Layout,
    k: int,
    window: int,
    directory: np.ndarray | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The pairs of rows of ``fps`` within ``k`` that meet in a key group of the sorted
    ``tables`` (the plan's tables ``first_table`` on), each reported by its first table: rows
    (a, b) in no order and distances, a window of ``window`` candidates at a time (a chunk may
    be empty). ``directory`` is the index's, whose tables hold the key bits below it; without
    one the entries hold their whole key."""
    widths = lay.widths[first_table : first_table + tables.shape[0]]
    dbits = lay.dbits
    if directory is None:
        directory, dbits = whole_key_directory(tables.shape[0], tables.shape[1]), 0
    unit_offsets = csr_offsets(kernels.join_unit_candidates(tables, directory, widths, lay.rowbits, dbits))
    total = int(unit_offsets[-1])
    parts = 4 * numba.get_num_threads()
    for c0 in range(0, total, window):
        yield kernels.join_span(
            fps, tables, directory, widths, dbits, first_table, lay.starts, lay.sizes, lay.masks,
            lay.rowbits, k, unit_offsets, c0, min(total, c0 + window), parts,
        )  # fmt: skip


def _without_dead(
    index: HammingIndex, i: np.ndarray, j: np.ndarray, d: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not len(index._dead):
        return i, j, d
    keep = ~(member(index._dead, i) | member(index._dead, j))
    return i[keep], j[keep], d[keep]


def batched(
    q: int, window: int, count: Callable[[int, int], np.ndarray]
) -> Iterator[tuple[int, int, np.ndarray]]:
    """Rows ``[0, q)`` in runs ``(lo, hi, offsets)`` whose matches (``count(lo, hi)``, per row)
    stay within ``window``, but a row alone may pass it; ``offsets`` are the run's CSR
    offsets. Batches grow while their matches are few and shrink when a family makes them
    many, so both a random corpus and a cluster of copies take few passes."""
    lo, size = 0, 1024
    while lo < q:
        hi = min(q, lo + size)
        counts = count(lo, hi)
        ends = np.cumsum(counts)
        start, base = lo, 0
        while start < hi:
            stop = max(start + 1, lo + int(np.searchsorted(ends, base + window, side="right")))
            yield start, stop, csr_offsets(counts[start - lo : stop - lo])
            base, start = int(ends[stop - lo - 1]), stop
        if ends[-1] * 2 < window:
            size = min(2 * size, 1 << 16)
        elif ends[-1] > window:
            size = max(size // 2, 1)
        lo = hi


def rechunked(
    pieces: Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]], chunk_size: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``pieces`` of pairs, of any size, as chunks of at most ``chunk_size`` pairs: a piece
    over it is cut (one row's matches may pass it), smaller ones are joined."""
    held: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    count = 0
    for whole in pieces:
        for at in range(0, len(whole[0]), chunk_size):
            part = (
                whole[0][at : at + chunk_size],
                whole[1][at : at + chunk_size],
                whole[2][at : at + chunk_size],
            )
            if count + len(part[0]) > chunk_size and held:
                yield joined(held)
                held, count = [], 0
            held.append(part)
            count += len(part[0])
    if held:
        yield joined(held)


def joined(
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if len(parts) == 1:
        return parts[0]
    i, j, d = (np.concatenate([part[c] for part in parts]) for c in range(3))
    return i, j, d
