"""``neardup.self_join``, one table at a time, against brute force (tests/naive_index.py) and
against the index's own self-join."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from index_checks import draw_families, joined, planted, rows

import naive_index as naive
import neardup


@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize("k", [0, 1, 3, 5, 7])
def test_planted_pairs_equal_brute_force(bits, k):
    values = planted(np.random.default_rng(k + bits), bits, k)
    expected = naive.pairs(values, list(range(len(values))), k)
    assert joined(rows(values, bits), k, chunk_size=7) == expected  # many small windows
    assert joined(rows(values, bits), k) == expected


@pytest.mark.parametrize("plan", ["compact", "fast", "mih", 6])
def test_every_plan_gives_the_index_s_pairs(plan):
    rng = np.random.default_rng(7)
    base = rng.integers(0, 2**64, size=300, dtype=np.uint64)
    fps = np.concatenate([base, base ^ (np.uint64(1) << rng.integers(0, 64, 300).astype(np.uint64))])
    index = neardup.HammingIndex(max_distance=3, plan=plan)
    index.add(fps)
    i, j, d = index.pairs()
    assert joined(fps, 3, plan=plan) == sorted(zip(i.tolist(), j.tolist(), d.tolist()))


def test_multi_index_past_its_blocks_is_joined_by_probing_its_tables():
    values = planted(np.random.default_rng(3), 64, 8, bases=6)
    expected = naive.pairs(values, list(range(len(values))), 8)
    assert joined(rows(values, 64), 8) == expected
    chunks = list(neardup.self_join(rows(values, 64), 8, chunk_size=7))
    assert max(len(i) for i, _, _ in chunks) <= 7 and sum(len(i) for i, _, _ in chunks) == len(expected)


def test_a_group_of_copies_streams_in_chunks():
    fps = np.full(3000, 12345, dtype=np.uint64)  # 4.5M pairs in one key group of every table
    sizes = [len(i) for i, _, _ in neardup.self_join(fps, 3, chunk_size=1 << 20)]
    assert sum(sizes) == 3000 * 2999 // 2 and max(sizes) <= 1 << 20


def test_a_memory_mapped_array_and_edge_cases(tmp_path):
    fps = rows(planted(np.random.default_rng(1), 64, 3), 64)
    np.save(tmp_path / "fps.npy", fps)
    mapped = np.load(tmp_path / "fps.npy", mmap_mode="r")
    assert joined(mapped, 3) == joined(fps, 3)
    assert joined(fps[:1], 3) == [] and joined(fps[:0], 3) == []
    with pytest.raises(neardup.ConfigError, match="max_distance=9"):
        joined(fps, 9)
    with pytest.raises(ValueError, match="chunk_size"):
        joined(fps, 3, chunk_size=0)


@settings(deadline=None)
@given(st.data())
def test_drawn_fingerprints_equal_brute_force(data):
    bits = data.draw(st.sampled_from([64, 128]))
    k = data.draw(st.integers(0, 7))
    values = draw_families(data, bits, k, max_copies=5)
    expected = naive.pairs(values, list(range(len(values))), k)
    assert joined(rows(values, bits), k, chunk_size=data.draw(st.integers(1, 50))) == expected


def test_auto_weighs_a_join_s_tables_against_its_key_groups():
    """A join pays for every table and probes none: its "auto" keeps the fewest tables while
    key groups stay small, and more as they grow (IndexPlan.for_join's cost model)."""
    from neardup.index.plan import IndexPlan
    from neardup.index.self_join import CHECK_NS, DISK_ROW_NS, ROW_NS

    assert IndexPlan.for_join(64, 3, 10**6, row_ns=1.0, check_ns=0.0).num_tables == 4  # rows only
    checks_only = IndexPlan.for_join(64, 3, 10**6, row_ns=0.0, check_ns=1.0)
    assert checks_only.num_blocks == 10 and max(checks_only.stored_key_bits(10**6)) == 44  # an entry's room
    assert IndexPlan.for_join(64, 3, 10**5, ROW_NS, CHECK_NS).num_tables == 4
    assert IndexPlan.for_join(64, 3, 10**8, ROW_NS, CHECK_NS).num_tables == 10
    assert IndexPlan.for_join(64, 3, 10**9, DISK_ROW_NS, CHECK_NS).num_tables == 10
    assert IndexPlan.for_join(64, 3, 3 * 10**10, DISK_ROW_NS, CHECK_NS).num_tables == 20  # Manku's
    assert IndexPlan.choose(64, 3, "auto", 10**5).num_tables == 10  # a query's auto: more tables
    fps = np.random.default_rng(2).integers(0, 2**64, size=10**5, dtype=np.uint64)
    fps[5000:6000] = fps[:1000] ^ np.uint64(0b111)
    tables: list[int] = []
    found = joined(fps, 3, on_table=lambda t, count, *_: tables.append(count))
    assert tables == [4] * 4 and {(i, j) for i, j, _ in found} >= {(i, 5000 + i) for i in range(1000)}
