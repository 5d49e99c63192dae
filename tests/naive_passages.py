"""Slow, plain, obviously-right references for ``neardup.passages``.

Written from docs/passages.md and ``PassageResult``'s definitions, not from the kernels: the
words of a text (the fingerprint tokeniser's words, without normalisation, compared by their
code points' lower case) and, for every pair of documents, a full Smith-Waterman local
alignment of their words, not a banded one around seeds: +2 a matched word, -3 a changed,
inserted or deleted one. Everything works on Python ``str`` and ``int``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import pairwise
from typing import NamedTuple

from naive import SOLO, WORD, naive_class, naive_decode

MATCH, MISMATCH, GAP = 2, 3, 3


@dataclass(frozen=True)
class Word:
    """One word: ``key`` (what two words compare by) and its code point offsets
    ``[start, end)`` in the text."""

    key: str
    start: int
    end: int


def naive_lower(ch: str) -> str:
    """``str.lower`` of one code point where that is one code point; a code point whose lower
    case is longer (U+0130 LATIN CAPITAL LETTER I WITH DOT ABOVE) compares as itself."""
    lowered = ch.lower()
    return lowered if len(lowered) == 1 else ch


def naive_words(document: str | bytes) -> list[Word]:
    """Maximal runs of word code points, and each solo code point alone, in text order, with
    their offsets in the text as given (surrogates as U+FFFD; nothing else normalised)."""
    text = naive_decode(document)
    words = []
    start = None
    for i, ch in enumerate(text):
        cls = naive_class(ord(ch))
        if cls == WORD:
            if start is None:
                start = i
            continue
        if start is not None:
            words.append(_word(text, start, i))
            start = None
        if cls == SOLO:
            words.append(_word(text, i, i + 1))
    if start is not None:
        words.append(_word(text, start, len(text)))
    return words


def _word(text: str, start: int, end: int) -> Word:
    return Word("".join(map(naive_lower, text[start:end])), start, end)


def naive_keys(document: str | bytes) -> list[str]:
    return [w.key for w in naive_words(document)]


@dataclass(frozen=True)
class Alignment:
    """The best local alignment of word lists ``a`` and ``b``: words ``first_a..last_a`` of
    ``a`` with ``first_b..last_b`` of ``b`` (inclusive), ``matched`` words equal, ``score``."""

    first_a: int
    last_a: int
    first_b: int
    last_b: int
    matched: int
    score: int
    trail: Trail = field(default=None, compare=False, repr=False)

    @property
    def words(self) -> int:
        """The longer copy's length in words."""
        return max(self.last_a - self.first_a, self.last_b - self.first_b) + 1

    @property
    def similarity(self) -> float:
        """2 * matched / (words of both copies)."""
        return 2 * self.matched / (self.last_a - self.first_a + self.last_b - self.first_b + 2)

    def accepted(self, min_words: int, min_similarity: float) -> bool:
        """As ``PassageOptions`` says: the longer copy holds one in ten fewer words at least."""
        return self.words >= min_words - min_words // 10 and self.similarity >= min_similarity

    def matched_words(self) -> list[tuple[int, int]]:
        """The (i, j) of every matched word along the alignment, first to last."""
        pairs = []
        trail = self.trail
        while trail is not None:
            i, j, trail = trail
            pairs.append((i, j))
        return pairs[::-1]

    def accepted_part(self, min_words: int, min_similarity: float) -> Alignment | None:
        """This alignment if accepted, else its longest part (from one matched word to
        another, the earliest of equal length) that is: a copy whose edits crowd at one end
        falls short of ``min_similarity`` as a whole, yet shares a passage."""
        if self.accepted(min_words, min_similarity):
            return self
        pairs = self.matched_words()
        best = None
        for first in range(len(pairs)):
            for last in range(first, len(pairs)):
                (i0, j0), (i1, j1) = pairs[first], pairs[last]
                part = Alignment(i0, i1, j0, j1, last - first + 1, _score(pairs[first : last + 1]))
                if part.accepted(min_words, min_similarity) and (best is None or part.words > best.words):
                    best = part
        return best


Trail = tuple[int, int, "Trail"] | None
"""The matched words of an alignment, last first: (i, j, the trail before)."""


def _score(pairs: list[tuple[int, int]]) -> int:
    """The score of an alignment through matched words ``pairs``: between two of them, the
    words left over in a and in b cost one substitution each where both have one, one gap
    each for the rest."""
    edits = sum(max(i1 - i0, j1 - j0) - 1 for (i0, j0), (i1, j1) in pairwise(pairs))
    return MATCH * len(pairs) - MISMATCH * edits


class _Cell(NamedTuple):
    score: int  # > 0: cells scoring 0 are not kept
    first_i: int
    first_j: int
    matched: int
    trail: Trail


def _cell(i: int, j: int, same: bool, diagonal, up, left) -> _Cell | None:
    """Cell (i, j) of the Smith-Waterman matrix from its three neighbours (None: scoring 0).
    Of equal scores the first here wins: a fresh start, a[i] against b[j] after (i-1, j-1),
    a[i] against nothing after (i-1, j), b[j] against nothing after (i, j-1)."""
    best = _Cell(MATCH, i, j, 1, (i, j, None)) if same else None
    score = MATCH if same else 0
    if diagonal is not None:
        value = diagonal.score + (MATCH if same else -MISMATCH)
        if value > score:
            trail = (i, j, diagonal.trail) if same else diagonal.trail
            best = _Cell(value, diagonal.first_i, diagonal.first_j, diagonal.matched + same, trail)
            score = value
    for neighbour in (up, left):
        if neighbour is not None and neighbour.score - GAP > score:
            best = neighbour._replace(score=neighbour.score - GAP)
            score = best.score
    return best


def naive_alignment(a: list[str], b: list[str]) -> Alignment | None:
    """The best local alignment of ``a`` with ``b`` over the whole matrix (None: no word in
    common). Of equal best scores, the one ending first in row-major order (smallest last_a,
    then smallest last_b).

    Every cell scoring 0 is left out: row i holds only the cells where a[i] equals a word of
    ``b`` or a neighbour in the row above or to the left scores above 0, which is the whole
    matrix's worth of cells that can score above 0."""
    positions = defaultdict(list)
    for j, word in enumerate(b):
        positions[word].append(j)
    previous: dict[int, _Cell] = {}
    best: tuple[int, int, _Cell] | None = None
    for i, word in enumerate(a):
        row: dict[int, _Cell] = {}
        candidates = set(positions.get(word, ())) | set(previous) | {j + 1 for j in previous}
        pending = sorted(j for j in candidates if j < len(b))
        k = 0
        j = pending[0] if pending else len(b)
        while j < len(b):
            cell = _cell(i, j, word == b[j], previous.get(j - 1), previous.get(j), row.get(j - 1))
            if cell is not None:
                row[j] = cell
                if best is None or cell.score > best[2].score:
                    best = (i, j, cell)
            while k < len(pending) and pending[k] <= j:
                k += 1
            # The next cell that can score: the next candidate, or this one's right
            # neighbour (a gap in a) while this one scores.
            j = min(pending[k] if k < len(pending) else len(b), j + 1 if cell is not None else len(b))
        previous = row
    if best is None:
        return None
    i, j, cell = best
    return Alignment(cell.first_i, i, cell.first_j, j, cell.matched, cell.score, cell.trail)


def naive_passages(
    texts: list[str | bytes], min_words: int = 50, min_similarity: float = 0.8
) -> dict[tuple[int, int], Alignment]:
    """For every pair of documents a < b whose best local alignment, or a part of it, is long
    and similar enough (as ``neardup.passages`` defines them), that alignment or its longest
    such part."""
    keys = [naive_keys(t) for t in texts]
    found = {}
    for a in range(len(texts)):
        for b in range(a + 1, len(texts)):
            alignment = naive_alignment(keys[a], keys[b])
            part = alignment and alignment.accepted_part(min_words, min_similarity)
            if part is not None:
                found[(a, b)] = part
    return found


def naive_matrix_alignment(a: list, b: list, inside=None) -> Alignment | None:
    """``naive_alignment`` by filling every cell of the matrix, for checking it and the banded
    kernel on small inputs: ``inside(i, j)``, when given, says which cells may score (the
    others score 0, as outside a band)."""
    previous: list[_Cell | None] = [None] * len(b)
    best = None
    for i, word in enumerate(a):
        row: list[_Cell | None] = [None] * len(b)
        for j in range(len(b)):
            if inside is not None and not inside(i, j):
                continue
            row[j] = _cell(
                i,
                j,
                word == b[j],
                previous[j - 1] if j else None,
                previous[j],
                row[j - 1] if j else None,
            )
            if row[j] is not None and (best is None or row[j].score > best[2].score):
                best = (i, j, row[j])
        previous = row
    if best is None:
        return None
    i, j, cell = best
    return Alignment(cell.first_i, i, cell.first_j, j, cell.matched, cell.score, cell.trail)
