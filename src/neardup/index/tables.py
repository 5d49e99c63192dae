"""The permuted tables as arrays: a plan's layout for n rows (``plan.py``), and the tables built
from it, each one's entries (key bits, then the row's number) sorted, with a directory of where
each key prefix starts (kernels in ``_kernels/index.py``). Also the two array helpers that the
index's searches and self-join share: CSR offsets and membership in a sorted array."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._kernels import index as kernels
from .plan import IndexPlan, directory_dtype, row_bits


class Layout(NamedTuple):
    """A plan as the kernels take it, for a given number of main rows."""

    starts: np.ndarray  # int64, each block's lowest bit
    sizes: np.ndarray  # int64, each block's bits
    kept: np.ndarray  # int64 (tables, kept blocks)
    masks: np.ndarray  # uint64, each table's kept blocks as a bitmask
    widths: np.ndarray  # int64, each table's stored key bits
    rowbits: int
    dbits: int  # directory bits
    entry_dtype: np.dtype  # uint32 or uint64: what an index's table entry is stored in


def layout(plan: IndexPlan, n: int) -> Layout:
    """``plan``'s layout for ``n`` rows."""
    return Layout(
        starts=np.array(plan.block_starts, dtype=np.int64),
        sizes=np.array(plan.block_sizes, dtype=np.int64),
        kept=np.array(plan.tables, dtype=np.int64).reshape(plan.num_tables, -1),
        masks=np.array([sum(1 << j for j in t) for t in plan.tables], dtype=np.uint64),
        widths=np.array(plan.stored_key_bits(n), dtype=np.int64),
        rowbits=row_bits(n),
        dbits=plan.directory_bits(n),
        entry_dtype=plan.entry_dtype(n),
    )


def build(fps: np.ndarray, layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    """Sorted tables and their directories for the rows of ``fps``: each entry without the key
    bits its directory gives (``_kernels/index.py``), in ``layout.entry_dtype``. One table is
    made at a time in a uint64 scratch, so the build holds the stored tables and one more."""
    # numpy, unlike numba's allocator, asks Linux for transparent huge pages on large arrays:
    # with 4 KiB pages every probe of a 10^8-entry table also misses the TLB.
    n = fps.shape[0]
    count = layout.kept.shape[0]
    tables = np.empty((count, n), dtype=layout.entry_dtype)
    directory = np.zeros((count, 2**layout.dbits + 1), dtype=directory_dtype(n))
    if not n:
        return tables, directory
    scratch = np.empty((1, n), dtype=np.uint64)
    for t in range(count):
        kept, widths = layout.kept[t : t + 1], layout.widths[t : t + 1]
        kernels.build_entries(fps, layout.starts, layout.sizes, kept, widths, layout.rowbits, scratch)
        scratch.sort(axis=1)
        kernels.fill_directory(scratch, widths, layout.rowbits, layout.dbits, directory[t : t + 1])
        held = int(layout.widths[t]) - layout.dbits + layout.rowbits
        scratch &= np.uint64((1 << held) - 1)
        tables[t] = scratch[0]  # cast to uint32 where the held bits fit
    return tables, directory


def whole_key_directory(tables: int, n: int) -> np.ndarray:
    """The directory of tables whose entries keep their whole key (a self-join's): one
    bucket, with ``dbits`` 0."""
    directory = np.zeros((tables, 2), dtype=directory_dtype(n))
    directory[:, 1] = n
    return directory


def probe_args(tables: np.ndarray, directory: np.ndarray, layout: Layout) -> tuple[object, ...]:
    """The tables as the probing kernels take them, between the fingerprints (and ids) and
    max_distance."""
    return (
        tables,
        directory,
        layout.starts,
        layout.sizes,
        layout.kept,
        layout.widths,
        layout.masks,
        layout.rowbits,
        layout.dbits,
    )


def csr_offsets(counts: np.ndarray) -> np.ndarray:
    """CSR offsets (int64, (len(counts) + 1,)) from counts per row."""
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def member(sorted_values: np.ndarray, values: np.ndarray) -> np.ndarray:
    """bool, shape values.shape: which ``values`` occur in the sorted int64 ``sorted_values``
    (binary search: O(len(values) log n), no pass over a large memory-mapped array)."""
    if sorted_values.shape[0] == 0:
        return np.zeros(values.shape, dtype=bool)
    at = np.searchsorted(sorted_values, values)
    return sorted_values[np.minimum(at, sorted_values.shape[0] - 1)] == values
