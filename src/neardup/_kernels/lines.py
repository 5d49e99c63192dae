"""Line-oriented byte work for the readers and writers: find lines, gather some of them.

A block of a JSONL or text file is one uint8 array; these kernels replace a Python loop over
its lines (a million lines a second at best) with one pass over its bytes.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit, jit_inline

_NEWLINE = 10
_RETURN = 13


def split_lines(buf):
    """The lines of ``buf``: int64 ``starts`` and ``ends`` (shape (n,)), ``ends`` excluding
    the ``\\n`` or ``\\r\\n`` that closes a line, and bool ``blank`` (only spaces, tabs and
    carriage returns: JSON's whitespace). A last line without ``\\n`` counts; an empty
    ``buf`` has no lines."""
    # numpy's vectorised compare finds the newlines several times faster than a byte loop.
    newlines = np.flatnonzero(buf == _NEWLINE)
    return _line_table(buf, newlines)


@jit
def _line_table(buf, newlines):
    n_bytes = buf.shape[0]
    n = newlines.shape[0] + (1 if n_bytes and buf[n_bytes - 1] != _NEWLINE else 0)
    starts = np.empty(n, dtype=np.int64)
    ends = np.empty(n, dtype=np.int64)
    blank = np.zeros(n, dtype=np.bool_)
    start = 0
    for line in range(n):
        end = newlines[line] if line < newlines.shape[0] else n_bytes
        stop = end
        if end > start and buf[end - 1] == _RETURN:
            end -= 1
        starts[line] = start
        ends[line] = end
        i = start  # a line is blank unless a byte is not whitespace: mostly the first decides
        while i < stop and (buf[i] == 32 or buf[i] == 9 or buf[i] == _RETURN):
            i += 1
        blank[line] = i == stop
        start = stop + 1
    return starts, ends, blank


@jit
def gather(buf, starts, ends, chosen, terminator):
    """The bytes ``buf[starts[i]:ends[i]]`` of each chosen line i, in order, each followed by
    ``terminator`` (uint8, shape (t,), may be empty), with int64 offsets of the pieces:
    (data uint8, offsets int64 shape (len(chosen) + 1,))."""
    size = 0
    for i in chosen:
        size += ends[i] - starts[i] + terminator.shape[0]
    data = np.empty(size, dtype=np.uint8)
    offsets = np.empty(chosen.shape[0] + 1, dtype=np.int64)
    at = 0
    t = terminator.shape[0]
    for k in range(chosen.shape[0]):
        offsets[k] = at
        i = chosen[k]
        size = ends[i] - starts[i]
        data[at : at + size] = buf[starts[i] : ends[i]]
        data[at + size : at + size + t] = terminator
        at += size + t
    offsets[chosen.shape[0]] = at
    return data, offsets


_TAB = 9


@jit
def _hex_digit(c):
    """The value of an ASCII hex digit, or -1."""
    if 48 <= c <= 57:
        return c - 48
    if 97 <= c <= 102:
        return c - 87
    if 65 <= c <= 70:
        return c - 55
    return -1


@jit
def hex_fields(buf, starts, ends, width, out):
    """Parses lines ``ID<TAB>HEX`` whose HEX is the last ``width`` bytes (16 or 32 hex digits,
    high word first) into ``out`` (uint64, (n, width // 16), column 0 the low 64 bits).
    Returns the first line that is not one (no tab just before the last ``width`` bytes, or a
    byte among them that is not a hex digit), or -1."""
    words = width // 16
    for line in range(starts.shape[0]):
        first = ends[line] - width
        if first - 1 < starts[line] or buf[first - 1] != _TAB:
            return line
        for w in range(words):
            value = np.uint64(0)
            for i in range(first + 16 * w, first + 16 * (w + 1)):
                digit = _hex_digit(buf[i])
                if digit < 0:
                    return line
                value = (value << np.uint64(4)) | np.uint64(digit)
            out[line, words - 1 - w] = value
    return -1


@jit_inline
def _magnitude(value):
    """``abs(value)`` of an int64 as a uint64, the most negative one included."""
    if value >= 0:
        return np.uint64(value)
    return np.uint64(-(value + 1)) + np.uint64(1)


@jit
def prefixed_decimals(head, numbers):
    """``head`` (uint8) followed by each of ``numbers`` (int64) in decimal, as the data and
    offsets of a string array: (uint8, int64 shape (n + 1,)). The ids of a million lines
    (``app.log:17``) in one pass, where numpy needed a temporary the size of every head."""
    n = numbers.shape[0]
    ten = np.uint64(10)
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[0] = 0
    for i in range(n):
        width = 1 if numbers[i] >= 0 else 2  # a sign, then at least one digit
        magnitude = _magnitude(numbers[i]) // ten
        while magnitude > 0:
            width += 1
            magnitude //= ten
        offsets[i + 1] = offsets[i] + head.shape[0] + width
    out = np.empty(offsets[n], dtype=np.uint8)
    for i in range(n):
        start = offsets[i]
        for k in range(head.shape[0]):
            out[start + k] = head[k]
        if numbers[i] < 0:
            out[start + head.shape[0]] = 45  # '-'
        end = offsets[i + 1]
        magnitude = _magnitude(numbers[i])
        while True:  # the digits, from the last
            end -= 1
            out[end] = np.uint8(48 + magnitude % ten)
            magnitude //= ten
            if magnitude == 0:
                break
    return out, offsets
