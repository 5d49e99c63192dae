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

from collections.abc import Iterator

import numba
import numpy as np

from .._kernels import index as kernels
from .hamming import _as_fingerprints
from .plan import IndexPlan, _check_distance
from .tables import csr_offsets, layout

JOIN_WINDOW = 1 << 22
"""Candidate pairs examined at a time (the pairs of a window: at most three int64 arrays of
this length, 96 MiB)."""


def self_join(
    fingerprints: object,
    max_distance: int = 3,
    *,
    plan: object = "auto",
    chunk_size: int = JOIN_WINDOW,
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Every pair of rows of ``fingerprints`` within ``max_distance`` bits, exactly once, in
    chunks ``(i, j, distances)``: int64 row numbers with ``i < j``, chunks and pairs in no
    particular order, each chunk at most ``chunk_size`` pairs.

    The pairs of ``HammingIndex.pairs`` over the same rows, in the memory of one table
    rather than all of them. ``fingerprints`` are uint64, (n,) for 64 bits or (n, 2) for 128
    (a memory-mapped array is read, not copied); ``plan`` as for :class:`HammingIndex`. A
    plan whose tables do not each find their pairs by key alone (multi-index hashing past
    its blocks' radius, ``max_distance`` 8 at 64 bits) is joined through a whole index.
    """
    fps = _as_fingerprints(fingerprints, "fingerprints")
    bits = 64 * fps.shape[1]
    k = _check_distance(max_distance, bits)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ValueError(f"chunk_size={chunk_size!r} must be a positive integer")
    n = fps.shape[0]
    chosen = IndexPlan.choose(bits, k, plan, n)
    if n < 2:
        return
    if k // chosen.num_blocks:
        yield from _through_an_index(fps, k, chosen, int(chunk_size))
        return
    lay = layout(chosen, n)
    parts = 4 * numba.get_num_threads()
    for t in range(chosen.num_tables):
        entries = np.empty((1, n), dtype=np.uint64)
        kept, widths = lay.kept[t : t + 1], lay.widths[t : t + 1]
        kernels.build_entries(fps, lay.starts, lay.sizes, kept, widths, lay.rowbits, entries)
        entries.sort(axis=1)
        unit_offsets = csr_offsets(kernels.join_unit_candidates(entries, lay.rowbits))
        total = int(unit_offsets[-1])
        for c0 in range(0, total, chunk_size):
            a, b, d = kernels.join_span(
                fps, entries, t, lay.starts, lay.sizes, lay.masks, lay.rowbits, k,
                unit_offsets, c0, min(total, c0 + chunk_size), parts,
            )  # fmt: skip
            if len(a):
                yield np.minimum(a, b), np.maximum(a, b), d
        del entries  # before the next table is made


def _through_an_index(
    fps: np.ndarray, k: int, plan: IndexPlan, chunk_size: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    from .hamming_index import HammingIndex

    index = HammingIndex(bits=64 * fps.shape[1], max_distance=k, plan=plan)
    index.add(fps if fps.shape[1] == 2 else fps.reshape(-1))
    yield from index.iter_pairs(chunk_size=chunk_size)
