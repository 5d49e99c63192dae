"""Text buffers before the kernels: find the documents Python must prepare, splice them back."""

from __future__ import annotations

import numpy as np

import numba

from ._jit import jit, jit_parallel
from ._memory import load_u64

_TOP = np.uint64(0x8080808080808080)


@jit_parallel
def needs_python(buf, offsets, normalizing, normalized):
    """Flag (bool, (n_docs,)) the documents the kernels cannot take as they are: any with
    invalid UTF-8 (it must be decoded with replacement first) and, when ``normalizing``, any
    with a code point whose ``normalized`` entry (``features.normalized_code_points``) is 0
    (it must be NFKC-normalised and casefolded first)."""
    n_docs = offsets.shape[0] - 1
    flags = np.zeros(n_docs, dtype=np.bool_)
    for d in numba.prange(n_docs):
        i = offsets[d]
        end = offsets[d + 1]
        while i < end:
            if i + 8 <= end and load_u64(buf, i) & _TOP == 0:
                i += 8  # eight ASCII bytes at once
                continue
            b0 = buf[i]
            if b0 < 0x80:
                i += 1
                continue
            if not _valid_utf8_at(buf, i, end):
                flags[d] = True
                break
            width = 2 if b0 < 0xE0 else (3 if b0 < 0xF0 else 4)
            if normalizing and normalized[_code_point(buf, i, width)] == 0:
                flags[d] = True
                break
            i += width
    return flags


@jit
def _code_point(buf, i, width):
    """The code point of the valid ``width``-byte UTF-8 sequence at ``buf[i]``."""
    cp = np.int64(buf[i]) & (0x7F >> width)
    for k in range(1, width):
        cp = (cp << 6) | (np.int64(buf[i + k]) & 0x3F)
    return cp


@jit
def _valid_utf8_at(buf, i, end):
    """Whether a well-formed multi-byte UTF-8 sequence (Unicode table 3-7) starts at ``buf[i]``."""
    b0 = buf[i]
    if 0xC2 <= b0 <= 0xDF:
        width, lo, hi = 2, 0x80, 0xBF
    elif b0 == 0xE0:
        width, lo, hi = 3, 0xA0, 0xBF
    elif 0xE1 <= b0 <= 0xEC or 0xEE <= b0 <= 0xEF:
        width, lo, hi = 3, 0x80, 0xBF
    elif b0 == 0xED:
        width, lo, hi = 3, 0x80, 0x9F
    elif b0 == 0xF0:
        width, lo, hi = 4, 0x90, 0xBF
    elif 0xF1 <= b0 <= 0xF3:
        width, lo, hi = 4, 0x80, 0xBF
    elif b0 == 0xF4:
        width, lo, hi = 4, 0x80, 0x8F
    else:
        return False
    if i + width > end or not (lo <= buf[i + 1] <= hi):
        return False
    for k in range(2, width):
        if not (0x80 <= buf[i + k] <= 0xBF):
            return False
    return True


@jit_parallel
def splice(data, offsets, replaced, new_data, new_offsets):
    """A buffer where each document d with ``replaced[d]`` takes the next document of
    ``new_data``/``new_offsets`` and every other keeps its bytes. Returns (data, offsets).
    The copy runs on all threads: most of its time is the first touch of the new pages."""
    n_docs = offsets.shape[0] - 1
    out_offsets = np.empty(n_docs + 1, dtype=np.int64)
    source = np.empty(n_docs, dtype=np.int64)  # the replacement's index, or -1
    out_offsets[0] = 0
    k = 0
    for d in range(n_docs):
        if replaced[d]:
            length = new_offsets[k + 1] - new_offsets[k]
            source[d] = k
            k += 1
        else:
            length = offsets[d + 1] - offsets[d]
            source[d] = -1
        out_offsets[d + 1] = out_offsets[d] + length
    out = np.empty(out_offsets[n_docs], dtype=np.uint8)
    for d in numba.prange(n_docs):
        k = source[d]
        if k >= 0:
            out[out_offsets[d]:out_offsets[d + 1]] = new_data[new_offsets[k]:new_offsets[k + 1]]
        else:
            out[out_offsets[d]:out_offsets[d + 1]] = data[offsets[d]:offsets[d + 1]]
    return out, out_offsets
