"""Masking: the variable parts of log lines (numbers, addresses, paths, ...) made ``<*>``.

A line is masked in three steps, each a regular expression run over a whole block of lines
(in C, not a Python call per token):

1. The patterns (:data:`DEFAULT_MASKS`, or the caller's): what spans words or holds no
   digit but is still a variable: dates with day and month names, sizes with their units,
   file paths, host names.
2. Every word (split at spaces, ``=`` and runs of dots) that holds a digit: numbers, hex,
   IPs, UUIDs, ids, times. A word of letters ending in one digit (``eth0``, ``ssh2``) is
   left alone: such words name things more often than they count them.
3. Variables joined by punctuation (``<*>:<*>``) become one, and so do neighbours.

What each step leaves is the line's *key*: lines with one key share a template.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

VARIABLE = "<*>"

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_NUMBER = r"[-+]?\d+(?:\.\d+)?"
_CLOCK = r"\d{1,2}:\d{2}(?::\d{2})?"
_UNIT = r"(?:[KMGTP]i?B|B|bytes|ms|us|ns|s|sec|secs|seconds|mins?|minutes|hours?)"

#: The patterns masked before the digit rule, as (name, regular expression); documented in
#: docs/logs.md. Pass your own list (these plus yours, or instead) to mask what is special to
#: a system.
DEFAULT_MASKS: tuple[tuple[str, str], ...] = (
    (
        "date",
        rf"\b{_DAY},? +{_MONTH} +\d{{1,2}} +{_CLOCK}(?: +[A-Z]{{2,5}})?(?: +\d{{4}})?\b",
    ),
    ("size", rf"(?<![\w.])[<>]?=?{_NUMBER} ?{_UNIT}(?: \({_NUMBER} ?{_UNIT}\))?(?!\w)"),
    ("path", r"(?<![\w/.])(?:\.{0,2}/[\w.\-@%+~]+)+/?(?:\?[^\s\"']*)?"),
    (
        "host",
        r"(?<![\w.\-])(?:[A-Za-z0-9-]+\.)+(?:com|net|org|edu|gov|mil|int|info|biz|[a-z]{2})(?![\w.\-])",
    ),
)

# A word: a run of characters that are not spaces, not '=' and not part of a run of dots.
_WORD_CHAR = r"(?:[^\s=.]|(?<!\.)\.(?!\.))"
_WORD_START = r"(?:(?<=[\s=])|^|(?<=\.\.))"
_WORD_END = r"(?![^\s=.]|(?<!\.)\.(?!\.))"
_DIGIT_WORD = re.compile(
    rf"{_WORD_START}(?![A-Za-z]{{2,}}\d{_WORD_END})(?={_WORD_CHAR}*?\d){_WORD_CHAR}+", re.MULTILINE | re.ASCII
)
_JOINED = re.compile(r"<\*>(?:[.:\-/,]+<\*>)+", re.ASCII)
_NEIGHBOURS = re.compile(r"(?<!\S)<\*>(?:[ \t]+<\*>(?!\S))+", re.ASCII)
_SPACES = re.compile(r"[ \t\r\f\v]+")


class Masker:
    """Masks lines by ``masks`` and the digit rule (see the module's docstring).

    Args:
        masks: (name, regular expression) pairs; what each matches becomes ``<*>``.
    """

    def __init__(self, masks: Sequence[tuple[str, str]] = DEFAULT_MASKS) -> None:
        self.masks = tuple((str(name), str(pattern)) for name, pattern in masks)
        for name, pattern in self.masks:
            try:
                re.compile(pattern)
            except re.error as e:
                raise ValueError(f"mask {name!r}: {pattern!r} is not a regular expression: {e}") from None
        self._patterns = (
            re.compile("|".join(f"(?:{pattern})" for _, pattern in self.masks), re.MULTILINE | re.ASCII)
            if self.masks
            else None
        )

    def keys(self, lines: Sequence[str]) -> list[str]:
        """Each line's key: its masked words, joined by single spaces."""
        if not lines:
            return []
        block = "\n".join(line.replace("\n", " ") for line in lines)
        if self._patterns is not None:
            block = self._patterns.sub(VARIABLE, block)
        block = _DIGIT_WORD.sub(VARIABLE, block)
        block = _JOINED.sub(VARIABLE, block)
        block = _SPACES.sub(" ", block)
        block = _NEIGHBOURS.sub(VARIABLE, block)
        return [key.strip(" ") for key in block.split("\n")]

    def key_array(self, texts: pa.Array) -> tuple[pa.Array, np.ndarray]:
        """Each text's key as a pyarrow large string array, and its hash (uint64)."""
        keys = self.keys(texts.to_pylist())
        hashes = np.array([hash(key) for key in keys], dtype=np.int64).view(np.uint64)
        return pa.array(np.array(keys, dtype=object), pa.large_string()), hashes

    def key(self, line: str) -> str:
        """One line's key (see :meth:`keys`)."""
        return self.keys([line])[0]
