"""Fingerprinter behaviour: inputs, bad input, determinism, and SimHash's law."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from collections import Counter

import numpy as np
import pyarrow as pa
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

import neardup
from neardup import Fingerprinter, hamming
from neardup.decision.lsh import CorpusKeys, banding_for
from neardup.decision.verify import FeatureTable, Verification, check_verify

CAT = "the cat sat on the mat"
CAT2 = "the cat sat on a mat"


def _corpus(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(3000)]
    return [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 400))) for _ in range(n)]


def test_seed_example_near_pair_is_far_closer_than_unrelated_texts():
    fp = Fingerprinter(features="words")
    a, b = fp.fingerprint_batch([CAT, CAT2])
    unrelated = fp.fingerprint_batch(_corpus(200, seed=1)[100:])
    d_near = hamming(a, b)
    d_unrelated = [hamming(a, u) for u in unrelated]
    assert d_near < 20
    assert np.mean(d_unrelated) > 28
    assert d_near < np.percentile(d_unrelated, 1)


def test_one_token_document_fingerprint_is_its_token_hash():
    # One feature with weight 1: V[i] = +-1, so the fingerprint is the feature's hash itself.
    token = "x" * 1_000_000  # a 1 MB token without spaces
    assert neardup.simhash(token) == xxhash.xxh3_64_intdigest(token.encode())
    assert neardup.simhash("Hello", seed=7) == xxhash.xxh3_64_intdigest(b"hello", seed=7)


def test_inputs_list_numpy_arrow_and_bytes_agree():
    texts = [*_corpus(50), "Straße ΣΊΣΥΦΟΣ", "東京タワー", ""]
    fp = Fingerprinter()
    expected = fp.fingerprint_batch(texts)
    assert expected.dtype == np.uint64 and expected.shape == (len(texts),)
    np.testing.assert_array_equal(fp.fingerprint_batch(np.array(texts)), expected)
    np.testing.assert_array_equal(fp.fingerprint_batch(np.array(texts, dtype=object)), expected)
    np.testing.assert_array_equal(fp.fingerprint_batch(pa.array(texts)), expected)
    np.testing.assert_array_equal(fp.fingerprint_batch(pa.array(texts, pa.large_string())), expected)
    np.testing.assert_array_equal(fp.fingerprint_batch(pa.array(texts).slice(3)), expected[3:])
    chunked = pa.chunked_array([texts[:20], texts[20:]])
    np.testing.assert_array_equal(fp.fingerprint_batch(chunked), expected)
    np.testing.assert_array_equal(fp.fingerprint_batch([t.encode() for t in texts]), expected)
    np.testing.assert_array_equal(fp.fingerprint_batch(pa.array([t.encode() for t in texts])), expected)
    np.testing.assert_array_equal(fp.fingerprint_batch(iter(texts)), expected)


def test_128_bit_shape_and_low_word_is_independent_of_high_word():
    texts = _corpus(20)
    wide = Fingerprinter(bits=128).fingerprint_batch(texts)
    assert wide.shape == (20, 2) and wide.dtype == np.uint64
    np.testing.assert_array_equal(wide[:, 0], Fingerprinter().fingerprint_batch(texts))
    assert Fingerprinter(bits=128).fingerprint(texts[3]) == int(wide[3, 0]) | (int(wide[3, 1]) << 64)


def test_empty_batch():
    assert Fingerprinter().fingerprint_batch([]).shape == (0,)
    assert Fingerprinter(bits=128).fingerprint_batch([]).shape == (0, 2)


def test_non_text_raises_naming_position_and_type():
    with pytest.raises(TypeError, match=r"document 2 is NoneType"):
        Fingerprinter().fingerprint_batch(["a b c", "d e f", None, "g"])
    with pytest.raises(TypeError, match=r"document 1 is int"):
        Fingerprinter().fingerprint_batch(["a", 5])
    with pytest.raises(TypeError, match=r"document 3 is NoneType"):
        Fingerprinter().fingerprint_batch(pa.chunked_array([["a", "b"], ["c", None]]))
    with pytest.raises(TypeError, match="for one text use fingerprint"):
        Fingerprinter().fingerprint_batch("a whole string")
    with pytest.raises(TypeError, match="float"):
        Fingerprinter().fingerprint(3.5)


def test_position_is_counted_across_pieces_of_a_long_list_or_iterator():
    texts = ["a b c"] * 20_000
    texts[17_003] = None
    with pytest.raises(TypeError, match=r"document 17003 is NoneType"):
        Fingerprinter().fingerprint_batch(texts)
    with pytest.raises(TypeError, match=r"document 17003 is NoneType"):
        Fingerprinter().fingerprint_batch(iter(texts))
    fps, skipped = Fingerprinter().fingerprint_batch(iter(texts), errors="skip")
    assert fps.shape == (20_000,) and np.flatnonzero(skipped).tolist() == [17_003]
    assert fps[17_003] == 0 and fps[17_004] == fps[0] == neardup.simhash("a b c")
    # At any number of threads the first bad document in input order is named.
    texts[9_000] = 5
    for n_jobs in (1, 2, 3):
        with pytest.raises(TypeError, match=r"document 9000 is int"):
            Fingerprinter().fingerprint_batch(texts, n_jobs=n_jobs)
        fps, skipped = Fingerprinter().fingerprint_batch(texts, n_jobs=n_jobs, errors="skip")
        assert np.flatnonzero(skipped).tolist() == [9_000, 17_003] and fps[-1] == fps[0]


def test_large_lists_of_mixed_text_equal_one_text_at_a_time():
    """A list of over ``_PYARROW_MIN_CHARS`` characters goes through pyarrow: ASCII str,
    other str (a lone surrogate too), bytes (ill-formed too) and None (named or skipped) each
    give what they give one text at a time."""
    from neardup.fingerprint.text_buffers import _PYARROW_MIN_CHARS

    rng = random.Random(3)
    pool = [
        "plain ascii words here ",
        "Stra\u00dfe caf\u00e9 \uff21\uff22 \u6771\u4eac\u30bf\u30ef\u30fc ",
        "e\u0301 combining ",
        "lone \ud800 surrogate ",
        b"bytes \xff\xfe bad ",
        b"good bytes ",
        "\u01c5emal \u0130stanbul \U0001d521\U0001d52c\U0001d520 ",
    ]
    texts = [rng.choice(pool) * rng.randint(1, 200) for _ in range(3000)]
    assert sum(map(len, texts)) > _PYARROW_MIN_CHARS
    fp = Fingerprinter()
    expected = [fp.fingerprint(t) for t in texts]
    assert fp.fingerprint_batch(texts).tolist() == expected
    texts[1234] = None
    with pytest.raises(TypeError, match=r"document 1234 is NoneType"):
        fp.fingerprint_batch(texts)
    fps, skipped = fp.fingerprint_batch(texts, errors="skip")
    expected[1234] = 0
    assert np.flatnonzero(skipped).tolist() == [1234] and fps.tolist() == expected
    texts[1234] = 7
    with pytest.raises(TypeError, match=r"document 1234 is int"):
        fp.fingerprint_batch(texts)


class _Text(str):
    """A str subclass: its characters are not where a plain str keeps them."""


@given(
    st.lists(
        st.one_of(st.text(st.characters(max_codepoint=127), max_size=300), st.binary(max_size=300)),
        max_size=60,
    )
)
def test_bytes_gathered_from_the_objects_equal_pyarrows(items):
    """The list path's copy straight out of the str and bytes objects (on all cores) gives
    pyarrow's array of them, byte for byte; what it cannot read in place it leaves to pyarrow."""
    from neardup.fingerprint.text_buffers import _gathered

    gathered = _gathered(items)
    assert gathered is not None and gathered.equals(pa.array(items, type=pa.large_binary()))
    assert _gathered([*items, _Text("abc")]) is None and _gathered([*items, bytearray(b"x")]) is None


def test_kernels_replace_what_they_can_in_place():
    # A replacement as long as its code point (capitals, ß -> ss) or with no token character
    # in it (full-width punctuation) is made by the kernels; the rest are handed back.
    from neardup.fingerprint.features import normalization_table
    from neardup.fingerprint.text_buffers import raw_buffers

    docs = ["ÉCOLE Straße ЖУК Ω a\uff0cb", "ﬁne", "x\u0301", "ＡＢ", "plain"]
    buffer = next(raw_buffers(docs))
    fingerprinter = neardup.Fingerprinter()
    _, unprepared = fingerprinter._kernels(buffer, 1, normalization_table())
    assert unprepared.tolist() == [False, True, True, True, False]
    prepared = [neardup.Fingerprinter().fingerprint(d) for d in docs]
    assert fingerprinter.fingerprint_batch(docs, n_jobs=1).tolist() == prepared


def test_documents_to_prepare_are_redone_in_groups(monkeypatch):
    """Documents the kernels hand back (to normalise or repair) are prepared a few bytes' worth
    at a time; each still gets what it gets alone."""
    import neardup.fingerprint.fingerprinter as fingerprint_module

    texts = [
        "ASCII stays",
        "Stra\u00dfe \uff21\uff22",
        "cafe\u0301 x",
        b"bad \xff bytes",
        "plain",
        "\u00c9T\u00c9 \u0130stanbul",
    ] * 7
    fp = Fingerprinter()
    expected = [fp.fingerprint(t) for t in texts]
    monkeypatch.setattr(fingerprint_module, "_REDO_BYTES", 20)
    assert fp.fingerprint_batch(texts, n_jobs=1).tolist() == expected


def test_skip_returns_mask_and_zero_fingerprints():
    texts = ["one two three", None, 7, "four five six", b"bytes too"]
    fps, skipped = Fingerprinter().fingerprint_batch(texts, errors="skip")
    np.testing.assert_array_equal(skipped, [False, True, True, False, False])
    assert fps[1] == 0 and fps[2] == 0
    assert fps[0] == neardup.simhash("one two three") and fps[3] == neardup.simhash("four five six")
    fps, skipped = Fingerprinter().fingerprint_batch(pa.array(["a b", None, "c d"]), errors="skip")
    np.testing.assert_array_equal(skipped, [False, True, False])
    assert fps[2] == neardup.simhash("c d")
    with pytest.raises(ValueError, match="errors='ignore' is not allowed"):
        Fingerprinter().fingerprint_batch(["a"], errors="ignore")


@pytest.mark.parametrize("normalize", [True, False])
def test_invalid_utf8_is_replaced_with_u_fffd(normalize):
    fp = Fingerprinter(features="char-ngrams", ngram_size=3, normalize=normalize)
    raw = b"caf\xc3 ok \xff\xfe end \xed\xa0\x80 x"
    assert fp.fingerprint(raw) == fp.fingerprint(raw.decode("utf-8", "replace"))
    assert fp.fingerprint(raw) == fp.fingerprint_batch(pa.array([raw], pa.binary()))[0]


def test_identical_with_one_and_two_threads_and_any_chunking():
    texts = [*_corpus(3000, seed=5), "x " * 200_000]  # one long document among many short
    for config in ({}, {"bits": 128, "weighting": "sublinear"}, {"features": "char-ngrams"}):
        fp = Fingerprinter(**config)
        one = fp.fingerprint_batch(texts, n_jobs=1)
        np.testing.assert_array_equal(fp.fingerprint_batch(texts, n_jobs=2), one)
        np.testing.assert_array_equal(fp.fingerprint_batch(texts, n_jobs=-1), one)
        parts = np.concatenate([fp.fingerprint_batch(texts[i : i + 7]) for i in range(0, 301, 7)])
        np.testing.assert_array_equal(parts, one[: len(parts)])


def test_identical_across_processes():
    """Also in a new process's first batch, before anything has built the normalisation table
    (the kernels then send every non-ASCII document to ``prepare``), and its second."""
    texts = [
        "Cross-process stability: the same text gives the same bits.",
        "東京 ok",
        "",
        "Straße ＡＢＣ café",
        "café 𝔡",
        *_corpus(20),
    ]
    code = (
        "import json, sys, neardup; t = json.load(sys.stdin); fp = neardup.Fingerprinter(bits=128); "
        "print(json.dumps([[int(x) for x in fp.fingerprint_batch(t).reshape(-1)] for _ in range(2)]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], input=json.dumps(texts), text=True, capture_output=True, check=True
    )
    here = [int(x) for x in Fingerprinter(bits=128).fingerprint_batch(texts).reshape(-1)]
    assert json.loads(out.stdout) == [here, here]


def test_invalid_n_jobs():
    with pytest.raises(ValueError, match="n_jobs=0"):
        Fingerprinter().fingerprint_batch(["a"], n_jobs=0)


def test_large_document_memory_is_bounded_by_its_size():
    code = """
import resource, neardup
neardup.simhash("warm up")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
text = "lorem ipsum dolor sit amet consectetur " * 2_600_000  # about 100 MB
fp = neardup.simhash(text)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(fp, (after - before) * 1024 / len(text))
"""
    out = subprocess.run([sys.executable, "-c", code], text=True, capture_output=True, check=True)
    fp, bytes_per_input_byte = out.stdout.split()
    assert int(fp) == neardup.simhash("lorem ipsum dolor sit amet consectetur " * 50)
    assert float(bytes_per_input_byte) < 8


def _cosine(a: Counter, b: Counter) -> float:
    dot = sum(a[k] * b[k] for k in a.keys() & b.keys())
    return dot / math.sqrt(sum(v * v for v in a.values()) * sum(v * v for v in b.values()))


@pytest.mark.parametrize("bits", [64, 128])
def test_charikar_law_equal_bits_match_one_minus_angle_over_pi(bits):
    """P[bit equal] = 1 - theta / pi (Charikar 2002), measured over many document pairs."""
    rng = random.Random(bits)
    vocabulary = [f"t{i}" for i in range(100_000)]
    pairs, expected = [], []
    for _ in range(1200):
        a = [rng.choice(vocabulary) for _ in range(rng.randint(20, 200))]
        keep = rng.random()
        b = [w if rng.random() < keep else rng.choice(vocabulary) for w in a]
        b += [rng.choice(vocabulary) for _ in range(rng.randint(0, 50))]
        theta = math.acos(min(1.0, _cosine(Counter(a), Counter(b))))
        pairs += [" ".join(a), " ".join(b)]
        expected.append(1 - theta / math.pi)
    fps = Fingerprinter(features="words", bits=bits).fingerprint_batch(pairs).reshape(len(pairs), -1)
    equal = 1 - np.bitwise_count(fps[0::2] ^ fps[1::2]).sum(axis=1) / bits
    expected = np.array(expected)
    # 1200 pairs x bits Bernoulli trials: the standard error of the mean is below 0.003.
    assert abs(equal.mean() - expected.mean()) < 0.012
    # And pair by pair, not just on average: the mean absolute residual stays within binomial
    # noise (at most sqrt(2 / pi) * sqrt(p (1 - p) / bits) for a fair coin per bit).
    assert np.abs(equal - expected).mean() < 1.2 * math.sqrt(2 / math.pi) * math.sqrt(0.25 / bits)
    # Within each third of the similarity range the law holds too (400 * bits trials each).
    order = np.argsort(expected)
    assert expected[order[-1]] - expected[order[0]] > 0.3
    for band in np.array_split(order, 3):
        assert abs(equal[band].mean() - expected[band].mean()) < 0.02


def test_warmup_runs():
    neardup.warmup()


WORDS = [
    "the",
    "a",
    "of",
    "page",
    "Page",
    "PAGE",
    "naïve",
    "café",
    "Straße",
    "東京",
    "ﬁ",
    "e\u0301",
    "😀",
    "x1",
    "x2",
]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(WORDS), max_size=60).map(" ".join), max_size=12),
    st.sampled_from(["uniform", "tf", "sublinear", "tfidf"]),
    st.sampled_from([64, 128]),
    st.sampled_from([("word-shingles", 3), ("words", None), ("char-ngrams", 4), ("word-shingles", 1)]),
    st.booleans(),
)
def test_fingerprints_of_counted_features_equal_those_of_the_texts(
    texts, weighting, bits, features, normalize
):
    # --jaccard hashes each document's features once, for its band keys, its check and its
    # fingerprint: the fingerprint from the distinct features and their counts must be the text's.
    kind, size = features
    sizes = {} if size is None else {"ngram_size" if kind == "char-ngrams" else "shingle_size": size}
    options = dict(features=kind, bits=bits, normalize=normalize, seed=7, **sizes)
    idf = neardup.fit_idf([*texts, "the a of page"], **options) if weighting == "tfidf" else None
    fingerprinter = Fingerprinter(weighting=weighting, idf=idf, **options)
    keys, verification = _corpus_keys(fingerprinter)
    assert np.array_equal(keys.add(texts), fingerprinter.fingerprint_batch(texts))
    # The keys and the held features made in the same pass are those made apart.
    assert np.array_equal(keys.keys(), keys.banding.keys(texts, verification))
    held = keys.features()
    assert held is not None
    table = FeatureTable.of(texts, fingerprinter.config)
    assert np.array_equal(held.table.doc_offsets, table.doc_offsets)
    assert np.array_equal(held.table.hashes, table.hashes)


def _corpus_keys(fingerprinter: Fingerprinter) -> tuple[CorpusKeys, Verification]:
    """What --jaccard 0.8 keys a corpus with, checking the fingerprint's own features."""
    verification = check_verify(("jaccard", 0.8), fingerprinter.config)
    assert verification is not None
    return CorpusKeys(banding_for(0.8), verification, fingerprinter), verification


def test_counts_past_a_byte_are_counted_in_full():
    # Byte-wide counters hold 255: a feature repeated 300 times must still outweigh others.
    fingerprinter = Fingerprinter(features="words", weighting="tf")
    texts = ["spam " * 300 + " ".join(f"w{i}" for i in range(280)), "spam " * 256 + "eggs " * 255]
    table = FeatureTable.of(texts, fingerprinter.config)
    assert table.counts is not None and table.counts.max() == 300
    keys, _ = _corpus_keys(fingerprinter)
    assert np.array_equal(keys.add(texts), fingerprinter.fingerprint_batch(texts))
