"""HammingIndex against brute force (tests/naive_index.py): random fingerprints, near-duplicates
planted at every distance 0..k+1, many identical fingerprints, giant buckets, every plan, 64 and
128 bits. Results must be exactly the brute-force sets: distance == k included, nothing twice."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from index_checks import build_and_check, draw_case, flip, planted, rows

import naive_index as naive
from neardup import ConfigError, HammingIndex, IndexPlan, TooManyPairsError
from neardup.index import hamming_index

PLANS = ["auto", "compact", "balanced", "fast"]


@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize("k", [0, 1, 3, 5])
@pytest.mark.parametrize("plan", PLANS)
def test_planted_near_duplicates(bits, k, plan):
    rng = np.random.default_rng(bits * 100 + k)
    values = planted(rng, bits, k)
    ids = rng.permutation(10 * len(values))[: len(values)].tolist()
    build_and_check(values, ids, bits, k, plan, batches=2)


@pytest.mark.slow  # chunk_size=1 streams rescan the one bucket
@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize("plan", ["compact", "fast", 5])
def test_giant_bucket_sparse_fingerprints(bits, plan):
    """Fingerprints with a handful of set bits agree on most blocks: every key is one bucket."""
    rng = np.random.default_rng(7)
    values = [flip(0, rng.choice(bits, size=rng.integers(0, 5), replace=False)) for _ in range(250)]
    build_and_check(values, list(range(len(values))), bits, 3, plan)


@pytest.mark.parametrize("bits", [64, 128])
def test_giant_bucket_shared_block(bits):
    """Every fingerprint shares its low 32 bits; the rest is random or planted."""
    rng = np.random.default_rng(11)
    values = [(v >> 32 << 32) | 0xDEADBEEF for v in planted(rng, bits, 3, bases=15)]
    build_and_check(values, list(range(len(values))), bits, 3, "auto")


@settings(max_examples=40, deadline=None)
@given(
    bits=st.sampled_from([64, 128]),
    k=st.integers(0, 4),
    plan=st.sampled_from(PLANS),
    data=st.data(),
)
def test_index_equals_brute_force(bits, k, plan, data):
    values, ids, queries = draw_case(data, bits, k, max_bases=8, max_queries=5)
    build_and_check(values, ids, bits, k, plan, queries=queries, batches=data.draw(st.integers(1, 3)))


def test_smaller_radius_per_call():
    rng = np.random.default_rng(3)
    values = planted(rng, 64, 4)
    ids = list(range(len(values)))
    index = build_and_check(values, ids, 64, 4, "balanced")
    for r in range(5):
        i, j, d = index.pairs(max_distance=r)
        assert list(zip(i.tolist(), j.tolist(), d.tolist())) == naive.pairs(values, ids, r)
        found, dist = index.query(values[1], max_distance=r)
        assert list(zip(found.tolist(), dist.tolist())) == naive.query(values, ids, values[1], r)


def test_random_fingerprints_larger():
    rng = np.random.default_rng(5)
    fps = rng.integers(0, 2**64, size=3000, dtype=np.uint64)
    fps[1000:1100] = fps[:100] ^ (np.uint64(1) << rng.integers(0, 64, size=100).astype(np.uint64))
    index = HammingIndex(max_distance=3)
    index.add(fps)
    i, j, d = index.pairs()
    dist = np.bitwise_count(fps[:, None] ^ fps[None, :])
    a, b = np.nonzero(np.triu(dist <= 3, k=1))
    assert np.array_equal(i, a) and np.array_equal(j, b) and np.array_equal(d, dist[a, b])
    assert index._layout.dbits > 0  # queries go through the directories
    queries = fps[::7] ^ (np.uint64(1) << (np.arange(len(fps[::7]), dtype=np.uint64) % np.uint64(64)))
    offsets, found, got = index.query_batch(queries)
    for q in range(0, len(queries), 20):
        want = naive.query(fps.tolist(), list(range(len(fps))), int(queries[q]), 3)
        span = slice(offsets[q], offsets[q + 1])
        assert list(zip(found[span].tolist(), got[span].tolist())) == want
        assert [tuple(x) for x in zip(*[r.tolist() for r in index.query(queries[q])])] == want


@settings(max_examples=60, deadline=None)
@given(
    keys=st.lists(st.integers(0, 2**12 - 1), max_size=400),
    width=st.integers(1, 12),
    dbits=st.integers(0, 12),
    data=st.data(),
)
def test_directory_points_at_each_buckets_first_entry(keys, width, dbits, data):
    """directory[b] == the first position whose key's top dbits bits are >= b, for any keys
    (clustered, repeated, empty) and for the first and last bucket."""
    from neardup._kernels.index import fill_directory

    dbits = min(dbits, width)
    rowbits = data.draw(st.integers(9, 64 - width))
    keys = np.sort(np.array(keys, dtype=np.uint64) >> np.uint64(12 - width))
    entries = ((keys << np.uint64(rowbits)) | np.arange(len(keys), dtype=np.uint64)).reshape(1, -1)
    directory = np.full((1, 2**dbits + 1), 99, dtype=np.uint32)
    fill_directory(entries, np.array([width]), rowbits, dbits, directory)
    top = keys >> np.uint64(width - dbits)
    assert np.array_equal(directory[0], np.searchsorted(top, np.arange(2**dbits + 1), "left"))


def test_default_ids_continue_from_largest():
    index = HammingIndex()
    index.add(np.array([1, 2], dtype=np.uint64))
    index.add(np.array([3], dtype=np.uint64), ids=[40])
    index.add(np.array([4, 5], dtype=np.uint64))
    assert index.ids.tolist() == [0, 1, 40, 41, 42]
    assert 40 in index and 41 in index and 2 not in index and "x" not in index and 2**70 not in index


def test_empty_index_and_empty_batches():
    index = HammingIndex(bits=128, max_distance=2)
    assert len(index) == 0
    assert [a.tolist() for a in index.query(5)] == [[], []]
    assert [a.tolist() for a in index.pairs()] == [[], [], []]
    offsets, found, dist = index.query_batch(np.zeros((3, 2), dtype=np.uint64))
    assert offsets.tolist() == [0, 0, 0, 0] and found.size == dist.size == 0
    index.add(np.zeros((0, 2), dtype=np.uint64), ids=[])
    assert len(index) == 0


def test_128_bit_query_forms():
    index = HammingIndex(bits=128, max_distance=1)
    index.add(np.array([[5, 1], [5, 0]], dtype=np.uint64))
    assert index.query(5 | (1 << 64))[0].tolist() == [0, 1]
    assert index.query(np.array([5, 0], dtype=np.uint64))[0].tolist() == [1, 0]
    assert index.query(5)[0].tolist() == [1, 0]


def _state(index):
    return (len(index), index.ids.tolist(), index.plan, [a.tolist() for a in index.pairs()])


@pytest.mark.parametrize(
    ("fps", "ids", "error", "match"),
    [
        (np.array([1.0, 2.0]), None, TypeError, "dtype float64"),
        (np.array([[1, 2]], dtype=np.uint64), None, ValueError, "shape"),
        (np.zeros((2, 3), dtype=np.uint64), None, ValueError, "shape"),
        (np.array([-1, 2]), None, ValueError, "negative"),
        (np.array([1, 2], dtype=np.uint64), [7, 7], ValueError, "repeat within the batch"),
        (np.array([1, 2], dtype=np.uint64), [1, 9], ValueError, "already stored"),
        (np.array([1, 2], dtype=np.uint64), [9], ValueError, "shape"),
        (np.array([1, 2], dtype=np.uint64), [1.5, 2.5], TypeError, "int64"),
        (5, None, TypeError, "use query"),
    ],
)
def test_failed_add_changes_nothing(fps, ids, error, match):
    index = HammingIndex(max_distance=2)
    index.add(np.array([1, 3, 7], dtype=np.uint64), ids=[0, 1, 2])
    before = _state(index)
    with pytest.raises(error, match=match):
        index.add(fps, ids=ids)
    assert _state(index) == before


def test_128_bit_index_rejects_64_bit_batch():
    index = HammingIndex(bits=128)
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        index.add(np.array([1, 2], dtype=np.uint64))
    with pytest.raises(ValueError, match="this index holds 64-bit"):
        HammingIndex(bits=64).query(np.array([1, 2], dtype=np.uint64))


def test_radius_above_the_index_raises():
    index = HammingIndex(max_distance=2)
    index.add(np.array([1, 2], dtype=np.uint64))
    for call in (
        lambda: index.query(1, max_distance=3),
        lambda: index.pairs(max_distance=3),
        lambda: index.query_batch(np.array([1], dtype=np.uint64), max_distance=3),
    ):
        with pytest.raises(ConfigError, match=r"max_distance=3 is outside \[0, 2\]"):
            call()
    with pytest.raises(ConfigError):
        index.query(1, max_distance=-1)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"bits": 32},
        {"max_distance": 9},
        {"max_distance": -1},
        {"plan": "quick"},
        {"plan": 3},
        {"plan": 65},
        {"max_distance": 7, "plan": 12},
    ],
)
def test_bad_configuration(kwargs):
    with pytest.raises(ConfigError):
        HammingIndex(**kwargs)


def test_large_radius_mentions_multi_index_hashing():
    with pytest.raises(ConfigError, match="multi-index hashing"):
        HammingIndex(max_distance=8, plan=IndexPlan(64, 8, 9))


def test_plan_layout_matches_the_paper():
    plan = IndexPlan(64, 3, 6)
    assert plan.block_sizes == (11, 11, 11, 11, 10, 10)
    assert plan.num_tables == len(plan.tables) == 20
    assert all(len(t) == 3 for t in plan.tables) and len(set(plan.tables)) == 20
    assert sorted(set(plan.key_bits)) == [31, 32, 33]
    assert IndexPlan.choose(64, 3, "compact").key_bits == (16, 16, 16, 16)
    assert IndexPlan.choose(64, 3, "balanced").num_tables == 10
    assert IndexPlan(128, 2, 4).block_starts == (0, 32, 64, 96)
    assert "20 tables" in plan.describe(10**6) and "MiB" in plan.describe(10**6)
    assert plan.table_bytes(10**6) == 8 * 20 * 10**6  # keys too wide for entries of 4 bytes


def test_auto_plan_grows_with_n():
    small = IndexPlan.choose(64, 3, "auto", 1000)
    large = IndexPlan.choose(64, 3, "auto", 10**8)
    assert small.num_blocks == 4 and large.num_blocks > 4
    for n in (0, 10**3, 10**6, 10**9):
        plan = IndexPlan.choose(64, 3, "auto", n)
        assert plan.expected_candidates(n) <= plan.num_tables or plan.name == "fast"
    assert IndexPlan.choose(128, 0, "auto", 10).num_tables == 1
    with pytest.raises(ConfigError, match="bits=128"):
        IndexPlan.choose(64, 3, IndexPlan(128, 3, 4))


def test_serial_queries_with_more_matches_than_the_first_buffer():
    """The serial path probes once into a 64-slot buffer and grows it: queries whose matches
    overflow it, before and after others, still get every match once, in order."""
    rng = np.random.default_rng(13)
    base = int(rng.integers(0, 2**63))
    values = (
        [base] * 150
        + [flip(base, [d]) for d in range(40)]
        + [int(v) for v in rng.integers(0, 2**63, size=500)]
    )
    ids = list(range(len(values)))
    index = HammingIndex(max_distance=2)
    index.add(rows(values, 64), ids=ids)
    queries = [values[-1], base, flip(base, [1, 2]), values[-2], base]
    offsets, found, dist = index.query_batch(rows(queries, 64))
    for q, value in enumerate(queries):
        span = slice(offsets[q], offsets[q + 1])
        assert list(zip(found[span].tolist(), dist[span].tolist())) == naive.query(values, ids, value, 2)
    assert offsets[2] - offsets[1] == 190
    got = index.query(base)
    assert list(zip(*[a.tolist() for a in got])) == naive.query(values, ids, base, 2)


def test_a_giant_group_of_copies_streams_in_chunks_and_clusters_without_pairs():
    copies = 3000  # 4,498,500 pairs
    index = HammingIndex(bits=64, max_distance=3)
    fps = np.full(copies + 2, 0x0123456789ABCDEF, dtype=np.uint64)
    fps[-2:] = [0xFFFFFFFF00000000, 0x00000000FFFFFFFF]  # two loners, far from the copies and from each other
    index.add(fps, ids=np.arange(100, 100 + copies + 2))
    index.compact()
    total, largest = 0, 0
    seen = np.zeros((copies, copies), dtype=bool)
    for first, second, distance in index.iter_pairs(chunk_size=100_000):
        largest = max(largest, len(first))
        total += len(first)
        assert (distance == 0).all() and (first < second).all()
        seen[first - 100, second - 100] = True
    assert total == copies * (copies - 1) // 2 == seen.sum() and largest == 100_000
    ids, labels = index.clusters()
    assert ids.tolist() == list(range(100, 102 + copies))
    assert labels.tolist() == [100] * copies + [100 + copies, 101 + copies]


def test_more_pairs_than_memory_raise_an_error_naming_the_streaming_way(monkeypatch):
    index = HammingIndex(bits=64, max_distance=0)
    index.add(np.zeros(200, dtype=np.uint64))  # 19,900 pairs
    index.compact()
    monkeypatch.setattr(hamming_index, "pairs_memory_limit", lambda: 10_000)
    with pytest.raises(TooManyPairsError, match=r"index\.iter_pairs\(\).*index\.clusters\(\)"):
        index.pairs()
    assert isinstance(TooManyPairsError("x"), MemoryError)
    monkeypatch.setattr(hamming_index, "pairs_memory_limit", lambda: 19_900)
    assert len(index.pairs()[0]) == 19_900


@pytest.mark.parametrize("chunk_size", [0, -1, 1.5, True])
def test_bad_chunk_size(chunk_size):
    index = HammingIndex(bits=64, max_distance=1)
    with pytest.raises(ConfigError, match="chunk_size"):
        next(index.iter_pairs(chunk_size=chunk_size))
