"""Text buffers before the kernels: find what each document needs, replace in compiled code
the code points the normalisation table maps alone, splice in what Python prepared."""

from __future__ import annotations

import numba
import numpy as np

from ._jit import jit, jit_parallel
from ._memory import load_u64
from .utf8 import char_at, decode

_TOP = np.uint64(0x8080808080808080)


# What a document needs before the kernels tokenise it (``triage``).
AS_IS, REPLACE_IN_KERNEL, PYTHON = 0, 1, 2
# Code point actions (``features.normalization_table``).
_PYTHON_CP, _REPLACE_CP = 0, 2


@jit_parallel
def triage(buf, offsets, normalizing, actions, replacement_offsets):
    """What each document needs: (status, uint8 (n_docs,); length, int64 (n_docs,)). Status is
    PYTHON for invalid UTF-8 (it must be decoded with replacement) or, when ``normalizing``, a
    code point whose ``actions`` entry is PYTHON; else REPLACE_IN_KERNEL for a code point to
    REPLACE; else AS_IS. Length is the document's length once its code points are replaced
    (not set for PYTHON)."""
    n_docs = offsets.shape[0] - 1
    status = np.zeros(n_docs, dtype=np.uint8)
    lengths = np.empty(n_docs, dtype=np.int64)
    for d in numba.prange(n_docs):
        i = offsets[d]
        end = offsets[d + 1]
        need = AS_IS
        length = end - i
        while i < end:
            if i + 8 <= end and load_u64(buf, i) & _TOP == 0:
                i += 8  # eight ASCII bytes at once
                continue
            if buf[i] < 0x80:
                i += 1
                continue
            cp, width = decode(buf, i, end)
            if cp < 0:
                need = PYTHON
                break
            if normalizing:
                action = actions[cp]
                if action == _PYTHON_CP:
                    need = PYTHON
                    break
                if action == _REPLACE_CP:
                    need = REPLACE_IN_KERNEL
                    length += replacement_offsets[cp + 1] - replacement_offsets[cp] - width
            i += width
        status[d] = need
        lengths[d] = length
    return status, lengths


@jit
def _replace(buf, start, end, actions, replacement_offsets, replacement_bytes, out, at):
    """Copy ``buf[start:end]`` (valid UTF-8) to ``out[at:]`` with each code point to REPLACE
    replaced by its replacement; the runs between them are copied whole."""
    run = start  # where the bytes not yet copied start
    i = start
    while i < end:
        if i + 8 <= end and load_u64(buf, i) & _TOP == 0:
            i += 8
            continue
        if buf[i] < 0x80:
            i += 1
            continue
        cp, width = char_at(buf, i)
        if actions[cp] == _REPLACE_CP:
            out[at : at + i - run] = buf[run:i]
            at += i - run
            first = replacement_offsets[cp]
            length = replacement_offsets[cp + 1] - first
            out[at : at + length] = replacement_bytes[first : first + length]
            at += length
            run = i + width
        i += width
    out[at : at + end - run] = buf[run:end]


@jit_parallel
def rebuild(
    data, offsets, status, lengths, actions, replacement_offsets, replacement_bytes, new_data, new_offsets
):
    """The buffer the kernels tokenise: each document with ``status`` AS_IS keeps its bytes,
    REPLACE_IN_KERNEL gets its code points replaced (to ``lengths[d]`` bytes), and PYTHON
    takes the next document of ``new_data``/``new_offsets`` (prepared by Python). Returns
    (data, offsets). The copy runs on all threads: most of its time is the first touch of new
    pages."""
    n_docs = offsets.shape[0] - 1
    out_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    source = np.full(n_docs, -1, dtype=np.int64)  # the Python-prepared document's index
    k = 0
    for d in range(n_docs):
        if status[d] == PYTHON:
            source[d] = k
            length = new_offsets[k + 1] - new_offsets[k]
            k += 1
        elif status[d] == REPLACE_IN_KERNEL:
            length = lengths[d]
        else:
            length = offsets[d + 1] - offsets[d]
        out_offsets[d + 1] = out_offsets[d] + length
    out = np.empty(out_offsets[n_docs], dtype=np.uint8)
    for d in numba.prange(n_docs):
        at = out_offsets[d]
        if status[d] == PYTHON:
            k = source[d]
            out[at : out_offsets[d + 1]] = new_data[new_offsets[k] : new_offsets[k + 1]]
        elif status[d] == REPLACE_IN_KERNEL:
            _replace(
                data, offsets[d], offsets[d + 1], actions, replacement_offsets, replacement_bytes, out, at
            )
        else:
            out[at : out_offsets[d + 1]] = data[offsets[d] : offsets[d + 1]]
    return out, out_offsets
