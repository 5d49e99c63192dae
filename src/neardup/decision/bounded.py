"""The join of a dedup's distinct fingerprints, and the dedup decision in a memory budget
(``dedup(memory=)``, ``neardup dedup --memory``).

The distinct fingerprints are joined by :func:`neardup.self_join`, one table at a time: in
memory by default (the fingerprints and one table, 16 bytes each), the components rule
streaming its pairs into a union-find and the greedy rule holding them while they are few.
Where a near-identical family would make them quadratic, the greedy rule searches an index
of the fingerprints instead (``selection.py``), which never lists a family's pairs.

In a budget there is no index: the join goes out of core past it, and the greedy rule runs
over the pairs sorted by their first rank, held while they fit and partitioned on disk by
that rank when they do not (:func:`keep_greedy_streamed`). The answer is the same; the price
is the pairs themselves, f (f - 1) / 2 for a family of f distinct near-identical
fingerprints (the components rule streams them either way).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._errors import ConfigError
from .._kernels.pair_graph import KEPT, REMOVED, UNDECIDED, keep_in_order
from ..index.components import Accept
from ..index.hamming_index import PAIRS_CHUNK, HammingIndex, distinct_index
from ..index.self_join import JOIN_WINDOW, disk_bytes_needed, goes_out_of_core, self_join
from .selection import HELD_PAIRS, Greedy, greedy_over_pairs, keep_greedy, keep_greedy_pairs, undecided

PAIR_RECORD = np.dtype([("first", "<i8"), ("second", "<i8"), ("distance", "u1")])
"""A pair as a partition file holds it: 17 bytes."""

PAIR_BYTES = 48
"""Memory a held pair takes while its partition is decided: its record, the sort's order and
the partition's copies in that order."""

FANOUT = 256
"""Partitions of the ranks a spill writes at once (or splits a too-large one into)."""


@dataclass(frozen=True)
class JoinBudget:
    """Memory for the join of a dedup's distinct fingerprints and what follows from it."""

    memory: int
    """Bytes: the self-join's budget (out of core past it), and the held pairs'."""
    work_dir: str | None = None
    """Where what passes the budget is written (default: the system's temporary folder)."""

    def __post_init__(self) -> None:
        if isinstance(self.memory, bool) or not isinstance(self.memory, (int, np.integer)) or self.memory < 1:
            raise ConfigError(f"memory={self.memory!r} must be a positive number of bytes")
        if self.work_dir is not None and not os.path.isdir(self.work_dir):
            raise ConfigError(f"work_dir={self.work_dir!r} is not a folder; make it first, or give another")

    @classmethod
    def of(cls, memory: int | None, work_dir: str | os.PathLike | None) -> JoinBudget | None:
        """The budget ``dedup(memory=, work_dir=)`` ask for, or None for no budget."""
        if memory is None:
            if work_dir is not None:
                raise ConfigError("work_dir= is where a join past memory= writes: give memory= too")
            return None
        return cls(int(memory) if isinstance(memory, np.integer) else memory, _folder(work_dir))

    @property
    def folder(self) -> str:
        return self.work_dir if self.work_dir is not None else tempfile.gettempdir()

    def pairs(
        self, fingerprints: np.ndarray, max_distance: int, chunk_size: int = JOIN_WINDOW
    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The self-join of ``fingerprints`` in this budget: chunks ``(i, j, distance)``, ``i <
        j``, of at most ``chunk_size`` pairs. Refuses, before it writes anything, a work folder
        without the disk the join needs."""
        words = 1 if fingerprints.ndim == 1 else fingerprints.shape[1]
        if goes_out_of_core(fingerprints.shape[0], words, self.memory):
            needed, free = disk_bytes_needed(fingerprints), shutil.disk_usage(self.folder).free
            if needed > free:
                raise ConfigError(
                    f"the join of {fingerprints.shape[0]:,} fingerprints in {self.memory / 2**30:.2f} "
                    f"GiB of memory needs up to {needed / 2**30:.2f} GiB in {self.folder}, which has "
                    f"{free / 2**30:.2f} GiB free; give a work folder on a larger disk, or more memory"
                )
        return self_join(
            fingerprints, max_distance, chunk_size=chunk_size, memory=self.memory, work_dir=self.work_dir
        )


class DistinctJoin:
    """The join of a dedup's ``distinct`` fingerprints (ranked; rows are ranks).

    By default :func:`neardup.self_join` in memory (the fingerprints and one table), and the
    greedy rule over its pairs while they are few (:data:`~neardup.decision.selection.HELD_PAIRS`);
    past that a near-identical family would make the pairs quadratic, so the join stops and the
    rule searches an index of the fingerprints for the kept ones instead (``selection.py``).
    In a ``budget``, no index: out of core past it, the rule over spilled pairs."""

    def __init__(self, distinct: np.ndarray, bits: int, k: int, budget: JoinBudget | None) -> None:
        self.distinct, self.bits, self.k, self.budget = distinct, bits, k, budget
        self._index: HammingIndex | None = None

    def pairs(self, chunk_size: int = PAIRS_CHUNK) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Every pair of ranks within the radius, streamed: chunks ``(i, j, distance)``."""
        if self.budget is not None:
            return self.budget.pairs(self.distinct, self.k, chunk_size)
        return self_join(self.distinct, self.k, chunk_size=chunk_size)

    def greedy(
        self,
        blocked: np.ndarray | None,
        on_progress: Callable[[int], None],
        accept: Accept | None = None,
        lonely: np.ndarray | None = None,
    ) -> Greedy:
        """Manku's rule over the ranks: over the pairs, or by searches past :data:`HELD_PAIRS`."""
        m = self.distinct.shape[0]
        if self.budget is not None:
            return keep_greedy_streamed(m, self.pairs(), self.budget, blocked, accept, on_progress)
        if self._index is None:
            held = _held(self.pairs(), HELD_PAIRS)
            if held is not None:
                return greedy_over_pairs(m, held, blocked, accept, on_progress)
            self._index = distinct_index(self.distinct, self.bits, self.k)  # and for a second run
        return keep_greedy(self._index, self.distinct, blocked, on_progress, accept, lonely)


def _held(
    chunks: Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]], limit: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The pairs of ``chunks`` together, or None (the join stopped) once they pass ``limit``."""
    held: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    count = 0
    for chunk in chunks:
        count += len(chunk[0])
        if count > limit:
            if isinstance(chunks, Generator):
                chunks.close()
            return None
        held.append(chunk)
    if not held:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    first, second, distance = (np.concatenate([c[f] for c in held]) for f in range(3))
    return first, second, distance


def _folder(work_dir: str | os.PathLike | None) -> str | None:
    return None if work_dir is None else os.fspath(work_dir)


def keep_greedy_streamed(
    m: int,
    chunks: Iterable[tuple[np.ndarray, ...]],
    budget: JoinBudget,
    blocked: np.ndarray | None = None,
    accept: Accept | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> Greedy:
    """Manku's rule over ranks ``0 .. m - 1`` and the pairs of ``chunks`` (``(first, second,
    distance)``, ``first < second``, each pair once): the answer of
    :func:`~neardup.decision.selection.keep_greedy` on the same fingerprints, in ``budget``.

    A rank removes the later ranks it pairs with once it is kept, so the pairs are needed
    grouped by their first rank, in rank order. They are held while they fit in the budget;
    past it they are appended to files, one per range of first ranks, and each range is
    decided in turn (a range too large for the budget is split again; one rank's pairs, however
    many, stream through in chunks). ``accept`` is asked about every pair as it streams,
    where the search route asks only about the pairs that can still remove something: the
    same answer, with more pairs checked."""
    linked = np.zeros(m, dtype=bool)
    state, representative, distance = undecided(m, blocked)
    held = max(1, budget.memory // PAIR_BYTES)
    with _PairSpill(m, held, budget.folder) as spill:
        for chunk in chunks:
            first, second, pair_distance = chunk[0], chunk[1], chunk[2]
            linked[first] = linked[second] = True
            if accept is not None:
                good = accept(first, second, pair_distance)
                first, second, pair_distance = first[good], second[good], pair_distance[good]
            spill.add(first, second, pair_distance)
        if not spill.spilled:
            first, second, pair_distance = spill.held()
            if on_progress is not None:
                on_progress(m)
            return Greedy(*keep_greedy_pairs(m, first, second, pair_distance, blocked), linked)
        for lo, hi, part in spill.ranges():
            _decide(lo, hi, part, state, representative, distance)
            if on_progress is not None:
                on_progress(hi)
    return Greedy(state == KEPT, representative, distance, linked)


def _decide(
    lo: int,
    hi: int,
    pairs: np.ndarray,
    state: np.ndarray,
    representative: np.ndarray,
    distance: np.ndarray,
) -> None:
    """Manku's rule over ranks ``lo .. hi - 1``, whose pairs (records, first rank in the
    range) are ``pairs``; every rank before ``lo`` is decided. A rank already kept is a
    further chunk of one rank's pairs: it removes every undecided one it pairs with."""
    if hi - lo == 1 and state[lo] == KEPT:
        fresh = state[pairs["second"]] == UNDECIDED
        removed = pairs["second"][fresh]
        state[removed] = REMOVED
        representative[removed] = lo
        distance[removed] = pairs["distance"][fresh]
        return
    order = np.argsort(pairs["first"], kind="stable")
    offsets = np.zeros(hi - lo + 1, dtype=np.int64)
    np.cumsum(np.bincount(pairs["first"] - lo, minlength=hi - lo), out=offsets[1:])
    keep_in_order(
        np.arange(lo, hi, dtype=np.int64),
        offsets,
        np.ascontiguousarray(pairs["second"][order]),
        pairs["distance"][order].astype(np.int64),
        state,
        representative,
        distance,
    )


class _PairSpill:
    """Pairs held in memory up to ``held``, then appended to files by range of first rank,
    in a temporary folder removed on exit."""

    def __init__(self, m: int, held: int, folder: str) -> None:
        self.m, self.limit, self.folder = m, held, folder
        self._held: list[np.ndarray] = []
        self._count = 0
        self._stack = contextlib.ExitStack()
        self._dir: Path | None = None
        self._bounds = np.zeros(0, dtype=np.int64)

    def __enter__(self) -> _PairSpill:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    @property
    def spilled(self) -> bool:
        return self._dir is not None

    def add(self, first: np.ndarray, second: np.ndarray, distance: np.ndarray) -> None:
        records = np.empty(len(first), dtype=PAIR_RECORD)
        records["first"], records["second"], records["distance"] = first, second, distance
        if self._dir is not None:
            self._append(records)
            return
        self._held.append(records)
        self._count += len(records)
        if self._count > self.limit:
            made = tempfile.TemporaryDirectory(prefix="neardup-pairs-", dir=self.folder)
            self._dir = Path(self._stack.enter_context(made))
            self._bounds = _bounds(0, self.m)
            for held in self._held:
                self._append(held)
            self._held, self._count = [], 0

    def held(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        records = np.concatenate(self._held) if self._held else np.empty(0, dtype=PAIR_RECORD)
        return records["first"].copy(), records["second"].copy(), records["distance"].astype(np.int64)

    def _append(self, records: np.ndarray, bounds: np.ndarray | None = None, name: str = "") -> None:
        """Appends ``records`` to the files of their ranges (``bounds``; the top level's by
        default), named ``name`` and the range's number."""
        assert self._dir is not None
        bounds = self._bounds if bounds is None else bounds
        part = np.searchsorted(bounds, records["first"], side="right") - 1
        order = np.argsort(part, kind="stable")
        records, part = records[order], part[order]
        starts = np.flatnonzero(np.diff(part, prepend=-1))
        for start, end in zip(starts.tolist(), [*starts[1:].tolist(), len(part)]):
            with open(self._dir / f"{name}{int(part[start]):03d}", "ab") as out:
                records[start:end].tofile(out)

    def ranges(self) -> Iterator[tuple[int, int, np.ndarray]]:
        """Each range of ranks ``(lo, hi, pairs)`` in order, covering ``0 .. m - 1``, with the
        pairs whose first rank lies in it (at most the held count, or all one rank's)."""
        yield from self._ranges(self._bounds, "")

    def _ranges(self, bounds: np.ndarray, name: str) -> Iterator[tuple[int, int, np.ndarray]]:
        assert self._dir is not None
        for p in range(len(bounds) - 1):
            lo, hi = int(bounds[p]), int(bounds[p + 1])
            path = self._dir / f"{name}{p:03d}"
            count = path.stat().st_size // PAIR_RECORD.itemsize if path.exists() else 0
            if count <= self.limit:
                pairs = np.fromfile(path, dtype=PAIR_RECORD) if count else np.empty(0, dtype=PAIR_RECORD)
                path.unlink(missing_ok=True)
                yield lo, hi, pairs
            elif hi - lo == 1:  # one rank's pairs: decided in chunks, as its state is known
                yield from self._one_rank(lo, path)
            else:
                inner = _bounds(lo, hi)
                for records in _read(path, count, self.limit):
                    self._append(records, inner, f"{name}{p:03d}.")
                path.unlink()
                yield from self._ranges(inner, f"{name}{p:03d}.")

    def _one_rank(self, rank: int, path: Path) -> Iterator[tuple[int, int, np.ndarray]]:
        for records in _read(path, path.stat().st_size // PAIR_RECORD.itemsize, self.limit):
            yield rank, rank + 1, records
        path.unlink()


def _read(path: Path, count: int, limit: int) -> Iterator[np.ndarray]:
    """The ``count`` records of ``path``, ``limit`` at a time."""
    for at in range(0, count, limit):
        yield np.fromfile(path, dtype=PAIR_RECORD, count=limit, offset=at * PAIR_RECORD.itemsize)


def _bounds(lo: int, hi: int) -> np.ndarray:
    """Where the ranks ``lo .. hi - 1`` are cut into at most :data:`FANOUT` ranges."""
    return np.unique(lo + (np.arange(FANOUT + 1, dtype=np.int64) * (hi - lo)) // FANOUT)
