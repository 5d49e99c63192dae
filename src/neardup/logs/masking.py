"""Masking: the variable parts of log lines (numbers, addresses, paths, ...) made ``<*>``.

A line is masked in three steps, each defined by a regular expression:

1. The patterns (:data:`DEFAULT_MASKS`, or the caller's): what spans words or holds no
   digit but is still a variable: dates with day and month names, sizes with their units,
   file paths, host names.
2. Every word (split at spaces, ``=`` and runs of dots) that holds a digit: numbers, hex,
   IPs, UUIDs, ids, times. A word of letters ending in one digit (``eth0``, ``ssh2``) is
   left alone: such words name things more often than they count them.
3. Variables joined by punctuation (``<*>:<*>``) become one, and so do neighbours.

What each step leaves is the line's *key*: lines with one key share a template.

The regular expressions here define the keys (:meth:`Masker.keys_by_regex`); the keys are
made by a compiled kernel equal to them (``_kernels/log_masks.py``, ~50x faster a core:
see benchmarks/bench_log_masks.py), over Arrow buffers (:meth:`Masker.key_array`). Custom masks
still run as one regular expression over the block, and the kernel does the rest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

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
        try:
            texts = pa.array(lines, pa.large_string())
        except (pa.ArrowException, UnicodeEncodeError):  # a lone surrogate is no UTF-8
            return self.keys_by_regex(lines)
        keys, _ = self.key_array(texts)
        return keys.to_pylist()

    def key_array(
        self, texts: pa.StringArray | pa.LargeStringArray | pa.ChunkedArray
    ) -> tuple[pa.ChunkedArray, np.ndarray]:
        """Each line's key (as :meth:`keys`, a null line's that of ``""``) and its XXH3-64
        (seed 0, of the key's UTF-8 bytes): (large string array in chunks, one a thread that
        masked them, uint64 shape (n,))."""
        if isinstance(texts, pa.ChunkedArray):
            texts = texts.combine_chunks()
        if not (pa.types.is_string(texts.type) or pa.types.is_large_string(texts.type)):
            raise TypeError(f"key_array needs a pyarrow string or large_string array, got {texts.type}")
        if texts.null_count:
            texts = texts.fill_null("")
        if len(texts) and self._patterns is not None and self.masks != DEFAULT_MASKS:
            data, offsets = self._masked_block(texts.to_pylist())
        else:
            data, offsets = _buffers(texts)
        if (data[offsets[0] : offsets[-1]] == _NEWLINE).any():  # a line's newlines are spaces
            data = np.where(data == _NEWLINE, _SPACE, data)
        data = data.view()
        data.flags.writeable = False  # read-only, whatever the source: one compiled signature
        parts = _mask_in_parts(data, offsets, self.masks == DEFAULT_MASKS)
        chunks = [
            pa.LargeStringArray.from_buffers(len(hashes), pa.py_buffer(key_offsets), pa.py_buffer(key_data))
            for key_data, key_offsets, hashes in parts
        ]
        keys = pa.chunked_array(chunks, pa.large_string())
        return keys, np.concatenate([hashes for *_, hashes in parts])

    def _masked_block(self, lines: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The lines with the custom masks applied, as one block; each line keeps the newline
        after it, which the kernel reads as a space at its end (a key's end is stripped)."""
        assert self._patterns is not None
        block = self._patterns.sub(VARIABLE, "\n".join(line.replace("\n", " ") for line in lines))
        data = np.frombuffer(block.encode(), dtype=np.uint8)
        ends = np.flatnonzero(data == 10)
        if len(ends) != len(lines) - 1:
            raise ValueError(
                f"the masks {[name for name, _ in self.masks]} matched a line's end: a mask must "
                "not match a newline (use [ \\t] or [^\\S\\n] instead of \\s)"
            )
        return data, np.concatenate([[0], ends + 1, [len(data)]]).astype(np.int64)  # as _buffers

    def keys_by_regex(self, lines: Sequence[str]) -> list[str]:
        """The keys by the regular expressions alone: their definition, which the kernel of
        :meth:`keys` equals (the tests hold them equal); ~50x slower."""
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

    def key(self, line: str) -> str:
        """One line's key (see :meth:`keys`)."""
        return self.keys([line])[0]


_NEWLINE, _SPACE = np.uint8(10), np.uint8(32)
_PART_LINES = 16_384
"""The fewest lines worth a thread of their own when masking."""


def _mask_in_parts(data: np.ndarray, offsets: np.ndarray, patterns: bool) -> list[tuple[np.ndarray, ...]]:
    """``mask_lines`` over every core: the lines cut into runs, one a thread (the kernel lets
    go of the GIL), each run's (keys' bytes, their offsets, hashes) in order. They stay apart:
    joined, their copy cost a tenth of the masking."""
    import numba

    from .._kernels.log_masks import mask_lines

    lines = len(offsets) - 1
    parts = min(numba.get_num_threads(), lines // _PART_LINES)
    if parts < 2:
        return [mask_lines(data, offsets, patterns)]
    cuts = np.linspace(0, lines, parts + 1).astype(np.int64).tolist()
    with ThreadPoolExecutor(parts) as pool:
        runs = pool.map(lambda a, b: mask_lines(data, offsets[a : b + 1], patterns), cuts[:-1], cuts[1:])
        return list(runs)


def _buffers(texts: Any) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 bytes and int64 offsets (shape (n + 1,)) of a string array, without copies."""
    _, offset_buf, data_buf = texts.buffers()
    kind = np.int64 if pa.types.is_large_string(texts.type) else np.int32
    offsets = np.frombuffer(offset_buf, dtype=kind)[texts.offset : texts.offset + len(texts) + 1]
    data = np.frombuffer(data_buf if data_buf is not None else b"", dtype=np.uint8)
    return data, offsets.astype(np.int64)  # a copy: one type of arguments, one compilation
