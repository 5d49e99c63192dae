"""The compiled masking kernel (``_kernels/log_masks.py``) equals the regular expressions
that define the keys (``Masker.keys_by_regex``): on lines generated to cross every rule, on
hand-picked corners, and on the LogHub samples; each key's hash is xxHash's XXH3-64."""

from __future__ import annotations

import csv
import gzip
import hashlib
from pathlib import Path

import numba
import numpy as np
import pyarrow as pa
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.logs import masking
from neardup.logs.masking import DEFAULT_MASKS, Masker

LOGHUB = Path(__file__).resolve().parents[3] / "shared" / "data" / "loghub-2k"
MORE_LOGHUB = Path("/tmp/loghub")  # more LogHub systems, where a machine has them

# Pieces of log lines: each rule's characters, its near misses, and what it must not touch.
FRAGMENTS = [
    *["0", "7", "42", "123", "2024", "12345", "0x1f", "-5", "+3", "1.5", "3.", ".5", "1e9"],
    *["a", "ab", "eth", "ssh", "x", "Z", "_", "abc", "blk_", "UTC", "GMT", "ABCDEF", "Xy"],
    *["=", ".", "..", "...", ":", "-", "/", ",", "+", "<", ">", "(", ")", "?", '"', "'", "@", "%", "~"],
    *[" ", " ", " ", "  ", "\t", "\r", "\f", "\v", "\n", "\x1c"],
    *["Mon", "Tue", "Sun", "Mon,", "Jan", "Dec", "May"],
    *["KB", "KiB", "MB", "B", "bytes", "ms", "us", "ns", "s", "sec", "secs", "seconds", "min", "mins"],
    *["minutes", "hour", "hours", "Ki"],
    *["/var", "./", "../", ".../", "/log", "?q=1&r", "/a.b-c@d%e+f~g"],
    *["example", ".com", ".org", ".io", ".uk", ".c", "com", "info", "biz", "co", ".co.uk", "-net"],
    *["<*>", "<*", "*>", "<*><*>"],
    *["é", "日本", "\u00a0", "😀", "\x85"],
    *["12:34", "1:02:03", "12:34:56", "12:34:567", "9:5"],
]
SPACES = st.sampled_from([" ", "  ", "", "\t", " \n"])


@st.composite
def dates(draw: st.DrawFn) -> str:
    """Dates and their near misses: the day, month, day of month, clock, zone and year."""
    parts = [
        draw(st.sampled_from(["Mon", "Sun", "Fri", "Mo", "mon"])),
        draw(st.sampled_from(["", ","])),
        draw(SPACES),
        draw(st.sampled_from(["Jan", "Dec", "Ja"])),
        draw(SPACES),
        draw(st.sampled_from(["1", "12", "123", ""])),
        draw(SPACES),
        draw(st.sampled_from(["1", "12", "123"])),
        ":",
        draw(st.sampled_from(["34", "3", "345"])),
        draw(st.sampled_from(["", ":56", ":5", ":567", ":56x"])),
        draw(st.sampled_from(["", " UTC", "  CEST", " U", " ABCDEF", " UTCx", " UT1"])),
        draw(st.sampled_from(["", " 2024", "  2024", " 202", " 20245", " 2024x"])),
        draw(st.sampled_from(["", " ", "x", "_", ".", "é", ")"])),
    ]
    return "".join(parts)


@st.composite
def sizes(draw: st.DrawFn) -> str:
    """Sizes and durations, with the bracketed second figure and near misses."""
    number = st.sampled_from(["5", "-5", "+1.25", "12.", "1.2.3", "007"])
    unit = st.sampled_from(["KB", "KiB", "B", "ms", "s", "sec", "secs", "mins", "hours", "kB", "MBs", "s1"])
    parts = [
        draw(st.sampled_from(["", "<", ">", "=", "<=", "x", ".", "("])),
        draw(number),
        draw(st.sampled_from(["", " ", "  "])),
        draw(unit),
        draw(
            st.sampled_from(
                ["", f" ({draw(number)}{draw(st.sampled_from(['', ' ']))}{draw(unit)})", " (5", " ()"]
            )
        ),
        draw(st.sampled_from(["", " ", "x", "_", ".", "é", ")", ","])),
    ]
    return "".join(parts)


LINES = st.lists(st.one_of(st.sampled_from(FRAGMENTS), dates(), sizes()), max_size=24).map("".join)
TEXT = st.text(alphabet=st.sampled_from(list("0123456789aZx_.=:-/,<*>() \t\r\n?\"'@%~+é日")), max_size=40)


def kernel_keys(masker: Masker, lines: list[str]) -> list[str]:
    keys, hashes = masker.key_array(pa.array(lines, pa.string()))
    found = keys.to_pylist()
    assert hashes.dtype == np.uint64 and hashes.tolist() == [
        xxhash.xxh3_64_intdigest(k.encode()) for k in found
    ]
    return found


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(LINES, TEXT), max_size=8))
def test_kernel_equals_the_regular_expressions(lines):
    masker = Masker()
    assert kernel_keys(masker, lines) == masker.keys_by_regex(lines)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(LINES, TEXT), max_size=12), st.integers(1, 4), st.integers(2, 5))
def test_lines_masked_in_parts_on_threads_equal_one_run(lines, part_lines, threads):
    masker = Masker()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(masking, "_PART_LINES", part_lines)
        patch.setattr(numba, "get_num_threads", lambda: threads)
        assert kernel_keys(masker, lines) == masker.keys_by_regex(lines)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(LINES, TEXT), max_size=8))
def test_kernel_without_masks_equals_the_regular_expressions(lines):
    masker = Masker(())
    assert kernel_keys(masker, lines) == masker.keys_by_regex(lines)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(LINES, TEXT), max_size=8))
def test_custom_masks_then_the_kernel_equal_the_regular_expressions(lines):
    masker = Masker([("user", r"\buser\w*"), ("bracket", r"\[[^\]\n]*\]"), ("ab", "ab")])
    assert kernel_keys(masker, lines) == masker.keys_by_regex(lines)
    assert masker.keys(lines) == masker.keys_by_regex(lines)


EXAMPLES = [
    ("Connection from 10.0.0.1 port 22", "Connection from <*> port <*>"),
    ("up eth0 via ssh2 on e1 x86_64", "up eth0 via ssh2 on <*>"),
    ("eth10 eth0. eth0..x é0", "<*> eth0..x <*>"),
    ("a=1 b==2 c...3 4..5", "a=<*> b==<*> c...<*> <*>"),
    ("Mon Jan  5 12:34:56 UTC 2024 done", "<*> done"),
    ("Sun, Dec 31 9:05 fine", "<*> fine"),
    ("Mon Jan 5 12:34:567 x", "<*> x"),  # the date ends at :34, and ':567' joins it
    ("wrote 12.5 MB (13107200 bytes) in 3 ms", "wrote <*> in <*>"),
    ("took 5secs, 7 minutes, 2 hour_s", "took <*>, <*>, <*> hour_s"),
    ("size>=5KiB (5120B)x", "size><*> (<*>)x"),  # no size after a letter: it starts at '='
    ("open ../etc/passwd ./a /var/log/x.log?q=1&r=2 then", "open <*> then"),
    ("a/b path//x .../y", "a/b path//x .../y"),
    ("from mail.example.org and cdn.example.co.uk to a.b.c", "from <*> and <*> to a.b.c"),
    ("host-1.internal.net_ x.comx x.com.", "<*> x.comx x.com."),
    ("<*>:<*>/<*> and <*> <*>  <*>x <*>", "<*> and <*> <*>x <*>"),
    ("  \t lead and trail\r\f\v ", "lead and trail"),
    ("line\nbreak 42\n", "line break <*>"),
    ("日本 é1 😀 2", "日本 <*> 😀 <*>"),
    ("a-5ms b_1.com x-y.org -q.net", "a-<*> <*>"),  # a label has no '_', may start with '-'
    ("Monday Jan 5 12:00 Mon_ Jan 5 12:00 Tue Jan 5 12:00", "Monday Jan <*> Mon_ Jan <*>"),
    ("", ""),
    ("<*> <*>", "<*>"),
]


@pytest.mark.parametrize(("line", "key"), EXAMPLES)
def test_hand_examples(line, key):
    masker = Masker()
    assert masker.keys_by_regex([line]) == [key]
    assert kernel_keys(masker, [line]) == [key]
    assert masker.key(line) == key


def test_arrays_of_every_layout():
    masker = Masker()
    lines = ["a 1", None, "b 2 3", "", "c /x"]
    expected = ["a <*>", "", "b <*>", "", "c <*>"]
    for texts in [pa.array(lines, pa.string()), pa.array(lines, pa.large_string())]:
        keys, hashes = masker.key_array(texts)
        assert keys.type == pa.large_string() and keys.to_pylist() == expected
        assert hashes.tolist() == [xxhash.xxh3_64_intdigest(k.encode()) for k in expected]
        keys, hashes = masker.key_array(texts.slice(2, 2))
        assert keys.to_pylist() == expected[2:4] and len(hashes) == 2
        keys, hashes = masker.key_array(texts.slice(0, 0))
        assert keys.to_pylist() == [] and hashes.shape == (0,)
    chunked = pa.chunked_array([pa.array(lines[:2]), pa.array(lines[2:])])
    assert masker.key_array(chunked)[0].to_pylist() == expected
    with pytest.raises(TypeError, match="string"):
        masker.key_array(pa.array([1, 2]))
    assert Masker([("x", "x")]).key_array(pa.array([], pa.string()))[0].to_pylist() == []


def test_lines_that_are_no_utf8_fall_back_to_the_regular_expressions():
    line = "bad \udcff 42"
    assert Masker().keys([line]) == Masker().keys_by_regex([line]) == ["bad \udcff <*>"]


def test_a_custom_mask_may_not_match_a_line_end():
    with pytest.raises(ValueError, match="newline"):
        Masker([("blank", r"\s+")]).key_array(pa.array(["a", "b"]))


def _loghub_lines(folder: Path) -> list[str]:
    lines: list[str] = []
    for path in sorted(folder.glob("*_2k.log_structured.csv*")):
        if path.name.endswith("_corrected.csv"):
            continue
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8", errors="replace", newline="") as f:
            lines += [row["Content"] for row in csv.DictReader(f)]
    return lines


@pytest.mark.parametrize("folder", [LOGHUB, MORE_LOGHUB], ids=["loghub-2k", "more-loghub"])
def test_loghub_samples(folder):
    if not folder.is_dir():
        pytest.skip(f"{folder} is not on this machine")
    lines = _loghub_lines(folder)
    assert lines
    for masker in (Masker(), Masker(())):
        expected = masker.keys_by_regex(lines)
        found = kernel_keys(masker, lines)
        wrong = [(line, e, f) for line, e, f in zip(lines, expected, found) if e != f]
        assert not wrong, wrong[:5]


def test_default_masks_are_the_ones_the_kernel_mirrors():
    # The kernel's scanners are written for these exact expressions: a change to one needs the
    # same change in _kernels/log_masks.py, then this digest.
    digest = hashlib.sha256(repr(DEFAULT_MASKS).encode()).hexdigest()
    assert digest == "adec5c9d000797b6ddde59cde2005711ffa4ae089dab7f08b7d9c8ef68e51507"
