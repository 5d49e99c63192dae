"""neardup.dedup against plain references: brute-force pairs, connected components, the
keep policies, exact similarity from tests/naive.py, and invariance to threads and blocks."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import neardup
from naive import naive_components as components
from naive import naive_features
from neardup.planted.generator import planted_corpus

SCRIPTS = ("en", "ru", "zh", "ar")


@pytest.fixture(scope="module")
def corpus():
    docs = planted_corpus(
        40,
        variants_per_original=2,
        edit_rates=(0.0, 0.01, 0.02, 0.05, 0.2),
        edit_kinds=("substitute", "insert", "delete", "reorder", "boilerplate", "format"),
        scripts=SCRIPTS,
        words_per_doc=60,
        seed=3,
    )
    return [d.text for d in docs], [d.id for d in docs]


def brute_pairs(fps: np.ndarray, k: int) -> set[tuple[int, int]]:
    d = neardup.hamming_pairwise(fps)
    i, j = np.nonzero(np.triu(d <= k, 1))
    return set(zip(i.tolist(), j.tolist()))


@pytest.mark.parametrize("bits, k", [(64, 3), (64, 8), (128, 12)])
def test_pairs_are_every_pair_within_k_and_no_other(corpus, bits, k):
    texts, _ = corpus
    result = neardup.dedup(texts, bits=bits, max_distance=k)
    first, second, distance = result.pairs
    assert set(zip(first.tolist(), second.tolist())) == brute_pairs(result.fingerprints, k)
    assert (first < second).all()
    assert np.array_equal(
        distance,
        [neardup.hamming(result.fingerprints[a], result.fingerprints[b]) for a, b in zip(first, second)],
    )
    assert len(brute_pairs(result.fingerprints, k)) > 10  # the corpus has near-duplicates


def test_components_keep_one_document_per_cluster(corpus):
    texts, _ = corpus
    result = neardup.dedup(texts, max_distance=6, cluster="components")
    first, second, _ = result.pairs
    label = components(len(texts), zip(first.tolist(), second.tolist()))
    assert Counter(np.array(label)[result.kept].tolist()) == Counter(set(label))  # one each
    assert np.array_equal(result.representatives, label)  # keep="first": the earliest
    same = np.array(label)[:, None] == np.array(label)[None, :]
    assert np.array_equal(result.labels[:, None] == result.labels[None, :], same)
    assert np.array_equal(
        result.distances,
        [neardup.hamming(result.fingerprints[p], result.fingerprints[label[p]]) for p in range(len(texts))],
    )
    assert result.stats.duplicates == len(texts) - len(set(label))


@pytest.mark.parametrize("keep", ["longest", "shortest", "lowest-id"])
def test_keep_policies_choose_the_right_member_of_a_component(corpus, keep):
    texts, ids = corpus
    table = pa.table({"text": texts, "id": ids})
    result = neardup.dedup(table, id_field="id", keep=keep, max_distance=6, cluster="components")
    first, second, _ = result.pairs
    label = components(len(texts), zip(first.tolist(), second.tolist()))
    size = [len(t.encode()) for t in texts]
    for root in set(label):
        members = [p for p in range(len(texts)) if label[p] == root]
        if keep == "longest":
            best = min(members, key=lambda p: (-size[p], p))
        elif keep == "shortest":
            best = min(members, key=lambda p: (size[p], p))
        else:
            best = min(members, key=lambda p: ids[p])
        assert [p for p in members if result.kept[p]] == [best]


def test_lowest_id_compares_integer_ids_as_numbers():
    texts = ["one two three four five six seven"] * 3
    result = neardup.dedup(pa.table({"text": texts, "id": [10, 9, 100]}), id_field="id", keep="lowest-id")
    assert result.kept.tolist() == [False, True, False]


def naive_similarity(a: str, b: str, metric: str) -> float:
    fa = Counter(naive_features(a, "word-shingles", 3, True))
    fb = Counter(naive_features(b, "word-shingles", 3, True))
    if not fa and not fb:
        return 1.0
    if metric == "jaccard":
        return len(fa.keys() & fb.keys()) / len(fa.keys() | fb.keys())
    dot = sum(fa[f] * fb[f] for f in fa.keys() & fb.keys())
    return dot / (sum(v * v for v in fa.values()) * sum(v * v for v in fb.values())) ** 0.5


@pytest.mark.parametrize("metric", ["jaccard", "cosine"])
def test_verify_keeps_the_pairs_whose_exact_similarity_reaches_the_threshold(corpus, metric):
    texts, _ = corpus
    loose = neardup.dedup(texts, bits=128, max_distance=16)
    verified = neardup.dedup(texts, bits=128, max_distance=16, verify=(metric, 0.9))
    expected = {}
    for a, b in zip(*loose.pairs[:2]):
        expected[(int(a), int(b))] = naive_similarity(texts[a], texts[b], metric)
    got = dict(zip(zip(verified.pairs[0].tolist(), verified.pairs[1].tolist()), verified.similarity.tolist()))
    assert set(got) == {pair for pair, s in expected.items() if s >= 0.9 - 1e-12}
    for pair, s in got.items():
        assert s == pytest.approx(expected[pair], abs=1e-9)
    assert 0 < len(got) < len(expected)  # the threshold removed some pairs, not all
    # A chunk whose pairs all fail is left out: an empty one would type the ids as nulls.
    one_by_one = list(verified.iter_pairs(every=True, chunk_size=1))
    assert len(one_by_one) == len(got)
    named = pa.table({"text": texts, "id": [f"doc-{i}" for i in range(len(texts))]})
    named_result = neardup.dedup(named, id_field="id", bits=128, max_distance=16, verify=(metric, 0.9))
    table = named_result.pairs_table(every=True)
    assert table.schema.field("id_a").type == pa.string() and table.num_rows == len(got)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.sampled_from(["a b c d e f", "a b c d e g", "x y z w v u", "a b c", "", "q r s t"]),
        min_size=0,
        max_size=12,
    )
)
def test_dedup_of_small_lists_matches_components(texts):
    # Compared as any other, the empty text's fingerprint 0 joins like the rest.
    result = neardup.dedup(texts, max_distance=3, featureless="compare")
    pairs = brute_pairs(result.fingerprints, 3) if texts else set()
    label = components(len(texts), pairs)
    assert result.kept.tolist() == [label[p] == p for p in range(len(texts))]


def test_same_result_for_any_threads_and_block_size(tmp_path, corpus):
    texts, ids = corpus
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(ids, texts)))
    runs = [
        neardup.dedup(path, n_jobs=n_jobs, block_mb=block_mb, max_distance=5, id_field="id")
        for n_jobs, block_mb in ((1, 16), (2, 16), (2, 0.002), (1, 0.0005))
    ]
    for run in runs[1:]:
        assert np.array_equal(run.fingerprints, runs[0].fingerprints)
        assert np.array_equal(run.kept, runs[0].kept)
        assert np.array_equal(run.rows, runs[0].rows)
        assert run.ids == ids


def test_memory_inputs_agree(corpus):
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    texts, _ids = corpus
    results = [
        neardup.dedup(texts),
        neardup.dedup(pa.array(texts)),
        neardup.dedup(pd.DataFrame({"body": texts}), text_field="body"),
        neardup.dedup(pl.DataFrame({"body": texts}), text_field="body"),
    ]
    for r in results[1:]:
        assert np.array_equal(r.kept, results[0].kept)
    frame = results[0].to_pandas()
    assert list(frame.columns) == ["id", "kept", "cluster", "representative", "distance"]
    assert frame["kept"].sum() == results[0].kept.sum()


def test_similarity_gives_the_cosine_radius(corpus):
    texts, _ = corpus
    assert neardup.dedup(texts, similarity=0.95).max_distance == neardup.distance_for_cosine(0.95)
    assert neardup.dedup(texts, bits=128).max_distance == 6
    with pytest.raises(neardup.ConfigError, match="not both"):
        neardup.dedup(texts, similarity=0.9, max_distance=3)


def test_against_drops_documents_near_the_index_with_their_component(tmp_path, corpus):
    texts, _ = corpus
    seen, new = texts[: len(texts) // 2], texts[len(texts) // 2 :]
    first = neardup.dedup(seen)
    first.write(save_index=tmp_path / "seen.idx")
    second = neardup.dedup(new, against=tmp_path / "seen.idx", cluster="components")
    fp = neardup.Fingerprinter()
    old = fp.fingerprint_batch(seen)
    near_old = np.array([(neardup.hamming_many(old, f) <= 3).any() for f in second.fingerprints])
    assert np.array_equal(second.matched >= 0, near_old)
    assert near_old.any() and not near_old.all()
    # a cluster with a document near the index keeps nothing
    for label in np.unique(second.labels[near_old]):
        assert not second.kept[second.labels == label].any()
    plain = neardup.dedup(new, cluster="components")
    assert np.array_equal(second.kept, plain.kept & ~np.isin(plain.labels, plain.labels[near_old]))
    second.write(save_index=tmp_path / "both.idx")
    both = neardup.HammingIndex.open(tmp_path / "both.idx")
    assert len(both) == len(texts)
    with pytest.raises(neardup.ConfigError, match="another fingerprint config"):
        neardup.dedup(new, against=tmp_path / "seen.idx", features="words")


def test_bad_items_in_a_list_are_named_or_skipped():
    with pytest.raises(neardup.FormatError, match="document 1: is a int"):
        neardup.dedup(["a b c", 5, "a b c"])
    result = neardup.dedup(["a b c", 5, "a b c", None], errors="skip")
    assert result.rows.tolist() == [0, 2]
    assert result.stats.skipped == 2
    assert result.kept.tolist() == [True, False]


def test_summary_sizes_use_a_unit_that_fits():
    from neardup.decision.stats import format_bytes

    assert [format_bytes(n) for n in (0, 812, 3500, 2**20 - 1, 5 * 2**30)] == [
        "0 B",
        "812 B",
        "3.4 KiB",
        "1.0 MiB",
        "5.0 GiB",
    ]
    text = "a small page about the weather in the northern valleys tomorrow"
    summary = neardup.dedup([text, text + "!", "something else entirely"]).stats.format()
    assert "0.0 MiB" not in summary
    assert f"read 3 documents ({2 * len(text) + 1 + len('something else entirely')} B of text)" in summary


BLANK = ["", "   ", "\t\n", "...", "!! ?", "\u3000\u3000"]  # different texts, none with a word


@pytest.mark.parametrize("features", ["word-shingles", "words"])
def test_documents_without_features_are_kept_and_compared_with_nothing(features):
    texts = [*BLANK, "a real page about rivers and hills", "a real page about rivers and hills!"]
    result = neardup.dedup(texts, features=features)
    assert result.kept.tolist() == [True] * len(BLANK) + [True, False]
    assert len(set(result.labels[: len(BLANK)].tolist())) == len(BLANK)  # each its own cluster
    assert result.pairs[0].tolist() == [len(BLANK)]
    assert result.stats.featureless == len(BLANK)
    assert f"{len(BLANK)} documents had no features" in result.stats.format()


def test_documents_without_features_compared_or_dropped_on_request():
    texts = [*BLANK, "a real page about rivers and hills"]
    compared = neardup.dedup(texts, featureless="compare")
    assert compared.kept.tolist() == [True] + [False] * (len(BLANK) - 1) + [True]  # fingerprint 0 each
    dropped = neardup.dedup(texts, featureless="drop")
    assert dropped.kept.tolist() == [False] * len(BLANK) + [True]
    assert "kept 1 documents" in dropped.stats.format()
    with pytest.raises(neardup.ConfigError, match=r"featureless='nope'.*keep, drop, compare"):
        neardup.dedup(texts, featureless="nope")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=" .,!?-ab\u00e9\u6771\n", max_size=12), min_size=1, max_size=12))
def test_featureless_is_exactly_the_documents_with_no_features(texts):
    for features in ("word-shingles", "char-ngrams"):
        result = neardup.dedup(texts, features=features)
        no_features = [not naive_features(t, features) for t in texts]
        assert result.stats.featureless == sum(no_features)
        # Every document without features is kept alone; no pair involves one.
        involved = set(result.pairs[0].tolist()) | set(result.pairs[1].tolist())
        assert not involved & {p for p, none in enumerate(no_features) if none}


@pytest.mark.parametrize("keep", ["first", "longest", "lowest-id"])
@pytest.mark.parametrize("bits, k", [(64, 6), (128, 12)])
def test_greedy_keeps_a_document_unless_a_kept_one_lies_within_k(corpus, keep, bits, k):
    import naive_index

    texts, ids = corpus
    result = neardup.dedup(
        pa.table({"text": texts, "id": ids}), id_field="id", keep=keep, bits=bits, max_distance=k
    )
    size = [len(t.encode()) for t in texts]
    rules = {"first": lambda p: p, "longest": lambda p: (-size[p], p), "lowest-id": lambda p: (ids[p], p)}
    order = sorted(range(len(texts)), key=rules[keep])
    want_kept, want_rep = naive_index.greedy(naive_index.as_ints(result.fingerprints), order, k)
    assert result.kept.tolist() == want_kept
    assert result.representatives.tolist() == want_rep
    assert (result.distances <= k).all()  # every removed document has a kept one within k
    assert result.kept[result.representatives].all()


def test_greedy_with_verify_removes_only_documents_similar_to_a_kept_one(corpus):
    texts, _ = corpus
    result = neardup.dedup(texts, bits=128, max_distance=16, verify=("jaccard", 0.5))
    removed = np.flatnonzero(~result.kept)
    assert removed.size > 5
    for p in removed.tolist():
        r = int(result.representatives[p])
        assert result.kept[r] and result.distances[p] <= 16
        assert naive_similarity(texts[p], texts[r], "jaccard") >= 0.5


@pytest.mark.slow
def test_thousands_of_copies_and_a_near_identical_family_match_the_references():
    import naive_index

    rng = np.random.default_rng(11)
    words = [f"w{i}" for i in range(400)]
    page = " ".join(rng.choice(words, 60))
    # (sized so that the pure-Python references, quadratic in the documents, take ~30 s)
    texts = [page] * 2000  # a page copied thousands of times
    texts += [f"{page} updated {i % 1000}" for i in range(1000)]  # a family: one word differs
    texts += [" ".join(rng.choice(words, 60)) for _ in range(200)]  # unrelated pages
    order = rng.permutation(len(texts))
    texts = [texts[p] for p in order]
    for cluster in ("greedy", "components"):
        result = neardup.dedup(texts, max_distance=8, cluster=cluster)
        values = naive_index.as_ints(result.fingerprints)
        if cluster == "greedy":
            want_kept, want_rep = naive_index.greedy(values, list(range(len(texts))), 8)
            assert result.kept.tolist() == want_kept and result.representatives.tolist() == want_rep
        else:
            i, j = zip(*sorted(brute_pairs(result.fingerprints, 8)))
            want = naive_index.representatives(list(i), list(j), list(range(len(texts))), "first")
            assert result.representatives.tolist() == want


def test_the_summary_counts_documents_removed_by_chaining():
    rng = np.random.default_rng(1)
    page = [f"w{i}" for i in rng.integers(0, 1000, 40)]
    texts = []
    for i in range(40):  # each page one word further from the first
        texts.append(" ".join(page))
        page[i] = f"new{i}"
    chained = neardup.dedup(texts, max_distance=6, features="words", cluster="components")
    far = ~chained.kept & (chained.distances > 6)
    assert chained.stats.chained == int(far.sum()) > 10
    assert "farther than the radius from every kept one" in chained.stats.format()
    greedy = neardup.dedup(texts, max_distance=6, features="words")
    assert greedy.stats.chained == 0 and greedy.distances.max() <= 6
    assert greedy.kept.sum() > chained.kept.sum()


@pytest.fixture(scope="module")
def skewed(corpus):
    """The planted corpus with one page copied 400 times and a family of 300 variants of it."""
    texts, _ = corpus
    rng = np.random.default_rng(5)
    page = texts[0]
    skewed = list(texts) + [page] * 400 + [f"{page} edition {i}" for i in range(300)]
    return [skewed[p] for p in rng.permutation(len(skewed))]


@pytest.mark.slow
@pytest.mark.parametrize("cluster", ["greedy", "components"])
def test_verify_equals_the_one_at_a_time_references_on_copies_and_families(skewed, cluster):
    import naive_index

    k, threshold = 8, 0.8
    result = neardup.dedup(skewed, max_distance=k, cluster=cluster, verify=("jaccard", threshold))
    values = naive_index.as_ints(result.fingerprints)
    cache: dict[tuple[str, str], bool] = {}

    def similar(a: int, b: int) -> bool:
        key = (min(skewed[a], skewed[b]), max(skewed[a], skewed[b]))
        if key not in cache:
            cache[key] = naive_similarity(key[0], key[1], "jaccard") >= threshold - 1e-12
        return cache[key]

    everyone = list(range(len(skewed)))
    if cluster == "greedy":
        want_kept, want_rep = naive_index.greedy(values, everyone, k, similar)
        assert result.kept.tolist() == want_kept and result.representatives.tolist() == want_rep
    else:
        linked = [(a, b) for a, b in sorted(brute_pairs(result.fingerprints, k)) if similar(a, b)]
        i, j = [a for a, _ in linked], [b for _, b in linked]
        assert result.representatives.tolist() == naive_index.representatives(i, j, everyone, "first")
    assert 0 < result.stats.similar_pairs < result.stats.checked_pairs  # some pairs failed
    assert (
        f"{result.stats.similar_pairs:,} of {result.stats.checked_pairs:,} pairs checked"
        in result.stats.format()
    )


def test_pairs_stream_in_chunks_and_the_default_ones_rebuild_every_cluster(skewed, tmp_path):
    k = 8
    result = neardup.dedup(skewed, max_distance=k, cluster="components")
    every = [
        p
        for c in result.iter_pairs(every=True, chunk_size=1000)
        for p in zip(c.first.tolist(), c.second.tolist())
    ]
    assert sorted(every) == sorted(brute_pairs(result.fingerprints, k))  # each pair once
    assert len(every) > 400 * 399 // 2  # the copies alone make 79,800
    chunks = list(result.iter_pairs(chunk_size=1000))
    assert all(0 < len(c.first) <= 1000 and c.similarity is None for c in chunks)
    default = [p for c in chunks for p in zip(c.first.tolist(), c.second.tolist(), c.distance.tolist())]
    distinct = np.unique(result.fingerprints)
    copies = len(skewed) - len(distinct)
    assert len(default) == len(brute_pairs(distinct, k)) + copies < len(every) // 5
    assert all(a < b for a, b, _ in default)
    # The default pairs' components are the clusters (labels of the every-pair components).
    assert components(len(skewed), [(a, b) for a, b, _ in default]) == components(len(skewed), every)
    assert Counter(d for *_, d in default)[0] >= copies
    result.write(pairs=tmp_path / "p.csv")
    written = pa_csv.read_csv(tmp_path / "p.csv")
    assert written.num_rows == len(default) and written.column_names == ["id_a", "id_b", "distance"]
    result.write(pairs=tmp_path / "all.parquet", every_pair=True)
    assert pq.read_table(tmp_path / "all.parquet").num_rows == len(every)


def test_every_pair_held_at_once_raises_a_clear_error_past_memory(skewed, monkeypatch):
    from neardup.pipeline import result as job

    result = neardup.dedup(skewed, max_distance=8)
    monkeypatch.setattr(job, "pairs_memory_limit", lambda: 1000)
    with pytest.raises(neardup.TooManyPairsError, match=r"iter_pairs\(every=True\)"):
        result.pairs  # noqa: B018


@pytest.mark.parametrize(
    "features, size, threshold",
    [("word-shingles", None, 0.7), ("char-ngrams", 4, 0.7), ("words", None, 0.95)],
)
def test_verify_compares_the_features_it_is_told_whatever_the_fingerprint_hashes(
    corpus, features, size, threshold
):
    texts, _ = corpus
    options = dict(bits=128, max_distance=16, features="words", weighting="sublinear")  # unigrams hashed
    loose = neardup.dedup(texts, **options)
    verified = neardup.dedup(
        texts, **options, verify=("jaccard", threshold), verify_features=features, verify_size=size
    )

    def jaccard(a: str, b: str) -> float:
        sizes = {"word-shingles": {"shingle_size": 3}, "char-ngrams": {"ngram_size": size}, "words": {}}[
            features
        ]
        fa, fb = (set(naive_features(t, features, **sizes)) for t in (a, b))
        return len(fa & fb) / len(fa | fb) if fa | fb else 1.0

    expected = {(a, b): jaccard(texts[a], texts[b]) for a, b in zip(*(x.tolist() for x in loose.pairs[:2]))}
    got = dict(zip(zip(verified.pairs[0].tolist(), verified.pairs[1].tolist()), verified.similarity.tolist()))
    assert set(got) == {pair for pair, s in expected.items() if s >= threshold - 1e-12}
    for pair, s in got.items():
        assert s == pytest.approx(expected[pair], abs=1e-9)
    assert 0 < len(got) < len(expected)


def test_verify_features_without_verify_or_with_a_size_they_lack_are_refused():
    with pytest.raises(neardup.ConfigError, match="give verify="):
        neardup.dedup(["a b c"], verify_features="words")
    with pytest.raises(neardup.ConfigError, match="has no size"):
        neardup.dedup(["a b c"], verify=("jaccard", 0.5), verify_features="words", verify_size=2)
    with pytest.raises(neardup.ConfigError, match="verify_size needs verify_features"):
        neardup.dedup(["a b c"], verify=("jaccard", 0.5), verify_size=2)


def test_kept_texts_of_a_table_in_chunks_are_written(tmp_path):
    texts = ["the cat sat on the mat today", "the cat sat on the mat today", "a different text entirely"]
    chunked = pa.chunked_array([texts[:2], texts[2:]])  # a table's column may hold several chunks
    result = neardup.dedup(pa.table({"text": chunked, "id": ["a", "b", "c"]}), id_field="id")
    result.write(tmp_path / "kept.jsonl")
    written = [json.loads(line) for line in (tmp_path / "kept.jsonl").read_text().splitlines()]
    assert written == [{"id": "a", "text": texts[0]}, {"id": "c", "text": texts[2]}]


@pytest.mark.parametrize("verify", [("jaccard", 0.8), ("cosine", 0.9)])
def test_the_pairs_of_a_verified_file_reuse_the_features_its_checks_read(corpus, tmp_path, verify):
    texts, _ = corpus
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    result = neardup.dedup(path, bits=128, max_distance=16, verify=verify)
    path.unlink()  # nothing to read again
    in_memory = neardup.dedup(texts, bits=128, max_distance=16, verify=verify)
    for every in (False, True):
        got, want = (
            [(c.first.tolist(), c.second.tolist(), c.similarity.tolist()) for c in r.iter_pairs(every=every)]
            for r in (result, in_memory)
        )
        assert got == want and len(got) > 0
