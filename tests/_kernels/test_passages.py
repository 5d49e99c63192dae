"""The passage kernels (``_kernels/passages.py``) against plain Python written from their
docstrings: seeds, the pairs of documents a seed makes, runs of common seeds, chains of hits,
and the banded Smith-Waterman alignment against tests/naive_passages.py's full one."""

from __future__ import annotations

import itertools
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from naive_passages import GAP, MATCH, MISMATCH, naive_alignment, naive_matrix_alignment
from neardup._kernels.passages import (
    _align,
    align_chains,
    chain_hits,
    common_runs,
    count_seeds,
    fill_seeds,
    seed_hits,
)

MASK64 = 2**64 - 1


def mix(x: int) -> int:
    """splitmix64's finaliser (Steele, Lea and Flood 2014)."""
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & MASK64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def naive_seeds(documents: list[list[int]], size: int, sample: int, min_words: int) -> list[tuple]:
    """(seed, document, position) of every kept seed: the hash of ``size`` words from
    position on, kept when ``seed % sample == 0``, in documents of ``min_words`` words or more."""
    out = []
    for d, words in enumerate(documents):
        if len(words) < min_words:
            continue
        for t in range(len(words) - size + 1):
            g = size
            for w in words[t : t + size]:
                g = mix(g ^ w)
            if g % sample == 0:
                out.append((g, d, t))
    return out


documents = st.lists(st.lists(st.integers(0, 5), max_size=40), max_size=5)


@settings(max_examples=50, deadline=None)
@given(documents, st.integers(1, 5), st.integers(1, 4), st.integers(0, 30), st.integers(0, 3))
def test_seeds_equal_naive(docs, size, sample, min_words, first_doc):
    words = np.array([w for d in docs for w in d], dtype=np.uint32)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    counts = count_seeds(words, offsets, size, sample, min_words)
    seed_offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum(counts, out=seed_offsets[1:])
    seeds, owners, positions = fill_seeds(words, offsets, size, sample, min_words, seed_offsets, first_doc)
    expected = naive_seeds(docs, size, sample, min_words)
    assert list(zip(seeds.tolist(), (owners - first_doc).tolist(), positions.tolist())) == expected
    assert counts.tolist() == [sum(1 for _, d, _ in expected if d == k) for k in range(len(docs))]


def test_a_seed_above_2_63_is_kept_by_its_own_remainder():
    # The words [1, 0] make the seed 15559990572502793946 (a multiple of 3, above 2**63):
    # kept with sample 3, whatever sign a 64-bit signed remainder would give it.
    (seed,) = [g for g, _, _ in naive_seeds([[1, 0]], 2, 1, 0)]
    assert seed == 15559990572502793946 and seed % 3 == 0
    words, offsets = np.array([1, 0], dtype=np.uint32), np.array([0, 2], dtype=np.int64)
    assert count_seeds(words, offsets, 2, 3, 0).tolist() == [1]
    seeds, _, _ = fill_seeds(words, offsets, 2, 3, 0, np.array([0, 1], dtype=np.int64), 0)
    assert seeds.tolist() == [seed]


def naive_seed_hits(occurrences: list[tuple[int, int, int]], common_docs: int):
    """From ``seed_hits``' docstring: occurrences of a seed in ``common_docs`` documents or
    more are common and pair nothing; the others pair each two occurrences in two documents,
    only each document's first when the seed occurs more than 4 * ``common_docs`` times."""
    pairs, common = [], []
    for _, group in itertools.groupby(occurrences, key=lambda o: o[0]):
        group = list(group)
        if len({d for _, d, _ in group}) >= common_docs:
            common += group
            continue
        if len(group) > 4 * common_docs:
            group = [next(g) for _, g in itertools.groupby(group, key=lambda o: o[1])]
        pairs += [(x[1], y[1], x[2], y[2]) for x, y in itertools.combinations(group, 2) if x[1] != y[1]]
    return sorted(pairs), sorted(common)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 6), st.integers(0, 50)), max_size=60),
    st.integers(3, 6),
)
def test_seed_hits_equal_naive(occurrences, common_docs):
    occurrences = sorted(set(occurrences))  # by seed, then document, then position
    seeds = np.array([s for s, _, _ in occurrences], dtype=np.uint64)
    docs = np.array([d for _, d, _ in occurrences], dtype=np.int32)
    positions = np.array([p for _, _, p in occurrences], dtype=np.int32)
    doc_a, doc_b, pos_a, pos_b, common = seed_hits(seeds, docs, positions, common_docs)
    pairs, expected_common = naive_seed_hits(occurrences, common_docs)
    assert sorted(zip(doc_a.tolist(), doc_b.tolist(), pos_a.tolist(), pos_b.tolist())) == pairs
    assert sorted(o for o, c in zip(occurrences, common.tolist()) if c) == expected_common


def test_a_phrase_repeated_within_documents_pairs_only_their_first_occurrences():
    # One seed 100 times in each of 2 documents: 100 * 100 pairs if all were paired.
    seeds = np.zeros(200, dtype=np.uint64)
    docs = np.repeat(np.array([4, 9], dtype=np.int32), 100)
    positions = np.tile(np.arange(0, 500, 5, dtype=np.int32), 2)
    doc_a, doc_b, pos_a, pos_b, common = seed_hits(seeds, docs, positions, 10)
    assert list(zip(doc_a, doc_b, pos_a, pos_b)) == [(4, 9, 0, 0)] and not common.any()


def naive_common_runs(occurrences: list[tuple[int, int, int]], size: int, max_gap: int, min_words: int):
    """From ``common_runs``' docstring: (document, position, seed) sorted by document and
    position -> runs of seeds at most ``max_gap`` words apart spanning ``min_words`` words or
    more: (document, first word, last word, smallest seed >> 1, the first position of it)."""
    runs: list[list[tuple[int, int, int]]] = []
    for occurrence in occurrences:
        last = runs[-1][-1] if runs else None
        if last is not None and last[0] == occurrence[0] and occurrence[1] - last[1] <= max_gap:
            runs[-1].append(occurrence)
        else:
            runs.append([occurrence])
    out = []
    for run in runs:
        first, last = run[0][1], run[-1][1] + size - 1
        if last - first + 1 >= min_words:
            low = min(s for _, _, s in run)
            at = next(p for _, p, s in run if s == low)
            out.append((run[0][0], first, last, low >> 1, at))
    return out


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 200), st.integers(0, MASK64)), max_size=60),
    st.integers(1, 6),
    st.integers(1, 30),
    st.integers(0, 40),
)
def test_common_runs_equal_naive(occurrences, size, max_gap, extra):
    occurrences = sorted({(d, p): (d, p, s) for d, p, s in occurrences}.values())
    min_words = 2 * size + extra  # a run of one seed is never long enough, as in find_passages
    docs = np.array([d for d, _, _ in occurrences], dtype=np.int32)
    positions = np.array([p for _, p, _ in occurrences], dtype=np.int32)
    seeds = np.array([s for _, _, s in occurrences], dtype=np.uint64)
    counts = np.full(len(docs), 100, dtype=np.int32)  # one passage's seeds: no split by count
    runs = common_runs(docs, positions, seeds, counts, size, max_gap, min_words)
    assert [tuple(r) for r in runs.tolist()] == naive_common_runs(occurrences, size, max_gap, min_words)


def chains_of(
    hits: list[tuple[int, int, int, int]], max_gap=24, max_drift=8, min_hits=2, min_span=0, seed=0
) -> list[tuple]:
    """The chains of ``hits``, given in a shuffled order."""
    hits = sorted(
        hits, key=lambda h: random.Random(seed + h[0] * 31 + h[1] * 7 + h[2] * 7919 + h[3]).random()
    )
    columns = [np.array(c, dtype=np.int32) for c in zip(*hits)] if hits else [np.zeros(0, np.int32)] * 4
    n_docs = max((h[0] for h in hits), default=-1) + 1
    chains = chain_hits(*columns, n_docs, max_gap, max_drift, min_hits, min_span)
    return sorted(tuple(r) for r in chains.tolist())


PAIRS = [(0, 1), (0, 2), (1, 2), (2, 5), (3, 4)]


def naive_chains(hits, max_gap, max_drift, min_hits, min_span, open_most=16) -> list[tuple]:
    """Chains as ``chain_hits`` defines them, a pair at a time in (pos_a, pos_b) order: chains
    ``max_gap`` words behind a hit in a are closed; the hit joins the open chain whose last
    hit it follows (no earlier in b, later in a or b) with the least drift of diagonal, at
    most ``max_drift``, else opens one, closing first the one idle longest when ``open_most``
    are open. Open chains are a list where a closed one's place takes the last one's, and of
    equals the first in it wins, as in the kernel."""
    out = []

    def close(c, da, db):
        if c["hits"] > min_hits or (c["hits"] == min_hits and c["last_a"] - c["first_a"] >= min_span):
            out.append((da, db, c["first_a"], c["last_a"], c["first_b"], c["last_b"], c["low"], c["high"]))

    def remove(chains, i):
        chains[i] = chains[-1]
        chains.pop()

    for (da, db), group in itertools.groupby(sorted(hits), key=lambda h: (h[0], h[1])):
        chains: list[dict] = []
        for _, _, a, b in group:
            i = 0
            while i < len(chains):
                if a - chains[i]["last_a"] > max_gap:
                    close(chains[i], da, db)
                    remove(chains, i)
                else:
                    i += 1
            fits = [
                c
                for c in chains
                if abs(b - a - c["d"]) <= max_drift
                and b >= c["last_b"]
                and (a > c["last_a"] or b > c["last_b"])
            ]
            if fits:
                c = min(fits, key=lambda c: abs(b - a - c["d"]))
                c.update(last_a=a, last_b=b, d=b - a, low=min(c["low"], b - a), high=max(c["high"], b - a))
                c["hits"] += 1
                continue
            if len(chains) == open_most:
                oldest = min(range(len(chains)), key=lambda i: chains[i]["last_a"])
                close(chains[oldest], da, db)
                remove(chains, oldest)
            chains.append(
                dict(first_a=a, last_a=a, first_b=b, last_b=b, d=b - a, low=b - a, high=b - a, hits=1)
            )
        for c in chains:
            close(c, da, db)
    return sorted(out)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(PAIRS), st.integers(0, 150), st.integers(-12, 12)),
        min_size=10,
        max_size=150,
    ),
    st.integers(0, 40),
    st.integers(0, 10),
    st.integers(1, 3),
    st.integers(0, 8),
)
def test_chain_hits_equal_naive(hits, max_gap, max_drift, min_hits, min_span):
    # Hits near one diagonal per pair (drifting by -12..12), as copies make them.
    hits = sorted({(a, b, p, p + 20 + d) for (a, b), p, d in hits})
    assert chains_of(hits, max_gap, max_drift, min_hits, min_span) == naive_chains(
        hits, max_gap, max_drift, min_hits, min_span
    )


def test_a_chain_of_overlapping_seeds_is_a_phrase_not_a_passage():
    phrase = [(0, 1, 10, 40), (0, 1, 12, 42)]  # two 4-word seeds 2 words apart: 6 shared words
    assert chains_of(phrase, min_span=4) == []
    assert chains_of(phrase) == [(0, 1, 10, 12, 40, 42, 30, 30)]
    apart = [(0, 1, 10, 40), (0, 1, 14, 44)]
    assert chains_of(apart, min_span=4) == [(0, 1, 10, 14, 40, 44, 30, 30)]


def test_chains_do_not_depend_on_the_order_of_a_pairs_hits():
    hits = [(0, 1, a, a + 7 + (a // 40)) for a in range(10, 200, 20)] + [(0, 1, 30, 60), (0, 1, 40, 70)]
    assert len({tuple(chains_of(hits, seed=seed)) for seed in range(5)}) == 1


def test_hits_along_one_diagonal_make_one_chain():
    hits = [(0, 1, a, a + 7) for a in range(10, 200, 20)]
    assert chains_of(hits) == [(0, 1, 10, 190, 17, 197, 7, 7)]
    # Drifting by insertions, still one chain; its diagonals span the drift.
    drifting = [(0, 1, a, a + 7 + (a // 40)) for a in range(10, 200, 20)]
    assert chains_of(drifting) == [(0, 1, 10, 190, 17, 201, 7, 11)]


def test_chains_break_at_gaps_drifts_and_pairs():
    near = [(0, 1, 10, 10), (0, 1, 20, 20)]
    far = [(0, 1, 100, 100), (0, 1, 110, 110)]  # 80 words after the last: a second chain
    shifted = [(0, 1, 30, 60), (0, 1, 40, 70)]  # diagonal 30, not 0: another passage
    other_pair = [(0, 2, 10, 10), (0, 2, 20, 20)]
    lonely = [(1, 2, 50, 50)]  # one hit: below min_hits
    assert chains_of(near + far + shifted + other_pair + lonely) == [
        (0, 1, 10, 20, 10, 20, 0, 0),
        (0, 1, 30, 40, 60, 70, 30, 30),
        (0, 1, 100, 110, 100, 110, 0, 0),
        (0, 2, 10, 20, 10, 20, 0, 0),
    ]
    assert chains_of([]) == []


def banded(a: list[int], b: list[int], row_lo: int, row_hi: int, d_lo: int, d_hi: int) -> tuple:
    result = np.zeros(6, dtype=np.int64)
    a_, b_ = np.array(a, dtype=np.uint32), np.array(b, dtype=np.uint32)
    none_a, none_b = np.zeros(len(a), np.uint8), np.zeros(len(b), np.uint8)
    _align(a_, b_, none_a, none_b, row_lo, row_hi, d_lo, d_hi, MATCH, MISMATCH, GAP, result)
    return tuple(result.tolist())


def as_result(alignment) -> tuple:
    if alignment is None:
        return (0, 0, 0, 0, 0, 0)
    a = alignment
    return (a.first_a, a.last_a, a.first_b, a.last_b, a.matched, a.score)


words = st.lists(st.integers(0, 3), max_size=30)


@settings(max_examples=200, deadline=None)
@given(words, words)
def test_align_over_every_diagonal_is_the_full_smith_waterman(a, b):
    # Four distinct words: many ties, which both break the same way.
    expected = naive_matrix_alignment(a, b)
    assert naive_alignment(a, b) == expected
    assert banded(a, b, 0, len(a), -len(a), len(b)) == as_result(expected)


@settings(max_examples=200, deadline=None)
@given(words, words, st.data())
def test_align_in_a_band_is_smith_waterman_on_the_band(a, b, data):
    row_lo = data.draw(st.integers(0, len(a)))
    row_hi = data.draw(st.integers(row_lo, len(a)))
    d_lo = data.draw(st.integers(-len(a) - 2, len(b) + 2))
    d_hi = data.draw(st.integers(d_lo, len(b) + 3))
    rows = a[row_lo:row_hi]

    def inside(i: int, j: int) -> bool:
        return d_lo <= j - (i + row_lo) <= d_hi

    expected = naive_matrix_alignment(rows, b, inside)
    if expected is not None:  # rows are numbered within a
        expected = type(expected)(
            expected.first_a + row_lo,
            expected.last_a + row_lo,
            expected.first_b,
            expected.last_b,
            expected.matched,
            expected.score,
        )
    assert banded(a, b, row_lo, row_hi, d_lo, d_hi) == as_result(expected)


@settings(max_examples=200, deadline=None)
@given(words, words, st.data())
def test_a_masked_word_matches_none(a, b, data):
    # The reference: each masked word replaced by a word of its own (negative, unlike any).
    masked_a = data.draw(st.lists(st.booleans(), min_size=len(a), max_size=len(a)))
    masked_b = data.draw(st.lists(st.booleans(), min_size=len(b), max_size=len(b)))
    own_a = [-1 - i if m else w for i, (w, m) in enumerate(zip(a, masked_a))]
    own_b = [-1000 - j if m else w for j, (w, m) in enumerate(zip(b, masked_b))]
    result = np.zeros(6, dtype=np.int64)
    a_, b_ = np.array(a, dtype=np.uint32), np.array(b, dtype=np.uint32)
    mask_a, mask_b = np.array(masked_a, dtype=np.uint8), np.array(masked_b, dtype=np.uint8)
    _align(a_, b_, mask_a, mask_b, 0, len(a), -len(a), len(b), MATCH, MISMATCH, GAP, result)
    assert tuple(result.tolist()) == as_result(naive_matrix_alignment(own_a, own_b))


def align_one(a: list[int], b: list[int], chain: tuple, bounds: tuple, masked=None, min_matches=0) -> tuple:
    words = np.array(a + b, dtype=np.uint32)
    offsets = np.array([0, len(a), len(a) + len(b)], dtype=np.int64)
    mask = np.zeros(len(words), np.uint8) if masked is None else np.array(masked, np.uint8)
    chains = np.array([(0, 1, *chain)], dtype=np.int64)
    out = align_chains(
        words,
        offsets,
        mask,
        chains,
        np.array([bounds], np.int64),
        4,
        32,
        8,
        MATCH,
        MISMATCH,
        GAP,
        min_matches,
        True,
    )
    return tuple(out[0].tolist())


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 599), st.integers(1, 600), st.integers(0, 3), st.booleans())
def test_an_alignment_stays_within_its_bounds(lo, hi, seed, edited):
    # A copy of 600 words: unbounded, its alignment widens to both ends; bounded to rows
    # [lo, hi) of a, it never leaves them, and an exact copy is aligned over all of them.
    rng = random.Random(seed)
    a = [rng.randrange(10**6) for _ in range(600)]
    b = [w if not edited or rng.random() > 0.04 else rng.randrange(10**6) for w in a]
    hi = min(lo + hi, 600)
    chain = (300, 310, 300, 310, 0, 0)
    if not edited:
        assert align_one(a, b, chain, (0, 600)) == (0, 599, 0, 599, 600, 1200)
    got = align_one(a, b, chain, (lo, hi))
    assert got[5] == 0 or lo <= got[0] <= got[1] < hi
    if lo <= 300 and hi >= 314 and not edited:
        assert got == (lo, hi - 1, lo, hi - 1, hi - lo, 2 * (hi - lo))


def test_a_chain_inside_masked_words_is_not_aligned():
    rng = random.Random(5)
    a = [rng.randrange(10**6) for _ in range(200)]
    b = list(a)
    chain = (80, 120, 80, 120, 0, 0)
    assert align_one(a, b, chain, (0, 200), min_matches=30)[:2] == (0, 199)
    masked = [1] * 400  # both copies are common text: nothing to align
    assert align_one(a, b, chain, (0, 200), masked, min_matches=30) == (0, 0, 0, 0, 0, 0)
    masked = [0] * 50 + [1] * 150 + [0] * 50 + [1] * 150  # only their first 50 words are a pair's own
    assert align_one(a, b, chain, (0, 200), masked, min_matches=0)[:5] == (0, 49, 0, 49, 50)
