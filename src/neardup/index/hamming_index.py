"""HammingIndex: exact, complete search within a Hamming radius over stored fingerprints.

Permuted tables (Manku, Jain & Das Sarma, WWW 2007; layout in ``plan.py``, kernels in
``_kernels/index.py``). Every query and self-join result is verified with XOR + popcount, so
nothing within the radius is missed and nothing outside it is returned.

This first version rebuilds every table on each :meth:`HammingIndex.add`: add in large batches.
A delta buffer with ``compact()``, removal, persistence and multi-index hashing for radii above
7 are planned.
"""

from __future__ import annotations

import numpy as np

from .._errors import ConfigError
from .._kernels import index as kernels
from ..hamming import _as_fingerprints, _as_one_fingerprint
from .plan import IndexPlan, _check_distance, row_bits


class HammingIndex:
    """Fingerprints with int64 ids, searchable within ``max_distance`` bits.

    Args:
        bits: fingerprint width, 64 (uint64, shape (n,)) or 128 (uint64, shape (n, 2), column 0
            holding bits 0-63).
        max_distance: the largest radius searched, 0 to 7 bits.
        plan: ``"auto"`` (re-chosen from the size at every add), ``"compact"``, ``"balanced"``,
            ``"fast"``, a number of blocks, or an :class:`~neardup.IndexPlan`; see ``plan.py``.

    Example:
        >>> import numpy as np
        >>> index = HammingIndex(bits=64, max_distance=3)
        >>> index.add(np.array([0b1011, 0b1000, 2**63], dtype=np.uint64), ids=[10, 11, 12])
        >>> index.query(0b1011)
        (array([10, 11]), array([0, 2]))
    """

    def __init__(self, bits: int = 64, max_distance: int = 3, plan: object = "auto") -> None:
        self.bits = bits
        self.max_distance = _check_distance(max_distance)
        self._plan_spec = plan
        self.plan: IndexPlan = IndexPlan.choose(bits, self.max_distance, plan, 0)
        self._words = bits // 64
        self._fps = np.empty((0, self._words), dtype=np.uint64)
        self._ids = np.empty(0, dtype=np.int64)
        self._sorted_ids = self._ids
        self._tables = np.empty((self.plan.num_tables, 0), dtype=np.uint64)
        self._layout = self._layout_arrays(self.plan, 0)

    def __len__(self) -> int:
        return int(self._ids.shape[0])

    def __contains__(self, id_: object) -> bool:
        if isinstance(id_, bool) or not isinstance(id_, (int, np.integer)):
            return False
        if not -(2**63) <= int(id_) < 2**63:
            return False
        at = int(np.searchsorted(self._sorted_ids, id_))
        return at < len(self._sorted_ids) and int(self._sorted_ids[at]) == int(id_)

    def __repr__(self) -> str:
        return (f"HammingIndex(bits={self.bits}, max_distance={self.max_distance}, n={len(self)}, "
                f"{self.plan.describe(len(self))})")

    @property
    def ids(self) -> np.ndarray:
        """The stored ids in insertion order: int64, shape (n,) (a copy)."""
        return self._ids.copy()

    @property
    def nbytes(self) -> int:
        """Bytes held by tables, fingerprints and ids."""
        return int(self._tables.nbytes + self._fps.nbytes + self._ids.nbytes)

    def add(self, fingerprints: object, ids: object = None) -> None:
        """Store a batch of fingerprints and rebuild the tables.

        Args:
            fingerprints: uint64, shape (n,) for a 64-bit index or (n, 2) for 128 bits; other
                non-negative integer dtypes are converted.
            ids: int64, shape (n,), distinct and not yet stored; default the consecutive
                integers after the largest id stored so far (from 0 when empty).

        Raises ``TypeError`` or ``ValueError`` (a :class:`~neardup.ConfigError` for ids) and
        leaves the index unchanged when the batch cannot be added.
        """
        fps = self._coerce_batch(fingerprints, "fingerprints")
        n_new = fps.shape[0]
        new_ids = self._coerce_ids(ids, n_new)
        if n_new == 0:
            return
        all_fps = np.concatenate([self._fps, fps])
        all_ids = np.concatenate([self._ids, new_ids])
        sorted_ids = np.sort(all_ids)
        plan = IndexPlan.choose(self.bits, self.max_distance, self._plan_spec, len(all_ids))
        layout = self._layout_arrays(plan, len(all_ids))
        tables = self._build(all_fps, plan, layout)
        # Nothing above touched self: a failure leaves the index as it was.
        self._fps, self._ids, self._sorted_ids = all_fps, all_ids, sorted_ids
        self.plan, self._layout, self._tables = plan, layout, tables

    def query(self, fingerprint: object, max_distance: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Stored items within ``max_distance`` (default the index's) of one fingerprint.

        Returns ``(ids, distances)``, both int64, sorted by distance then id.
        """
        row = _as_one_fingerprint(fingerprint, "fingerprint")
        if row.shape[1] < self._words:
            row = np.pad(row, ((0, 0), (0, self._words - row.shape[1])))
        elif row.shape[1] > self._words:
            raise ValueError(f"fingerprint has {64 * row.shape[1]} bits; this index holds "
                             f"{self.bits}-bit fingerprints")
        _, found, dist = self._search(row, max_distance)
        return found, dist

    def query_batch(self, fingerprints: object,
                    max_distance: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Matches of many fingerprints, in CSR form, searched in parallel.

        Returns ``(offsets, ids, distances)``: int64 ``offsets`` of shape (q + 1,); query i's
        matches are ``ids[offsets[i]:offsets[i + 1]]`` and the same slice of ``distances``,
        sorted by distance then id.
        """
        return self._search(self._coerce_batch(fingerprints, "fingerprints"), max_distance)

    def pairs(self, max_distance: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The self-join: every pair of stored items within ``max_distance`` exactly once,
        identical fingerprints included.

        Returns ``(i_ids, j_ids, distances)``, int64 arrays with ``i_ids < j_ids``, sorted by
        (i_id, j_id).
        """
        k = self._radius(max_distance)
        if len(self) < 2:
            empty = np.empty(0, dtype=np.int64)
            return empty, empty.copy(), empty.copy()
        starts, sizes, _, masks, rowbits = self._layout
        args = (self._fps, self._ids, self._tables, starts, sizes, masks, rowbits, k)
        counts = kernels.join_count(*args)
        offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        i, j, d = kernels.join_fill(*args, offsets)
        order = np.lexsort((j, i))
        return i[order], j[order], d[order]

    def _radius(self, max_distance: int | None) -> int:
        if max_distance is None:
            return self.max_distance
        if isinstance(max_distance, bool) or not isinstance(max_distance, (int, np.integer)):
            raise ConfigError(f"max_distance={max_distance!r} must be an integer")
        if not 0 <= max_distance <= self.max_distance:
            raise ConfigError(
                f"max_distance={max_distance} is outside [0, {self.max_distance}] served by this "
                f"index; build one with HammingIndex(max_distance={max_distance}) to search farther")
        return int(max_distance)

    def _search(self, queries: np.ndarray, max_distance: int | None):
        k = self._radius(max_distance)
        q = queries.shape[0]
        if len(self) == 0 or q == 0:
            empty = np.empty(0, dtype=np.int64)
            return np.zeros(q + 1, dtype=np.int64), empty, empty.copy()
        starts, sizes, kept, masks, rowbits = self._layout
        widths = np.array(self.plan.stored_key_bits(len(self)), dtype=np.int64)
        queries = np.ascontiguousarray(queries, dtype=np.uint64)
        layout = (self._tables, starts, sizes, kept, widths, masks, rowbits, k)
        counts = kernels.query_count(queries, self._fps, *layout)
        offsets = np.zeros(q + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        found, dist = kernels.query_fill(queries, self._fps, self._ids, *layout, offsets)
        return offsets, found, dist

    def _coerce_batch(self, fingerprints: object, name: str) -> np.ndarray:
        if isinstance(fingerprints, (int, np.integer)):
            raise TypeError(f"{name} must be an array of fingerprints; use query() for one")
        fps = _as_fingerprints(fingerprints, name)
        if fps.shape[1] != self._words:
            want = "(n,)" if self._words == 1 else "(n, 2)"
            raise ValueError(f"{name} has shape {np.shape(fingerprints)}; this {self.bits}-bit index "
                             f"takes uint64 arrays of shape {want}")
        return np.ascontiguousarray(fps, dtype=np.uint64)

    def _coerce_ids(self, ids: object, n: int) -> np.ndarray:
        if ids is None:
            first = int(self._sorted_ids[-1]) + 1 if len(self._sorted_ids) else 0
            if first + n > 2**63:
                raise ConfigError(f"default ids from {first} would pass 2**63 - 1; pass ids")
            return np.arange(first, first + n, dtype=np.int64)
        arr = np.asarray(ids)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype(np.int64)  # an empty list
        if arr.dtype.kind not in "iu" or arr.dtype == np.uint64 and arr.size and arr.max() >= 2**63:
            raise TypeError(f"ids must be int64, got dtype {arr.dtype}")
        arr = arr.astype(np.int64)
        if arr.shape != (n,):
            raise ValueError(f"ids has shape {arr.shape}; expected ({n},), one per fingerprint")
        ordered = np.sort(arr)
        repeated = ordered[1:][ordered[1:] == ordered[:-1]]
        if repeated.size:
            raise ConfigError(f"ids repeat within the batch, e.g. {int(repeated[0])}; ids must be distinct")
        present = arr[np.isin(arr, self._sorted_ids)]
        if present.size:
            raise ConfigError(f"ids already stored, e.g. {int(present[0])}; ids must be distinct")
        return arr

    @staticmethod
    def _layout_arrays(plan: IndexPlan, n: int):
        starts = np.array(plan.block_starts, dtype=np.int64)
        sizes = np.array(plan.block_sizes, dtype=np.int64)
        kept = np.array(plan.tables, dtype=np.int64).reshape(plan.num_tables, -1)
        masks = np.array([sum(1 << j for j in t) for t in plan.tables], dtype=np.uint64)
        return starts, sizes, kept, masks, row_bits(n)

    @staticmethod
    def _build(fps: np.ndarray, plan: IndexPlan, layout) -> np.ndarray:
        starts, sizes, kept, _, rowbits = layout
        widths = np.array(plan.stored_key_bits(fps.shape[0]), dtype=np.int64)
        tables = kernels.build_entries(fps, starts, sizes, kept, widths, rowbits)
        tables.sort(axis=1)
        return tables
