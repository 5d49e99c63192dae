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


def test_multi_index_past_its_blocks_is_joined_through_an_index():
    values = planted(np.random.default_rng(3), 64, 8, bases=6)
    expected = naive.pairs(values, list(range(len(values))), 8)
    assert joined(rows(values, 64), 8) == expected


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
