"""``dedup(jaccard=T)``: MinHash band keys, the rules over buckets, and the whole run, each held
to a slow, obviously-right reference (Python sets, pair-by-pair rules)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import neardup
from naive import naive_components, naive_features
from neardup._config import FingerprintConfig
from neardup._errors import ConfigError
from neardup._kernels.buckets import components_in_buckets, greedy_in_buckets
from neardup._kernels.minhash import band_keys
from neardup._kernels.pair_graph import KEPT, UNDECIDED
from neardup._kernels.similarity import BELOW, pair_similarity
from neardup.decision.lsh import (
    MEASURED,
    Banding,
    CorpusKeys,
    banding_for,
    bucket_groups,
    candidate_pairs,
    explain_jaccard,
    measured_recall,
)
from neardup.decision.verify import FeatureTable, check_verify

M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def _fmix64(h: int) -> int:
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & M64
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & M64
    return h ^ (h >> 33)


def naive_band_keys(features: set[int], seed: int, bands: int, rows: int) -> list[int]:
    """The module docstring of ``_kernels/minhash.py``, one document, in Python integers."""
    bins = bands * rows
    values: dict[int, int] = {}
    for h in features:
        g = _fmix64(h ^ seed)
        b, v = ((g >> 32) * bins) >> 32, g & M32
        values[b] = min(v, values.get(b, v))
    filled = dict(values)
    for i in range(bins):
        attempt = 1
        while filled and i not in filled:
            g = _fmix64(seed ^ 0x2545F4914F6CDD1D ^ ((i << 32) | attempt))
            j = ((g >> 32) * bins) >> 32
            if j in filled:
                values[i] = filled[j]
                break
            attempt += 1
    keys = []
    for b in range(bands):
        key = b
        for i in range(b * rows, (b + 1) * rows):
            key = _fmix64((key * 0x9E3779B97F4A7C15 + values.get(i, M32) + 1) & M64)
        keys.append(key)
    return keys


def _csr(sets: list[set[int]]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.cumsum([0] + [len(s) for s in sets]).astype(np.int64)
    hashes = np.array([h for s in sets for h in sorted(s)], dtype=np.uint64)
    return offsets, hashes


feature_sets = st.lists(
    st.sets(st.integers(0, 40) | st.integers(0, 2**64 - 1), max_size=30), min_size=1, max_size=12
)


@given(sets=feature_sets, bands=st.integers(1, 4), rows=st.integers(1, 5), seed=st.integers(0, 2**64 - 1))
@settings(max_examples=80, deadline=None)
def test_band_keys_equal_the_python_reference(sets, bands, rows, seed):
    got = band_keys(*_csr(sets), np.uint64(seed), bands, rows)
    assert got.tolist() == [naive_band_keys(s, seed, bands, rows) for s in sets]


@given(
    texts=st.lists(st.text(st.sampled_from("ab cd\u00e9\u4e00.\n"), max_size=40), min_size=1, max_size=6),
    kind=st.sampled_from([("word-shingles", 3), ("words", None), ("char-ngrams", 4)]),
)
@settings(max_examples=60, deadline=None)
def test_band_keys_of_texts_are_those_of_their_features(texts, kind):
    features, size = kind
    verification = check_verify(("jaccard", 0.5), FingerprintConfig(), features, size)
    sizes = {"word-shingles": {"shingle_size": size}, "char-ngrams": {"ngram_size": size}}.get(features, {})
    naive = [set(naive_features(t, features, **sizes)) for t in texts]
    keys = Banding(bands=3, rows=2, seed=11).keys(texts, verification)
    assert keys.tolist() == [naive_band_keys(s, 11, 3, 2) for s in naive]


@given(sets=feature_sets, floor=st.sampled_from([0.0, 0.3, 0.5, 0.8, 1.0]), cosine=st.booleans())
@settings(max_examples=120, deadline=None)
def test_a_floor_skips_only_pairs_below_it(sets, floor, cosine):
    offsets, hashes = _csr(sets)
    weights = np.linspace(1.0, 2.0, hashes.size)
    m = len(sets)
    first, second = (np.array(x, dtype=np.int64) for x in zip(*[(a, b) for a in range(m) for b in range(m)]))
    exact = pair_similarity(offsets, hashes, weights, first, second, cosine, 0.0)
    got = pair_similarity(offsets, hashes, weights, first, second, cosine, floor)
    assert ((got == exact) | ((got == BELOW) & (exact < floor) & (not cosine))).all()
    if not cosine:
        want = [_jaccard(sets[a], sets[b]) for a, b in zip(first, second)]
        assert np.allclose(exact, want)


def test_minhash_agreement_tracks_jaccard():
    # 2,000 bins of two sets with Jaccard 1/3 and 4/5: each bin agrees with that chance.
    a = set(range(0, 3000))
    for b, jaccard in ((set(range(1500, 4500)), 1 / 3), (set(range(0, 2667)) | set(range(5000, 5333)), 0.8)):
        agree = [
            (k[0] == k[1]).mean()
            for seed in range(5)
            for k in [band_keys(*_csr([a, b]), np.uint64(seed), 2000, 1)]
        ]
        assert abs(np.mean(agree) - jaccard) < 0.02
    # Few features, most bins filled by densification: still the Jaccard index.
    small_a, small_b = set(range(0, 30)), set(range(10, 40))  # J = 0.5
    agree = [
        (k[0] == k[1]).mean()
        for seed in range(40)
        for k in [band_keys(*_csr([small_a, small_b]), np.uint64(seed), 200, 1)]
    ]
    assert abs(np.mean(agree) - 0.5) < 0.03


def test_the_measured_table_is_of_the_bandings_in_use():
    # A change to banding_for must be measured again (benchmarks/bench_curves.py).
    for threshold, (bands, rows, *_) in MEASURED.items():
        assert banding_for(threshold) == Banding(bands, rows)
        assert "recall" in explain_jaccard(threshold)
    assert measured_recall(0.77) is None


def test_banding_for_reaches_the_recall_at_the_threshold():
    for threshold in (0.3, 0.5, 0.7, 0.8, 0.9, 0.95):
        banding = banding_for(threshold)
        assert banding.probability(threshold) >= 0.95
        assert Banding(banding.bands - 1, banding.rows).probability(threshold) < 0.95  # fewest bands
        if threshold >= 0.5:  # lower thresholds would need hundreds of permutations for it
            assert banding.probability(0.05) < 0.01  # unrelated pages are rarely candidates


# ---------------------------------------------------------------------------------------------
# The rules over buckets, against the pair-by-pair rules over the verified candidate pairs
# ---------------------------------------------------------------------------------------------


def _jaccard(a: set[int], b: set[int]) -> float:
    return 1.0 if not a and not b else len(a & b) / len(a | b)


def _verified_pairs(keys: np.ndarray, sets: list[set[int]], threshold: float) -> set[tuple[int, int]]:
    m = len(sets)
    return {
        (x, y)
        for x in range(m)
        for y in range(x + 1, m)
        if (keys[x] == keys[y]).any() and _jaccard(sets[x], sets[y]) >= threshold
    }


def _naive_greedy(m: int, pairs: set[tuple[int, int]]) -> list[int]:
    representative = list(range(m))
    kept: list[int] = []
    for x in range(m):
        near = [y for y in kept if (y, x) in pairs]
        if near:
            representative[x] = min(near)
        else:
            kept.append(x)
    return representative


@st.composite
def bucketed_sets(draw):
    """Feature sets from a few families (so that many pairs are similar) and bands whose keys
    collide often (so that buckets are large and mixed)."""
    families = draw(st.lists(st.sets(st.integers(0, 60), min_size=1, max_size=20), min_size=1, max_size=4))
    m = draw(st.integers(1, 30))
    sets = []
    for _ in range(m):
        base = draw(st.sampled_from(families))
        drop = draw(st.sets(st.sampled_from(sorted(base)), max_size=max(len(base) // 3, 0)))
        add = draw(st.sets(st.integers(0, 60), max_size=3))
        sets.append((base - drop) | add)
    bands = draw(st.integers(1, 4))
    keys = np.array(
        draw(st.lists(st.lists(st.integers(0, 3), min_size=bands, max_size=bands), min_size=m, max_size=m)),
        dtype=np.uint64,
    )
    return sets, keys


def _run(sets, keys, threshold, cluster):
    groups, n_groups = bucket_groups(keys)
    offsets, hashes = _csr(sets)
    weights = np.ones(hashes.shape[0])
    rows = np.arange(len(sets), dtype=np.int64)
    if cluster == "components":
        roots, checked, similar = components_in_buckets(
            groups, n_groups, rows, offsets, hashes, weights, threshold, False
        )
        return roots.tolist(), checked, similar
    state = np.zeros(len(sets), dtype=np.int8)
    representative = np.arange(len(sets), dtype=np.int64)
    checked, similar = greedy_in_buckets(
        groups, n_groups, state, representative, rows, offsets, hashes, weights, threshold, False
    )
    assert not (state == UNDECIDED).any()
    assert ((state == KEPT) == (representative == np.arange(len(sets)))).all()
    return representative.tolist(), checked, similar


@given(case=bucketed_sets(), threshold=st.sampled_from([0.3, 0.5, 0.8, 1.0]))
@settings(max_examples=150, deadline=None)
def test_rules_in_buckets_equal_the_pair_by_pair_rules(case, threshold):
    sets, keys = case
    pairs = _verified_pairs(keys, sets, threshold)
    greedy, checked, similar = _run(sets, keys, threshold, "greedy")
    assert greedy == _naive_greedy(len(sets), pairs)
    assert similar <= checked
    roots, checked, similar = _run(sets, keys, threshold, "components")
    assert roots == naive_components(len(sets), pairs)
    candidates = {
        (x, y) for x in range(len(sets)) for y in range(x + 1, len(sets)) if (keys[x] == keys[y]).any()
    }
    assert similar <= checked <= len(candidates)


def test_a_family_in_one_bucket_costs_a_check_per_member_not_per_pair():
    # 3,000 members sharing every bucket: the pairs are 4.5 million, the checks about 3,000.
    rng = np.random.default_rng(0)
    base = set(range(100))
    sets = [base - {int(rng.integers(100))} for _ in range(3000)]
    keys = np.zeros((3000, 4), dtype=np.uint64)
    for cluster in ("greedy", "components"):
        roots, checked, _ = _run(sets, keys, 0.9, cluster)
        assert roots == [0] * 3000
        assert checked < 2 * 3000


# ---------------------------------------------------------------------------------------------
# dedup(jaccard=T), end to end
# ---------------------------------------------------------------------------------------------


def _edited(words: list[str], rate: float, rng: random.Random, vocabulary: list[str]) -> list[str]:
    return [rng.choice(vocabulary) if rng.random() < rate else w for w in words]


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    """120 originals of 150 words, each with variants at 1-30% of words changed (3-shingle
    Jaccard about 0.95 down to 0.2), 40 exact copies, and a family of 200 near-identical pages."""
    rng = random.Random(5)
    vocabulary = [f"w{i}" for i in range(2000)]
    texts = []
    for _ in range(120):
        words = [rng.choice(vocabulary) for _ in range(150)]
        texts.append(" ".join(words))
        for rate in (0.01, 0.04, 0.08, 0.15, 0.3):
            texts.append(" ".join(_edited(words, rate, rng, vocabulary)))
    texts += texts[:40]
    template = [rng.choice(vocabulary) for _ in range(300)]
    texts += [" ".join([*template, f"page{i}"]) for i in range(200)]
    rng.shuffle(texts)
    return texts


def _shingles(text: str) -> set[int]:
    return set(naive_features(text, "word-shingles", 3))


@pytest.mark.slow
@pytest.mark.parametrize("threshold", [0.5, 0.8])
@pytest.mark.parametrize("cluster", ["greedy", "components"])
def test_dedup_by_jaccard_equals_the_rule_over_verified_candidates(corpus, threshold, cluster):
    result = neardup.dedup(corpus, jaccard=threshold, cluster=cluster)
    assert result.plan == banding_for(threshold)
    sets = [_shingles(t) for t in corpus]
    n = len(corpus)
    # The reference: copies (identical fingerprints) follow their first member; among the
    # first members, candidates share a band key; pairs at least T similar count.
    keys = result.plan.keys(corpus, result._verify)
    leaders: dict[int, int] = {}
    for p in range(n):
        leaders.setdefault(int(result.fingerprints[p]), p)
    order = sorted(set(leaders.values()))
    rank = {p: r for r, p in enumerate(order)}
    pairs = _verified_pairs(keys[order], [sets[p] for p in order], threshold)
    rule = _naive_greedy if cluster == "greedy" else naive_components
    roots = rule(len(order), pairs)
    want = [order[roots[rank[leaders[int(result.fingerprints[p])]]]] for p in range(n)]
    assert result.representatives.tolist() == want
    # Every removed document is at least T similar to its kept one (greedy) or linked by such
    # pairs (components); copies have Jaccard 1.
    removed = np.flatnonzero(~result.kept)
    assert removed.size > 200
    if cluster == "greedy":
        assert all(_jaccard(sets[p], sets[result.representatives[p]]) >= threshold for p in removed)
    # Recall: the variants far above the threshold are found.
    true_pairs = {(x, y) for (x, y) in pairs}
    assert len(true_pairs) >= 0.9 * len(
        {
            (x, y)
            for x in range(len(order))
            for y in range(x + 1, len(order))
            if _jaccard(sets[order[x]], sets[order[y]]) >= threshold
        }
    )


def test_dedup_by_jaccard_says_what_it_checked(corpus):
    result = neardup.dedup(corpus, jaccard=0.8)
    assert result.stats.checked_pairs >= result.stats.similar_pairs > 0
    assert "passed verification" in result.stats.format()


@given(case=bucketed_sets(), chunk=st.sampled_from([1, 3, 1000]))
@settings(max_examples=80, deadline=None)
def test_candidate_pairs_are_each_pair_sharing_a_key_once(case, chunk):
    _, keys = case
    got = [(int(a), int(b)) for first, second in candidate_pairs(keys, chunk) for a, b in zip(first, second)]
    assert all(len(f) <= chunk for f, _ in candidate_pairs(keys, chunk))
    m = keys.shape[0]
    assert sorted(got) == [(x, y) for x in range(m) for y in range(x + 1, m) if (keys[x] == keys[y]).any()]


@pytest.mark.slow
@pytest.mark.parametrize("threshold", [0.5, 0.9])
def test_pairs_of_a_jaccard_dedup_are_the_verified_candidates(corpus, threshold):
    result = neardup.dedup(corpus, jaccard=threshold)
    sets = [_shingles(t) for t in corpus]
    keys = result._keys
    n = len(corpus)
    every = sorted(
        (p, q)
        for p in range(n)
        for q in range(p + 1, n)
        if (keys[p] == keys[q]).any() and _jaccard(sets[p], sets[q]) >= threshold
    )
    chunks = list(result.iter_pairs(every=True, chunk_size=500))
    got = sorted((int(a), int(b)) for c in chunks for a, b in zip(c.first, c.second))
    assert got == every
    # A chunk whose candidates all fail is left out: an empty one would type the ids as nulls.
    assert len(list(result.iter_pairs(every=True, chunk_size=1))) == len(every)
    for c in chunks:
        assert all(
            abs(s - _jaccard(sets[a], sets[b])) < 1e-12 for a, b, s in zip(c.first, c.second, c.similarity)
        )
        assert (
            c.distance
            == [
                bin(int(result.fingerprints[a]) ^ int(result.fingerprints[b])).count("1")
                for a, b in zip(c.first, c.second)
            ]
        ).all()
    # By default: pairs between the fingerprints' first members, and each copy's link to its.
    first_member: dict[int, int] = {}
    for p in range(n):
        first_member.setdefault(int(result.fingerprints[p]), p)
    leaders = set(first_member.values())
    default = sorted((int(a), int(b)) for c in result.iter_pairs() for a, b in zip(c.first, c.second))
    links = sorted((first_member[int(result.fingerprints[p])], p) for p in range(n) if p not in leaders)
    assert default == sorted([(p, q) for p, q in every if p in leaders and q in leaders] + links)


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(jaccard=0.8, max_distance=3), "leave out max_distance"),
        (dict(jaccard=0.8, verify=("jaccard", 0.5)), "leave out verify"),
        (dict(jaccard=0), r"\(0, 1\]"),
        (dict(jaccard=True), r"\(0, 1\]"),
        (dict(jaccard=0.8, verify_features="bogus"), "not known"),
        (dict(jaccard=1e-4), "too low for MinHash-LSH"),
    ],
)
def test_bad_jaccard_options_are_refused(options, message):
    with pytest.raises(ConfigError, match=message):
        neardup.dedup(["a b c"], **options)


def test_jaccard_on_other_features(corpus):
    result = neardup.dedup(corpus[:200], jaccard=0.7, verify_features="char-ngrams", verify_size=4)
    sets = [set(naive_features(t, "char-ngrams", ngram_size=4)) for t in corpus[:200]]
    for p in np.flatnonzero(~result.kept):
        assert _jaccard(sets[p], sets[result.representatives[p]]) >= 0.7


def test_features_held_or_read_again_give_the_same_run(corpus, monkeypatch):
    held = neardup.dedup(corpus, jaccard=0.6, cluster="components")
    monkeypatch.setattr("neardup.decision.lsh.available_memory", lambda: 0)  # nothing fits
    read = neardup.dedup(corpus, jaccard=0.6, cluster="components")
    assert (held._keys == read._keys).all()
    # Held, the fingerprints come from the features; read again, from the texts: the same bits.
    assert np.array_equal(held.fingerprints, read.fingerprints)
    assert np.array_equal(held.fingerprints, neardup.Fingerprinter().fingerprint_batch(corpus))
    assert (held.representatives == read.representatives).all()
    assert held.stats.checked_pairs == read.stats.checked_pairs
    pairs = [
        sorted(zip(*(np.concatenate(x) for x in zip(*[(c.first, c.second) for c in r.iter_pairs()]))))
        for r in (held, read)
    ]
    assert pairs[0] == pairs[1] and len(pairs[0]) > 100


@pytest.mark.parametrize("room", ["all", "the first batch", "none"])
def test_corpus_keys_hold_the_features_while_they_fit_and_key_alike_past(corpus, room):
    verification = check_verify(("jaccard", 0.7), FingerprintConfig(), "word-shingles", None)
    assert verification is not None
    banding = banding_for(0.7)
    batches = [corpus[:150], corpus[150:300], corpus[300:]]
    whole = FeatureTable.of(corpus, verification.features)
    first = FeatureTable.of(batches[0], verification.features)
    budget = {"all": whole.hashes.nbytes, "the first batch": first.hashes.nbytes, "none": 0}[room]
    fingerprinter = neardup.Fingerprinter()
    keys = CorpusKeys(banding, verification, fingerprinter, budget=budget)
    fingerprints = [keys.add(batch) for batch in batches]
    assert (keys.keys() == banding.keys(corpus, verification)).all()
    # The batch that finds no room is still keyed and fingerprinted from its features; the
    # later ones are keyed from the texts, and the caller fingerprints them. With no room at
    # all (as Spark's tasks ask), every batch is.
    returned = {"all": [True] * 3, "the first batch": [True, True, False], "none": [False] * 3}
    assert [f is not None for f in fingerprints] == returned[room]
    for batch, got in zip(batches, fingerprints):
        assert got is None or np.array_equal(got, fingerprinter.fingerprint_batch(batch))
    held = keys.features()
    if room == "all":
        assert held is not None
        assert np.array_equal(held.table.doc_offsets, whole.doc_offsets)
        assert np.array_equal(held.table.hashes, whole.hashes) and held.table.counts is None
    else:
        assert held is None  # the checks read the features again


def test_the_pairs_of_a_file_reuse_the_features_the_run_held(corpus, tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in corpus))
    result = neardup.dedup(path, jaccard=0.7)
    path.unlink()  # nothing to read again
    in_memory = neardup.dedup(corpus, jaccard=0.7)
    got, want = (
        [(c.first.tolist(), c.second.tolist()) for c in r.iter_pairs(every=True)] for r in (result, in_memory)
    )
    assert got == want and len(got) > 0
