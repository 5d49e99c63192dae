"""Copied functions planted in unrelated files, and how well ``passages(features="code")``
finds them: bench_code.py's passages section.

Each file of the sample (the standard library's, as bench_code.py picks them) hosts one
function copied whole from another file of the sample: a top-level ``def`` block (ast's
lines, decorators left behind) of 8 to 80 lines and 60 code tokens or more (the passages'
``min_words`` is 50), inserted between two top-level statements of the host, a blank line
either side. One copy in three is left as it is, one has every identifier renamed consistently
(names that are not keywords or builtins), and one is renamed and re-laid (comments and blank
lines out, two spaces an indent: bench_code.py's ``relaid``).

Scoring, for the passages found between the planted texts:

- recall: the planted copies for which a passage between donor and host overlaps the copy's
  lines on both sides;
- lines exact within one: of those found, the share whose four line numbers (first and last
  line in donor and host) are each within one line of the function's;
- precision: planted / (planted + false), where a passage is planted when it overlaps a planted
  copy on both sides, and false unless it is true shared code, counted apart: code copied as
  written (the two copies' tokens, names and literals as written, at least 0.8 alike by
  difflib's ratio: the standard library's own copies), or a passage from a planted copy to a
  third file that shares the donor's function too (a passage between donor and that file
  over the function's lines, or the third file's side found as written in the donor's
  function, 0.8 of its tokens or more: the copy carried its donor's shared code along, as
  from ``bisect_right`` to ``bisect_left``). A passage alike only once names are placeholders
  (the same shape of code, nothing copied) is false.
"""

from __future__ import annotations

import ast
import difflib
import functools
import random
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

KINDS = ("as is", "renamed", "renamed, re-laid")
MIN_TOKENS = 60


@dataclass(frozen=True)
class Plant:
    donor: int
    host: int
    kind: str
    donor_lines: tuple[int, int]
    host_lines: tuple[int, int]


def _functions(source: str) -> list[tuple[int, int]]:
    """(first, last) line of each top-level function of 8 to 80 lines."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [
        (node.lineno, node.end_lineno)
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and 8 <= node.end_lineno - node.lineno + 1 <= 80
    ]


def _statement_ends(source: str) -> list[int]:
    """The last line of each top-level statement but the last: where a block may go after."""
    tree = ast.parse(source)
    return [node.end_lineno for node in tree.body[:-1] if node.end_lineno is not None]


def _renamed(block: str, layout: bool) -> str:
    from bench_code import KEEP_NAMES, relaid

    names: dict[str, str] = {}

    def text_of(tok: Any) -> str:
        import tokenize

        if tok.type == tokenize.NAME and tok.string not in KEEP_NAMES:
            return names.setdefault(tok.string, f"v{len(names)}_{len(tok.string)}")
        return tok.string

    return relaid(block, text_of, layout=layout)


def planted_texts(files: list[Path], seed: int) -> tuple[list[str], list[Plant]]:
    """(the texts with a function planted in each, the plants) for ``files``."""
    from pygments.lexers import PythonLexer

    from neardup.fingerprint.code import code_tokens

    rng = random.Random(seed)
    lexer = PythonLexer()
    originals = [path.read_text("utf-8") for path in files]
    candidates = []
    for f, source in enumerate(originals):
        lines = source.splitlines()
        for first, last in _functions(source):
            block = "\n".join(lines[first - 1 : last]) + "\n"
            if len(code_tokens(block, lexer, True, True)) >= MIN_TOKENS:
                candidates.append((f, first, last, block))
    texts, plants = list(originals), []
    inserted: dict[int, tuple[int, int]] = {}  # host: (after this line, lines added)
    order = list(range(len(files)))
    rng.shuffle(order)
    for n, host in enumerate(order):
        ends = _statement_ends(originals[host]) if _parses(originals[host]) else []
        usable = [c for c in candidates if c[0] != host]
        if not ends or not usable:
            continue
        donor, first, last, block = rng.choice(usable)
        kind = KINDS[n % len(KINDS)]
        copy = block if kind == "as is" else _renamed(block, layout=kind == "renamed, re-laid")
        copy_lines = copy.rstrip("\n").split("\n")
        after = rng.choice(ends)
        host_lines = originals[host].splitlines()
        texts[host] = "\n".join([*host_lines[:after], "", *copy_lines, "", *host_lines[after:]]) + "\n"
        start = after + 2  # a blank line, then the copy
        plants.append(Plant(donor, host, kind, (first, last), (start, start + len(copy_lines) - 1)))
        inserted[host] = (after, len(copy_lines) + 2)

    def moved(doc: int, line: int) -> int:  # a donor's lines, after what it hosts went in
        after, added = inserted.get(doc, (0, 0))
        return line + added if added and line > after else line

    plants = [
        replace(p, donor_lines=(moved(p.donor, p.donor_lines[0]), moved(p.donor, p.donor_lines[1])))
        for p in plants
    ]
    return texts, plants


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except SyntaxError:
        return False
    return True


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def _donor_shares(found: list[dict], plant: Plant, other: int) -> bool:
    """Whether a passage between ``plant``'s donor and ``other`` covers the planted function."""
    for r in found:
        if {r["id_a"], r["id_b"]} == {plant.donor, other} and plant.donor != other:
            lines = (
                (r["line_a"], r["end_line_a"]) if r["id_a"] == plant.donor else (r["line_b"], r["end_line_b"])
            )
            if _overlap(lines, plant.donor_lines):
                return True
    return False


def _found_in(tokens: list[str], function: list[str]) -> bool:
    """Whether 0.8 of ``tokens`` or more are found as written, in order, in ``function``."""
    matcher = difflib.SequenceMatcher(None, tokens, function, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) >= 0.8 * len(tokens)


def _show(r: dict, files: list[Path], texts: list[str], alike: float) -> None:
    """One false passage: each copy's file and lines, its text (the first and last lines of a
    long one), and how alike its tokens are as written."""
    print(f"\nfalse passage, {r['words']} tokens, {alike:.2f} alike as written:")
    for side in ("a", "b"):
        doc, first, last = r[f"id_{side}"], r[f"line_{side}"], r[f"end_line_{side}"]
        print(f"  {files[doc].parent.name}/{files[doc].name} lines {first}-{last}")
        lines = texts[doc].splitlines()[first - 1 : last]
        shown = lines if len(lines) <= 12 else [*lines[:8], "    ...", *lines[-3:]]
        print("".join(f"    | {line}\n" for line in shown), end="")


def score(files: list[Path], seed: int, options: dict[str, Any], show_false: bool = False) -> dict[str, Any]:
    """Plant, find, score (see the module docstring); ``options`` go to ``neardup.passages``.
    ``show_false`` prints each false passage: its two files, lines and text."""
    from pygments.lexers import PythonLexer

    import neardup
    from neardup.fingerprint.code import code_tokens

    texts, plants = planted_texts(files, seed)
    started = time.perf_counter()
    found = neardup.passages(texts, features="code", language="python", **options).matches.to_pylist()
    seconds = time.perf_counter() - started
    lexer = PythonLexer()

    def as_written(doc: int, start: int, end: int) -> list[str]:
        return code_tokens(texts[doc][start:end], lexer, False, True)

    @functools.cache  # asked once for each passage to a planted copy's host
    def donor_function(p: Plant) -> list[str]:
        lines = texts[p.donor].splitlines(keepends=True)
        return code_tokens("".join(lines[p.donor_lines[0] - 1 : p.donor_lines[1]]), lexer, False, True)

    def spans(r: dict) -> tuple[tuple[int, int], tuple[int, int]]:
        return (r["line_a"], r["end_line_a"]), (r["line_b"], r["end_line_b"])

    by_pair: dict[tuple[int, int], list[Plant]] = {}
    in_host: dict[int, Plant] = {}
    for p in plants:
        by_pair.setdefault((min(p.donor, p.host), max(p.donor, p.host)), []).append(p)
        in_host[p.host] = p
    hit: dict[Plant, dict] = {}
    planted = false = shared = 0
    for r in found:
        a, b = r["id_a"], r["id_b"]
        lines_a, lines_b = spans(r)
        match = None
        for p in by_pair.get((a, b), []):
            donor_side, host_side = (lines_a, lines_b) if p.donor == a else (lines_b, lines_a)
            if _overlap(donor_side, p.donor_lines) and _overlap(host_side, p.host_lines):
                match = p
        if match is not None:
            planted += 1
            hit.setdefault(match, r)
            continue
        alike = difflib.SequenceMatcher(
            None,
            as_written(a, r["start_a"], r["end_a"]),
            as_written(b, r["start_b"], r["end_b"]),
            autojunk=False,
        ).ratio()
        carried = any(
            doc in in_host
            and _overlap(lines, in_host[doc].host_lines)
            and (
                _donor_shares(found, in_host[doc], other)
                or _found_in(as_written(other, start, end), donor_function(in_host[doc]))
            )
            for doc, lines, other, start, end in (
                (a, lines_a, b, r["start_b"], r["end_b"]),
                (b, lines_b, a, r["start_a"], r["end_a"]),
            )
        )
        if alike >= 0.8 or carried:
            shared += 1
        else:
            false += 1
            if show_false:
                _show(r, files, texts, alike)
    exact = 0
    recall_by_kind: dict[str, list[int]] = {k: [0, 0] for k in KINDS}
    for p in plants:
        recall_by_kind[p.kind][1] += 1
        r = hit.get(p)
        if r is None:
            continue
        recall_by_kind[p.kind][0] += 1
        donor_a = r["id_a"] == p.donor
        got_donor = (r["line_a"], r["end_line_a"]) if donor_a else (r["line_b"], r["end_line_b"])
        got_host = (r["line_b"], r["end_line_b"]) if donor_a else (r["line_a"], r["end_line_a"])
        want = (*p.donor_lines, *p.host_lines)
        exact += all(abs(g - w) <= 1 for g, w in zip((*got_donor, *got_host), want))
    return {
        "planted": len(plants),
        "found": len(hit),
        "recall": len(hit) / len(plants) if plants else 1.0,
        "recall_by_kind": {k: (f / n if n else None) for k, (f, n) in recall_by_kind.items()},
        "lines_within_one": exact / len(hit) if hit else 1.0,
        "passages": len(found),
        "planted_passages": planted,
        "true_shared_passages": shared,
        "false_passages": false,
        "precision": planted / (planted + false) if planted + false else 1.0,
        "passages_s": seconds,
        "mb": sum(len(t.encode()) for t in texts) / 1e6,
    }
