"""Text buffers before the kernels: find what each document needs, normalise in place what
the tables allow, splice back what Python prepared."""

from __future__ import annotations

import numpy as np

import numba

from ._jit import jit, jit_parallel
from ._memory import load_u64, store_u64

_TOP = np.uint64(0x8080808080808080)


# What a document needs before the kernels tokenise it (``triage``).
AS_IS, REPLACE_IN_KERNEL, PYTHON = 0, 1, 2
# Code point actions (``features.normalization_table``).
_PYTHON_CP, _REPLACE_CP = 0, 2


@jit_parallel
def triage(buf, offsets, normalizing, actions):
    """What each document needs (uint8, (n_docs,)): PYTHON for invalid UTF-8 (it must be
    decoded with replacement) or, when ``normalizing``, a code point whose ``actions`` entry
    is PYTHON; else REPLACE_IN_KERNEL for a code point to REPLACE (``replace``); else AS_IS."""
    n_docs = offsets.shape[0] - 1
    status = np.zeros(n_docs, dtype=np.uint8)
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
                status[d] = PYTHON
                break
            width = 2 if b0 < 0xE0 else (3 if b0 < 0xF0 else 4)
            if normalizing:
                action = actions[_code_point(buf, i, width)]
                if action == _PYTHON_CP:
                    status[d] = PYTHON
                    break
                if action == _REPLACE_CP:
                    status[d] = REPLACE_IN_KERNEL
            i += width
    return status


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


@jit
def _replaced(buf, start, end, actions, replacement_offsets, replacement_bytes, out, at):
    """Copy ``buf[start:end]`` (valid UTF-8) to ``out[at:]`` with each code point to REPLACE
    replaced (only its length counted when ``out`` is empty); return the length written."""
    counting = out.shape[0] == 0
    i = start
    n = 0
    while i < end:
        if i + 8 <= end and load_u64(buf, i) & _TOP == 0:
            if not counting:
                store_u64(out, at + n, load_u64(buf, i))
            i += 8
            n += 8
            continue
        b0 = buf[i]
        if b0 < 0x80:
            if not counting:
                out[at + n] = b0
            i += 1
            n += 1
            continue
        width = 2 if b0 < 0xE0 else (3 if b0 < 0xF0 else 4)
        cp = _code_point(buf, i, width)
        if actions[cp] == _REPLACE_CP:
            first = replacement_offsets[cp]
            length = replacement_offsets[cp + 1] - first
            if not counting:
                out[at + n:at + n + length] = replacement_bytes[first:first + length]
            n += length
        else:
            if not counting:
                out[at + n:at + n + width] = buf[i:i + width]
            n += width
        i += width
    return n


@jit_parallel
def rebuild(data, offsets, status, actions, replacement_offsets, replacement_bytes, new_data,
            new_offsets):
    """The buffer the kernels tokenise: each document with ``status`` AS_IS keeps its bytes,
    REPLACE_IN_KERNEL gets its code points replaced (``_replaced``), and PYTHON takes the next
    document of ``new_data``/``new_offsets`` (prepared by Python). Returns (data, offsets).
    Both passes run on all threads: most of the copy's time is the first touch of new pages."""
    n_docs = offsets.shape[0] - 1
    lengths = np.empty(n_docs, dtype=np.int64)
    source = np.full(n_docs, -1, dtype=np.int64)  # the Python-prepared document's index
    k = 0
    for d in range(n_docs):
        if status[d] == PYTHON:
            source[d] = k
            k += 1
    nothing = np.empty(0, dtype=np.uint8)
    for d in numba.prange(n_docs):
        if status[d] == PYTHON:
            lengths[d] = new_offsets[source[d] + 1] - new_offsets[source[d]]
        elif status[d] == REPLACE_IN_KERNEL:
            lengths[d] = _replaced(data, offsets[d], offsets[d + 1], actions, replacement_offsets,
                                   replacement_bytes, nothing, 0)
        else:
            lengths[d] = offsets[d + 1] - offsets[d]
    out_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    for d in range(n_docs):
        out_offsets[d + 1] = out_offsets[d] + lengths[d]
    out = np.empty(out_offsets[n_docs], dtype=np.uint8)
    for d in numba.prange(n_docs):
        at = out_offsets[d]
        if status[d] == PYTHON:
            k = source[d]
            out[at:at + lengths[d]] = new_data[new_offsets[k]:new_offsets[k + 1]]
        elif status[d] == REPLACE_IN_KERNEL:
            _replaced(data, offsets[d], offsets[d + 1], actions, replacement_offsets,
                      replacement_bytes, out, at)
        else:
            out[at:at + lengths[d]] = data[offsets[d]:offsets[d + 1]]
    return out, out_offsets
