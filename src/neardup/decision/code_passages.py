"""What makes an aligned passage of code a copied region: its ends moved to whole lines, and
kept only with evidence that it was copied rather than written to the same shape.

A passage of code tokens (``passage_code.CorpusCode``) is aligned as prose is, token by
token; code then needs three more rules, each measured on the planted functions of
``benchmarks/bench_code.py`` (docs/passages.md has the numbers):

- Whole lines. People copy lines: a passage starting or ending inside a line has run into
  the code beside the copy by chance (``def $id (`` after a copied function's last line) or
  stopped short of a line whose names were first used there (a copy's first use of a name
  looks back past its start, so the placeholders differ). A first line cut short is taken
  whole where the tokens before the cut have the same shape in both copies, else left out; a
  last line cut short is left out.
- Loose last lines. A last line whose names are next used ahead of the passage, at different
  distances in the two copies, is two unrelated lines of one shape (the next function's
  ``def`` line and its parameters): left out, up to ``LOOSE_LINES``.
- Evidence. A passage is kept when its tokens are varied (``VARIED`` of its runs of four
  tokens distinct, for each ``min_words`` token it must hold: a table of strings or a run of
  ``self.x = None`` is not) and it reuses names (``REUSED_NAMES`` uses of a name already used
  in it, the most used one left out, in each copy): a renamed copy keeps its variables'
  reuse; same-shape code with every name used once is no evidence of a copy. Copies whose
  names are the same as written (``SAME_NAMES`` of them) are evidence enough: code copied
  as it is, a table of options among them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .passage_code import CorpusCode
from .passage_matching import Matches, PassageOptions

LOOSE_LINES = 3
"""Last lines left out as loose, at most (each one the passage's last at the time)."""
VARIED = 0.6
"""Distinct runs of four tokens a kept passage holds, per token of ``min_words``."""
REUSED_NAMES = 3
"""Uses of an already used name (the most used one left out) a kept passage holds, in each
copy."""
SAME_NAMES = 0.8
"""The share of names two copies hold alike as written (as multisets, of the longer copy's
names) that makes them a copy whatever their reuse."""


@dataclass(frozen=True)
class _Lines:
    """For each token of the corpus, the first and last token of its document that start on
    the line it starts on (int64 each)."""

    first: np.ndarray
    last: np.ndarray

    @classmethod
    def of(cls, code: CorpusCode) -> _Lines:
        n = len(code.spans)
        rows = np.arange(n, dtype=np.int64)
        opens = np.ones(n, dtype=bool)  # the token opens a line of its document
        opens[1:] = code.spans[1:, 2] != code.spans[:-1, 2]
        opens[code.offsets[:-1][code.offsets[:-1] < n]] = True
        closes = np.ones(n, dtype=bool)
        closes[:-1] = opens[1:]
        first = np.maximum.accumulate(np.where(opens, rows, 0)) if n else rows
        last = np.minimum.accumulate(np.where(closes, rows, n)[::-1])[::-1] if n else rows
        return cls(first, last)


def refined(matches: Matches, code: CorpusCode, options: PassageOptions) -> Matches:
    """``matches`` (of ``code``'s tokens) with their ends on whole lines, less loose last
    lines, kept when long enough and evidently copied (see the module's docstring)."""
    lines = _Lines.of(code)
    m = _whole_first_lines(matches, code, lines)
    cut_short = np.maximum(_cut_last_line(m, code, lines, "a"), _cut_last_line(m, code, lines, "b"))
    m = _ends_moved(m, 0, cut_short)
    m = _ends_moved(m, 0, _loose_last_lines(m, code, lines))
    long_enough = (m.last_a >= m.first_a) & (m.last_b >= m.first_b) & (m.words >= options.least_words)
    m = m.rows(np.flatnonzero(long_enough))
    return m.rows(np.flatnonzero(_evident(m, code, options)))


def _ends_moved(m: Matches, start_back: np.ndarray | int, end_back: np.ndarray | int) -> Matches:
    """``m`` with each passage's start moved ``start_back`` tokens back (taking tokens in;
    negative: leaving them out) and its end ``end_back`` tokens back, in both copies; the
    tokens taken in or left out count as matched."""
    return Matches(
        m.doc_a,
        m.doc_b,
        m.first_a - start_back,
        m.last_a - end_back,
        m.first_b - start_back,
        m.last_b - end_back,
        np.maximum(m.matched + start_back - end_back, 0),
    )


def _tokens(m: Matches, code: CorpusCode, side: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, last, document's first) token of each passage's copy ``side`` ("a" or "b"), as
    rows of the corpus's token arrays."""
    docs = getattr(m, f"doc_{side}")
    base = code.offsets[docs]
    return base + getattr(m, f"first_{side}"), base + getattr(m, f"last_{side}"), base


def _whole_first_lines(m: Matches, code: CorpusCode, lines: _Lines) -> Matches:
    """A first line cut short in either copy taken whole where the tokens before the cut are
    as many in both copies and alike (equal, or names both), else left out."""
    first_a, _, _ = _tokens(m, code, "a")
    first_b, _, _ = _tokens(m, code, "b")
    before_a, before_b = first_a - lines.first[first_a], first_b - lines.first[first_b]
    back = np.zeros(len(m), dtype=np.int64)
    for r in np.flatnonzero((before_a == before_b) & (before_a > 0)).tolist():
        a = np.arange(lines.first[first_a[r]], first_a[r])
        b = np.arange(lines.first[first_b[r]], first_b[r])
        alike = (code.hashes[a] == code.hashes[b]) | ((code.names[a] >= 0) & (code.names[b] >= 0))
        back[r] = len(a) if alike.all() else 0
    m = _ends_moved(m, back, 0)
    first_a, last_a, start_a = _tokens(m, code, "a")
    first_b, last_b, start_b = _tokens(m, code, "b")
    cut_a = (first_a > start_a) & (code.spans[np.maximum(first_a - 1, 0), 3] == code.spans[first_a, 2])
    cut_b = (first_b > start_b) & (code.spans[np.maximum(first_b - 1, 0), 3] == code.spans[first_b, 2])
    rest_a = np.where(cut_a, np.minimum(lines.last[first_a], last_a) - first_a + 1, 0)
    rest_b = np.where(cut_b, np.minimum(lines.last[first_b], last_b) - first_b + 1, 0)
    return _ends_moved(m, -np.maximum(rest_a, rest_b), 0)


def _cut_last_line(m: Matches, code: CorpusCode, lines: _Lines, side: str) -> np.ndarray:
    """The tokens of copy ``side``'s last line, where the line goes on past the passage, else 0."""
    first, last, _ = _tokens(m, code, side)
    end = code.offsets[getattr(m, f"doc_{side}") + 1]
    after = np.minimum(last + 1, len(code.spans) - 1)
    cut = (last + 1 < end) & (code.spans[after, 2] == code.spans[last, 3])
    return np.where(cut, last - np.maximum(first, lines.first[last]) + 1, 0)


def _loose_last_lines(m: Matches, code: CorpusCode, lines: _Lines) -> np.ndarray:
    """Tokens to cut from each passage's end: its last lines, while a line is loose (its
    names next used ahead of the passage in both copies, at different distances)."""
    first_a, last_a, _ = _tokens(m, code, "a")
    first_b, last_b, _ = _tokens(m, code, "b")
    cut = np.zeros(len(m), dtype=np.int64)
    for r in range(len(m)):
        end_a, end_b = int(last_a[r]), int(last_b[r])
        for _ in range(LOOSE_LINES):
            line_a = max(int(lines.first[end_a]), int(first_a[r]))
            line_b = max(int(lines.first[end_b]), int(first_b[r]))
            if end_a - line_a != end_b - line_b or line_a <= first_a[r]:
                break  # lines of other shapes, or the passage's first
            a, b = np.arange(line_a, end_a + 1), np.arange(line_b, end_b + 1)
            ahead_a, ahead_b = code.next_use[a], code.next_use[b]
            beyond = (a + ahead_a > last_a[r]) & (b + ahead_b > last_b[r]) & (ahead_a > 0) & (ahead_b > 0)
            if not (beyond & (ahead_a != ahead_b)).any():
                break
            end_a, end_b = line_a - 1, line_b - 1
        cut[r] = last_a[r] - end_a
    return cut


def _evident(m: Matches, code: CorpusCode, options: PassageOptions) -> np.ndarray:
    """bool: the passages varied enough that reuse names in both copies (module docstring).
    Without names (``code_normalize="none"``: copies equal as written) only variety counts."""
    least_varied = VARIED * options.min_words
    named = options.code_normalize == "identifiers"
    first_a, last_a, _ = _tokens(m, code, "a")
    first_b, last_b, _ = _tokens(m, code, "b")
    keep = np.zeros(len(m), dtype=bool)
    for r in range(len(m)):
        if _runs_of_four(code.hashes[first_a[r] : last_a[r] + 1]) < least_varied:
            continue
        names_a, names_b = code.names[first_a[r] : last_a[r] + 1], code.names[first_b[r] : last_b[r] + 1]
        keep[r] = (
            not named
            or min(_reused(names_a), _reused(names_b)) >= REUSED_NAMES
            or _alike(names_a, names_b) >= SAME_NAMES
        )
    return keep


def _runs_of_four(hashes: np.ndarray) -> int:
    """Distinct runs of four tokens among ``hashes``."""
    if len(hashes) < 4:
        return 0
    h = hashes.astype(np.uint64)
    runs = np.stack([(h[:-3] << np.uint64(32)) | h[1:-2], (h[2:-1] << np.uint64(32)) | h[3:]], axis=1)
    return len(np.unique(runs, axis=0))


def _alike(names_a: np.ndarray, names_b: np.ndarray) -> float:
    """The share of names (-1: no name) the two copies hold alike, as multisets, of the more
    names either holds."""
    a, b = names_a[names_a >= 0], names_b[names_b >= 0]
    if not len(a) or not len(b):
        return 0.0
    shared = np.intersect1d(a, b)
    count_a = np.unique(a, return_counts=True)
    count_b = np.unique(b, return_counts=True)
    in_a = count_a[1][np.searchsorted(count_a[0], shared)]
    in_b = count_b[1][np.searchsorted(count_b[0], shared)]
    return float(np.minimum(in_a, in_b).sum() / max(len(a), len(b)))


def _reused(names: np.ndarray) -> int:
    """Uses of a name already used before among ``names`` (-1: no name), the most used name's
    left out."""
    counts = np.unique(names[names >= 0], return_counts=True)[1]  # not bincount: numbered corpus-wide
    if not len(counts):
        return 0
    return int(counts.sum() - len(counts) - (counts.max() - 1))
