"""Planted corpora: determinism, the edits each kind promises, scripts, and ground truth."""

from __future__ import annotations

import collections
import hashlib
import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import ConfigError
from neardup.pipeline.planted import (
    EDIT_KINDS,
    SCRIPTS,
    PlantedDoc,
    edit_count,
    example_corpus,
    planted_corpus,
    planted_pairs,
)

LETTERS = {  # the code points each script's letters must come from
    "en": re.compile(r"[a-zA-Z]"),
    "ru": re.compile(r"[\u0410-\u044f]"),
    "ar": re.compile(r"[\u0621-\u064a]"),
    "zh": re.compile(r"[\u4e00-\u9fff]"),
}


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.casefold())


def ideographs(text: str) -> str:
    return "".join(re.findall(r"[\u4e00-\u9fff]", text))


def is_subsequence(short: list, long: list) -> bool:
    rest = iter(long)
    return all(item in rest for item in short)


def levenshtein(a: list, b: list) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def one_variant(
    kind: str, rate: float, script: str, n_words: int, seed: int
) -> tuple[PlantedDoc, PlantedDoc]:
    docs = planted_corpus(
        1, edit_kinds=(kind,), edit_rates=(rate,), scripts=(script,), words_per_doc=n_words, seed=seed
    )
    original, variant = sorted(docs, key=lambda d: d.edit_kind is not None)
    assert (original.edit_kind, variant.edit_kind, variant.original) == (None, kind, original.id)
    return original, variant


def digest(docs: list[PlantedDoc]) -> str:
    return hashlib.sha256(repr(docs).encode()).hexdigest()[:16]


# --- determinism ----------------------------------------------------------------------------


def test_same_arguments_same_corpus_other_seed_other_corpus():
    args = dict(variants_per_original=2, edit_kinds=EDIT_KINDS, scripts=SCRIPTS, words_per_doc=50)
    first = planted_corpus(12, **args, seed=5)
    assert first == planted_corpus(12, **args, seed=5)
    other = planted_corpus(12, **args, seed=6)
    assert [d.id for d in other] != [d.id for d in first]  # another order
    texts = {d.id: d.text for d in first}
    assert all(d.text != texts[d.id] for d in other if d.edit_kind is None)


def test_pinned_corpus():
    # Any change to what a seed generates fails here: benchmarks compare runs over time.
    docs = planted_corpus(
        8, variants_per_original=2, edit_kinds=EDIT_KINDS, scripts=SCRIPTS, words_per_doc=60, seed=3
    )
    assert digest(docs) == "728ce935a6b888cb"
    assert digest(example_corpus()) == "6993aa5a28883ade"


def test_an_original_does_not_depend_on_the_edit_settings():
    small = planted_corpus(4, variants_per_original=0, words_per_doc=80, seed=2)
    big = planted_corpus(9, variants_per_original=3, edit_kinds=("delete",), words_per_doc=80, seed=2)
    originals = {d.id: d.text for d in big if d.edit_kind is None}
    assert all(originals[d.id] == d.text for d in small)


# --- shape of a corpus ----------------------------------------------------------------------


def test_counts_ids_lengths_and_balance():
    rates = (0.01, 0.1)
    docs = planted_corpus(
        40,
        variants_per_original=3,
        edit_rates=rates,
        edit_kinds=("substitute", "delete", "format"),
        scripts=("en", "ru", "ar", "zh"),
        words_per_doc=70,
        seed=1,
    )
    assert len(docs) == 40 * 4
    assert len({d.id for d in docs}) == len(docs)
    originals = [d for d in docs if d.edit_kind is None]
    assert sorted(d.id for d in originals) == sorted(
        f"{s}-{i:06d}" for i, s in zip(range(40), itertools.cycle(("en", "ru", "ar", "zh")))
    )
    assert all(d.original == d.id and d.edit_rate == 0.0 for d in originals)
    assert all(len(words(d.text)) == 70 for d in originals if d.script != "zh")
    variants = collections.Counter((d.script, d.edit_kind, d.edit_rate) for d in docs if d.edit_kind)
    assert set(variants.values()) == {5}  # 10 originals x 3 variants / 6 combinations, per script
    assert all(re.fullmatch(r"(en|ru|ar|zh)-\d{6}-v[123]", d.id) for d in docs if d.edit_kind)


def test_variants_are_not_next_to_their_originals():
    docs = planted_corpus(300, words_per_doc=10)
    adjacent = sum(a.original == b.original for a, b in itertools.pairwise(docs))
    assert adjacent < 15  # about 2 expected in a random order; 300 if unshuffled


@pytest.mark.parametrize("script", ["en", "ru", "ar"])
def test_sentences_and_paragraphs(script):
    for doc in planted_corpus(30, variants_per_original=0, scripts=(script,), words_per_doc=200, seed=4):
        paragraphs = doc.text.split("\n\n")
        for k, paragraph in enumerate(paragraphs):
            sentences = [s for s in paragraph.split(". ") if s]
            assert len(sentences) <= 6 and (len(sentences) >= 3 or k == len(paragraphs) - 1)
            for sentence in sentences:
                assert 4 <= len(words(sentence)) <= 23
                assert script == "ar" or sentence[0].isupper()
        assert doc.text.endswith(".")


def test_word_frequencies_follow_zipf():
    docs = planted_corpus(200, variants_per_original=0, words_per_doc=300, seed=9)
    counts = collections.Counter(w for d in docs for w in words(d.text))
    (top, n1), (_, n2), (_, n3) = counts.most_common(3)
    assert top == "the"
    assert 0.085 < n1 / 60_000 < 0.099  # 1 / H(30000) = 0.0917
    assert 1.8 < n1 / n2 < 2.2 and 2.7 < n1 / n3 < 3.3
    assert len(counts) > 8000  # a long tail, not a small closed vocabulary


# --- scripts --------------------------------------------------------------------------------


def test_letters_come_from_the_script():
    docs = planted_corpus(
        24, variants_per_original=2, edit_kinds=EDIT_KINDS, scripts=SCRIPTS, words_per_doc=120, seed=8
    )
    for doc in docs:
        letters = [c for c in doc.text if c.isalpha()]
        assert letters and all(LETTERS[doc.script].match(c) for c in letters), doc.id


def test_chinese_has_no_spaces_and_chinese_punctuation():
    docs = planted_corpus(20, variants_per_original=2, edit_kinds=EDIT_KINDS, scripts=("zh",), seed=2)
    for doc in docs:
        assert " " not in doc.text
        assert doc.text.count("\u3002") >= 10 and "." not in doc.text
    assert any("\uff0c" in d.text for d in docs)


# --- edits ----------------------------------------------------------------------------------

cases = given(
    seed=st.integers(0, 10**6),
    script=st.sampled_from(["en", "ru", "ar"]),
    rate=st.sampled_from([0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4]),
    n_words=st.integers(8, 150),
)


@settings(max_examples=60, deadline=None)
@cases
def test_substitute(seed, script, rate, n_words):
    original, variant = one_variant("substitute", rate, script, n_words, seed)
    a, b = words(original.text), words(variant.text)
    assert len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == edit_count(rate, n_words)


@settings(max_examples=60, deadline=None)
@cases
def test_insert(seed, script, rate, n_words):
    original, variant = one_variant("insert", rate, script, n_words, seed)
    a, b = words(original.text), words(variant.text)
    assert len(b) == len(a) + edit_count(rate, n_words) and is_subsequence(a, b)


@settings(max_examples=60, deadline=None)
@cases
def test_delete(seed, script, rate, n_words):
    original, variant = one_variant("delete", rate, script, n_words, seed)
    a, b = words(original.text), words(variant.text)
    assert len(b) == len(a) - edit_count(rate, n_words) and is_subsequence(b, a)


@settings(max_examples=60, deadline=None)
@cases
def test_mixed(seed, script, rate, n_words):
    original, variant = one_variant("mixed", rate, script, n_words, seed)
    a, b = words(original.text), words(variant.text)
    m = edit_count(rate, n_words)
    assert 1 <= levenshtein(a, b) <= m and abs(len(a) - len(b)) <= m


@settings(max_examples=60, deadline=None)
@cases
def test_format_keeps_the_words(seed, script, rate, n_words):
    original, variant = one_variant("format", rate, script, n_words, seed)
    assert variant.text != original.text
    assert words(variant.text) == words(original.text)


@settings(max_examples=60, deadline=None)
@cases
def test_reorder_moves_whole_units(seed, script, rate, n_words):
    original, variant = one_variant("reorder", rate, script, n_words, seed)
    if n_words < 24:  # one sentence: nothing to move
        return
    assert variant.text != original.text
    if "\n\n" in original.text:
        assert sorted(variant.text.split("\n\n")) == sorted(original.text.split("\n\n"))
    assert sorted(words(variant.text)) == sorted(words(original.text))


@settings(max_examples=60, deadline=None)
@cases
def test_boilerplate_surrounds_the_original(seed, script, rate, n_words):
    original, variant = one_variant("boilerplate", rate, script, n_words, seed)
    block = variant.text.removesuffix("\n\n" + original.text).removeprefix(original.text + "\n\n")
    assert block != variant.text and "\n\n" not in block
    assert edit_count(rate, n_words) <= len(words(block)) < edit_count(rate, n_words) + 20


@pytest.mark.parametrize("rate", [0.5, 1.0])
def test_reorder_moves_even_when_swaps_cancel(rate):
    # Two sentences, two swaps: they would undo each other.
    for seed in range(10):
        original, variant = one_variant("reorder", rate, "en", 30, seed)
        assert variant.text != original.text


@pytest.mark.parametrize("kind", EDIT_KINDS)
def test_rate_zero_is_an_exact_copy(kind):
    original, variant = one_variant(kind, 0.0, "en", 100, 0)
    assert variant.text == original.text


@pytest.mark.parametrize("kind", ["substitute", "insert", "delete", "mixed"])
def test_chinese_word_edits(kind):
    for seed in range(20):
        original, variant = one_variant(kind, 0.05, "zh", 100, seed)
        a, b = ideographs(original.text), ideographs(variant.text)
        # A Chinese word is one or two ideographs.
        assert 1 <= levenshtein(list(a), list(b)) <= 2 * edit_count(0.05, 100)


def test_chinese_format_keeps_the_ideographs():
    for seed in range(20):
        original, variant = one_variant("format", 0.1, "zh", 100, seed)
        assert variant.text != original.text and ideographs(variant.text) == ideographs(original.text)


def test_edit_count():
    assert [edit_count(r, 300) for r in (0.0, 0.001, 0.01, 0.05, 1.0)] == [0, 1, 3, 15, 300]
    assert edit_count(0.01, 40) == 1 and edit_count(0.5, 3) == 2


# --- ground truth ---------------------------------------------------------------------------


def test_planted_pairs_are_the_groups():
    docs = planted_corpus(30, variants_per_original=3, words_per_doc=10, seed=3)
    expected = [
        (i, j) for i, j in itertools.combinations(range(len(docs)), 2) if docs[i].original == docs[j].original
    ]
    assert planted_pairs(docs) == expected and len(expected) == 30 * 6
    with_original = planted_pairs(docs, siblings=False)
    assert len(with_original) == 30 * 3
    assert all((docs[i].edit_kind is None) != (docs[j].edit_kind is None) for i, j in with_original)
    variants = [d for d in docs if d.edit_kind]  # originals gone: siblings still pair
    assert len(planted_pairs(variants)) == 30 * 3 and planted_pairs(variants, siblings=False) == []


def test_no_pairs_without_variants():
    assert planted_pairs(planted_corpus(10, variants_per_original=0, words_per_doc=10)) == []


# --- the demo corpus ------------------------------------------------------------------------


def test_example_corpus():
    docs = example_corpus()
    assert docs == example_corpus() and len(docs) == 68
    assert {d.script for d in docs} == set(SCRIPTS)
    assert sum(d.script == "en" for d in docs) > len(docs) / 2
    assert all(0.01 <= d.edit_rate <= 0.05 for d in docs if d.edit_kind)
    assert all(40 <= len(words(d.text)) <= 80 for d in docs if d.edit_kind is None and d.script != "zh")
    assert len({d.id for d in docs}) == len(docs) and len(planted_pairs(docs)) == 34


def test_example_corpus_is_found_by_default_settings():
    import neardup

    docs = example_corpus()
    fingerprints = neardup.Fingerprinter().fingerprint_batch([d.text for d in docs])
    planted = set(planted_pairs(docs))
    close = {
        (i, j)
        for i, j in itertools.combinations(range(len(docs)), 2)
        if neardup.hamming(fingerprints[i], fingerprints[j]) <= 3
    }
    assert close <= planted and len(close) >= 0.6 * len(planted)


# --- arguments ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(scripts=("en", "fr")), "'ar'"),
        (dict(edit_kinds=("swap",)), "'boilerplate'"),
        (dict(edit_rates=(0.1, 1.5)), r"\[0, 1\]"),
        (dict(edit_rates=()), "non-empty"),
        (dict(words_per_doc=0), "words_per_doc=0"),
        (dict(variants_per_original=-1), "variants_per_original=-1"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        planted_corpus(2, **kwargs)
