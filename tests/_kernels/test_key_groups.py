"""The Spark join's per-task kernels (``_kernels/key_groups.py``) against brute force: rows sent
once per table to partitions by their table's key, joined partition by partition, give every
pair of distinct fingerprints within the radius exactly once."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import IndexPlan
from neardup._kernels.key_groups import group_entries, group_pairs
from neardup.index.plan import row_bits


def brute_force(fps: np.ndarray, k: int) -> list[tuple[int, int, int]]:
    out = []
    for i in range(len(fps)):
        for j in range(i + 1, len(fps)):
            d = sum(int(x ^ y).bit_count() for x, y in zip(fps[i], fps[j]))
            if d <= k:
                out.append((i, j, d))
    return out


def family(rng: np.random.Generator, n: int, words: int, k: int) -> np.ndarray:
    """Distinct fingerprints, most within k + 1 bits of a few bases: many pairs, at and around k."""
    bases = rng.integers(0, 2**64, size=(3, words), dtype=np.uint64)
    rows = set()
    while len(rows) < n:
        row = bases[rng.integers(0, 3)].copy()
        for bit in rng.choice(64 * words, size=rng.integers(0, k + 2), replace=False):
            row[bit // 64] ^= np.uint64(1) << np.uint64(int(bit) % 64)
        rows.add(tuple(int(w) for w in row))
    return np.array(sorted(rows), dtype=np.uint64).reshape(n, words)


def joined(fps, plan, k, partitions, capacity, spare_bits, rng):
    """The pairs the tasks find: each (row, table) goes to a partition by a hash of the table's
    kept bits, and each partition is joined on its own, ``capacity`` pairs per call."""
    starts = np.array(plan.block_starts, dtype=np.int64)
    sizes = np.array(plan.block_sizes, dtype=np.int64)
    kept = np.array(plan.tables, dtype=np.int64).reshape(plan.num_tables, -1)
    masks = np.array([sum(1 << j for j in t) for t in plan.tables], dtype=np.uint64)
    salt = int(rng.integers(0, 2**32))
    sent: dict[int, list[tuple[int, int]]] = {}
    for t, blocks in enumerate(plan.tables):
        mask = sum(((1 << plan.block_sizes[b]) - 1) << plan.block_starts[b] for b in blocks)
        for r, row in enumerate(fps):
            value = sum(int(w) << (64 * i) for i, w in enumerate(row)) & mask
            sent.setdefault(hash((t, value, salt)) % partitions, []).append((r, t))
    found = []
    tshift = 64 - max(1, (plan.num_tables - 1).bit_length())
    for rows in sent.values():
        order = rng.permutation(len(rows))  # a task's rows come in any order
        at = np.array([rows[i][0] for i in order], dtype=np.int64)
        tables = np.array([rows[i][1] for i in order], dtype=np.int64)
        local = np.ascontiguousarray(fps[at])
        # spare_bits widen the row field, so keys are cut short and groups merge: still exact
        rowbits = min(row_bits(len(at)) + spare_bits, tshift - 1)
        entries = group_entries(local, tables, starts, sizes, kept, rowbits, tshift)
        entries.sort()
        cursor = np.array([0, 1], dtype=np.int64)
        while True:
            a, b, d = group_pairs(local, entries, rowbits, tshift, starts, sizes, masks, k, cursor, capacity)
            found += [(*sorted((int(at[x]), int(at[y]))), int(z)) for x, y, z in zip(a, b, d)]
            if len(a) < capacity:
                break
    return found


@settings(deadline=None, max_examples=40)
@given(
    st.sampled_from([64, 128]),
    st.integers(0, 4),
    st.integers(0, 3),
    st.integers(2, 60),
    st.integers(1, 5),
    st.sampled_from([1, 3, 1000]),
    st.sampled_from([0, 40]),
    st.integers(0, 2**32),
)
def test_tasks_find_every_pair_once(bits, k, extra_blocks, n, partitions, capacity, spare_bits, seed):
    rng = np.random.default_rng(seed)
    fps = family(rng, n, bits // 64, k)
    plan = IndexPlan(bits, k, max(k + 1 + extra_blocks, bits // 64) if k else bits // 64, "test")
    found = joined(fps, plan, k, partitions, capacity, spare_bits, rng)
    assert len(found) == len(set(found))  # once, over all tables and partitions
    assert sorted(found) == brute_force(fps, k)
