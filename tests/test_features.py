"""Normalisation by runs equals normalising the whole text (docs/fingerprint-spec.md, sec. 3)."""

from __future__ import annotations

import unicodedata

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
