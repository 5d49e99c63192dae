"""What a fingerprint is made of: normalisation, character classes, feature kinds.

The tokenising itself runs compiled (``_kernels/simhash.py``); this module holds the parts that
define it and run in Python: Unicode normalisation and the pinned character-class table.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from importlib import resources

import numpy as np

UNICODE_VERSION = "14.0.0"
"""The Unicode version of the character classes (docs/fingerprint-spec.md)."""

OTHER, WORD, SOLO, SPACE = 0, 1, 2, 3
FEATURE_KINDS = {"words": 0, "word-shingles": 1, "char-ngrams": 2}
WEIGHTING_CODES = {"uniform": 0, "tf": 1, "sublinear": 2, "tfidf": 3}

_SURROGATES = re.compile("[\ud800-\udfff]")


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


def encode_text(text: str) -> bytes:
    """UTF-8 bytes of ``text``, with lone surrogates (which UTF-8 cannot hold) made U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATES.sub("\ufffd", text).encode("utf-8")


def decode_bytes(data: bytes) -> str:
    """Text of UTF-8 ``data``; each ill-formed sequence becomes U+FFFD (Unicode's "maximal
    subpart" practice, as Python's ``errors="replace"`` does)."""
    return data.decode("utf-8", errors="replace")


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


@functools.cache
def normalized_code_points() -> np.ndarray:
    """uint8, shape (0x110000,): 1 for each code point that ``normalize`` leaves as it is
    wherever it stands, so a text of ASCII and such code points is already normalised (up to
    ASCII case, which the kernels lower) and skips Python. A code point qualifies when NFKC
    and case folding map it to itself, it is a starter (combining class 0) and it is never the
    second half of a canonical composition (nothing before it can absorb it; Hangul vowel and
    trailing jamo compose algorithmically). Computed once from this Python's ``unicodedata``
    (the one ``normalize`` uses), for the Basic Multilingual Plane only (~0.1 s); code points
    above it go through Python as before."""
    bmp = 0x10000
    seconds = set()
    for c in range(0x80, bmp):
        decomposition = unicodedata.decomposition(chr(c))
        if decomposition and decomposition[0] != "<":
            parts = decomposition.split()
            if len(parts) == 2:
                seconds.add(int(parts[1], 16))
    seconds.update(range(0x1161, 0x1176))  # Hangul V jamo: L + V -> LV
    seconds.update(range(0x11A8, 0x11C3))  # Hangul T jamo: LV + T -> LVT
    table = np.zeros(0x110000, dtype=np.uint8)
    for c in range(0x80, bmp):
        if 0xD800 <= c <= 0xDFFF or c in seconds:
            continue
        ch = chr(c)
        if (unicodedata.combining(ch) == 0 and ch.casefold() == ch
                and unicodedata.normalize("NFKC", ch) == ch):
            table[c] = 1
    table.setflags(write=False)
    return table
