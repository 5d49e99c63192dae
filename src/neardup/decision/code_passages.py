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
  reuse; same-shape code with every name used once is no evidence of a copy. Copies whose
  names are the same as written (``SAME_NAMES`` of them) are evidence enough: code copied
  as it is, a table of options among them.
"""

from __future__ import annotations

import numpy as np

from .code_ends import Lines, on_matched_lines
from .passage_code import CorpusCode
from .passage_matching import Matches, PassageOptions

VARIED = 0.6
"""Distinct runs of four tokens a kept passage holds, per token of ``min_words``."""
REUSED_NAMES = 3
"""Uses of an already used name (the most used one left out) a kept passage holds, in each
copy."""
SAME_NAMES = 0.8
"""The share of names two copies hold alike as written (as multisets, of the longer copy's
names) that makes them a copy whatever their reuse."""


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
    named = options.code_normalize == "identifiers"
    first_a, last_a = _tokens(m, code, "a")
    first_b, last_b = _tokens(m, code, "b")
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
