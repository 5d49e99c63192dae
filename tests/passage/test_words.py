"""The words of a corpus (``CorpusWords``, the ``_scan`` kernel) equal tests/naive_passages.py's
plain tokeniser: how many, where each lies (code point offsets), and which are the same word
(their code points' lower case), over any text, in one batch or several."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from naive_passages import naive_lower, naive_words
from neardup.decision.passage_words import CorpusWords, lower_case
from neardup.fingerprint.features import TABLE_LIMIT


def _range(first: int, last: int) -> st.SearchStrategy[str]:
    return st.integers(first, last).map(chr)


# Scripts, marks and symbols that make words, solo words and separators.
chars = st.one_of(
    _range(0x20, 0x7E),  # ASCII letters, digits, punctuation
    st.sampled_from(list(" \t\n\xa0\u2009\u3000")),
    _range(0x0400, 0x04FF),  # Cyrillic
    _range(0x0370, 0x03FF),  # Greek (final sigma, tonos)
    _range(0x0600, 0x06FF),  # Arabic letters, digits, punctuation
    _range(0x0300, 0x036F),  # combining marks: part of a word
    _range(0x4E00, 0x4E40) | _range(0x3040, 0x30FF) | _range(0xAC00, 0xAC10),  # CJK, kana, Hangul
    _range(0x1F300, 0x1F64F),  # emoji: four UTF-8 bytes, one str index, no word
    _range(0x20000, 0x20010),  # CJK extension B, above the lower-case table
    st.sampled_from(list("ßẞİıſǅΣσςÅÉé\u00ad\u200b\ufffd\ud800\udfff")),
)
texts = st.one_of(st.text(alphabet=chars, max_size=60), st.text(max_size=30))


def kernel_words(documents: list, batches: int = 1) -> list[list[tuple[int, int, int]]]:
    """(hash, start, end) of every word of every document, read in ``batches`` batches."""
    words = CorpusWords()
    size = -(-len(documents) // batches) if documents else 1
    for start in range(0, len(documents), size):
        words.add(documents[start : start + size])
    words.freeze()
    counts = np.diff(words.offsets)
    docs = np.repeat(np.arange(len(documents)), counts)
    within = np.arange(len(docs)) - np.repeat(words.offsets[:-1], counts)
    start, end = words.char_offsets(docs, within, within)
    rows = list(zip(words.hashes.tolist(), start.tolist(), end.tolist()))
    return [rows[words.offsets[d] : words.offsets[d + 1]] for d in range(len(documents))]


def assert_same_words(document, found: list[tuple[int, int, int]]) -> None:
    expected = naive_words(document)
    assert [(w.start, w.end) for w in expected] == [(s, e) for _, s, e in found]
    # Two words hash alike exactly when their keys are equal (a 32-bit collision among a few
    # dozen words would be a one-in-ten-million event).
    by_key: dict[str, int] = {}
    by_hash: dict[int, str] = {}
    for word, (h, _, _) in zip(expected, found):
        assert by_key.setdefault(word.key, h) == h, word
        assert by_hash.setdefault(h, word.key) == word.key, word


@settings(max_examples=100, deadline=None)
@given(st.lists(texts, min_size=1, max_size=5), st.integers(1, 3))
def test_words_equal_the_naive_tokeniser(documents, batches):
    for document, found in zip(documents, kernel_words(documents, batches)):
        assert_same_words(document, found)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.binary(max_size=30) | texts.map(lambda t: t.encode("utf-8", "surrogatepass")), max_size=4))
def test_words_of_bytes_equal_the_naive_tokeniser(documents):
    # Offsets in ill-formed bytes are test_job's subject; here, how many words and which.
    for document, found in zip(documents, kernel_words(documents)):
        expected = naive_words(document)
        assert len(found) == len(expected)
        pairs = {(w.key, h) for w, (h, _, _) in zip(expected, found)}
        assert len({k for k, _ in pairs}) == len({h for _, h in pairs}) == len(pairs)


def test_words_by_example():
    text = "Hello, wörld! 東京タワー e\u0301t\u00e9 😀x2 مرحبا-Привет"
    assert [text[w.start : w.end] for w in naive_words(text)] == [
        "Hello",
        "wörld",
        "東",
        "京",
        "タ",
        "ワ",
        "ー",
        "e\u0301t\u00e9",
        "x2",
        "مرحبا",
        "Привет",
    ]
    assert_same_words(text, kernel_words([text])[0])


def word_hash(word: str) -> int:
    (found,) = kernel_words([word])[0]
    return found[0]


def test_case_variants_are_one_word_and_other_words_are_not():
    same = [
        ("Straße", "STRAßE", "straße", "STRAẞE"),
        ("Привет", "ПРИВЕТ", "привет"),
        ("Άνθρωποσ", "ΆΝΘΡΩΠΟΣ", "άνθρωποσ"),
        ("Éte\u0301", "éTE\u0301"),
        ("ǅemal", "ǆEMAL", "ǄEMAL"),
        ("Ｆｕｌｌ", "ｆｕｌｌ"),
    ]
    for variants in same:
        assert len({word_hash(v) for v in variants}) == 1, variants
    # Lower case is per code point: no folding, no normalisation, no final-sigma rule.
    different = [
        "straße",
        "strasse",
        "άνθρωπος",
        "ανθρωπος",
        "étê",
        "e\u0301te",
        "İstanbul",
        "istanbul",
        "ﬁle",
    ]
    assert len({word_hash(w) for w in different}) == len(different)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(alphabet=chars, min_size=1, max_size=8), min_size=2, max_size=20, unique=True))
def test_a_word_and_its_upper_case_hash_alike(candidates):
    words = [w for w in candidates if [(x.start, x.end) for x in naive_words(w)] == [(0, len(w))]]
    upper = ["".join(c.upper() if len(c.upper()) == 1 else c for c in w) for w in words]
    hashes = [found[0][0] for found in kernel_words(words + upper)]
    for word, up, h, h_up in zip(words, upper, hashes, hashes[len(words) :]):
        assert (h == h_up) == (naive_words(word)[0].key == naive_words(up)[0].key), (word, up)


def test_lower_case_table_is_str_lower_per_code_point():
    table = lower_case()
    assert table.shape == (TABLE_LIMIT,) and not table.flags.writeable
    expected = [ord(naive_lower(chr(c))) for c in range(TABLE_LIMIT)]
    assert table.tolist() == expected
    # No code point above the table has a lower case: comparing them as they are loses nothing.
    assert all(chr(c).lower() == chr(c) for c in range(TABLE_LIMIT, 0x110000) if not 0xD800 <= c <= 0xDFFF)


def test_no_documents_and_empty_documents_have_no_words():
    words = CorpusWords()
    words.freeze()
    assert len(words) == 0 and words.offsets.tolist() == [0] and len(words.hashes) == 0
    assert kernel_words(["", " ,. ", "😀"]) == [[], [], []]
