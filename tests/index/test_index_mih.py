"""Multi-index hashing (plan strategy "mih") against brute force (tests/naive_index.py): planted
neighbours at every distance 0..k+1, identical and sparse fingerprints, k up to 8 on 64 bits and
16 on 128 bits, block radii 0-2, unequal and truncated blocks, smaller radii per call, and after
add/remove/compact/save/open. Results must be exactly the brute-force sets: nothing twice."""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from index_checks import build_and_check, check_against_model, draw_case, flip, near, planted, rows

import naive_index as naive
from neardup import ConfigError, FormatError, HammingIndex, IndexPlan
from neardup.index import hamming_index, storage
from neardup.index import plan as plan_module


def mih(bits: int, k: int, blocks: int) -> IndexPlan:
    return IndexPlan(bits, k, blocks, strategy="mih")


@pytest.mark.slow  # 25 plans; test_index_equals_brute_force draws plans in the quick loop
@pytest.mark.parametrize(
    ("bits", "k", "plan"),
    [
        (64, 4, "auto"),
        (64, 5, "mih"),
        (64, 6, "mih"),
        (64, 7, "auto"),
        (64, 8, "auto"),
        (64, 8, 4),
        (64, 8, 5),
        (64, 8, 3),
        (64, 7, 2),
        (64, 6, 7),
        (128, 8, "mih"),
        (128, 10, "auto"),
        (128, 12, 5),
        (128, 14, 7),
        (128, 16, "auto"),
        (128, 16, 8),
        (128, 16, 9),
        (128, 16, 6),
        (128, 13, 4),
    ],
)
def test_planted_near_duplicates(bits, k, plan):
    """Block radii 0, 1 and 2; 64 bits in 5 or 3 blocks and 128 in 9, 7 or 6 are unequal."""
    plan = mih(bits, k, plan) if isinstance(plan, int) else plan
    rng = np.random.default_rng(bits * 100 + k)
    values = planted(rng, bits, k, bases=10)
    ids = rng.permutation(10 * len(values))[: len(values)].tolist()
    queries = [flip(v, rng.choice(bits, size=k, replace=False)) for v in values[:10]]
    index = build_and_check(values, ids, bits, k, plan, queries=queries, batches=2)
    assert index.plan.strategy == ("tables" if plan == "auto" and k <= 7 else "mih")


@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_small_radii_equal_the_table_plans(bits, k):
    rng = np.random.default_rng(bits + k)
    values = planted(rng, bits, k)
    ids = list(range(len(values)))
    by_mih = build_and_check(values, ids, bits, k, "mih")
    by_tables = build_and_check(values, ids, bits, k, "auto")
    assert by_mih.plan.strategy == "mih" and by_tables.plan.strategy == "tables"
    assert [a.tolist() for a in by_mih.pairs()] == [a.tolist() for a in by_tables.pairs()]


@pytest.mark.parametrize(("bits", "k", "blocks"), [(64, 2, 1), (64, 3, 1), (128, 3, 2), (128, 5, 2)])
def test_blocks_wider_than_the_key(bits, k, blocks):
    """Blocks of 64 bits keep only 64 - rowbits key bits: flips in the cut bits must not be
    lost, nor reported twice."""
    rng = np.random.default_rng(k * blocks)
    values = planted(rng, bits, k)
    build_and_check(values, list(range(len(values))), bits, k, mih(bits, k, blocks))


@pytest.mark.slow  # chunk_size=1 streams rescan the one bucket
@pytest.mark.parametrize(("bits", "k", "plan"), [(64, 8, 4), (64, 8, "auto"), (128, 16, 8), (128, 12, 4)])
def test_giant_bucket_sparse_fingerprints(bits, k, plan):
    rng = np.random.default_rng(7)
    values = [flip(0, rng.choice(bits, size=rng.integers(0, 9), replace=False)) for _ in range(200)]
    values += [values[0]] * 10
    build_and_check(values, list(range(len(values))), bits, k, plan)


def test_smaller_radius_per_call():
    rng = np.random.default_rng(3)
    values = planted(rng, 128, 16, bases=6)
    ids = list(range(len(values)))
    index = build_and_check(values, ids, 128, 16, 8)
    for r in range(17):
        i, j, d = index.pairs(max_distance=r)
        assert list(zip(i.tolist(), j.tolist(), d.tolist())) == naive.pairs(values, ids, r)
        found, dist = index.query(rows(values[1:2], 128)[0], max_distance=r)
        assert list(zip(found.tolist(), dist.tolist())) == naive.query(values, ids, values[1], r)


@settings(max_examples=30, deadline=None)
@given(bits=st.sampled_from([64, 128]), data=st.data())
def test_index_equals_brute_force(bits, data):
    k = data.draw(st.integers(0, 8 if bits == 64 else 16))
    blocks = data.draw(st.integers(max(bits // 64, k // 2), k + 2))
    values, ids, queries = draw_case(data, bits, k, max_bases=6, max_queries=4)
    build_and_check(
        values, ids, bits, k, mih(bits, k, blocks), queries=queries, batches=data.draw(st.integers(1, 3))
    )


@pytest.mark.slow  # each step checked against brute force
@pytest.mark.parametrize(
    ("bits", "k", "plan"), [(64, 8, "auto"), (64, 6, mih(64, 6, 4)), (128, 16, "mih"), (128, 11, 5)]
)
def test_random_sequences_equal_brute_force(tmp_path, monkeypatch, bits, k, plan):
    monkeypatch.setattr(hamming_index, "DELTA_MIN", 6)
    monkeypatch.setattr(hamming_index, "DELTA_MAX", 40)
    rng = np.random.default_rng(bits + k)
    index = HammingIndex(bits=bits, max_distance=k, plan=plan)
    model: dict[int, int] = {}
    next_id = 0
    for _ in range(25):
        op = rng.choice(["add", "add", "remove", "compact", "save"])
        if op == "add":
            size = int(rng.integers(0, 12))
            values = [near(rng, bits, list(model.values()), k) for _ in range(size)]
            new_ids = list(range(next_id, next_id + size))
            next_id += size
            index.add(rows(values, bits), ids=np.array(new_ids, dtype=np.int64))
            model.update(zip(new_ids, values))
        elif op == "remove" and model:
            gone = rng.choice(list(model), size=int(rng.integers(1, min(len(model), 6) + 1)), replace=False)
            index.remove(gone)
            for g in gone.tolist():
                del model[g]
        elif op == "compact":
            index.compact()
        elif op == "save":
            index.save(tmp_path / "index.ndx")
            index = HammingIndex.open(tmp_path / "index.ndx")
            assert index.plan.strategy == "mih"
        check_against_model(index, model, bits, k, [near(rng, bits, list(model.values()), k)])
    assert index.plan.strategy == "mih"


def test_file_records_the_strategy_and_old_files_mean_tables(tmp_path):
    fps = np.arange(300, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    for k, strategy in ((8, "mih"), (3, "tables")):
        index = HammingIndex(max_distance=k)
        index.add(fps)
        path = tmp_path / f"{k}.ndx"
        index.save(path)
        data = path.read_bytes()
        header = json.loads(data[24 : 24 + int.from_bytes(data[8:16], "little")])
        assert header["plan"]["strategy"] == strategy
        opened = HammingIndex.open(path)
        assert opened.plan == index.plan
        assert [a.tolist() for a in opened.pairs()] == [a.tolist() for a in index.pairs()]
        # A file from before the strategy field: its plan is permuted tables.
        _, arrays = storage.read_file(path, header["format"], (header["format_version"],))
        meta = {key: v for key, v in header.items() if key not in ("arrays", "file_size")}
        del meta["plan"]["strategy"]
        old = tmp_path / f"old{k}.ndx"
        storage.write_file(old, meta, {name: np.array(a) for name, a in arrays.items()})
        if strategy == "tables":
            assert HammingIndex.open(old).plan == index.plan
        else:
            with pytest.raises(FormatError, match="does not describe an index"):
                HammingIndex.open(old)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_distance": 9}, r"\[0, 8\]"),
        ({"bits": 128, "max_distance": 17}, r"\[0, 16\]"),
        ({"max_distance": 8, "plan": "fast"}, "'auto' or 'mih'"),
        ({"max_distance": 8, "plan": IndexPlan(64, 8, 4, strategy="mih")}, None),
        ({"max_distance": 8, "plan": 1}, "probes per query"),
        ({"max_distance": 8, "plan": 65}, r"\[1, 64\]"),
        ({"bits": 128, "max_distance": 16, "plan": 1}, r"\[2, 64\]"),
    ],
)
def test_limits(kwargs, match):
    if match is None:
        assert HammingIndex(**kwargs).plan.strategy == "mih"
        return
    with pytest.raises(ConfigError, match=match):
        HammingIndex(**kwargs)


def test_plan_layout_and_choice():
    plan = mih(64, 8, 4)
    assert plan.tables == ((0,), (1,), (2,), (3,)) and plan.num_tables == 4 and plan.radius == 2
    assert plan.probes_per_query(10**6) == 4 * (1 + 16 + 120)
    assert mih(128, 16, 9).probes_per_query(10**6) == 9 * 1 + 2 * 15 + 7 * 14
    assert "multi-index hashing, radius 2 per block" in plan.describe(10**6)
    with pytest.raises(ConfigError, match="use plan='mih'"):
        IndexPlan(64, 8, 9)
    with pytest.raises(ConfigError, match="strategy"):
        IndexPlan(64, 3, 4, strategy="lsh")
    big = IndexPlan.choose(64, 8, "auto", 10**6)
    assert big.strategy == "mih" and 3 <= big.num_blocks <= 9
    assert IndexPlan.choose(64, 3, "auto", 10**6).strategy == "tables"
    assert IndexPlan.choose(64, 3, "mih", 10**6).strategy == "mih"


@pytest.mark.parametrize("n", [10**3, 10**5, 10**6, 10**7, 10**8])
@pytest.mark.parametrize(("bits", "k"), [(64, 8), (128, 10), (128, 12), (128, 16), (64, 3), (64, 7)])
def test_auto_picks_the_multi_index_layout_of_least_estimated_cost(bits, k, n):
    """Beyond k = 7 the cheapest multi-index layout per query; within it the tables."""
    auto = IndexPlan.choose(bits, k, "auto", n)
    if k <= 7:
        assert auto.strategy == "tables"
        return
    options = []
    for m in range(bits // 64, k + 2):
        with contextlib.suppress(ConfigError):  # too many probes
            options.append(mih(bits, k, m))
    cheapest = min(options, key=lambda p: p.cost(n))
    assert auto.strategy == "mih" and auto.num_blocks == cheapest.num_blocks
    assert IndexPlan.choose(bits, k, "mih", n).num_blocks == cheapest.num_blocks


def test_a_probe_costs_a_directory_slot_not_a_binary_search():
    """The cost model prices a probe the same at any n (one slot, one bucket), so with no
    candidates the estimate does not grow with log2(n)."""
    plan = mih(128, 16, 5)
    for n in (10**3, 10**9):
        assert plan.cost(n) == pytest.approx(
            plan.probes_per_query(n) * plan_module.PROBE_NS
            + plan.expected_candidates(n) * plan_module.CANDIDATE_NS[128]
        )
    tables = IndexPlan(64, 3, 6)
    assert tables.probes_per_query(10**6) == tables.num_tables == 20


def test_serial_queries_overflowing_the_first_buffer():
    """Multi-index queries run on the calling thread through the same 64-slot buffer as the
    tables' and grow it: every match once, in order."""
    rng = np.random.default_rng(21)
    base = int(rng.integers(0, 2**63))
    values = (
        [base] * 120
        + [flip(base, rng.choice(64, size=d, replace=False)) for d in range(9) for _ in range(5)]
        + [int(v) for v in rng.integers(0, 2**63, size=300)]
    )
    ids = list(range(len(values)))
    index = HammingIndex(max_distance=8, plan=mih(64, 8, 3))
    index.add(rows(values, 64), ids=ids)
    queries = [values[-1], base, flip(base, [3, 9]), base]
    offsets, found, dist = index.query_batch(rows(queries, 64))
    for q, value in enumerate(queries):
        span = slice(offsets[q], offsets[q + 1])
        assert list(zip(found[span].tolist(), dist[span].tolist())) == naive.query(values, ids, value, 8)
    assert offsets[2] - offsets[1] > 64


# ns per query of query_batch on one thread over 1M random fingerprints, random queries (the
# calibration of plan.PROBE_NS and CANDIDATE_NS, `benchmarks/bench_index.py --calibrate`, and
# 5,000-query repeats of the 128-bit k = 8 layouts), by number of blocks.
MEASURED_1M = {
    (64, 8): {3: 95_849, 4: 306_524, 5: 203_539, 9: 371_607},
    (128, 8): {5: 11_800, 9: 17_700},
    (128, 16): {5: 789_415, 6: 188_871, 7: 372_054, 9: 228_136, 17: 2_878_653},
}


@pytest.mark.parametrize(("bits", "k"), sorted(MEASURED_1M))
def test_auto_picks_the_layout_measured_fastest(bits, k):
    """Beyond k = 7 the cost model's cheapest multi-index layout is the one measured fastest."""
    measured = MEASURED_1M[(bits, k)]
    fastest = min(measured, key=measured.__getitem__)
    modelled = min(measured, key=lambda m: mih(bits, k, m).cost(10**6))
    assert modelled == fastest
    assert IndexPlan.choose(bits, k, "auto", 10**6).num_blocks == fastest
