"""The compiled fingerprint equals tests/naive.py, the spec written out in plain Python, bit for
bit: one text, batches (lists, numpy and pyarrow arrays), tfidf models, caller-given features,
and the shipped character-class table."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import neardup
from naive import (
    naive_class,
    naive_code_fingerprint,
    naive_document_frequencies,
    naive_features,
    naive_fingerprint,
    naive_fingerprint_features,
    naive_idf,
    naive_tokens,
)
from neardup.fingerprint.features import UNICODE_VERSION, char_classes, normalization_table

FEATURES = ["word-shingles", "words", "char-ngrams"]
WEIGHTINGS = ["uniform", "tf", "sublinear"]
MAX_SEED = 2**64 - 1

# --- Strategies ---------------------------------------------------------------------------

# Code points at the edges of the solo ranges (spec section 4), one on each side.
SOLO_EDGES = [
    0x3004,
    0x3005,
    0x3007,
    0x3008,
    0x3020,
    0x3021,
    0x3029,
    0x302A,
    0x3037,
    0x3038,
    0x303C,
    0x303D,
    0x303F,
    0x3040,
    0x3041,
    0x3099,
    0x309A,
    0x309F,
    0x30A0,
    0x30FC,
    0x30FF,
    0x3100,
    0x31EF,
    0x31F0,
    0x31FF,
    0x3200,
    0x33FF,
    0x3400,
    0x4DBF,
    0x4DC0,
    0x4DFF,
    0x4E00,
    0x9FFF,
    0xA000,
    0xABFF,
    0xAC00,
    0xD7A3,
    0xD7AF,
    0xD7B0,
    0xF8FF,
    0xF900,
    0xFAFF,
    0xFB00,
    0xFF64,
    0xFF65,
    0xFF70,
    0xFF9E,
    0xFF9F,
    0xFFA0,
    0x1AFEF,
    0x1AFF0,
    0x1B000,
    0x1B16F,
    0x1B170,
    0x1FFFF,
    0x20000,
    0x2A6DF,
    0x2A6E0,
    0x2F800,
    0x30000,
    0x3134A,
    0x3FFFF,
    0x40000,
    0xE0001,
    0xE0100,
    0xF0000,
    0x10FFFF,
]
# Characters that normalise or case-fold into something else, or class edge cases.
TRICKY = list(
    "ßẞİıſǅǰŉΐͅﬁﬀﬃﬆ①½²™㍿㎏ﷺﷻ℃Åᾈᾼ\u2126\u2160\u2170\u0660\u06f5\u1e9e\u00b5\u0345"
    "\u00ad\u200b\u200c\u200d\u2060\ufeff\u180e\u034f\ufe0f\u20e3\u0301\u0308\u0327"
    "\u1100\u1161\u11a8\u3131\uffa0\uffe3\u309b\u309c\uff9e\uff9f\u3031\u303b\u30fc"
    "\U0001d400\U0001d7ce\U0001f1fa\U0001f1f8\U0001f44d\U0001f3fd\U0001f600\U0001f9d1"
    "\ufffd\uffff\ufdd0\U000e0041"
)
SPACES = list("\t\n\v\f\r \x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2007\u200a\u2028\u2029\u202f\u205f\u3000")
SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d", "\ude00"]


def _range(first: int, last: int) -> st.SearchStrategy[str]:
    return st.integers(first, last).map(chr)


interesting_chars = st.one_of(
    _range(0x41, 0x5A),  # uppercase ASCII
    _range(0x20, 0x7E),  # printable ASCII: digits, punctuation
    _range(0x00, 0x20) | _range(0x7F, 0xA0),  # controls
    st.sampled_from(SPACES),
    _range(0x3000, 0x30FF),  # CJK punctuation, Hiragana, Katakana
    _range(0x4E00, 0x4E40) | _range(0x9FE0, 0x9FFF),  # CJK ideographs
    _range(0xAC00, 0xAC20) | _range(0x1100, 0x11FF),  # Hangul syllables and jamo
    _range(0xFF00, 0xFFEF),  # fullwidth and half-width forms
    _range(0x0400, 0x04FF),  # Cyrillic
    _range(0x0600, 0x06FF) | _range(0xFB50, 0xFDFF),  # Arabic and its presentation forms
    _range(0x0300, 0x036F) | _range(0x1AB0, 0x1AFF),  # combining marks
    _range(0x1F300, 0x1F64F) | _range(0x1F900, 0x1F9FF),  # emoji
    _range(0x1B000, 0x1B170) | _range(0x20000, 0x20040),  # Kana supplement, CJK extension B
    st.sampled_from([chr(c) for c in SOLO_EDGES]),
    st.sampled_from(TRICKY),
    st.sampled_from(SURROGATES),
)

WORDS = [
    "the",
    "The",
    "CAT",
    "sat",
    "on",
    "a",
    "mat",
    "Straße",
    "STRASSE",
    "ﬁle",
    "Ｆｕｌｌ",
    "東京タワー",
    "한국어",
    "Привет",
    "مرحبا",
    "e\u0301",
    "\u00e9",
    "naïve",
    "42",
    "3.14",
    "x2",
    "😀👍🏽",
    "!?",
    "---",
    "Σίσυφος",
    "ΌΣΟΣ",
    "\u0130stanbul",
    "ǅemal",
    "①②",
    "㍿",
]

any_text = st.text(alphabet=st.characters(codec=None, exclude_categories=()))
interesting_text = st.text(alphabet=interesting_chars, max_size=40)
wordy_text = st.lists(
    st.one_of(
        st.sampled_from(WORDS),
        st.sampled_from(SPACES),
        st.sampled_from([" ", " ", "  ", ", ", ". ", "\n\n"]),
        st.text(alphabet=interesting_chars, max_size=4),
    ),
    max_size=30,
).map("".join)
texts = st.one_of(st.just(""), any_text, interesting_text, wordy_text)

BAD_UTF8 = [
    b"\x80",
    b"\xbf",
    b"\xc0\x80",
    b"\xc1\xbf",
    b"\xc2",
    b"\xdf",
    b"\xe0\x80\x80",
    b"\xe0\x9f\xbf",
    b"\xe0\xa0",
    b"\xed\xa0\x80",
    b"\xed\xbf\xbf",
    b"\xef\xbf",
    b"\xf0\x80\x80\x80",
    b"\xf0\x8f\xbf\xbf",
    b"\xf0\x9f\x98",
    b"\xf0\x9f",
    b"\xf4\x90\x80\x80",
    b"\xf5\x80\x80\x80",
    b"\xf8\x88\x80\x80\x80",
    b"\xfe",
    b"\xff",
    b"\xc3\x28",
]
binaries = st.one_of(
    st.binary(max_size=60),
    st.lists(
        st.one_of(
            st.sampled_from(BAD_UTF8),
            st.text(alphabet=interesting_chars, max_size=6).map(lambda s: s.encode("utf-8", "surrogatepass")),
        ),
        max_size=12,
    ).map(b"".join),
)
documents = st.one_of(texts, binaries)

feature_configs = st.fixed_dictionaries(
    {
        "features": st.sampled_from(FEATURES),
        "shingle_size": st.integers(1, 5),
        "ngram_size": st.integers(1, 6),
        "normalize": st.booleans(),
        "seed": st.one_of(st.just(0), st.just(MAX_SEED), st.integers(0, MAX_SEED)),
    }
)
configs = st.builds(
    lambda f, bits, weighting: {**f, "bits": bits, "weighting": weighting},
    feature_configs,
    st.sampled_from([64, 128]),
    st.sampled_from(WEIGHTINGS),
)


def rows_as_ints(batch: np.ndarray) -> list[int]:
    """uint64 (n,) or (n, 2) fingerprints as Python ints (128 bits: lo + 2**64 * hi)."""
    if batch.ndim == 1:
        return [int(x) for x in batch]
    assert batch.shape[1] == 2
    return [int(lo) + (int(hi) << 64) for lo, hi in batch]


def without_surrogates(text: str) -> str:
    return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)


# --- The character-class table ------------------------------------------------------------


def test_class_table_follows_the_spec_rules_for_every_code_point():
    assert UNICODE_VERSION == "14.0.0"
    table = char_classes()
    assert table.dtype == np.uint8 and table.shape == (0x110000,)
    expected = np.array([naive_class(c) for c in range(0x110000)], dtype=np.uint8)
    wrong = table != expected
    if unicodedata.unidata_version != UNICODE_VERSION:
        # The rules use this Python's Unicode database. A newer one assigns code points that
        # were unassigned (class other) in 14.0; the frozen table must keep them as they were.
        assert (table[wrong] == 0).all() and wrong.sum() < 10_000
        return
    shown = [(hex(c), int(table[c]), int(expected[c])) for c in np.flatnonzero(wrong)[:20]]
    assert not wrong.any(), f"{wrong.sum()} code points differ (code point, table, rules): {shown}"


def test_spec_example_tokens():
    assert naive_tokens("Hello, wörld! 東京タワー 42x") == [
        "hello",
        "wörld",
        "東",
        "京",
        "タ",
        "ワ",
        "ー",
        "42x",
    ]


# --- One text -----------------------------------------------------------------------------


@settings(max_examples=600, deadline=None)
@given(document=documents, config=configs)
def test_fingerprint_equals_naive(document, config):
    expected = naive_fingerprint(document, **config)
    assert neardup.Fingerprinter(**config).fingerprint(document) == expected


@settings(max_examples=200, deadline=None)
@given(document=wordy_text, config=configs)
def test_long_documents_equal_naive(document, config):
    # Longer texts: many features, repeated features (counts > 1), ties in V[i].
    document = document * 4 + document.upper()
    expected = naive_fingerprint(document, **config)
    assert neardup.Fingerprinter(**config).fingerprint(document) == expected


# --- Batches: row i is text i's fingerprint, whatever came before it ----------------------


@settings(max_examples=150, deadline=None)
@given(batch=st.lists(documents, max_size=24), config=configs, n_jobs=st.sampled_from([1, 2, None]))
def test_batch_rows_equal_naive(batch, config, n_jobs):
    got = neardup.Fingerprinter(**config).fingerprint_batch(batch, n_jobs=n_jobs)
    assert got.shape[0] == len(batch)
    assert rows_as_ints(got) == [naive_fingerprint(d, **config) for d in batch]


@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize("features", FEATURES)
@pytest.mark.parametrize("weighting", WEIGHTINGS)
def test_short_documents_after_long_ones_equal_naive(bits, features, weighting):
    # Scratch buffers are sized by the longest document of a chunk and reused: a short or empty
    # document after a long one must not see the long one's features.
    long = " ".join(WORDS) * 3
    batch = [long, "", "a", "   ", long[: len(long) // 2], "東", "b c", long.upper(), "!", "x y z w"] * 3
    config = {"bits": bits, "features": features, "weighting": weighting, "shingle_size": 2, "ngram_size": 3}
    expected = [naive_fingerprint(d, **config) for d in batch]
    for n_jobs in (1, 2):
        got = neardup.Fingerprinter(**config).fingerprint_batch(batch, n_jobs=n_jobs)
        assert rows_as_ints(got) == expected


ascii_pieces = st.one_of(
    st.text(alphabet="abcxyzABCXYZ0189", min_size=1, max_size=70),  # runs across 64-byte blocks
    st.sampled_from([" ", " ", ", ", "\n", "--", ".", "_", "\t", "'"]),
)


# Non-ASCII code points the block scan marks one by one: word (2 and 3 bytes), solo (3
# bytes, a token each), space, other (4 bytes), and ones normalisation replaces or sends to Python.
# The kernels replace a code point in place when its replacement is as long (É, Ж, Ω, ß -> ss)
# or holds no token character (the full-width comma); others (ǅ -> dž, ＡＢ, 𝔡, ½, ™) go to prepare.
INSERTS = [
    "é",
    "É",
    "Ж",
    "ǅ",
    "Ω",
    "東",
    "한",
    "タ",
    "\xa0",
    "😀",
    "ＡＢ",
    "ß",
    "𝔡",
    "½",
    "™",
    "\uff0c",
    "e\u0301",
    "東京",
]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(ascii_pieces, max_size=40),
    lead=st.integers(0, 70),
    inserts=st.lists(st.tuples(st.integers(0, 10**4), st.sampled_from(INSERTS)), max_size=4),
    normalize=st.booleans(),
)
def test_block_scan_finds_the_naive_tokens(pieces, lead, inserts, normalize):
    """The block scan (64 bytes a step, then each non-ASCII code point on its own), wherever
    ASCII runs, non-ASCII code points and block edges fall: every token's hash equals the
    spec's."""
    from neardup.decision.verify import FeatureTable

    text = " " * (lead % 3) + "".join(pieces)
    for position, insert in inserts:
        at = position % (len(text) + 1)
        text = text[:at] + insert + text[at:]
    config = neardup.FingerprintConfig(features="words", normalize=normalize)
    table = FeatureTable.of([text], config)
    want: dict[int, int] = {}
    for h in naive_features(text, "words", normalize=normalize):
        want[h] = want.get(h, 0) + 1
    assert dict(zip(table.hashes.tolist(), table.counts.tolist())) == want
    shingles = neardup.FingerprintConfig(features="word-shingles", shingle_size=2, normalize=normalize)
    expected = naive_fingerprint(text, features="word-shingles", shingle_size=2, normalize=normalize)
    assert neardup.Fingerprinter(shingles).fingerprint(text) == expected
    normalization_table()  # the batch kernels replace code points once the table is built
    assert rows_as_ints(neardup.Fingerprinter(shingles).fingerprint_batch([text], n_jobs=1)) == [expected]


@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize("features", FEATURES)
def test_long_tokens_equal_naive(bits, features):
    # Tokens of 16, 128, 240 and 1024 bytes and around them take each of XXH3's code paths.
    tokens = [
        letter * n
        for n in (15, 16, 17, 128, 129, 240, 241, 1024, 1025, 5000)
        for letter in ("a", "é", "Ж", "\U0001d400")
    ]
    batch = [" ".join(tokens), *tokens, " ".join(reversed(tokens)).upper()]
    config = {"bits": bits, "features": features, "shingle_size": 2, "ngram_size": 6}
    expected = [naive_fingerprint(d, **config) for d in batch]
    assert rows_as_ints(neardup.Fingerprinter(**config).fingerprint_batch(batch, n_jobs=1)) == expected


@pytest.mark.parametrize("weighting", WEIGHTINGS)
def test_batch_of_many_chunks_equals_naive(weighting):
    # Over 256 KiB of text is cut into chunks of about equal bytes, several documents to a
    # chunk, run on all threads; long documents have far more than 255 features (the bit
    # counters' flush interval).
    words = [w.lower() for w in WORDS] + [f"w{i}" for i in range(200)]
    distinct = [" ".join(words[(i * j) % len(words)] for j in range(4000 + 500 * i)) for i in range(6)]
    distinct += ["", "a", "東京 東京 東京"]
    order = [0, 6, 1, 7, 2, 8, 3, 4, 5, 6, 0, 8, 8, 1, 5, 7, 2, 3, 4, 6]
    config = {"features": "word-shingles", "shingle_size": 2, "weighting": weighting}
    expected = [naive_fingerprint(d, **config) for d in distinct]
    got = neardup.Fingerprinter(**config).fingerprint_batch([distinct[i] for i in order])
    assert sum(len(distinct[i]) for i in order) > 256 * 1024
    assert rows_as_ints(got) == [expected[i] for i in order]


@settings(max_examples=80, deadline=None)
@given(batch=st.lists(texts, min_size=1, max_size=16), config=configs)
def test_numpy_string_arrays_equal_naive(batch, config):
    fingerprinter = neardup.Fingerprinter(**config)
    for array in (np.array(batch), np.array(batch, dtype=object)):
        # A fixed-width numpy string drops trailing NULs: compare with what the array holds.
        expected = [naive_fingerprint(d, **config) for d in array.tolist()]
        assert rows_as_ints(fingerprinter.fingerprint_batch(array)) == expected


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(
    batch=st.lists(texts, min_size=1, max_size=16),
    raw=st.lists(binaries, max_size=8),
    config=configs,
    cut=st.integers(0, 3),
)
def test_pyarrow_arrays_equal_naive(batch, raw, config, cut):
    fingerprinter = neardup.Fingerprinter(**config)
    strings = [without_surrogates(t) for t in batch]  # Arrow strings are valid UTF-8
    arrays = [
        (pa.array(strings, type=pa.string()), strings),
        (pa.array(strings, type=pa.large_string()), strings),
        (pa.array(strings)[cut:], strings[cut:]),  # a slice starts at a non-zero offset
        (pa.chunked_array([strings[:cut], strings[cut:]], type=pa.string()), strings),
        (pa.array(raw, type=pa.binary()), raw),
        (
            pa.array(raw + [s.encode() for s in strings], type=pa.large_binary())[cut:],
            (raw + [s.encode() for s in strings])[cut:],
        ),
    ]
    for array, values in arrays:
        expected = [naive_fingerprint(d, **config) for d in values]
        assert rows_as_ints(fingerprinter.fingerprint_batch(array)) == expected, array.type


# --- tfidf --------------------------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(
    corpus=st.lists(documents, max_size=12),
    queries=st.lists(documents, max_size=6),
    feature_config=feature_configs,
    bits=st.sampled_from([64, 128]),
)
def test_tfidf_equals_naive(corpus, queries, feature_config, bits):
    # At least one feature in the corpus: a featureless corpus is test_fit_idf_on_featureless_texts.
    corpus = [*corpus, "the cat sat on the mat"]
    model = neardup.fit_idf(corpus, **feature_config)
    # The model holds the spec's counts and idf values.
    df = naive_document_frequencies(corpus, **feature_config)
    assert model.n_docs == len(corpus)
    assert model.hashes.tolist() == sorted(df)
    assert model.doc_freqs.tolist() == [df[h] for h in sorted(df)]
    assert model.values.tolist() == [naive_idf(df[h], len(corpus)) for h in sorted(df)]
    assert model.default_idf == naive_idf(0, len(corpus))
    config = {**feature_config, "bits": bits, "weighting": "tfidf", "idf": model}
    fingerprinter = neardup.Fingerprinter(**config)
    documents_ = corpus + queries
    expected = [naive_fingerprint(d, **config) for d in documents_]
    assert [fingerprinter.fingerprint(d) for d in documents_] == expected
    assert rows_as_ints(fingerprinter.fingerprint_batch(documents_, n_jobs=1)) == expected


@pytest.mark.parametrize("corpus", [[""], ["   ", "!!!"]])
def test_fit_idf_on_featureless_texts(corpus):
    model = neardup.fit_idf(corpus, features="words")
    assert len(model) == 0 and model.n_docs == len(corpus)
    assert model.default_idf == naive_idf(0, len(corpus))
    fingerprinter = neardup.Fingerprinter(features="words", weighting="tfidf", idf=model)
    assert fingerprinter.fingerprint("a b a") == naive_fingerprint(
        "a b a", features="words", weighting="tfidf", idf=model
    )


# --- Caller-given features (spec section 8) -----------------------------------------------

feature_names = st.one_of(
    st.sampled_from(["a", b"a", "A", "\u00e9", "e\u0301", "", b"", "\ud800", "\ufffd", "東京"]),
    st.text(max_size=6),
    st.text(alphabet=interesting_chars, max_size=6),
    st.binary(max_size=6),
)
weights = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(-10, 10, allow_nan=False),
    st.integers(-5, 5),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 1e-320, -1e-320, 1.7e308, -1.7e308, 0.1, 0.2, 0.3]),
)


@settings(max_examples=250, deadline=None)
@given(
    pairs=st.lists(st.tuples(feature_names, weights), max_size=30),
    seed=st.one_of(st.just(0), st.just(MAX_SEED), st.integers(0, MAX_SEED)),
    bits=st.sampled_from([64, 128]),
)
def test_fingerprint_features_equals_naive(pairs, seed, bits):
    fingerprinter = neardup.Fingerprinter(bits=bits, seed=seed)
    assert fingerprinter.fingerprint_features(pairs) == naive_fingerprint_features(pairs, seed, bits)


# --- The reference against the pinned vectors ---------------------------------------------

GOLDEN = [
    json.loads(line) for line in (Path(__file__).parent / "golden_vectors.jsonl").read_text().splitlines()
]


def _naive_of(vector: dict) -> int:
    """The naive reference for a golden vector's config: code's or prose's."""
    config = dict(vector["config"])
    if config.get("features") == "code":
        config.pop("features")
        config.pop("ngram_size", None)
        return naive_code_fingerprint(vector["text"], **config)
    config = {k: v for k, v in config.items() if k not in ("language", "code_normalize")}
    return naive_fingerprint(vector["text"], **config)


def test_naive_reproduces_golden_vectors():
    wrong = [
        (v["config"], v["text"], v["fingerprint"], f"{_naive_of(v):x}")
        for v in GOLDEN
        if _naive_of(v) != int(v["fingerprint"], 16)
    ]
    assert not wrong, f"{len(wrong)} of {len(GOLDEN)} vectors differ, e.g. {wrong[:3]}"
