"""The self-join of more fingerprints than memory holds: one permuted table at a time, its
entries written to a work folder radix-partitioned by key, then each partition read back,
sorted and joined in memory, and its files removed before the next.

A key group never spans two partitions (a partition is a range of keys), so joining the
partitions one by one finds every pair the table finds in memory. Each partition's file
carries its rows' fingerprints beside their entries: the join reads the fingerprints in
order, once a table, and never at random. A partition too large for the budget (a skewed
key range: a template copied a million times) is partitioned again by the key's next bits;
only a single key group is held whole, whatever its size. Memory is the budget given;
disk, one table's entries and fingerprints, (8 + 8 * words) bytes a row, plus one partition
while it is split again.

The fingerprints are read a slice at a time, once a table. When they lie in a read-only file
mapping (a ``.npy`` opened with ``mmap_mode="r"``, an index file), each slice's pages are
released from the process once it is partitioned (``madvise(MADV_DONTNEED)``: the kernel
keeps them in its page cache, and the next table maps them again from there), so the
process's resident memory holds a slice of the file, within the budget, rather than all of it.

Manku, Jain and Das Sarma ran their batch mode this way (sorted files, one table at a time),
where the index would have held every table in memory.
"""

from __future__ import annotations

import contextlib
import math
import mmap
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._kernels import index as kernels
from .join import key_group_pairs
from .tables import Layout

MIN_ROWS = 1 << 12
"""Rows of a partition below which a budget is refused as too small to be useful."""

MAX_FANOUT = 256
"""Partitions one pass writes at most (two open files each)."""

TableDone = Callable[[int, int, float, int], None]
"""``on_table(table, tables, seconds, bytes_written)``, once a table is joined."""


@dataclass(frozen=True)
class DiskPlan:
    """How an out-of-core self-join of ``rows`` fingerprints uses ``memory`` bytes."""

    rows: int
    words: int
    memory: int
    window: int  # pairs examined at a time

    @property
    def row_bytes(self) -> int:
        """Bytes a row takes while its partition is joined: its entry, then its local entry,
        its row number and its fingerprint (the sort is in place)."""
        return 8 + 8 + 8 + 8 * self.words

    @property
    def window_bytes(self) -> int:
        """A window of pairs: rows, distances and their copies (``join_span``)."""
        return 6 * 8 * self.window

    @property
    def partition_rows(self) -> int:
        """Rows of a partition joined in memory (a key group larger than this is held whole)."""
        return (self.memory - self.window_bytes) // self.row_bytes

    @property
    def split_rows(self) -> int:
        """Rows read at a time while partitioning: each with its entry and fingerprint, and
        their copies in partition order."""
        return max(1, (self.memory - self.window_bytes) // (16 + 16 * self.words))

    @property
    def disk_bytes(self) -> int:
        """Bytes of the work folder at the most: one table's files, and one partition
        while it is split."""
        return 2 * self.rows * (8 + 8 * self.words)

    def check(self) -> None:
        if self.partition_rows < MIN_ROWS:
            least = self.window_bytes + MIN_ROWS * self.row_bytes
            raise ValueError(
                f"memory={self.memory:,} bytes is too little for an out-of-core self-join with "
                f"a window of {self.window:,} pairs; give at least {least:,} bytes"
            )


def in_memory_bytes(rows: int, words: int, window: int) -> int:
    """Bytes the in-memory self-join takes: the fingerprints, one table's entries and a
    window of pairs."""
    return rows * (8 * words + 8) + DiskPlan(rows, words, 0, window).window_bytes


def disk_self_join(
    fps: np.ndarray,
    k: int,
    lay: Layout,
    tables: range,
    memory: int,
    work_dir: str | os.PathLike | None,
    window: int,
    on_table: TableDone | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``self_join``'s pairs of ``fps`` (n, words) from ``lay``'s ``tables`` (a range of them), joined
    out of core in ``memory`` bytes, in a temporary folder inside ``work_dir`` (the system's
    temporary folder when None), removed at the end."""
    plan = DiskPlan(fps.shape[0], fps.shape[1], memory, window)
    plan.check()
    with tempfile.TemporaryDirectory(prefix="neardup-join-", dir=work_dir) as folder:
        for t in tables:
            start = time.perf_counter()
            table = _Table(fps, k, lay, t, plan, Path(folder))
            yield from table.join()
            if on_table is not None:
                on_table(t, tables.stop, time.perf_counter() - start, table.written)


@dataclass
class _Part:
    """A partition on disk: its entries and its rows' fingerprints, and the key bits its
    rows share (from the top)."""

    entries: Path
    fps: Path
    rows: int
    key_bits: int


class _Table:
    """One table's out-of-core join."""

    def __init__(self, fps: np.ndarray, k: int, lay: Layout, t: int, plan: DiskPlan, folder: Path) -> None:
        self.fps, self.k, self.lay, self.t, self.plan, self.folder = fps, k, lay, t, plan, folder
        self.written = 0  # bytes
        self.width = int(lay.widths[t])
        self.rowmask = np.uint64((1 << lay.rowbits) - 1)
        self.names = 0
        self.pages = MappedPages.of(fps)

    def join(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        for part in self._split(self._chunks_of_fps(), self.fps.shape[0], 0):
            yield from self._join_part(part)

    def _entries(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows ``lo .. hi``: their entries of this table (row numbers from ``lo``) and their
        fingerprints, read once."""
        lay = self.lay
        fps = np.ascontiguousarray(self.fps[lo:hi])  # from a memory-mapped file: read here
        entries = np.empty((1, hi - lo), dtype=np.uint64)
        kept, widths = lay.kept[self.t : self.t + 1], lay.widths[self.t : self.t + 1]
        kernels.build_entries(fps, lay.starts, lay.sizes, kept, widths, lay.rowbits, entries)
        entries = entries[0]
        entries += np.uint64(lo)
        return entries, fps

    def _chunks_of_fps(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        n, step = self.fps.shape[0], self.plan.split_rows
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            yield self._entries(lo, hi)
            if self.pages is not None:  # partitioned now: the pages read so far go back
                # From the first row, not ``lo``: a fault maps the pages around it (the kernel's
                # fault-around), some of them before ``lo``, released before.
                self.pages.release(self.fps[:hi])

    def _chunks_of_part(self, part: _Part) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        words, step = self.plan.words, self.plan.split_rows
        with open(part.entries, "rb") as entries, open(part.fps, "rb") as fps:
            for lo in range(0, part.rows, step):
                count = min(step, part.rows - lo)
                yield (
                    np.fromfile(entries, dtype=np.uint64, count=count),
                    np.fromfile(fps, dtype=np.uint64, count=count * words).reshape(count, words),
                )

    def _split(
        self, chunks: Iterator[tuple[np.ndarray, np.ndarray]], rows: int, key_bits: int
    ) -> list[_Part]:
        """Write ``chunks`` (``rows`` in all, sharing their top ``key_bits`` key bits) as
        partitions by the key's next bits: enough of them, up to ``MAX_FANOUT``, that each
        would fit the budget were the keys even."""
        wanted = math.ceil(1.25 * rows / self.plan.partition_rows)
        bits = min(max(1, (wanted - 1).bit_length()), MAX_FANOUT.bit_length() - 1, self.width - key_bits)
        fanout = 1 << bits
        shift = np.uint64(self.lay.rowbits + self.width - key_bits - bits)
        mask = np.uint64(fanout - 1)
        self.names += 1
        stem = self.folder / f"t{self.t}-{self.names}"
        parts = [
            _Part(Path(f"{stem}-{p}.entries"), Path(f"{stem}-{p}.fps"), 0, key_bits + bits)
            for p in range(fanout)
        ]
        with contextlib.ExitStack() as stack:
            files = [
                (stack.enter_context(open(p.entries, "wb")), stack.enter_context(open(p.fps, "wb")))
                for p in parts
            ]
            for chunk_entries, chunk_fps in chunks:
                entries, fps = np.empty_like(chunk_entries), np.empty_like(chunk_fps)
                ends = kernels.partition_by_key(chunk_entries, chunk_fps, shift, mask, entries, fps)
                del chunk_entries, chunk_fps
                begin = 0
                for p, end in enumerate(ends.tolist()):
                    if end > begin:
                        entries[begin:end].tofile(files[p][0])
                        fps[begin:end].tofile(files[p][1])
                        parts[p].rows += end - begin
                    begin = end
                self.written += entries.nbytes + fps.nbytes
        for part in parts:
            if not part.rows:
                _remove(part)
        return [part for part in parts if part.rows]

    def _join_part(self, part: _Part) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        if part.rows > self.plan.partition_rows and part.key_bits < self.width:
            subparts = self._split(self._chunks_of_part(part), part.rows, part.key_bits)
            _remove(part)
            for sub in subparts:
                yield from self._join_part(sub)
            return
        entries = np.fromfile(part.entries, dtype=np.uint64)
        fps = np.fromfile(part.fps, dtype=np.uint64).reshape(part.rows, self.plan.words)
        _remove(part)
        yield from self._join_rows(entries, fps)

    def _join_rows(
        self, entries: np.ndarray, fps: np.ndarray
    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The table's pairs among these rows (whole key groups): each entry's row number is
        swapped for its place here, so that the join reads ``fps`` in place."""
        m = entries.shape[0]
        if m < 2:
            return
        rows = (entries & self.rowmask).astype(np.int64)
        entries &= ~self.rowmask
        entries |= np.arange(m, dtype=np.uint64)
        entries.sort()
        table = entries.reshape(1, m)
        for a, b, d in key_group_pairs(fps, table, self.t, self.lay, self.k, self.plan.window):
            if len(a):
                a, b = rows[a], rows[b]
                yield np.minimum(a, b), np.maximum(a, b), d


class MappedPages:
    """The read-only file mapping an array lies in, whose pages :meth:`release` gives back."""

    def __init__(self, mapping: mmap.mmap) -> None:
        self.mapping = mapping
        self.address = np.frombuffer(mapping, dtype=np.uint8).ctypes.data

    @classmethod
    def of(cls, array: np.ndarray) -> MappedPages | None:
        """The mapping of ``array`` (a view of a view ... of an ``mmap``), if it is one that
        cannot have been written through (its buffer is read-only: every page is the file's,
        so a released page reads the same when touched again) and this platform can release
        its pages; else None."""
        base = array.base
        while isinstance(base, np.ndarray):
            base = base.base
        if not isinstance(base, mmap.mmap) or base.closed or not hasattr(mmap, "MADV_DONTNEED"):
            return None  # in memory, or a platform without madvise (Windows)
        with memoryview(base) as buffer:
            return cls(base) if buffer.readonly else None

    def release(self, view: np.ndarray) -> None:
        """Drop the pages ``view`` spans from the process (from the page below its first byte
        to the one holding its last): its resident memory falls, and a page touched again is
        mapped again from the page cache or the file."""
        low, high = np.lib.array_utils.byte_bounds(view)
        start = (low - self.address) // mmap.PAGESIZE * mmap.PAGESIZE
        if high > low and 0 <= start < len(self.mapping):
            self.mapping.madvise(mmap.MADV_DONTNEED, start, high - self.address - start)


def _remove(part: _Part) -> None:
    part.entries.unlink(missing_ok=True)
    part.fps.unlink(missing_ok=True)
