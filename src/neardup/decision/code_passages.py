"""What makes an aligned passage of code a copied region: its ends moved to whole lines, and
kept only with evidence that it was copied rather than written to the same shape.

A passage of code tokens (``passage_code.CorpusCode``) is aligned as prose is, token by
token; code then needs two more rules, each measured on the planted functions of
``benchmarks/bench_code.py`` (docs/passages.md has the numbers):

- Whole lines. People copy lines: a passage runs from the first to the last pair of lines its
  copies match whole, names agreeing from the passage's start, less loose lines of one shape
  at either end (``code_ends.py``).
- Evidence. A passage is kept when its tokens are varied (``VARIED`` of its runs of four
  tokens distinct, for each ``min_words`` token it must hold: a table of strings or a run of
  ``self.x = None`` is not) and it reuses names (``REUSED_NAMES`` uses of a name already used
  in it, the most used one left out, in each copy): a renamed copy keeps its variables'
  reuse; same-shape code with every name used once is no evidence of a copy. Reuse counts
  only in a passage that is more than a short unit repeated (``PHRASES`` phrases of Lempel
  and Ziv's complexity in each copy): in a run of delegating methods (``def f(self): return
  self.x.f()``), of abstract ones or of imports, each unit reuses its own names at the same
  distances in any two files, so the reuse says only that the unit has one shape. Copies
  whose names are the same as written, in the same order (``SAME_NAMES`` of them), are
  evidence enough, repeated or not: code copied as it is, a table of options among them;
  sibling code that sets the same attributes in another order is not.
"""

from __future__ import annotations

import numpy as np

from .code_ends import Lines, on_matched_lines, runs_in_windows
from .passage_code import CorpusCode
from .passage_matching import Matches, PassageOptions

VARIED = 0.6
"""Distinct runs of four tokens a kept passage holds, per token of ``min_words``."""
REUSED_NAMES = 3
"""Uses of an already used name (the most used one left out) a kept passage holds, in each
copy."""
PHRASES = 0.5
"""Phrases of Lempel and Ziv's complexity (``_phrases``) each copy of a passage holds, per
token of ``min_words``, for its names' reuse to count. On ``benchmarks/bench_code.py --only
passages`` the runs of one unit it left out hold 17 to 24 phrases (in 50 to 96 tokens); every
planted copy but one 27 or more (the one: a ``load(fp, *, cls=None, ...)`` that passes each
keyword on, ``x=x``, 21)."""
SAME_NAMES = 0.8
"""The share of names two copies hold alike as written, in order (of the longer copy's
names), that makes them a copy whatever their reuse."""


def refined(matches: Matches, code: CorpusCode, options: PassageOptions) -> Matches:
    """``matches`` (of ``code``'s tokens) on the lines their copies match whole, kept when
    long enough and evidently copied (see the module's docstring)."""
    m = on_matched_lines(matches, code, Lines.of(code))
    long_enough = (m.last_a >= m.first_a) & (m.last_b >= m.first_b) & (m.words >= options.least_words)
    m = m.rows(np.flatnonzero(long_enough))
    return m.rows(np.flatnonzero(_evident(m, code, options)))


def _tokens(m: Matches, code: CorpusCode, side: str) -> tuple[np.ndarray, np.ndarray]:
    """(first, last) token of each passage's copy ``side`` ("a" or "b"), as rows of the
    corpus's token arrays."""
    base = code.offsets[getattr(m, f"doc_{side}")]
    return base + getattr(m, f"first_{side}"), base + getattr(m, f"last_{side}")


def _evident(m: Matches, code: CorpusCode, options: PassageOptions) -> np.ndarray:
    """bool: the passages varied enough that reuse names in both copies (module docstring).
    Without names (``code_normalize="none"``: copies equal as written) only variety counts."""
    least_varied = VARIED * options.min_words
    least_phrases = int(np.ceil(PHRASES * options.min_words))
    named = options.code_normalize == "identifiers"
    first_a, last_a = _tokens(m, code, "a")
    first_b, last_b = _tokens(m, code, "b")
    keep = np.zeros(len(m), dtype=bool)
    for r in range(len(m)):
        hashes_a, hashes_b = code.hashes[first_a[r] : last_a[r] + 1], code.hashes[first_b[r] : last_b[r] + 1]
        if _runs_of_four(hashes_a) < least_varied:
            continue
        names_a, names_b = code.names[first_a[r] : last_a[r] + 1], code.names[first_b[r] : last_b[r] + 1]
        keep[r] = (
            not named
            or (
                min(_reused(names_a), _reused(names_b)) >= REUSED_NAMES
                and min(_phrases(hashes_a, least_phrases), _phrases(hashes_b, least_phrases)) >= least_phrases
            )
            or _alike(names_a, names_b) >= SAME_NAMES
        )
    return keep


def _phrases(hashes: np.ndarray, enough: int) -> int:
    """Lempel and Ziv's complexity of ``hashes`` ("On the complexity of finite sequences",
    1976), counted up to ``enough``: the phrases it parses into from its start, each the
    longest stretch found starting earlier (overlapping itself, so a unit repeated is one
    stretch) and one token more. A short unit repeated k times parses into about as many
    phrases as the unit has tokens, however large k; varied code into a phrase every one to
    three tokens."""
    _, codes = np.unique(hashes[:0x110000], return_inverse=True)  # one character a token
    text = "".join(map(chr, codes.tolist()))
    n, at, count = len(text), 0, 0
    while at < n and count < enough:
        found, step = 0, 1  # the longest stretch found: galloping, then halving
        while at + step <= n and _found_before(text, at, step):
            found, step = step, 2 * step
        missing = min(step, n - at + 1)
        while missing - found > 1:
            mid = (found + missing) // 2
            found, missing = (mid, missing) if _found_before(text, at, mid) else (found, mid)
        at, count = at + found + 1, count + 1
    return count


def _found_before(text: str, at: int, length: int) -> bool:
    """Whether ``text[at : at + length]`` also starts somewhere before ``at``."""
    return text.find(text[at : at + length], 0, at + length - 1) >= 0


def _runs_of_four(hashes: np.ndarray) -> int:
    """Distinct runs of four tokens among ``hashes``."""
    if len(hashes) < 4:
        return 0
    h = hashes.astype(np.uint64)
    runs = np.stack([(h[:-3] << np.uint64(32)) | h[1:-2], (h[2:-1] << np.uint64(32)) | h[3:]], axis=1)
    return len(np.unique(runs, axis=0))


def _alike(names_a: np.ndarray, names_b: np.ndarray) -> float:
    """The share of names (-1: no name) the two copies hold alike and in the same order
    (difflib's matching runs, a window at a time), of the more names either holds."""
    a, b = names_a[names_a >= 0], names_b[names_b >= 0]
    if not len(a) or not len(b):
        return 0.0
    return sum(n for _, _, n in runs_in_windows(a.tolist(), b.tolist())) / max(len(a), len(b))


def _reused(names: np.ndarray) -> int:
    """Uses of a name already used before among ``names`` (-1: no name), the most used name's
    left out."""
    counts = np.unique(names[names >= 0], return_counts=True)[1]  # not bincount: numbered corpus-wide
    if not len(counts):
        return 0
    return int(counts.sum() - len(counts) - (counts.max() - 1))
