"""Passages of code (``features="code"``): each token's place in the text, its lines and its
name's last use (``CorpusCode``) equal tests/naive_code.py's walks over any mix of code,
comments, strings and line breaks; a function copied with its names renamed and its lines
re-laid is found, with the lines it spans in both files, and code of the same shape that
was not copied is not."""

from __future__ import annotations

import difflib
import random
from itertools import pairwise

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pygments", reason="features='code' needs the code extra (pygments)")

from naive_code import naive_last_uses, naive_line, naive_phrases, naive_token_spans

from neardup import passages
from neardup._errors import ConfigError, FormatError
from neardup._lexers import lexer_named
from neardup.decision import code_ends, code_passages
from neardup.decision.passage_code import LAST_USE_WINDOW, CorpusCode, uses
from neardup.decision.passage_matching import PassageOptions

PIECES = [
    "def", " ", "f", "(", "a", ",", "b", ")", ":", "return", "x", "=", "1", "2.5", "+", "*",
    "'s'", '"t\\n"', 'f"v{a}w"', '"""doc\nstring"""', "# note", "\\\n", "yield from", "é", "名",
    "\n", "\r\n", "\r", "\t", "    ", "\n\n", "\ufeff", "\x0c", "if", "not", "in", "[", "]", "{", "}",
]  # fmt: skip
code_texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


def corpus_rows(texts: list[str], lexer, code_normalize: str = "identifiers", batches: int = 1):
    """(token hash, start, end, line, end line) of every token of every text, from CorpusCode."""
    corpus = CorpusCode(code_normalize)
    size = -(-len(texts) // batches) if texts else 1
    for start in range(0, len(texts), size):
        part = texts[start : start + size]
        corpus.add(part, [lexer] * len(part))
    corpus.freeze()
    counts = np.diff(corpus.offsets)
    docs = np.repeat(np.arange(len(texts)), counts)
    within = np.arange(len(docs)) - np.repeat(corpus.offsets[:-1], counts)
    start, end = corpus.char_offsets(docs, within, within)
    line, end_line = corpus.line_ranges(docs, within, within)
    rows = list(zip(corpus.hashes.tolist(), start.tolist(), end.tolist(), line.tolist(), end_line.tolist()))
    return [rows[corpus.offsets[d] : corpus.offsets[d + 1]] for d in range(len(texts))]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(code_texts, min_size=1, max_size=4), st.sampled_from(["identifiers", "none"]), st.integers(1, 3)
)
def test_token_places_and_lines_equal_the_reference(texts, normalize, batches):
    lexer = lexer_named("python")
    found = corpus_rows(texts, lexer, normalize, batches)
    by_token: dict[str, int] = {}
    for text, rows in zip(texts, found):
        expected = naive_token_spans(text, lexer, normalize == "identifiers")
        assert [(s, e) for _, s, e, _, _ in rows] == [(s, e) for _, s, e in expected]
        lines = [(naive_line(text, s), naive_line(text, e - 1)) for _, s, e in expected]
        assert [(a, b) for *_, a, b in rows] == lines
        tokens = naive_last_uses(text, expected, LAST_USE_WINDOW)
        for token, (h, *_) in zip(tokens, rows):
            assert by_token.setdefault(token, h) == h  # one token, one hash, in every document
    assert len(set(by_token.values())) == len(by_token)  # and another token, another hash


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-1, 4), max_size=60), st.integers(1, 8))
def test_last_and_next_uses_equal_a_walk(names, window):
    names = np.array(names, dtype=np.int32)
    last_use, next_use = uses(names, window)
    for i, name in enumerate(names.tolist()):
        back = [d for d in range(1, window + 1) if i - d >= 0 and name >= 0 and names[i - d] == name]
        ahead = [d for d in range(1, window + 1) if i + d < len(names) and name >= 0 and names[i + d] == name]
        assert last_use[i] == (back[0] if back else 0)
        assert next_use[i] == (ahead[0] if ahead else 0)


def test_a_token_spans_the_characters_it_was_lexed_from():
    text = '\ufeff\r\n\r\nx = 1\r\ny = "a" f"b{x}c"  # note\r\n\rdef g(q):\n\treturn (q +\n  2)\n'
    rows = corpus_rows([text], lexer_named("python"), "none")[0]
    assert [text[s:e] for _, s, e, _, _ in rows] == [
        "x", "=", "1", "y", "=", '"a" f"b{', "x", '}c"', "def", "g", "(", "q", ")", ":", "return",
        "(", "q", "+", "2", ")",
    ]  # fmt: skip
    assert [line for *_, line, _ in rows][:4] == [3, 3, 3, 4]
    assert rows[8][3] == 6 and rows[-1][3:] == (8, 8)


RENAMED_FROM = """\
def merge_intervals(intervals, tolerance=0):
    '''Merge overlapping intervals.'''
    ordered = sorted(intervals, key=lambda pair: pair[0])
    merged = []
    for start, end in ordered:
        if merged and start <= merged[-1][1] + tolerance:
            previous_start, previous_end = merged[-1]
            merged[-1] = (previous_start, max(previous_end, end))
        else:
            merged.append((start, end))
    return merged
"""
RENAMED_TO = """\
def join_spans(spans, slack=0):
    order = sorted(spans,
                   key=lambda p: p[0])  # by start
    out = []
    for lo, hi in order:
        if out and lo <= out[-1][1] + slack:
            plo, phi = out[-1]
            out[-1] = (plo, max(phi, hi))
        else:
            out.append((lo, hi))
    return out
"""


def test_a_renamed_relaid_function_is_found_with_its_lines():
    host = "import os\n\n\nclass Other:\n    pass\n\n\n" + RENAMED_TO + "\n\nprint(join_spans([]))\n"
    original = "import sys\n\n" + RENAMED_FROM
    result = passages([original, host], features="code", language="python", min_words=40)
    rows = result.matches.to_pylist()
    assert len(rows) == 1
    row = rows[0]
    assert (row["line_a"], row["end_line_a"]) == (3, 13)
    assert (row["line_b"], row["end_line_b"]) == (8, 18)
    assert original[row["start_a"] : row["end_a"]] == RENAMED_FROM.rstrip("\n")
    assert host[row["start_b"] : row["end_b"]] == RENAMED_TO.rstrip("\n")
    prose = passages([original, host], min_words=40)
    assert prose.matches.num_rows == 0  # the words differ: prose passages miss it
    assert "line_a" not in prose.matches.column_names


def test_code_names_must_name_a_language():
    with pytest.raises(ConfigError, match="needs each document's language"):
        passages(["x = 1"], features="code")
    with pytest.raises(ConfigError, match="language='pyton' is not a language pygments can lex"):
        PassageOptions(features="code", language="pyton")
    with pytest.raises(ConfigError, match="settings of features='code', not of features='words'"):
        PassageOptions(language="python")
    with pytest.raises(ConfigError, match="features='lines' is not a kind of passage"):
        PassageOptions(features="lines")
    with pytest.raises(ConfigError, match=r"must be an integer >= 24 \(tokens\)"):
        PassageOptions(features="code", min_words=20)


def test_ids_name_the_language_of_texts_in_memory():
    code = "import os\n\n" + RENAMED_FROM
    texts = [code, "x = 1\n" + RENAMED_FROM, "not code at all"]
    ids = ["a.py", "b.py", "notes.zzz"]
    table = pa.table({"id": ids, "text": texts})
    with pytest.raises(FormatError, match=r"notes\.zzz: no language is known for this file name"):
        passages(table, id_field="id", features="code", min_words=40)
    result = passages(table, id_field="id", features="code", min_words=40, errors="skip")
    assert result.skipped == 1 and result.documents == 2
    assert result.matches.select(["id_a", "id_b", "line_a", "line_b"]).to_pylist() == [
        {"id_a": "a.py", "id_b": "b.py", "line_a": 3, "line_b": 2}
    ]


def test_a_copy_ends_on_its_own_last_line():
    # The next function opens with a line of the same shape in both files: the alignment runs
    # on into it; its names are next used at other distances, so it is no part of the copy.
    original = "import sys\n\n" + RENAMED_FROM + "\n\ndef helper(item, n):\n    return item[n]\n"
    host = "x = 1\n\n" + RENAMED_TO + "\n\ndef other(value, k):\n    k = k + 1\n    return value * k\n"
    rows = passages([original, host], features="code", language="python", min_words=40).matches.to_pylist()
    assert [(r["line_a"], r["end_line_a"], r["line_b"], r["end_line_b"]) for r in rows] == [(3, 13, 3, 13)]


def test_a_copy_starts_on_its_first_line_though_its_names_were_used_before():
    # The first line's names were used just before the copies, at other distances: they
    # differ as placeholders, yet the line is as long and alike in both.
    original = "merge_intervals = intervals = tolerance = None\n" + RENAMED_FROM
    host = "spans = slack = 1\nprint(slack, join_spans, spans)\n" + RENAMED_TO
    rows = passages([original, host], features="code", language="python", min_words=40).matches.to_pylist()
    assert [(r["line_a"], r["end_line_a"], r["line_b"], r["end_line_b"]) for r in rows] == [(2, 12, 3, 13)]
    assert original[rows[0]["start_a"] : rows[0]["end_a"]] == RENAMED_FROM.rstrip("\n")
    assert host[rows[0]["start_b"] : rows[0]["end_b"]] == RENAMED_TO.rstrip("\n")


def code_lines(a: str, b: str) -> list[tuple[int, int, int, int]]:
    rows = passages([a, b], features="code", language="python", min_words=40).matches.to_pylist()
    return [(r["line_a"], r["end_line_a"], r["line_b"], r["end_line_b"]) for r in rows]


def test_a_line_of_another_shape_after_one_copy_is_left_out_with_what_follows():
    # In the host, ``class Other:`` comes between the copy and a ``def`` line of the same
    # shape as the one after the original: the alignment takes it in with a gap. The copy
    # ends on its own last line in both files, not a line on in one of them.
    original = "import sys\n\n" + RENAMED_FROM + "\n\ndef helper(item, n, m):\n    return item[n]\n"
    host = "x = 1\n\n" + RENAMED_TO + "\n\nclass Other:\n    def method(self, k, j):\n        return k\n"
    assert code_lines(original, host) == [(3, 13, 3, 13)]


def test_lines_of_one_shape_before_the_copies_are_no_part_of_them():
    # Each file ends a function of its own just before the copy, with a line of the same
    # shape whose names were used before it at other distances and not again.
    original = "def first(table, slot, value):\n    table[slot] = value\n\n" + RENAMED_FROM
    host = "def setup(codes, name, n):\n    print(codes, name)\n    codes[n] = name\n\n" + RENAMED_TO
    assert code_lines(original, host) == [(4, 14, 5, 15)]


SAME_SHAPE_A = """\
class Settings:
    options = [
{options}
    ]

    def __init__(self):
{fields}
"""


def same_shape(names: list[str]) -> str:
    options = "\n".join(f"        ('{n}=', None, 'the {n} to use, if any'),\n" for n in names)
    fields = "\n".join(f"        self.{n} = None" for n in names)
    return SAME_SHAPE_A.format(options=options, fields=fields)


def test_code_of_one_shape_that_was_not_copied_is_no_passage():
    # A table of strings and a run of ``self.x = None``: the same tokens once names and
    # literals are placeholders, but no name is reused: nothing says one was copied.
    a = same_shape([f"alpha{i}" for i in range(30)])
    b = same_shape([f"beta{i}" for i in range(30)])
    assert passages([a, b], features="code", language="python").matches.num_rows == 0
    assert passages([a, a + "\n"], features="code", language="python").matches.num_rows == 1


def abstract_methods(prefix: str) -> str:
    """A class of methods that only raise, their arguments as many as ``STUB_ARGS`` says, each
    name spelt with ``prefix``: in two files with two prefixes, one unit repeated and its names
    reused within it, at the same distances in both."""
    methods = [f"class {prefix.title()}Base:\n"]
    for i, n in enumerate(STUB_ARGS):
        args = "".join(f", {prefix}_arg{k}" for k in range(n))
        methods.append(
            f'    def {prefix}_method{i}(self{args}):\n        """Do {prefix} {i}."""\n'
            "        raise NotImplementedError\n"
        )
    return "\n".join(methods)


STUB_ARGS = [0, 1, 0, 2, 1, 0, 3, 1, 0]


def test_a_run_of_one_unit_is_no_copy_though_its_names_are_reused():
    # asyncio's events.py and transports.py hold such runs (the planted functions of
    # benchmarks/bench_code.py): varied enough, names reused, but a handful of phrases.
    a, b = abstract_methods("alpha"), abstract_methods("beta")
    assert passages([a, b], features="code", language="python").matches.num_rows == 0
    copied = passages([a, "import os\n\n" + a], features="code", language="python").matches
    assert copied.num_rows == 1  # copied as written: the names are the evidence


def test_a_renamed_copy_with_a_repeated_part_is_found():
    # A table of options before the code that uses it: the table is one unit repeated, the
    # function as a whole is not.
    table = "".join(f"    ('{name}', {k}, '{name} help'),\n" for k, name in enumerate("abcdefgh"))
    original = f"OPTIONS = [\n{table}]\n\n\n" + RENAMED_FROM
    renamed = RENAMED_TO.replace("spans", "ranges").replace("slack", "fuzz")
    host = "import os\n\n\n" + f"CHOICES = [\n{table.replace('help', 'text')}]\n\n\n" + renamed
    rows = passages([original, host], features="code", language="python").matches.to_pylist()
    assert [(r["line_a"], r["end_line_a"], r["line_b"], r["end_line_b"]) for r in rows] == [(1, 23, 4, 26)]


@given(st.lists(st.integers(0, 3), max_size=40), st.integers(1, 6), st.integers(1, 30))
@settings(max_examples=300, deadline=None)
def test_phrases_equal_lempel_and_ziv(tokens, period, enough):
    repeated = (tokens[:period] * 8)[: len(tokens)]  # a short unit repeated: few phrases
    for seq in (tokens, repeated):
        hashes = np.array(seq, dtype=np.uint32) * np.uint32(2654435761)
        assert code_passages._phrases(hashes, enough) == min(naive_phrases(seq), enough)


def test_names_alike_count_in_order():
    names = np.array([3, -1, 4, 5, -1, 6, 7], dtype=np.int32)
    assert code_passages._alike(names, names.copy()) == 1.0
    assert code_passages._alike(names, names[::-1].copy()) == 0.2  # one of five in order


STATEMENTS = [
    "{a} = {b} + {n}",
    "{a} = {b}.{c}({d}, {n})",
    "if {a} > {b}:\n        {c} = [{a}, {d}]",
    "for {a} in {b}:\n        {c}.append({a} * {n})",
    "{a}[{b}] = {c} - {d}",
    "while {a} < {n}:\n        {a} += {b}",
    "{a}, {b} = {c}, {d}",
    "assert {a} is not None, {b}",
]


def generated_module(functions: int, copied: bool) -> str:
    """``functions`` functions of random statements over five names each; ``copied``, each
    name is spelt otherwise and every tenth function gains a line (the copies' shapes differ
    there, so difflib has work to do)."""
    rng = random.Random(7)
    out = []
    for f in range(functions):
        names = [f"v{f}_{k}" for k in range(5)]
        spelt = {name: name.replace("v", "w") if copied else name for name in names}
        body = []
        for _ in range(rng.randint(3, 8)):
            a, b, c, d = (spelt[name] for name in rng.sample(names, 4))
            body.append("    " + rng.choice(STATEMENTS).format(a=a, b=b, c=c, d=d, n=rng.randint(0, 99)))
        if copied and f % 10 == 5:
            body.insert(1, "    print()")
        head = f"def {spelt[names[0]]}_fn({spelt[names[0]]}, {spelt[names[1]]}):\n"
        out.append(head + "\n".join(body) + f"\n    return {spelt[names[2]]}\n")
    return "\n\n".join(out)


def test_a_long_copy_is_put_in_line_a_window_at_a_time(monkeypatch):
    # difflib's time grows with the product of its inputs' lengths: a copy of thousands of
    # lines aligned whole took minutes. Each call must see a window at most, and the copy is
    # still found whole, on its first and last lines.
    seen = []

    class Counting(difflib.SequenceMatcher):
        def __init__(self, isjunk, a, b, autojunk):
            seen.append(max(len(a), len(b)))
            super().__init__(isjunk, a, b, autojunk=autojunk)

    monkeypatch.setattr(code_ends.difflib, "SequenceMatcher", Counting)
    original, copy = generated_module(200, copied=False), generated_module(200, copied=True)
    assert code_lines(original, copy) == [(1, len(original.splitlines()), 1, len(copy.splitlines()))]
    assert seen and max(seen) <= code_ends.WINDOW


shapes = st.lists(st.integers(0, 3), max_size=60)


@settings(max_examples=300, deadline=None)
@given(shapes, shapes, st.integers(2, 24))
def test_runs_in_windows_pair_equal_tokens_in_order(a, b, window):
    runs = code_ends.runs_in_windows(a, b, window)
    for x, y, n in runs:
        assert n > 0 and a[x : x + n] == b[y : y + n]
    for (x, y, n), (next_x, next_y, _) in pairwise(runs):
        assert x + n <= next_x and y + n <= next_y and (x + n, y + n) != (next_x, next_y)
    if max(len(a), len(b)) <= window:  # one window: difflib's own runs
        blocks = difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
        assert runs == [tuple(block) for block in blocks if block.size]
