"""Normalisation by runs equals normalising the whole text (docs/fingerprint-spec.md, sec. 3)."""

from __future__ import annotations

import unicodedata

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.features import normalize

_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

ascii_text = st.text(alphabet=st.characters(max_codepoint=0x7F), min_size=0, max_size=600)
tricky = st.text(alphabet=st.one_of(
    st.characters(min_codepoint=0x80),
    st.sampled_from(["\u0301", "\u0308", "\u0327", "\u3099", "\u1161", "\ufb01", "\u2126",
                     "\u0130", "\u00df", "\u1e9e", "\u03a3", "\uff21", "\u2460"]),
), min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(ascii_text, tricky), min_size=1, max_size=6), ascii_text)
def test_run_by_run_equals_whole_text(pieces, tail):
    # Long ASCII stretches keep the run-by-run path (few runs for the length) in play.
    text = "".join(a * 3 + t for a, t in pieces) + tail
    whole = unicodedata.normalize("NFKC", text).casefold()
    assert normalize(text).translate(_LOWER) == whole


def test_combining_mark_after_ascii_composes_in_either_path():
    text = "x" * 2000 + "Cafe\u0301" + "y" * 2000 + "A\u030a" + "z" * 2000
    assert normalize(text).translate(_LOWER) == unicodedata.normalize("NFKC", text).casefold()
    assert "caf\u00e9" in normalize(text).translate(_LOWER)


def test_normalized_code_points_are_never_the_second_half_of_a_composition():
    """A marked code point must survive any neighbour: no canonical pair (in any plane) ends
    in one, no Hangul vowel or trailing jamo is marked, and each is its own NFKC + casefold."""
    import unicodedata

    from neardup.features import normalized_code_points

    table = normalized_code_points()
    for c in range(0x80, 0x110000):
        decomposition = unicodedata.decomposition(chr(c))
        if decomposition and decomposition[0] != "<" and len(decomposition.split()) == 2:
            assert table[int(decomposition.split()[1], 16)] == 0, hex(c)
    assert not table[0x1161:0x1176].any() and not table[0x11A8:0x11C3].any()
    assert table[:0x80].sum() == 0 and table[0x10000:].sum() == 0
    marked = np.flatnonzero(table)
    assert len(marked) > 40_000  # CJK, Hangul syllables, Cyrillic and Greek lowercase, ...
    for c in marked[::97]:
        ch = chr(c)
        assert unicodedata.normalize("NFKC", ch).casefold() == ch
        for before in ("a", "e", "\u1100", "\uac00", "\u03b1", "\u0627", ch):
            assert normalize(before + ch + "x") == before + ch + "x"


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_text_of_ascii_and_normalized_code_points_is_already_normal(data):
    from neardup.features import normalized_code_points

    marked = [chr(c) for c in np.flatnonzero(normalized_code_points())[::13]]
    pieces = st.one_of(st.sampled_from(marked), st.characters(max_codepoint=0x7F))
    text = "".join(data.draw(st.lists(pieces, max_size=60)))
    lower_ascii = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
    # normalize() may lower an ASCII letter next to a non-ASCII run; the kernels lower them all.
    assert normalize(text).translate(lower_ascii) == text.translate(lower_ascii)
