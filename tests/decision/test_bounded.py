"""The dedup decision in a memory budget (``dedup(memory=)``, ``pipeline/bounded.py``): the
greedy rule over pairs spilled to disk equals the one-rank-at-a-time rule, and a budgeted
dedup answers as the default one does, on copies and a near-identical family. Tiny budgets
(``MIN_ROWS`` and ``FANOUT`` lowered) make the join go out of core, the pairs spill, ranges
split again and one rank's pairs stream in chunks, from a few hundred documents."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import neardup
from neardup.decision import bounded
from neardup.decision.bounded import PAIR_BYTES, JoinBudget, keep_greedy_streamed
from neardup.index import disk_join, self_join

K = 8


@pytest.fixture(autouse=True)
def tiny_budgets():
    with (
        mock.patch.object(disk_join, "MIN_ROWS", 1),
        mock.patch.object(self_join, "MIN_WINDOW", 16),
        mock.patch.object(bounded, "FANOUT", 3),
    ):
        yield


def greedy_over_pairs(m, pairs, blocked):
    """Manku's rule one rank at a time: a rank is kept unless blocked or a kept rank before it
    pairs with it; a removed one names the first such kept rank (and their distance)."""
    near: dict[int, list[tuple[int, int]]] = {}
    for a, b, d in pairs:
        near.setdefault(b, []).append((a, d))
    kept, representative, distance = [False] * m, list(range(m)), [0] * m
    for r in range(m):
        if blocked[r]:
            representative[r] = -1
            continue
        removers = sorted((a, d) for a, d in near.get(r, []) if kept[a])
        if removers:
            representative[r], distance[r] = removers[0]
        else:
            kept[r] = True
    return kept, representative, distance


@st.composite
def pair_lists(draw):
    """Ranks with pairs clustered on a few ranks (a family's leader pairs with many)."""
    m = draw(st.integers(1, 60))
    hubs = draw(st.lists(st.integers(0, m - 1), max_size=3))
    pairs = set()
    for _ in range(draw(st.integers(0, 150))):
        a = draw(st.sampled_from(hubs)) if hubs and draw(st.booleans()) else draw(st.integers(0, m - 1))
        b = draw(st.integers(0, m - 1))
        if a != b:
            pairs.add((min(a, b), max(a, b)))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    listed = [(a, b, int(rng.integers(0, K + 1))) for a, b in sorted(pairs)]
    blocked = rng.random(m) < draw(st.sampled_from([0.0, 0.2]))
    return m, [listed[i] for i in rng.permutation(len(listed))], blocked


@settings(max_examples=150, deadline=None)
@given(pair_lists(), st.integers(1, 12), st.integers(1, 20))
def test_greedy_over_spilled_pairs_equals_the_one_rank_at_a_time_rule(tmp_path_factory, drawn, held, chunk):
    m, pairs, blocked = drawn
    folder = tmp_path_factory.mktemp("pairs")
    arrays = [np.array(column, dtype=np.int64).reshape(-1) for column in zip(*pairs)] or [
        np.zeros(0, np.int64)
    ] * 3
    chunks = [tuple(a[at : at + chunk] for a in arrays) for at in range(0, len(pairs), chunk)]
    decided = []
    chosen = keep_greedy_streamed(
        m, chunks, JoinBudget(held * PAIR_BYTES, str(folder)), blocked, on_progress=decided.append
    )
    kept, representative, distance = greedy_over_pairs(m, pairs, blocked)
    assert chosen.kept.tolist() == kept
    assert chosen.representative.tolist() == representative
    assert chosen.distance.tolist() == distance
    ends = {e for a, b, _ in pairs for e in (a, b)}
    assert chosen.linked.tolist() == [r in ends for r in range(m)]
    assert decided and decided[-1] == m
    assert list(folder.iterdir()) == []  # the spill's folder is gone


def test_accept_leaves_out_the_pairs_it_fails(tmp_path):
    pairs = [(0, 1, 2), (0, 2, 1), (1, 3, 0), (2, 3, 4)]
    a, b, d = (np.array(c, dtype=np.int64) for c in zip(*pairs))
    failed = {(0, 1)}
    chosen = keep_greedy_streamed(
        4,
        [(a, b, d)],
        JoinBudget(PAIR_BYTES, str(tmp_path)),
        accept=lambda x, y, _: np.array([(i, j) not in failed for i, j in zip(x.tolist(), y.tolist())]),
    )
    kept, representative, _ = greedy_over_pairs(4, [p for p in pairs if p[:2] not in failed], [False] * 4)
    assert chosen.kept.tolist() == kept == [True, True, False, False]
    assert chosen.representative.tolist() == representative == [0, 1, 0, 1]


@pytest.fixture(scope="module")
def skewed():
    """One page copied 200 times, a family of 150 variants of it (a word changed: word
    3-shingle Jaccard 0.95 with the page, 0.90 between two), and 150 other pages."""
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(3000)]
    pages = [rng.choice(words, 120).tolist() for _ in range(151)]
    family = [" ".join([*pages[0][: 5 + i % 110], f"x{i}", *pages[0][6 + i % 110 :]]) for i in range(150)]
    texts = [" ".join(p) for p in pages[1:]] + [" ".join(pages[0])] * 200 + family
    return [texts[p] for p in rng.permutation(len(texts))]


def budget_for_out_of_core() -> int:
    """Memory a join of a few hundred fingerprints goes out of core in (a window of 16 pairs
    and 50 rows a partition); it holds 49 pairs, which the family passes."""
    plan = disk_join.DiskPlan(0, 1, 0, 16)
    return plan.window_bytes + 50 * plan.row_bytes


@pytest.mark.slow  # dedups out of core, each a few times over
@pytest.mark.parametrize("cluster", ["greedy", "components"])
@pytest.mark.parametrize("verify", [None, ("jaccard", 0.93)])  # two variants fail it
def test_a_budgeted_dedup_answers_as_the_default_one(skewed, cluster, verify, tmp_path):
    options = {"max_distance": K, "cluster": cluster, "verify": verify, "keep": "longest"}
    want = neardup.dedup(skewed, **options)
    memory = budget_for_out_of_core()
    distinct = np.unique(want.fingerprints)
    assert bounded.goes_out_of_core(len(distinct), 1, memory)
    tables = []
    real_disk_self_join = disk_join.disk_self_join

    def counted(*args, **kwargs):
        tables.append(args)
        return real_disk_self_join(*args, **kwargs)

    with mock.patch("neardup.index.self_join.disk_self_join", counted):
        got = neardup.dedup(skewed, memory=memory, work_dir=tmp_path, **options)
        assert tables  # joined out of core
        assert got.representatives.tolist() == want.representatives.tolist()
        assert got.kept.tolist() == want.kept.tolist() and got.labels.tolist() == want.labels.tolist()
        assert got.stats.duplicates == want.stats.duplicates > 250
        if verify is not None:  # the pairs are checked as they stream: in another order, and
            # under greedy all of them, where the searches ask only those that can still remove
            assert got.stats.similar_pairs > 0 and got.stats.checked_pairs > got.stats.similar_pairs
            if cluster == "greedy":
                assert got.stats.checked_pairs >= want.stats.checked_pairs
        for every in (False, True):
            pairs = [
                (a, b, d)
                for c in got.iter_pairs(every=every, chunk_size=500)
                for a, b, d in zip(c.first.tolist(), c.second.tolist(), c.distance.tolist())
            ]
            if not every:  # the pairs between distinct fingerprints spill past the budget
                assert sum(d > 0 for *_, d in pairs) > memory // PAIR_BYTES
            assert sorted(pairs) == sorted(
                (a, b, d)
                for c in want.iter_pairs(every=every)
                for a, b, d in zip(c.first.tolist(), c.second.tolist(), c.distance.tolist())
            )
    assert list(tmp_path.iterdir()) == []


def test_a_budget_is_refused_where_it_cannot_hold(tmp_path, skewed):
    with pytest.raises(neardup.ConfigError, match="work_dir= is where a join past memory= writes"):
        neardup.dedup(skewed[:5], work_dir=tmp_path)
    with pytest.raises(neardup.ConfigError, match="is not a folder"):
        neardup.dedup(skewed[:5], memory=1 << 20, work_dir=tmp_path / "missing")
    with pytest.raises(neardup.ConfigError, match="memory=0 must be a positive number"):
        neardup.dedup(skewed[:5], memory=0)
    with pytest.raises(neardup.ConfigError, match="jaccard's MinHash buckets are joined in memory"):
        neardup.dedup(skewed[:5], memory=1 << 20, jaccard=0.8)
    with (
        mock.patch("shutil.disk_usage", return_value=mock.Mock(free=100)),
        pytest.raises(neardup.ConfigError, match="GiB free; give a work folder on a larger disk"),
    ):
        neardup.dedup(skewed, max_distance=K, memory=budget_for_out_of_core(), work_dir=tmp_path)


@pytest.mark.parametrize("verify", [None, ("jaccard", 0.93)])
def test_past_the_held_pairs_the_greedy_rule_searches_an_index_instead(skewed, verify):
    """A family's pairs past ``HELD_PAIRS`` stop the join: the rule searches for the kept
    fingerprints (``selection.keep_greedy``), with the same answer."""
    from neardup.decision import selection

    want = neardup.dedup(skewed, max_distance=K, verify=verify)
    searched = []
    real = selection.keep_greedy

    def spy(index, *args, **kwargs):
        searched.append(index.join_candidates())
        return real(index, *args, **kwargs)

    with mock.patch.object(bounded, "HELD_PAIRS", 100), mock.patch.object(bounded, "keep_greedy", spy):
        got = neardup.dedup(skewed, max_distance=K, verify=verify)
    assert searched and len(searched) == (1 if verify is None else 2)
    assert got.representatives.tolist() == want.representatives.tolist()
    assert got.kept.sum() == want.kept.sum() < len(skewed) - 250
