"""What a fingerprint is made of: normalisation, character classes, feature kinds.

The tokenising itself runs compiled (``_kernels/simhash.py``); this module holds the parts that
define it and run in Python: Unicode normalisation and the pinned character-class table.
"""

from __future__ import annotations

import functools
import itertools
import operator
import unicodedata
from collections.abc import Iterable
from importlib import resources
from typing import NamedTuple

import numpy as np

UNICODE_VERSION = "14.0.0"
"""The Unicode version of the character classes (docs/fingerprint-spec.md)."""

OTHER, WORD, SOLO, SPACE = 0, 1, 2, 3


def normalize(text: str) -> str:
    """NFKC, then full Unicode case folding: the spec's normalisation, except that ASCII
    letters keep their case (the kernels lower them; casefolding ASCII is just lowering).

    Only the non-ASCII runs go through ``unicodedata``, each with the code point before it
    (which a combining mark may compose with). That equals normalising the whole text: an
    ASCII character is a starter that never composes with what precedes it, so NFKC never
    reaches across one, and case folding maps each code point on its own. On text that is
    mostly ASCII (source code, English with a few accents) it is several times faster."""
    code_points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    non_ascii = np.flatnonzero(code_points >= 0x80)
    if non_ascii.size == 0:
        return text
    # Run boundaries: where the gap to the previous non-ASCII code point is more than one.
    breaks = np.flatnonzero(np.diff(non_ascii) > 1)
    if breaks.size > len(text) // 256:
        # Many short runs (Cyrillic or Greek words between ASCII spaces): one call is faster.
        return unicodedata.normalize("NFKC", text).casefold()
    starts = np.concatenate(([non_ascii[0]], non_ascii[breaks + 1])).tolist()
    ends = np.concatenate((non_ascii[breaks] + 1, [non_ascii[-1] + 1])).tolist()
    parts = []
    done = 0
    for run_start, run_end in zip(starts, ends):
        start = max(run_start - 1, done)
        parts.append(text[done:start])
        parts.append(unicodedata.normalize("NFKC", text[start:run_end]).casefold())
        done = run_end
    parts.append(text[done:])
    return "".join(parts)


def char_ranges() -> list[tuple[int, int, int]]:
    """The character-class table as (first, last, class) code point ranges."""
    text = resources.files("neardup").joinpath("_data/unicode_classes.txt").read_text("ascii")
    ranges = []
    for line in text.splitlines():
        if line and not line.startswith("#"):
            first, last, cls = line.split()
            ranges.append((int(first, 16), int(last, 16), int(cls)))
    return ranges


@functools.cache
def char_classes() -> np.ndarray:
    """The class of every code point (uint8, shape (0x110000,)): 0 other, 1 word, 2 solo,
    3 space."""
    ranges = char_ranges()
    lengths = [last - first + 1 for first, last, _ in ranges]
    table = np.repeat(np.array([cls for _, _, cls in ranges], dtype=np.uint8), lengths)
    if table.shape[0] != 0x110000:
        raise RuntimeError("neardup's character-class table is damaged; reinstall neardup")
    table.setflags(write=False)
    return table


# What the buffer preparation does with each code point when normalising (``normalization_table``).
PYTHON, KEEP, REPLACE = 0, 1, 2
# The table covers the Basic and Supplementary Multilingual Planes; code points above go to Python.
TABLE_LIMIT = 0x20000


class NormalizationTable(NamedTuple):
    """How the kernels normalise a document without Python (``normalization_table``).

    ``actions`` (uint8, (0x110000,)): per code point, KEEP (``normalize`` leaves it as it is
    wherever it stands), REPLACE (it becomes ``replacement_bytes[replacement_offsets[c]:
    replacement_offsets[c + 1]]``, UTF-8, wherever it stands) or PYTHON (its result depends on
    its neighbours, or it lies above ``TABLE_LIMIT``: the document goes through ``normalize``).
    ASCII is KEEP: the kernels lower it."""

    actions: np.ndarray
    replacement_offsets: np.ndarray
    replacement_bytes: np.ndarray


def normalization_table_if_built() -> NormalizationTable | None:
    """``normalization_table()`` if some call has built it already, else None (ASCII text
    never needs it, so a process that sees only ASCII never pays for it)."""
    return normalization_table() if normalization_table.cache_info().currsize else None


@functools.cache
def normalization_table() -> NormalizationTable:
    """Which code points ``normalize`` maps the same way in any context, and to what; computed
    once from this Python's ``unicodedata`` (the one ``normalize`` uses), ~0.2 s.

    A code point is *stable* when it is a starter (combining class 0), NFKC maps it to itself
    and it is never the second half of a canonical composition (nothing before it can absorb
    it; Hangul vowel and trailing jamo compose algorithmically). A text of stable code points
    is its own NFKC, so ``normalize`` only case-folds it, one code point at a time. A code point
    is KEEP when it is stable and its own case fold; REPLACE when it is a starter, never a
    second half, and its NFKC is a non-empty string of stable code points: the text with it
    replaced by its NFKC has the same NFKD, so the same NFKC, and that text is stable, so
    ``normalize`` maps the code point to the case fold of its NFKC wherever it stands."""
    code_points = [c for c in range(0x80, TABLE_LIMIT) if not 0xD800 <= c <= 0xDFFF]
    chars = list(map(chr, code_points))
    # One call for all of them: NUL is a starter nothing composes with, so each part normalises
    # as it would alone.
    nfkc_joined = unicodedata.normalize("NFKC", "\0".join(chars))
    nfkc = nfkc_joined.split("\0")
    folded = nfkc_joined.casefold().split("\0")

    def per_code_point(values: Iterable[bool]) -> np.ndarray:
        out = np.zeros(TABLE_LIMIT, dtype=bool)
        out[:0x80] = True  # ASCII is stable and (up to case, which the kernels lower) folded
        out[code_points] = np.fromiter(values, dtype=bool, count=len(code_points))
        return out

    second = np.zeros(TABLE_LIMIT, dtype=bool)
    second[0x1161:0x1176] = True  # Hangul V jamo: L + V -> LV
    second[0x11A8:0x11C3] = True  # Hangul T jamo: LV + T -> LVT
    for decomposition in map(unicodedata.decomposition, chars):
        if decomposition and decomposition[0] != "<" and decomposition.count(" ") == 1:
            second[int(decomposition.split()[1], 16)] = True
    starter = per_code_point(map(operator.not_, map(unicodedata.combining, chars))) & ~second
    starter[0xD800:0xE000] = False
    stable = starter & per_code_point(map(operator.eq, nfkc, chars))
    keep = stable & per_code_point(map(operator.eq, folded, chars))

    def all_stable(text: str) -> bool:
        return bool(text) and all(ord(ch) < TABLE_LIMIT and stable[ord(ch)] for ch in text)

    actions = np.zeros(0x110000, dtype=np.uint8)
    actions[:TABLE_LIMIT][keep] = KEEP
    lengths = np.zeros(TABLE_LIMIT, dtype=np.int64)
    replacements = []
    candidates = (starter & ~keep)[code_points].tolist()
    for c, text, fold in itertools.compress(zip(code_points, nfkc, folded), candidates):
        if all_stable(text):
            actions[c] = REPLACE
            replacements.append(fold.encode("utf-8"))
            lengths[c] = len(replacements[-1])
    offsets = np.zeros(TABLE_LIMIT + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    table = NormalizationTable(actions, offsets, np.frombuffer(b"".join(replacements), dtype=np.uint8))
    for array in table:
        array.setflags(write=False)
    return table
