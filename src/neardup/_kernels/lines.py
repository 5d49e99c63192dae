"""Line-oriented byte work for the readers and writers: find lines, gather some of them.

A block of a JSONL or text file is one uint8 array; these kernels replace a Python loop over
its lines (a million lines a second at best) with one pass over its bytes.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

_NEWLINE = 10
_RETURN = 13


@jit
def split_lines(buf):
    """The lines of ``buf``: int64 ``starts`` and ``ends`` (shape (n,)), ``ends`` excluding
    the ``\\n`` or ``\\r\\n`` that closes a line, and bool ``blank`` (only spaces, tabs and
    carriage returns: JSON's whitespace). A last line without ``\\n`` counts; an empty
    ``buf`` has no lines."""
    n_bytes = buf.shape[0]
    n = 0
    for i in range(n_bytes):
        if buf[i] == _NEWLINE:
            n += 1
    if n_bytes and buf[n_bytes - 1] != _NEWLINE:
        n += 1
    starts = np.empty(n, dtype=np.int64)
    ends = np.empty(n, dtype=np.int64)
    blank = np.ones(n, dtype=np.bool_)
    line = 0
    start = 0
    for i in range(n_bytes):
        c = buf[i]
        if c == _NEWLINE:
            end = i - 1 if i > start and buf[i - 1] == _RETURN else i
            starts[line] = start
            ends[line] = end
            line += 1
            start = i + 1
        elif c != 32 and c != 9 and c != _RETURN:
            blank[line] = False
    if line < n:
        starts[line] = start
        ends[line] = n_bytes - 1 if buf[n_bytes - 1] == _RETURN else n_bytes
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
    for k in range(chosen.shape[0]):
        offsets[k] = at
        i = chosen[k]
        for b in range(starts[i], ends[i]):
            data[at] = buf[b]
            at += 1
        for b in range(terminator.shape[0]):
            data[at] = terminator[b]
            at += 1
    offsets[chosen.shape[0]] = at
    return data, offsets
