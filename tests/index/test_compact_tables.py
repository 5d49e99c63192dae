"""The index's tables hold each entry without the key bits its directory gives, in uint32 where
the rest fits: checked against keys computed here bit by bit, the self-join's key groups
against a count of equal keys, and a file of format 2 (whole uint64 entries) still answers."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from neardup import HammingIndex, IndexPlan
from neardup.index import storage


def reference_key(fp: int, plan: IndexPlan, table: int, width: int) -> int:
    """The table's key of a 64-bit fingerprint: its kept blocks' bits concatenated in order,
    the first ``width`` of them."""
    key, bits = 0, 0
    for block in plan.tables[table]:
        start, size = plan.block_starts[block], plan.block_sizes[block]
        key = (key << size) | ((fp >> start) & ((1 << size) - 1))
        bits += size
    return key >> (bits - width)


def reference_entries(index: HammingIndex) -> list[list[int]]:
    """Each table's whole entries, ``(key << rowbits) | row``, sorted."""
    lay = index._layout
    fps = [int(v) for v in index._fps[:, 0]]
    return [
        sorted(
            (reference_key(fp, index.plan, t, int(lay.widths[t])) << lay.rowbits) | row
            for row, fp in enumerate(fps)
        )
        for t in range(index.plan.num_tables)
    ]


def clustered(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random fingerprints and near copies of a few of them: equal keys within a bucket, and
    equal key remainders in neighbouring buckets."""
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    heads = fps[: n // 10]
    fps[n // 2 : n // 2 + len(heads)] = heads ^ (
        np.uint64(1) << rng.integers(0, 64, size=len(heads)).astype(np.uint64)
    )
    fps[-50:] = fps[0]  # a group of 51 copies
    return fps


@pytest.mark.parametrize("plan", ["compact", "balanced", "fast"])
def test_tables_hold_the_bits_below_the_directory(plan):
    rng = np.random.default_rng(7)
    index = HammingIndex(max_distance=3, plan=plan)
    index.add(clustered(rng, 3000))
    lay = index._layout
    assert lay.dbits > 0 and index._tables.dtype == index.plan.entry_dtype(3000)
    for t, whole in enumerate(reference_entries(index)):
        held = int(lay.widths[t]) - lay.dbits + lay.rowbits
        assert index._tables[t].tolist() == [e & ((1 << held) - 1) for e in whole]
        top = [e >> held for e in whole]  # the directory's bits of each entry
        expected = np.searchsorted(top, np.arange(2**lay.dbits + 1), "left")
        assert np.array_equal(index._directory[t], expected)


def test_entries_are_four_bytes_where_the_rest_fits():
    for n in (10**3, 10**6, 10**8, 10**9):
        for name in ("compact", "balanced"):
            plan = IndexPlan.choose(64, 3, name, n)
            assert plan.entry_dtype(n) == np.uint32, (name, n)
            assert plan.table_bytes(n) == 4 * n * plan.num_tables
    fast = IndexPlan.choose(64, 3, "fast", 10**8)  # keys of 31-33 bits, 22 in the directory
    assert fast.entry_dtype(10**8) == np.uint64 and fast.table_bytes(10**8) == 8 * 10**8 * 20
    # the budget: 100M fingerprints queryable in at most 60 bytes each
    balanced = IndexPlan.choose(64, 3, "balanced", 10**8)
    assert balanced.total_bytes(10**8) / 10**8 < 60


def same_remainders(rng: np.random.Generator, n: int) -> np.ndarray:
    """Fingerprints whose block 0 varies only in its top 6 bits: in a table keyed on block 0,
    every entry's key remainder below the directory is the same, bucket after bucket."""
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    fps &= ~np.uint64(0xFFFF)
    return fps | ((np.arange(n, dtype=np.uint64) % np.uint64(64)) << np.uint64(10))


@pytest.mark.parametrize(
    ("plan", "make"),
    [("compact", clustered), ("balanced", clustered), ("fast", clustered), ("compact", same_remainders)],
)
def test_join_candidates_are_the_key_groups(plan, make):
    """Groups end where their bucket ends: a remainder equal to the next bucket's does not
    join them (which would only add candidates, so count them)."""
    rng = np.random.default_rng(11)
    index = HammingIndex(max_distance=3, plan=plan)
    index.add(make(rng, 2000))
    lay = index._layout
    assert lay.dbits == 6
    expected = 0
    for whole in reference_entries(index):
        keys = np.array([e >> lay.rowbits for e in whole], dtype=np.uint64)
        _, sizes = np.unique(keys, return_counts=True)
        expected += sum(math.comb(int(g), 2) for g in sizes)
    assert index.join_candidates() == expected
    pairs = index.pairs()
    fps = index._fps[:, 0]
    xor = fps[:, None] ^ fps[None, :]
    near = np.unpackbits(xor.view(np.uint8), axis=-1).reshape(2000, 2000, 64).sum(axis=-1) <= 3
    i, j = np.nonzero(np.triu(near, 1))
    assert np.array_equal(pairs[0], index.ids[i]) and np.array_equal(pairs[1], index.ids[j])


def test_a_format_2_file_of_whole_entries_answers_the_same(tmp_path):
    rng = np.random.default_rng(3)
    index = HammingIndex(max_distance=3, plan="balanced")
    index.add(clustered(rng, 1500))
    path = tmp_path / "new.ndx"
    index.save(path)
    data = path.read_bytes()
    length = int.from_bytes(data[8:16], "little")
    header = json.loads(data[24 : 24 + length])
    assert header["format_version"] == 3
    _, arrays = storage.read_file(path, header["format"], (3,))
    arrays = {name: np.array(a) for name, a in arrays.items()}
    arrays["tables"] = np.array(reference_entries(index), dtype=np.uint64)
    meta = {k: v for k, v in header.items() if k not in ("arrays", "file_size")}
    meta["format_version"] = 2
    old = tmp_path / "old.ndx"
    storage.write_file(old, meta, arrays)
    opened = HammingIndex.open(old, verify=True)
    assert opened._tables.dtype == np.uint64
    queries = np.concatenate([index._fps[::5, 0], index._fps[:40, 0] ^ np.uint64(0b1011)])
    for a, b in zip(opened.query_batch(queries), index.query_batch(queries)):
        assert np.array_equal(a, b)
    for a, b in zip(opened.pairs(), index.pairs()):
        assert np.array_equal(a, b)
    assert opened.join_candidates() == index.join_candidates()
    meta["format_version"] = 3  # whole entries under the new number: refused, not misread
    storage.write_file(old, meta, arrays)
    with pytest.raises(Exception, match="'tables' has dtype uint64, expected uint32"):
        HammingIndex.open(old)
