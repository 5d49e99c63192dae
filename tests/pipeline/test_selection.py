"""Which documents are kept: the greedy rule and components over collapsed fingerprints equal
their one-document-at-a-time references, on skewed shapes (copies, near-identical families)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import naive_index
from neardup.pipeline.selection import collapse, component_roots, keep_greedy

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


def _greedy_positions(fps, order):
    distinct, rank, leader = collapse(fps, order)
    kept, rep, _ = keep_greedy(distinct, 64 * (fps.size // fps.shape[0]), K)
    representative = leader[rep[rank]]
    return kept[rank] & (leader[rank] == np.arange(fps.shape[0])), representative


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
    from neardup.index.hamming_index import HammingIndex

    index = HammingIndex(bits=64, max_distance=K)
    index.add(distinct)
    i, j, _ = index.pairs() if len(distinct) > 1 else (np.zeros(0, np.int64),) * 3
    root = component_roots(len(distinct), i, j)
    labels = leader[root[rank]]
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
    kept, representative, distance = keep_greedy(fps, 64, K)
    assert kept.tolist() == [True] + [False] * (len(fps) - 1)  # all within 2 bits of the base
    assert (representative == 0).all() and distance.max() <= 2


def test_the_search_and_the_join_give_the_same_choice(monkeypatch):
    import neardup.pipeline.selection as selection

    rng = np.random.default_rng(3)
    base = rng.integers(0, 2**64, size=300, dtype=np.uint64)
    flips = np.uint64(1) << rng.integers(0, 64, size=(3000, 2)).astype(np.uint64)
    fps = np.unique(base[rng.integers(0, 300, 3000)] ^ flips[:, 0] ^ flips[:, 1])
    fps = fps[rng.permutation(fps.size)]
    joined = keep_greedy(fps, 64, K)
    monkeypatch.setattr(selection, "_JOIN_BUDGET", -1)  # always search
    searched = keep_greedy(fps, 64, K)
    for a, b in zip(joined, searched):
        assert a.tolist() == b.tolist()
    assert not joined[0].all() and joined[0].any()


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
