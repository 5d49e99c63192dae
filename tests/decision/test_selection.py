"""Which documents are kept: the greedy rule and components over collapsed fingerprints equal
their one-document-at-a-time references, on skewed shapes (copies, near-identical families)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive_index
from neardup.decision import selection
from neardup.decision.selection import keep_greedy
from neardup.index.components import collapse, component_roots
from neardup.index.hamming_index import distinct_index

K = 3


@st.composite
def skewed_fingerprints(draw, bits=64):
    """A few seeds, each copied (identical) or varied by up to 2k bits, shuffled."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    words = bits // 64
    seeds = rng.integers(0, 2**64, size=(draw(st.integers(1, 6)), words), dtype=np.uint64)
    rows = []
    for _ in range(draw(st.integers(1, 60))):
        row = seeds[rng.integers(len(seeds))].copy()
        for _ in range(int(rng.integers(0, 2 * K + 1)) if rng.random() < 0.6 else 0):
            bit = int(rng.integers(bits))
            row[bit // 64] ^= np.uint64(1) << np.uint64(bit % 64)
        rows.append(row)
    fps = np.array(rows, dtype=np.uint64)
    return fps[:, 0].copy() if words == 1 else fps


def _greedy(distinct, **options):
    bits = 64 * (distinct.size // max(distinct.shape[0], 1))
    return keep_greedy(distinct_index(distinct, bits, K), distinct, **options)


def _greedy_positions(fps, order):
    distinct, rank, leader = collapse(fps, order)
    chosen = _greedy(distinct)
    representative = leader[chosen.representative[rank]]
    return chosen.kept[rank] & (leader[rank] == np.arange(fps.shape[0])), representative


@settings(max_examples=80, deadline=None)
@given(skewed_fingerprints(), st.randoms(use_true_random=False))
def test_greedy_equals_the_one_at_a_time_rule(fps, random):
    order = list(range(fps.shape[0]))
    random.shuffle(order)
    kept, representative = _greedy_positions(fps, np.array(order, dtype=np.int64))
    want_kept, want_rep = naive_index.greedy(naive_index.as_ints(fps), order, K)
    assert kept.tolist() == want_kept
    values = naive_index.as_ints(fps)
    for p, r in enumerate(representative.tolist()):
        assert want_kept[r] and naive_index.distance(values[p], values[r]) <= K
        # the representative is the first kept one within k, in order
        assert r == want_rep[p]


@settings(max_examples=40, deadline=None)
@given(skewed_fingerprints(bits=128))
def test_greedy_at_128_bits(fps):
    order = np.arange(fps.shape[0], dtype=np.int64)
    kept, _ = _greedy_positions(fps, order)
    want_kept, _ = naive_index.greedy(naive_index.as_ints(fps), order.tolist(), K)
    assert kept.tolist() == want_kept


@settings(max_examples=60, deadline=None)
@given(skewed_fingerprints())
def test_components_of_collapsed_fingerprints_equal_components_of_all(fps):
    order = np.arange(fps.shape[0], dtype=np.int64)
    distinct, rank, leader = collapse(fps, order)
    found = component_roots(distinct_index(distinct, 64, K))
    labels = leader[found.roots[rank]]
    values = naive_index.as_ints(fps)
    ids = list(range(len(values)))
    brute = naive_index.pairs(values, ids, K)
    a, b = [p[0] for p in brute], [p[1] for p in brute]
    assert labels.tolist() == naive_index.representatives(a, b, ids, "first")


def test_a_million_copies_collapse_to_one_entry():
    fps = np.full(1_000_000, 0x1234_5678_9ABC_DEF0, dtype=np.uint64)
    distinct, rank, leader = collapse(fps, np.arange(fps.size, dtype=np.int64))
    assert distinct.tolist() == [0x1234_5678_9ABC_DEF0] and leader.tolist() == [0]
    assert not rank.any()


def test_a_near_identical_family_is_found_in_one_search():
    rng = np.random.default_rng(7)
    base = np.uint64(rng.integers(0, 2**64, dtype=np.uint64))
    flips = rng.integers(0, 64, size=(20_000, 2))
    fps = np.unique(
        base
        ^ (np.uint64(1) << flips[:, 0].astype(np.uint64))
        ^ (np.uint64(1) << flips[:, 1].astype(np.uint64))
    )
    fps = np.concatenate([[base], fps[fps != base]])
    chosen = _greedy(fps)
    assert chosen.kept.tolist() == [True] + [False] * (len(fps) - 1)  # all within 2 bits of the base
    assert (chosen.representative == 0).all() and chosen.distance.max() <= 2


def test_the_search_and_the_join_give_the_same_choice(monkeypatch):
    rng = np.random.default_rng(3)
    base = rng.integers(0, 2**64, size=300, dtype=np.uint64)
    flips = np.uint64(1) << rng.integers(0, 64, size=(3000, 2)).astype(np.uint64)
    fps = np.unique(base[rng.integers(0, 300, 3000)] ^ flips[:, 0] ^ flips[:, 1])
    fps = fps[rng.permutation(fps.size)]
    joined = _greedy(fps)
    monkeypatch.setattr(selection, "_JOIN_BUDGET", -1)  # always search
    searched = _greedy(fps)
    for field in ("kept", "representative", "distance", "linked"):
        assert getattr(joined, field).tolist() == getattr(searched, field).tolist()
    assert not joined.kept.all() and joined.kept.any() and not joined.linked.all()


def test_join_candidates_bound_the_pairs_and_see_a_family():
    from neardup.index.hamming_index import HammingIndex

    rng = np.random.default_rng(4)
    random = HammingIndex(bits=64, max_distance=K)
    random.add(rng.integers(0, 2**64, size=20_000, dtype=np.uint64))
    assert random.join_candidates() >= len(random.pairs()[0])
    base = np.uint64(rng.integers(0, 2**64, dtype=np.uint64))
    family = np.unique(base ^ (np.uint64(1) << rng.integers(0, 64, size=5000).astype(np.uint64)))
    near = HammingIndex(bits=64, max_distance=K)
    near.add(np.concatenate([family, rng.integers(0, 2**64, size=20_000, dtype=np.uint64)]))
    assert near.join_candidates() >= len(family) * (len(family) - 1) // 2 // 4  # grows as a square
    assert near.join_candidates() >= len(near.pairs()[0])


def _similar(values):
    """A verification stand-in: an arbitrary but fixed verdict per pair of fingerprints."""

    def similar(a: int, b: int) -> bool:
        low, high = sorted((values[a], values[b]))
        return (low * 31 + high) % 7 < 4

    def accept(first, second, distance):
        return np.array([similar(a, b) for a, b in zip(first.tolist(), second.tolist())], dtype=bool)

    return similar, accept


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(skewed_fingerprints(), st.booleans())
def test_greedy_with_verification_equals_the_one_at_a_time_rule(fps, search):
    """As dedup runs it: a first run without verification says which fingerprints have a
    neighbour; the second asks accept about the pairs it needs and keeps the lonely ones unasked."""
    distinct = np.unique(fps)
    distinct = distinct[np.random.default_rng(distinct.size).permutation(distinct.size)]
    values = naive_index.as_ints(distinct)
    similar, accept = _similar(values)
    if search:
        selection_budget = selection._JOIN_BUDGET
        selection._JOIN_BUDGET = -1
    try:
        first = _greedy(distinct)
        chosen = _greedy(distinct, accept=accept, lonely=~first.linked)
    finally:
        if search:
            selection._JOIN_BUDGET = selection_budget
    want_kept, want_rep = naive_index.greedy(values, list(range(len(values))), K, similar)
    assert chosen.kept.tolist() == want_kept
    assert chosen.representative.tolist() == want_rep
    has_neighbour = [any(naive_index.distance(v, w) <= K for w in values if w != v) for v in values]
    assert first.linked.tolist() == has_neighbour


@settings(max_examples=40, deadline=None)
@given(skewed_fingerprints())
def test_components_with_verification_link_only_similar_pairs(fps):
    distinct = np.unique(fps)
    values = naive_index.as_ints(distinct)
    similar, accept = _similar(values)
    found = component_roots(distinct_index(distinct, 64, K), accept=accept)
    ids = list(range(len(values)))
    brute = [p for p in naive_index.pairs(values, ids, K) if similar(p[0], p[1])]
    assert found.roots.tolist() == naive_index.clusters([p[0] for p in brute], [p[1] for p in brute], ids)
    assert found.pairs == len(naive_index.pairs(values, ids, K))
