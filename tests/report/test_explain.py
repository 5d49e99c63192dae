"""explain(): its features are the fingerprint's features (tests/naive.py, hash for hash, in
order), their texts are where they lie, and the exact similarities match a plain computation."""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from naive import accumulate, le64, naive_collapsed, naive_features, naive_idf_table, naive_tokens, xxh3
from neardup import FingerprintConfig, Fingerprinter, fit_idf
from neardup.report.explain import Explanation, document_features, explain, feature_weights

FEATURES = ["word-shingles", "words", "char-ngrams"]
WEIGHTINGS = ["uniform", "tf", "sublinear"]

CHARS = st.one_of(
    st.sampled_from(
        [
            *list("abcABC xyz,.!-\t\n  "),
            "Straße",
            "İ",
            "ﬁ",
            "é",
            "é",
            "東",
            "京",
            "タ",
            "한",
            "😀",
            "\u3000",
            "\xa0",
            "42",
        ]
    ),
    st.characters(codec="utf-8"),
    st.sampled_from(["\ud800", "\udfff"]),  # lone surrogates become U+FFFD
)
texts = st.lists(CHARS, max_size=40).map("".join)
documents = st.one_of(texts, st.binary(max_size=30), texts.map(lambda t: t.encode("utf-8", "surrogatepass")))
configs = st.builds(
    lambda features, k, n, normalize, seed, bits, weighting: FingerprintConfig(
        features=features,
        shingle_size=k,
        ngram_size=n,
        normalize=normalize,
        seed=seed,
        bits=bits,
        weighting=weighting,
    ),
    st.sampled_from(FEATURES),
    st.integers(1, 4),
    st.integers(1, 6),
    st.booleans(),
    st.sampled_from([0, 7, 2**64 - 1]),
    st.sampled_from([64, 128]),
    st.sampled_from(WEIGHTINGS),
)


def naive_of(document, config):
    return naive_features(
        document, config.features, config.shingle_size, config.ngram_size, config.normalize, config.seed
    )


def plain_weights(document, config):
    counts = Counter(naive_of(document, config))
    if config.weighting == "uniform":
        return {h: 1.0 for h in counts}
    if config.weighting == "tf":
        return {h: float(c) for h, c in counts.items()}
    if config.weighting == "sublinear":
        return {h: 1.0 + math.log(c) for h, c in counts.items()}
    table = naive_idf_table(config.idf)
    return {h: c * table.get(h, config.idf.default_idf) for h, c in counts.items()}


def plain_similarities(a, b, config):
    """Jaccard of distinct features and cosine of weighted vectors, written out plainly."""
    wa, wb = plain_weights(a, config), plain_weights(b, config)
    union = set(wa) | set(wb)
    jaccard = len(set(wa) & set(wb)) / len(union) if union else 1.0
    dot = sum(wa[h] * wb[h] for h in set(wa) & set(wb))
    na, nb = math.sqrt(sum(w * w for w in wa.values())), math.sqrt(sum(w * w for w in wb.values()))
    cosine = dot / (na * nb) if na and nb else float(not wa and not wb)
    return jaccard, cosine


def check_feature_texts(document, hashes, feature_texts, config):
    """Each text is the feature its hash was made of: a token, the k tokens of a shingle, or an
    n-gram of the collapsed text."""
    k = config.shingle_size
    shingles = config.features == "word-shingles" and len(naive_tokens(document, config.normalize)) >= k
    for h, text in zip(hashes.tolist(), feature_texts):
        if shingles:
            tokens = naive_tokens(text, normalize=False)
            assert len(tokens) == k, (text, tokens)
            assert (
                xxh3(b"".join(le64(xxh3(t.encode("utf-8"), config.seed)) for t in tokens), config.seed) == h
            )
            continue
        if config.features != "char-ngrams":
            assert naive_tokens(text, normalize=False) == [text]
        assert xxh3(text.encode("utf-8"), config.seed) == h


@settings(max_examples=400, deadline=None)
@given(documents, configs)
def test_features_are_the_fingerprints_features_in_order(document, config):
    hashes, feature_texts = document_features(document, config)
    assert hashes.tolist() == naive_of(document, config)
    assert len(feature_texts) == len(hashes)
    check_feature_texts(document, hashes, feature_texts, config)
    if config.features == "char-ngrams" and hashes.size:
        collapsed = naive_collapsed(document, config.normalize)
        n = config.ngram_size
        assert feature_texts == (
            [collapsed]
            if len(collapsed) < n
            else [collapsed[i : i + n] for i in range(len(collapsed) - n + 1)]
        )


@settings(max_examples=200, deadline=None)
@given(documents, configs)
def test_features_and_weights_rebuild_the_fingerprint(document, config):
    hashes, feature_texts = document_features(document, config)
    weights = feature_weights(hashes, config)
    fingerprint = Fingerprinter(config).fingerprint(document)
    start = 0 if config.weighting in ("uniform", "tf") else 0.0
    assert (
        accumulate(weights, config.bits, config.seed, start) == fingerprint if weights else fingerprint == 0
    )
    if config.features != "word-shingles":  # a shingle's hash is of token hashes, not its text
        first_text = dict(zip(reversed(hashes.tolist()), reversed(feature_texts)))
        rebuilt = Fingerprinter(config).fingerprint_features([(first_text[h], w) for h, w in weights.items()])
        assert rebuilt == fingerprint


def test_shingle_text_is_the_words_as_they_appear_in_the_normalised_text():
    config = FingerprintConfig(features="word-shingles", shingle_size=3)
    _, feature_texts = document_features("The  CAT, sat\non Straße!", config)
    assert feature_texts == ["the  cat, sat", "cat, sat\non", "sat\non strasse"]
    _, feature_texts = document_features("Two words", config)  # fewer words: the words
    assert feature_texts == ["two", "words"]
    _, feature_texts = document_features("東京タワー", FingerprintConfig(features="words"))
    assert feature_texts == ["東", "京", "タ", "ワ", "ー"]
    _, feature_texts = document_features(
        "  Ab \t c ", FingerprintConfig(features="char-ngrams", ngram_size=3)
    )
    assert feature_texts == ["ab ", "b c"]


@pytest.mark.slow  # 200 drawn pairs
@settings(max_examples=200, deadline=None)
@given(documents, documents, configs)
def test_exact_similarities_match_a_plain_computation(a, b, config):
    e = explain(a, b, config, top=1000)
    jaccard, cosine = plain_similarities(a, b, config)
    assert e.jaccard == pytest.approx(jaccard, abs=1e-12)
    assert e.cosine == pytest.approx(cosine, abs=1e-9)
    assert 0.0 <= e.jaccard <= 1.0 and 0.0 <= e.cosine <= 1.0
    fp = Fingerprinter(config)
    assert (e.fingerprint_a, e.fingerprint_b) == (fp.fingerprint(a), fp.fingerprint(b))
    assert e.distance == bin(e.fingerprint_a ^ e.fingerprint_b).count("1") and e.bits == config.bits
    wa, wb = plain_weights(a, config), plain_weights(b, config)
    expected = {h for h in set(wa) | set(wb) if wa.get(h, 0.0) != wb.get(h, 0.0)}
    assert {f.hash for f in e.differing} == expected and e.n_differing == len(expected)
    for f in e.differing:
        assert (f.weight_a, f.weight_b) == pytest.approx((wa.get(f.hash, 0.0), wb.get(f.hash, 0.0)))
    gaps = [abs(f.weight_a - f.weight_b) for f in e.differing]
    assert gaps == sorted(gaps, reverse=True)
    assert (e.features_a, e.features_b, e.shared) == (len(wa), len(wb), len(set(wa) & set(wb)))


@pytest.mark.slow  # 150 drawn texts
@settings(max_examples=150, deadline=None)
@given(documents, configs)
def test_identical_texts_have_nothing_to_explain(document, config):
    e = explain(document, document, config)
    assert e.distance == 0 and e.jaccard == 1.0 and e.cosine == pytest.approx(1.0)
    assert e.differing == () and e.n_differing == 0 and e.estimated_cosine == 1.0
    assert "no feature differs" in str(e)


@pytest.mark.slow  # 150 drawn pairs
@settings(max_examples=150, deadline=None)
@given(documents, documents, configs)
def test_explain_is_symmetric(a, b, config):
    ab, ba = explain(a, b, config, top=1000), explain(b, a, config, top=1000)
    assert (ab.distance, ab.jaccard, ab.cosine) == (ba.distance, ba.jaccard, ba.cosine)
    assert (ab.fingerprint_a, ab.features_a) == (ba.fingerprint_b, ba.features_b)
    assert {(f.hash, f.weight_a, f.weight_b) for f in ab.differing} == {
        (f.hash, f.weight_b, f.weight_a) for f in ba.differing
    }


def test_tfidf_weights_are_count_times_idf():
    corpus = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog", "the the the"]
    idf = fit_idf(corpus, features="words")
    config = FingerprintConfig(features="words", weighting="tfidf", idf=idf)
    a, b = "the cat sat, the cat sat", "the unseen dog sat"
    weights = feature_weights(document_features(a, config)[0], config)
    assert weights == pytest.approx(plain_weights(a, config))
    assert accumulate(weights, 64, 0, 0.0) == Fingerprinter(config).fingerprint(a)
    e = explain(a, b, config, top=100)
    jaccard, cosine = plain_similarities(a, b, config)
    assert (e.jaccard, e.cosine) == pytest.approx((jaccard, cosine))
    unseen = next(f for f in e.differing if f.text == "unseen")
    assert unseen.weight_b == pytest.approx(idf.default_idf) and unseen.weight_a == 0.0


def test_the_cat_example_and_its_text():
    e = explain("the cat sat on the mat", "the cat sat on a mat", features="words", top=2)
    assert e.cosine == pytest.approx(6 / math.sqrt(48))  # the spec's section 9 example
    assert e.jaccard == pytest.approx(5 / 6)
    assert [(f.text, f.weight_a, f.weight_b) for f in e.differing] == [("a", 0.0, 1.0), ("the", 2.0, 1.0)]
    assert e.n_differing == 2
    assert e.estimated_cosine == pytest.approx(math.cos(math.pi * e.distance / 64))
    text = e.format()
    assert str(e) == text
    assert f"distance: {e.distance} of 64 bits" in text and "exact cosine: 0.866" in text
    assert f"{e.fingerprint_a:016x}" in text and "'the'" in text
    json.dumps(e.to_dict())
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.distance = 0  # type: ignore[misc]
    assert isinstance(e, Explanation)


def test_top_and_128_bits():
    e = explain("alpha beta gamma delta", "alpha beta epsilon", bits=128, features="words", top=1)
    assert e.bits == 128 and len(e.differing) == 1 and e.n_differing == 3
    assert len(f"{e.fingerprint_a:032x}") == 32 and f"{e.fingerprint_a:032x}" in e.format()
    assert explain("a b", "c d", features="words", top=0).differing == ()


def test_empty_texts():
    e = explain("", "  ...  ", features="words")
    assert (e.distance, e.jaccard, e.cosine, e.features_a) == (0, 1.0, 1.0, 0)
    one_sided = explain("", "words here", features="words")
    assert (one_sided.jaccard, one_sided.cosine) == (0.0, 0.0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="top=-1"):
        explain("a", "b", top=-1)
    with pytest.raises(TypeError, match="not str or bytes"):
        explain("a", 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not both"):
        explain("a", "b", FingerprintConfig(), bits=128)


def test_a_shared_passage_is_shown_where_the_wholes_are_far_apart():
    own_a = " ".join(f"alpha{i}" for i in range(300))
    own_b = " ".join(f"beta{i}" for i in range(300))
    quote = " ".join(f"quoted{i}" for i in range(60))
    a, b = f"{own_a} {quote} {own_a}", f"{quote.replace('quoted30', 'changed')} {own_b}"
    e = explain(a, b)
    assert e.jaccard < 0.1  # as wholes, nothing alike
    (p,) = e.passages
    assert a[p.start_a : p.end_a] == quote == p.text_a and p.text_b == b[p.start_b : p.end_b]
    assert (p.start_b, p.words) == (0, 60) and p.similarity == pytest.approx(59 / 60, abs=1e-3)
    shown = e.format()
    assert f"a[{p.start_a}:{p.end_a}] and b[{p.start_b}:{p.end_b}]: 60 words" in shown
    assert "'quoted0 quoted1" in shown and json.loads(json.dumps(e.to_dict()))["passages"][0]["words"] == 60
    assert explain(a, b, passage_words=80).passages == ()
    assert "shared passages of 80 words or more: none" in explain(a, b, passage_words=80).format()


def _integers(value: object) -> list[int]:
    if isinstance(value, dict):
        return [n for item in value.values() for n in _integers(item)]
    if isinstance(value, list):
        return [n for item in value for n in _integers(item)]
    return [value] if isinstance(value, int) and not isinstance(value, bool) else []


@pytest.mark.parametrize("bits", [64, 128])
def test_its_json_gives_fingerprints_and_hashes_as_hex(bits):
    # JavaScript reads a JSON number as a double: an integer above 2**53 loses its last digits.
    e = explain("the cat sat on the mat", "the cat sat on a mat", features="words", bits=bits)
    d = json.loads(json.dumps(e.to_dict()))
    assert d["fingerprint_a"] == f"{e.fingerprint_a:0{bits // 4}x}" and d["fingerprint_a"] in e.format()
    assert d["fingerprint_b"] == f"{e.fingerprint_b:0{bits // 4}x}" and d["fingerprint_b"] in e.format()
    assert [f["hash"] for f in d["differing"]] == [f"{f.hash:016x}" for f in e.differing]
    assert max(_integers(d)) <= 2**53
