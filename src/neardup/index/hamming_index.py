"""HammingIndex: exact, complete search within a Hamming radius over stored fingerprints.

Permuted tables (Manku, Jain & Das Sarma, WWW 2007; layout in ``plan.py``) up to max_distance 7,
multi-index hashing (Norouzi, Punjani & Fleet, CVPR 2012; its probe keys in ``_kernels/mih.py``)
beyond, up to 8 on 64 bits and 16 on 128 bits; one probe loop (``_kernels/index.py``) searches
both. Every query and self-join result is verified with XOR + popcount, so nothing within the
radius is missed and nothing outside it is returned.

Updates without rebuilding. The tables cover the *main* items. :meth:`HammingIndex.add` appends
to a small in-memory *delta* (fingerprints and ids) that every search also scans by brute force
(XOR + popcount, parallel over queries); :meth:`HammingIndex.remove` drops delta items at once
and marks main items with *tombstones* (their ids), which searches filter out.
:meth:`HammingIndex.compact` folds the delta in and drops the tombstoned rows, rebuilding the
tables. An index built in memory compacts by itself once the pending changes (delta items plus
tombstones) pass ``n_main / 8``, at least ``DELTA_MIN`` and at most ``DELTA_MAX`` (so a scan
stays under ~65k XOR + popcounts per query, and adds cost amortised O(1) table rebuilds
each); an index from :meth:`HammingIndex.open` keeps its memory-mapped tables until the caller
compacts (``auto_compact=False``).

Persistence: :meth:`HammingIndex.save` writes one self-describing file atomically and
:meth:`HammingIndex.open` memory-maps it (format in ``storage.py``).

This module holds the index's state, its updates and its API; the tables are built in
``tables.py``, queries run in ``search.py``, the self-join in ``join.py``, and clusters by the
rule of ``components.py``.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator

import numpy as np

from .._errors import ConfigError, TooManyPairsError
from .._kernels import index as kernels
from . import storage, tables
from .components import collapse, component_roots
from .hamming import _as_fingerprints, _as_one_fingerprint
from .join import PAIR_BYTES, joined, pair_chunks, pairs_memory_limit, rechunked
from .plan import IndexPlan, _check_distance
from .search import search, search_main
from .self_join import self_join
from .tables import member

DELTA_MIN = 4096
DELTA_MAX = 65536
DELTA_FRACTION = 8
"""Auto-compaction: when delta items + tombstones exceed
``min(max(DELTA_MIN, n_main // DELTA_FRACTION), DELTA_MAX)``."""

_EMPTY_IDS = np.empty(0, dtype=np.int64)
PAIRS_CHUNK = 1 << 22
"""Pairs per chunk of :meth:`HammingIndex.iter_pairs` by default (three int64 arrays: 96 MiB)."""


class HammingIndex:
    """Fingerprints with int64 ids, searchable within ``max_distance`` bits.

    Args:
        bits: fingerprint width, 64 (uint64, shape (n,)) or 128 (uint64, shape (n, 2), column 0
            holding bits 0-63).
        max_distance: the largest radius searched, 0 to 8 bits (64-bit) or 0 to 16 (128-bit);
            beyond 7, multi-index hashing.
        plan: ``"auto"`` (re-chosen from the size whenever the tables are rebuilt),
            ``"compact"``, ``"balanced"``, ``"fast"``, ``"mih"`` (multi-index hashing, its
            number of blocks re-chosen like ``"auto"``), a number of blocks, or an
            :class:`~neardup.IndexPlan`; see ``plan.py``.
        fingerprint_config: how the fingerprints were made, e.g.
            ``FingerprintConfig.to_dict()``: a JSON-able dict stored verbatim by :meth:`save`
            and checked by :meth:`open`; None (default) when unknown.

    Attributes:
        auto_compact: compact by itself when the pending changes pass the threshold in the
            module docstring; True when built, False when opened from a file.

    Example:
        >>> import numpy as np
        >>> index = HammingIndex(bits=64, max_distance=3)
        >>> index.add(np.array([0b1011, 0b1000, 2**63], dtype=np.uint64), ids=[10, 11, 12])
        >>> index.query(0b1011)
        (array([10, 11]), array([0, 2]))
    """

    def __init__(
        self,
        bits: int = 64,
        max_distance: int = 3,
        plan: object = "auto",
        fingerprint_config: dict | None = None,
    ) -> None:
        if fingerprint_config is not None:
            try:
                if not isinstance(fingerprint_config, dict):
                    raise TypeError("not a dict")
                fingerprint_config = json.loads(json.dumps(fingerprint_config))
            except (TypeError, ValueError) as e:
                raise ConfigError(
                    f"fingerprint_config must be a JSON-able dict such as "
                    f"FingerprintConfig.to_dict(), got {fingerprint_config!r} ({e})"
                ) from e
        self.fingerprint_config = fingerprint_config
        self.auto_compact = True
        self.bits = bits
        self.max_distance = _check_distance(max_distance, bits)
        self._plan_spec = plan
        self.plan: IndexPlan = IndexPlan.choose(bits, self.max_distance, plan, 0)
        self._words = bits // 64
        self._fps = np.empty((0, self._words), dtype=np.uint64)
        self._ids = np.empty(0, dtype=np.int64)
        self._sorted_ids = self._ids
        self._layout = tables.layout(self.plan, 0)
        self._tables, self._directory = tables.build(self._fps, self._layout)
        self._delta_fps = self._fps
        self._delta_ids = _EMPTY_IDS
        self._dead = _EMPTY_IDS  # sorted ids of tombstoned main rows

    def __len__(self) -> int:
        return int(self._ids.shape[0] - self._dead.shape[0] + self._delta_ids.shape[0])

    def __contains__(self, id_: object) -> bool:
        if isinstance(id_, bool) or not isinstance(id_, (int, np.integer)):
            return False
        if not -(2**63) <= int(id_) < 2**63:
            return False
        one = np.array([id_], dtype=np.int64)
        if bool(np.any(self._delta_ids == one[0])):
            return True
        return bool(member(self._sorted_ids, one)[0] and not member(self._dead, one)[0])

    def __repr__(self) -> str:
        pending = (
            f", delta={len(self._delta_ids)}, removed={len(self._dead)}"
            if len(self._delta_ids) or len(self._dead)
            else ""
        )
        return (
            f"HammingIndex(bits={self.bits}, max_distance={self.max_distance}, n={len(self)}"
            f"{pending}, {self.plan.describe(self._ids.shape[0])})"
        )

    @property
    def ids(self) -> np.ndarray:
        """The live ids, in insertion order up to the last compaction, then added ones: int64,
        shape (n,) (a copy)."""
        main = self._ids[~member(self._dead, self._ids)] if len(self._dead) else np.array(self._ids)
        return np.concatenate([main, self._delta_ids])

    @property
    def nbytes(self) -> int:
        """Bytes held by tables and directories, fingerprints and ids, the delta and tombstones
        included (memory-mapped arrays count in full)."""
        return int(
            self._tables.nbytes
            + self._directory.nbytes
            + self._fps.nbytes
            + self._ids.nbytes
            + (self._sorted_ids.nbytes if self._sorted_ids is not self._ids else 0)
            + self._delta_fps.nbytes
            + self._delta_ids.nbytes
            + self._dead.nbytes
        )

    def add(self, fingerprints: object, ids: object = None) -> None:
        """Store a batch of fingerprints: into the delta, searched at once; the tables are
        rebuilt only by compaction (see the module docstring).

        Args:
            fingerprints: uint64, shape (n,) for a 64-bit index or (n, 2) for 128 bits; other
                non-negative integer dtypes are converted.
            ids: int64, shape (n,), distinct and not live in the index (a removed id may be
                added again at once); default the consecutive integers after the largest id
                held (live, in the delta, or removed but not yet compacted; from 0 when empty).

        Raises ``TypeError`` or ``ValueError`` (a :class:`~neardup.ConfigError` for ids) and
        leaves the index unchanged when the batch cannot be added.
        """
        fps = self._coerce_batch(fingerprints, "fingerprints")
        n_new = fps.shape[0]
        new_ids = self._coerce_ids(ids, n_new)
        if n_new == 0:
            return
        delta_fps = np.concatenate([self._delta_fps, fps])
        delta_ids = np.concatenate([self._delta_ids, new_ids])
        if self.auto_compact and self._due(len(delta_ids), len(self._dead)):
            self._rebuild(delta_fps, delta_ids, self._dead)
        else:
            self._delta_fps, self._delta_ids = delta_fps, delta_ids

    def remove(self, ids: object) -> None:
        """Remove items by id: delta items at once, main items by tombstone until compaction.

        Args:
            ids: an int or int64 array of live ids, distinct.

        Raises :class:`~neardup.ConfigError` naming an id that is not live in the index (or
        repeats) and leaves the index unchanged.
        """
        arr = np.asarray(ids)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype(np.int64)
        if arr.dtype.kind not in "iu" or (arr.dtype == np.uint64 and arr.size and arr.max() >= 2**63):
            raise TypeError(f"ids must be int64, got dtype {arr.dtype}")
        arr = arr.astype(np.int64).reshape(-1)
        ordered = np.sort(arr)
        repeated = ordered[1:][ordered[1:] == ordered[:-1]]
        if repeated.size:
            raise ConfigError(f"ids repeat within the batch, e.g. {int(repeated[0])}; ids must be distinct")
        in_delta = np.isin(arr, self._delta_ids)
        in_main = ~in_delta & member(self._sorted_ids, arr) & ~member(self._dead, arr)
        absent = arr[~(in_delta | in_main)]
        if absent.size:
            raise ConfigError(
                f"{absent.size} ids are not in the index, e.g. {int(absent[0])}; "
                "remove only live ids (check `id in index`)"
            )
        keep = ~np.isin(self._delta_ids, arr[in_delta])
        delta_fps, delta_ids = self._delta_fps[keep], self._delta_ids[keep]
        dead = np.union1d(self._dead, arr[in_main]).astype(np.int64)
        if self.auto_compact and len(dead) and self._due(len(delta_ids), len(dead)):
            self._rebuild(delta_fps, delta_ids, dead)
        else:
            self._delta_fps, self._delta_ids, self._dead = delta_fps, delta_ids, dead

    def copy(self) -> HammingIndex:
        """A copy in microseconds, sharing this index's arrays: a change to either is not seen
        by the other, because every change (add, remove, compact) builds new arrays instead
        of writing into old ones. A reader can keep searching a copy while a writer changes
        the index, or while another copy is compacted."""
        return copy.copy(self)

    @property
    def compaction_due(self) -> bool:
        """Whether the pending changes (the delta and the tombstones) have passed the size at
        which ``auto_compact`` would compact: a caller that compacts by itself (elsewhere, on
        a :meth:`copy`) asks this after each change."""
        pending = len(self._delta_ids) + len(self._dead)
        return pending > 0 and self._due(len(self._delta_ids), len(self._dead))

    def compact(self) -> None:
        """Fold the delta into the tables and drop tombstoned rows: one rebuild, in memory (an
        opened index stops using its file; :meth:`save` it). Does nothing when nothing is
        pending."""
        if len(self._delta_ids) or len(self._dead):
            self._rebuild(self._delta_fps, self._delta_ids, self._dead)

    def _due(self, pending_delta: int, dead: int) -> bool:
        n_main = self._ids.shape[0]
        if n_main == dead:
            return pending_delta > 0  # no live tables: build them rather than scan
        threshold = min(max(DELTA_MIN, n_main // DELTA_FRACTION), DELTA_MAX)
        return pending_delta + dead > threshold

    def _rebuild(self, delta_fps: np.ndarray, delta_ids: np.ndarray, dead: np.ndarray) -> None:
        live = ~member(dead, self._ids) if len(dead) else slice(None)
        all_fps = np.ascontiguousarray(np.concatenate([self._fps[live], delta_fps]))
        all_ids = np.concatenate([self._ids[live], delta_ids])
        # ids added in order (the default ids, row numbers) are their own sorted copy
        ascending = len(all_ids) < 2 or bool(np.all(all_ids[1:] > all_ids[:-1]))
        sorted_ids = all_ids if ascending else np.sort(all_ids)
        plan = IndexPlan.choose(self.bits, self.max_distance, self._plan_spec, len(all_ids))
        layout = tables.layout(plan, len(all_ids))
        built, directory = tables.build(all_fps, layout)
        # Nothing above touched self: a failure leaves the index as it was.
        self._fps, self._ids, self._sorted_ids = all_fps, all_ids, sorted_ids
        self.plan, self._layout, self._tables, self._directory = plan, layout, built, directory
        self._delta_fps, self._delta_ids, self._dead = all_fps[:0], _EMPTY_IDS, _EMPTY_IDS

    def query(self, fingerprint: object, max_distance: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Stored items within ``max_distance`` (default the index's) of one fingerprint.

        Returns ``(ids, distances)``, both int64, sorted by distance then id.
        """
        if (
            isinstance(fingerprint, (int, np.unsignedinteger))
            and 0 <= fingerprint < 2**64
            and not isinstance(fingerprint, bool)
        ):  # the common case, kept lean
            row = np.array([[fingerprint, 0][: self._words]], dtype=np.uint64)
        else:
            row = _as_one_fingerprint(fingerprint, "fingerprint")
            if row.shape[1] < self._words:
                row = np.pad(row, ((0, 0), (0, self._words - row.shape[1])))
            elif row.shape[1] > self._words:
                raise ValueError(
                    f"fingerprint has {64 * row.shape[1]} bits; this index holds {self.bits}-bit fingerprints"
                )
        if len(self._dead) or len(self._delta_ids) or not self._ids.shape[0]:
            _, found, dist = search(self, row, self._radius(max_distance))
        else:  # main rows only: nothing to filter or merge
            _, found, dist = search_main(self, row, self._radius(max_distance))
        return found, dist

    def query_batch(
        self, fingerprints: object, max_distance: int | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Matches of many fingerprints, in CSR form, searched in parallel.

        Returns ``(offsets, ids, distances)``: int64 ``offsets`` of shape (q + 1,); query i's
        matches are ``ids[offsets[i]:offsets[i + 1]]`` and the same slice of ``distances``,
        sorted by distance then id.
        """
        queries = self._coerce_batch(fingerprints, "fingerprints")
        return search(self, queries, self._radius(max_distance))

    def join_candidates(self) -> int | None:
        """How many candidate pairs :meth:`pairs` would examine, counted from the tables' key
        groups in one pass without forming any: an upper bound on the pairs it returns, so a
        caller can tell a cheap self-join from one quadratic in a group of near-identical
        fingerprints. None where :meth:`pairs` probes instead of grouping (multi-index hashing
        at a radius past its blocks) or items wait in the delta (call :meth:`compact`)."""
        if len(self._delta_ids) or self.max_distance // self.plan.num_blocks or len(self._ids) < 2:
            return None
        lay = self._layout
        tables, directory = self._tables, self._directory
        return int(kernels.join_unit_candidates(tables, directory, lay.widths, lay.rowbits, lay.dbits).sum())

    def pairs(self, max_distance: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The self-join: every pair of stored items within ``max_distance`` exactly once,
        identical fingerprints included.

        Returns ``(i_ids, j_ids, distances)``, int64 arrays with ``i_ids < j_ids``, sorted by
        (i_id, j_id). n copies of one fingerprint make n (n - 1) / 2 pairs: where the pairs
        would not fit in memory this raises :class:`TooManyPairsError` as soon as that is
        clear; stream them with :meth:`iter_pairs`, or cluster with :meth:`clusters`.
        """
        k = self._radius(max_distance)
        limit = pairs_memory_limit()
        parts, held = [], 0
        for part in pair_chunks(self, k, PAIRS_CHUNK):
            held += len(part[0])
            if held > limit:
                raise TooManyPairsError(
                    f"the self-join within {k} bits holds more than {held:,} pairs, more than "
                    f"memory holds at {PAIR_BYTES} bytes a pair; iterate index.iter_pairs() to "
                    f"stream them in chunks, or call index.clusters() for the clusters alone"
                )
            parts.append(part)
        if not parts:
            return _EMPTY_IDS.copy(), _EMPTY_IDS.copy(), _EMPTY_IDS.copy()
        i, j, d = joined(parts)
        del parts
        order = np.lexsort((j, i))
        return i[order], j[order], d[order]

    def iter_pairs(
        self,
        max_distance: int | None = None,
        *,
        chunk_size: int = PAIRS_CHUNK,
        memory: int | None = None,
        work_dir: str | os.PathLike | None = None,
    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The pairs of :meth:`pairs`, streamed in bounded memory: chunks ``(i_ids, j_ids,
        distances)`` of at most ``chunk_size`` pairs (``i_ids < j_ids``; chunks and pairs in
        no particular order), together every pair exactly once. The join works through a
        window of ``chunk_size`` candidates at a time (or, where it probes, a batch of items
        whose matches fit), so a group of a million copies (5e11 pairs) streams in the
        memory of one chunk, as a random corpus does.

        ``memory`` (bytes) joins the fingerprints instead as :func:`neardup.self_join` does
        in that budget, out of core past it (``work_dir``), one table at a time, without
        reading the index's tables: for an index opened from a file too large for memory, whose
        fingerprints and ids are then read in place (after :meth:`compact`; pending changes
        are copied out first)."""
        k = self._radius(max_distance)
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
            raise ConfigError(f"chunk_size={chunk_size!r} must be a positive integer")
        if memory is not None:
            yield from self._joined_in(k, int(chunk_size), memory, work_dir)
            return
        yield from rechunked(pair_chunks(self, k, int(chunk_size)), int(chunk_size))

    def _joined_in(
        self, k: int, chunk_size: int, memory: int, work_dir: str | os.PathLike | None
    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """:meth:`iter_pairs` in ``memory`` bytes: the self-join of the live fingerprints."""
        if len(self._delta_ids) or len(self._dead):
            fps, ids = self._live()
        else:  # memory-mapped when opened: read in place
            fps, ids = self._fps, self._ids
        for i, j, d in self_join(fps, k, chunk_size=chunk_size, memory=memory, work_dir=work_dir):
            a, b = ids[i], ids[j]
            yield np.minimum(a, b), np.maximum(a, b), d

    def clusters(self, max_distance: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Connected components of the pairs within ``max_distance``, without a pair list:
        identical fingerprints are collapsed into one entry first and the pairs between
        distinct fingerprints are streamed into a union-find, so memory stays linear in the
        items however large a cluster.

        Returns ``(ids, labels)``: the stored ids in ascending order and, for each, the
        lowest id of its cluster (equal to :func:`neardup.clusters` over :meth:`pairs`).
        """
        k = self._radius(max_distance)
        fps, ids = self._live()
        order = np.argsort(ids, kind="stable")  # lowest id first: each cluster's label
        if not ids.size:
            return ids, ids.copy()
        distinct, rank, leader = collapse(fps[:, 0] if self._words == 1 else fps, order)
        roots = component_roots(distinct_index(distinct, self.bits, k)).roots
        return ids[order], ids[leader[roots[rank[order]]]]

    def save(self, path: str | os.PathLike) -> int:
        """Write the index to one file, atomically (a temporary file beside ``path``, fsync,
        rename: readers see the old file or the new one). Pending changes are saved as they
        are (delta and tombstones), without compacting. Returns the file's size in bytes.

        The JSON header records the format and its version, bits, max_distance, the plan (its
        strategy, blocks, tables and key widths), counts, ``fingerprint_config`` and a CRC-32 per array;
        ``storage.py`` describes the layout."""
        return storage.save_index(self, path)

    @classmethod
    def open(
        cls, path: str | os.PathLike, verify: bool | None = None, fingerprint_config: dict | None = None
    ) -> HammingIndex:
        """An index saved by :meth:`save`, its tables, fingerprints and ids memory-mapped
        read-only: nothing is read but the header, so a large index opens in milliseconds.

        Args:
            verify: check every array's CRC-32 (a pass over the file, ~2.5 GB/s). The default
                None checks files whose arrays hold at most 256 MiB and skips larger ones;
                the header's CRC, the format version, the sizes and the layout are always checked.
            fingerprint_config: when given, the file must have been built with this config
                (e.g. ``FingerprintConfig.to_dict()``).

        The opened index searches, adds and removes at once (adds go to the in-memory delta);
        it does not compact by itself (``auto_compact`` is False): call :meth:`compact`, then
        :meth:`save`.

        Raises :class:`~neardup.FormatError` naming the file when it is not an index file of
        this format version, is truncated or corrupt, or was built with another config.
        """
        return storage.open_index(cls, path, verify, fingerprint_config)

    def _arrays(self) -> dict[str, np.ndarray]:
        """The arrays :meth:`save` writes, by their names in the file (``storage.ARRAYS``)."""
        return {
            "fingerprints": self._fps,
            "ids": self._ids,
            "sorted_ids": self._sorted_ids,
            "tables": self._tables,
            "directory": self._directory,
            "delta_fingerprints": self._delta_fps,
            "delta_ids": self._delta_ids,
            "tombstones": self._dead,
        }

    @classmethod
    def _from_arrays(
        cls,
        plan: IndexPlan,
        plan_spec: object,
        arrays: dict[str, np.ndarray],
        fingerprint_config: dict | None,
    ) -> HammingIndex:
        """The index over ``arrays`` as :meth:`_arrays` names them, read and checked by
        ``storage.open_index``: the main rows' arrays used as given (memory-mapped), the delta
        and tombstones, small and changing, copied into memory. It does not compact by itself."""
        index = cls(plan.bits, plan.max_distance, plan)
        if plan_spec is not None:  # "auto", a preset or a number of blocks
            index._plan_spec = plan_spec
        index.fingerprint_config = fingerprint_config
        index._fps, index._ids = arrays["fingerprints"], arrays["ids"]
        index._sorted_ids, index._tables = arrays["sorted_ids"], arrays["tables"]
        index._directory = arrays["directory"]
        index._layout = tables.layout(plan, index._ids.shape[0])
        index._delta_fps = np.array(arrays["delta_fingerprints"])
        index._delta_ids = np.array(arrays["delta_ids"])
        index._dead = np.array(arrays["tombstones"])
        index.auto_compact = False
        return index

    def _radius(self, max_distance: int | None) -> int:
        if max_distance is None:
            return self.max_distance
        if isinstance(max_distance, bool) or not isinstance(max_distance, (int, np.integer)):
            raise ConfigError(f"max_distance={max_distance!r} must be an integer")
        if not 0 <= max_distance <= self.max_distance:
            raise ConfigError(
                f"max_distance={max_distance} is outside [0, {self.max_distance}] served by this "
                f"index; build one with HammingIndex(max_distance={max_distance}) to search farther"
            )
        return int(max_distance)

    def _live(self) -> tuple[np.ndarray, np.ndarray]:
        """Every stored item's fingerprint and id, main rows (less tombstones) then delta."""
        keep = ~member(self._dead, self._ids) if len(self._dead) else slice(None)
        return (
            np.concatenate([self._fps[keep], self._delta_fps]),
            np.concatenate([self._ids[keep], self._delta_ids]),
        )

    def _table_args(self) -> tuple[object, ...]:
        return tables.probe_args(self._tables, self._directory, self._layout)

    def _coerce_batch(self, fingerprints: object, name: str) -> np.ndarray:
        if isinstance(fingerprints, (int, np.integer)):
            raise TypeError(f"{name} must be an array of fingerprints; use query() for one")
        fps = _as_fingerprints(fingerprints, name)
        if fps.shape[1] != self._words:
            want = "(n,)" if self._words == 1 else "(n, 2)"
            raise ValueError(
                f"{name} has shape {np.asarray(fingerprints).shape}; this {self.bits}-bit index "
                f"takes uint64 arrays of shape {want}"
            )
        return np.ascontiguousarray(fps, dtype=np.uint64)

    def _coerce_ids(self, ids: object, n: int) -> np.ndarray:
        if ids is None:
            held = [int(a.max()) for a in (self._sorted_ids[-1:], self._delta_ids) if len(a)]
            first = max(held) + 1 if held else 0
            if first + n > 2**63:
                raise ConfigError(f"default ids from {first} would pass 2**63 - 1; pass ids")
            return np.arange(first, first + n, dtype=np.int64)
        arr = np.asarray(ids)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype(np.int64)  # an empty list
        if arr.dtype.kind not in "iu" or (arr.dtype == np.uint64 and arr.size and arr.max() >= 2**63):
            raise TypeError(f"ids must be int64, got dtype {arr.dtype}")
        arr = arr.astype(np.int64)
        if arr.shape != (n,):
            raise ValueError(f"ids has shape {arr.shape}; expected ({n},), one per fingerprint")
        ordered = np.sort(arr)
        repeated = ordered[1:][ordered[1:] == ordered[:-1]]
        if repeated.size:
            raise ConfigError(f"ids repeat within the batch, e.g. {int(repeated[0])}; ids must be distinct")
        present = arr[
            (member(self._sorted_ids, arr) & ~member(self._dead, arr)) | np.isin(arr, self._delta_ids)
        ]
        if present.size:
            raise ConfigError(f"ids already stored, e.g. {int(present[0])}; ids must be distinct")
        return arr


def distinct_index(distinct: np.ndarray, bits: int, max_distance: int) -> HammingIndex:
    """An index of distinct fingerprints (from ``components.collapse``), compacted, whose ids
    are their ranks."""
    index = HammingIndex(bits=bits, max_distance=max_distance)
    index.add(distinct)
    index.compact()
    return index
