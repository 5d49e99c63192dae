"""Where a passage of code starts and ends: on the first and last pair of lines its two copies
match whole, names and all, leaving out lines of one shape that were not copied.

The alignment (``passage_matching``) compares tokens whose names are told by their last use
anywhere before them (``passage_code``), and ends where its score stops growing: it may stop
short of a copy's first line (a name first used there was used before the copy, at another
distance in each file), run past its last one into code of the same shape (``def $id (`` after
it in both files), or take an unrelated line in with a gap. So each passage's lines are
matched again, in a region from the start of its first lines to the end of its last ones:

- The copies' tokens are put in line by difflib over their shapes (every name one token), a
  window of ``WINDOW`` tokens of each at a time, not the whole passage at once: difflib's time
  grows with the product of its inputs' lengths, and a file copied whole, thousands of lines,
  is one passage. The ends this looks for lie in the first window, which starts on both
  copies' first tokens, and the last, which reaches both copies' last ones; the windows
  between mostly count the tokens matched. A pair of lines counts when one run of that
  matches both whole and their names agree as Baker's parameterized matching has them *from
  the passage's start* (a name is used again the same tokens back in both, or first used in
  the passage in both), not from the file's.
- The passage runs from the first such pair to the last; one with none is dropped.
- A pair is loose, and left out, when none of its names is used elsewhere in the passage and
  some name of it is used outside, at different distances in the two files: the line before
  a copy (``return $id``, the end of the function above in both files) or the one after it
  (the next ``def $id ( $id ) :``). At most ``LOOSE_LINES`` at each end.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np

from .passage_code import CorpusCode
from .passage_matching import Matches

LOOSE_LINES = 3
"""Lines left out as loose at either end of a passage, at most."""
WINDOW = 1024
"""Tokens of each copy difflib puts in line at once (``runs_in_windows``): a passage's time is
then linear in its length, at most about ``WINDOW`` times it. Copies this long or shorter are
aligned whole, as a copied function nearly always is: of the 874 passages
``benchmarks/bench_code.py --only passages`` aligns again, one is longer (1,315 tokens), the
next 512 tokens long."""


@dataclass(frozen=True)
class Lines:
    """For each token of the corpus, the first and last token of its document that start on
    the line it starts on (int64 each)."""

    first: np.ndarray
    last: np.ndarray

    @classmethod
    def of(cls, code: CorpusCode) -> Lines:
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


@dataclass(frozen=True)
class Names:
    """For each token of the corpus: ``last_use`` and ``next_use``, the tokens back to the
    last use of its name and ahead to the next (0: none within the window, or no name;
    ``CorpusCode.next_use``), and ``shape``: its hash, or -1 for a name (int64)."""

    last_use: np.ndarray
    next_use: np.ndarray
    shape: np.ndarray

    @classmethod
    def of(cls, code: CorpusCode) -> Names:
        last_use = np.zeros(len(code.next_use), dtype=np.int64)
        used = np.flatnonzero(code.next_use > 0)
        last_use[used + code.next_use[used]] = code.next_use[used]
        shape = code.hashes.astype(np.int64)
        shape[code.names >= 0] = -1
        return cls(last_use, code.next_use.astype(np.int64), shape)

    def since(self, tokens: np.ndarray, start: int) -> np.ndarray:
        """The tokens back to each token's last use at ``start`` or after, else 0."""
        back = self.last_use[tokens]
        return np.where(tokens - back >= start, back, 0)


def on_matched_lines(m: Matches, code: CorpusCode, lines: Lines) -> Matches:
    """``m`` with each passage moved onto its matched lines (see the module's docstring);
    ``matched`` counts the tokens difflib matches between the new ends."""
    names = Names.of(code)
    base_a, base_b = code.offsets[m.doc_a], code.offsets[m.doc_b]
    kept, ends = [], []
    for r in range(len(m)):
        first_a, first_b = lines.first[base_a[r] + m.first_a[r]], lines.first[base_b[r] + m.first_b[r]]
        last_a, last_b = lines.last[base_a[r] + m.last_a[r]], lines.last[base_b[r] + m.last_b[r]]
        pair = _Pair(names, lines, int(first_a), int(last_a), int(first_b), int(last_b))
        head = pair.head()
        tail = pair.tail(head) if head is not None else None
        if head is None or tail is None or tail[0] < head[0]:
            continue
        kept.append(r)
        a, b = (head[0] - base_a[r], tail[0] - base_a[r]), (head[1] - base_b[r], tail[1] - base_b[r])
        ends.append((*a, *b, pair.matched(head, tail)))
    m = m.rows(np.array(kept, dtype=np.int64))
    return Matches(m.doc_a, m.doc_b, *np.array(ends, dtype=np.int64).reshape(-1, 5).T)


def runs_in_windows(
    shape_a: list[int], shape_b: list[int], window: int = WINDOW
) -> list[tuple[int, int, int]]:
    """Runs (start in ``shape_a``, start in ``shape_b``, length) of equal shapes, in order,
    found by difflib a ``window`` of tokens of each copy at a time. Each window starts
    where the runs kept before it end; it keeps the runs that start in its first half in both
    copies (its first run when none does), since those its second half cuts short may go on
    differently, until a window reaches the ends of both copies and keeps all of its runs."""
    runs: list[tuple[int, int, int]] = []
    i = j = 0
    while i < len(shape_a) and j < len(shape_b):
        end_a, end_b = min(i + window, len(shape_a)), min(j + window, len(shape_b))
        found = _runs_of(shape_a[i:end_a], shape_b[j:end_b])
        if end_a == len(shape_a) and end_b == len(shape_b):
            runs.extend((i + x, j + y, n) for x, y, n in found)
            break
        kept = [(x, y, n) for x, y, n in found if x < window // 2 and y < window // 2] or found[:1]
        if not kept:  # not one token alike: neither window holds the other's copy
            i, j = end_a, end_b
            continue
        runs.extend((i + x, j + y, n) for x, y, n in kept)
        x, y, n = kept[-1]
        i, j = i + x + n, j + y + n
    return _joined(runs)


def _runs_of(shape_a: list[int], shape_b: list[int]) -> list[tuple[int, int, int]]:
    """difflib's matching blocks of two windows, less its closing empty one."""
    if shape_a == shape_b:  # difflib's answer without its search: most copies' shapes are equal
        return [(0, 0, len(shape_a))] if shape_a else []
    blocks = difflib.SequenceMatcher(None, shape_a, shape_b, autojunk=False).get_matching_blocks()
    return [(x, y, n) for x, y, n in blocks if n]


def _joined(runs: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """``runs`` with each that goes on where the one before it ends made one with it: a run a
    window's edge cut in two is one run, so a line across the edge is matched whole."""
    joined: list[tuple[int, int, int]] = []
    for x, y, n in runs:
        if joined and joined[-1][0] + joined[-1][2] == x and joined[-1][1] + joined[-1][2] == y:
            joined[-1] = (joined[-1][0], joined[-1][1], joined[-1][2] + n)
        else:
            joined.append((x, y, n))
    return joined


class _Pair:
    """The two copies of one passage, tokens ``first_a..last_a`` and ``first_b..last_b``
    (rows of the corpus), in line by difflib over their shapes, a window at a time: ``runs``
    of (token in a, token in b, length)."""

    def __init__(self, names: Names, lines: Lines, first_a: int, last_a: int, first_b: int, last_b: int):
        self.names, self.lines = names, lines
        self.first_a, self.last_a, self.first_b, self.last_b = first_a, last_a, first_b, last_b
        shape_a = names.shape[first_a : last_a + 1].tolist()
        shape_b = names.shape[first_b : last_b + 1].tolist()
        self.runs = [(first_a + i, first_b + j, n) for i, j, n in runs_in_windows(shape_a, shape_b)]

    def head(self) -> tuple[int, int] | None:
        """The first tokens (in a, in b) of the first pair of lines matched and not loose."""
        loose = 0
        for a, b, n in self.runs:
            for k in range(n):
                ta, tb = a + k, b + k
                if self.lines.first[ta] != ta or self.lines.first[tb] != tb:
                    continue
                end = max(self.lines.last[ta], self.lines.last[tb] - (b - a))
                if end >= a + n or not self._agree(ta, end, b - a, (ta, tb)):
                    continue
                if loose < LOOSE_LINES and self._loose(np.arange(ta, end + 1), b - a, (ta, tb), ahead=False):
                    loose += 1
                    continue
                return ta, tb
        return None

    def tail(self, head: tuple[int, int]) -> tuple[int, int] | None:
        """The last tokens (in a, in b) of the last pair of lines matched and not loose, for a
        passage that starts at ``head``."""
        loose = 0
        for a, b, n in reversed(self.runs):
            for k in range(n - 1, -1, -1):
                ta, tb = a + k, b + k
                if ta < head[0] or tb < head[1]:
                    return None
                if self.lines.last[ta] != ta or self.lines.last[tb] != tb:
                    continue
                start = min(self.lines.first[ta], self.lines.first[tb] - (b - a))
                if start < max(a, head[0]) or not self._agree(start, ta, b - a, head):
                    continue
                if loose < LOOSE_LINES and self._loose(np.arange(start, ta + 1), b - a, head, ahead=True):
                    loose += 1
                    continue
                return ta, tb
        return None

    def _agree(self, first: int, last: int, shift: int, head: tuple[int, int]) -> bool:
        """Whether tokens ``first..last`` of a and those ``shift`` after them in b have their
        names last used the same tokens back, counting from a passage starting at ``head``."""
        a = np.arange(first, last + 1)
        return bool((self.names.since(a, head[0]) == self.names.since(a + shift, head[1])).all())

    def _loose(self, a: np.ndarray, shift: int, head: tuple[int, int], ahead: bool) -> bool:
        """Whether the line of tokens ``a`` (and ``a + shift`` in b) uses no name used elsewhere
        in the passage, and some name used outside it at other distances in the two files:
        ``ahead`` of it (a last line), else before it (a first line)."""
        b = a + shift
        named = self.names.shape[a] == -1
        if not named.any():
            return False
        if ahead:
            if self.names.since(a, head[0])[named].any():
                return False  # a name used before in the passage
            away_a, away_b = self.names.next_use[a], self.names.next_use[b]
        else:
            next_a = self.names.next_use[a]
            if (named & (next_a > 0) & (a + next_a <= self.last_a)).any():
                return False  # a name used again in the passage
            away_a, away_b = self.names.last_use[a], self.names.last_use[b]
        return bool((named & (away_a > 0) & (away_b > 0) & (away_a != away_b)).any())

    def matched(self, head: tuple[int, int], tail: tuple[int, int]) -> int:
        """Tokens the runs match from ``head`` to ``tail``."""
        return sum(max(0, min(a + n, tail[0] + 1) - max(a, head[0])) for a, _, n in self.runs)
