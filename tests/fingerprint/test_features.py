"""Normalisation by runs equals normalising the whole text (docs/fingerprint-spec.md, sec. 3)."""

from __future__ import annotations

import functools
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.fingerprint.features import normalize

_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

ascii_text = st.text(alphabet=st.characters(max_codepoint=0x7F), min_size=0, max_size=600)
tricky = st.text(
    alphabet=st.one_of(
        st.characters(min_codepoint=0x80),
        st.sampled_from(
            [
                "\u0301",
                "\u0308",
                "\u0327",
                "\u3099",
                "\u1161",
                "\ufb01",
                "\u2126",
                "\u0130",
                "\u00df",
                "\u1e9e",
                "\u03a3",
                "\uff21",
                "\u2460",
            ]
        ),
    ),
    min_size=1,
    max_size=8,
)


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


@functools.cache
def _table_lists():
    from neardup.fingerprint.features import KEEP, REPLACE, normalization_table

    table = normalization_table()
    keep = [chr(c) for c in np.flatnonzero(table.actions == KEEP) if c >= 0x80]
    replace = {
        chr(c): table.replacement_bytes[table.replacement_offsets[c] : table.replacement_offsets[c + 1]]
        .tobytes()
        .decode()
        for c in np.flatnonzero(table.actions == REPLACE)
    }
    return table, keep, replace


def test_normalization_table_code_points_survive_any_neighbour():
    """No canonical pair (in any plane) ends in a KEEP or REPLACE code point, no Hangul vowel
    or trailing jamo is one, and each maps as the table says between neighbours of its kind."""
    import unicodedata

    from neardup.fingerprint.features import PYTHON, TABLE_LIMIT

    table, keep, replace = _table_lists()
    for c in range(0x80, 0x110000):
        decomposition = unicodedata.decomposition(chr(c))
        if decomposition and decomposition[0] != "<" and len(decomposition.split()) == 2:
            assert table.actions[int(decomposition.split()[1], 16)] == PYTHON, hex(c)
    assert (table.actions[0x1161:0x1176] == PYTHON).all()
    assert (table.actions[0x11A8:0x11C3] == PYTHON).all()
    assert (table.actions[TABLE_LIMIT:] == PYTHON).all()
    assert len(keep) > 100_000  # CJK, Hangul syllables, lowercase scripts, emoji, ...
    assert {
        "\u00c9": "\u00e9",
        "\u00df": "ss",
        "\U0001d521": "d",
        "\u00bd": "1\u20442",
        "\ufb06": "st",
        "\uff21": "a",
    }.items() <= replace.items()
    neighbours = ("a", "e", "\u1100", "\uac00", "\u03b1", "\u0627", "\u00c9", "\u00df", "\uff21")
    for ch in keep[::97]:
        for before in neighbours:
            assert (
                normalize(before + ch + "x").translate(_LOWER)
                == normalize(before).translate(_LOWER) + ch + "x"
            )
    for ch, replacement in replace.items():
        assert normalize(ch).translate(_LOWER) == replacement.translate(_LOWER)
        for before in neighbours[::3]:
            assert normalize(before + ch + ch).translate(_LOWER) == (
                normalize(before) + replacement * 2
            ).translate(_LOWER)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.data())
def test_text_of_table_code_points_normalises_code_point_by_code_point(data):
    _, keep, replace = _table_lists()
    mapped = st.one_of(st.sampled_from(keep), st.sampled_from(sorted(replace)))
    pieces = st.one_of(mapped, st.characters(max_codepoint=0x7F))
    text = "".join(data.draw(st.lists(pieces, max_size=60)))
    expected = "".join(replace.get(ch, ch) for ch in text)
    # normalize() may lower an ASCII letter next to a non-ASCII run; the kernels lower them all.
    assert normalize(text).translate(_LOWER) == expected.translate(_LOWER)


@pytest.mark.slow  # 200 drawn batches
@settings(max_examples=200, deadline=None)
@given(st.data())
def test_prepared_buffers_hold_the_normalised_text(data):
    """Buffer preparation (kernel replacements, Python for the rest, invalid UTF-8 repaired)
    gives each document's normalised UTF-8, whatever mix of documents a batch holds."""
    import pyarrow as pa

    from neardup.fingerprint.text_buffers import iter_buffers
    from neardup.io.encoding import decode_bytes

    _, keep, replace = _table_lists()
    pieces = st.one_of(
        st.sampled_from(keep),
        st.sampled_from(sorted(replace)),
        st.characters(max_codepoint=0x7F),
        st.characters(),
        st.sampled_from(["\u0301", "\U00029e3d", "\U000e0100", "\ud800"]),
    )
    docs = data.draw(st.lists(st.lists(pieces, max_size=30).map("".join), max_size=8))
    raw = data.draw(st.lists(st.binary(max_size=12), max_size=3))
    normalize_text = data.draw(st.booleans())
    encoded = [d.encode("utf-8", "surrogatepass") for d in docs] + raw
    for batch in (docs + raw, pa.array(encoded, type=pa.binary())):
        (buffer,) = iter_buffers(batch, normalize_text)
        got = [
            buffer.data[buffer.offsets[d] : buffer.offsets[d + 1]].tobytes().decode()
            for d in range(len(buffer))
        ]
        texts = [decode_bytes(t) for t in encoded]
        if isinstance(batch, list):  # a str's lone surrogates are U+FFFD, as bytes would be
            texts[: len(docs)] = [
                "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in d) for d in docs
            ]
        want = [normalize(t) if normalize_text else t for t in texts]
        assert [g.translate(_LOWER) for g in got] == [w.translate(_LOWER) for w in want]
