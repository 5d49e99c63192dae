"""UTF-8 code points, decoded in compiled code."""

from __future__ import annotations

import numpy as np

from ._jit import jit_inline


@jit_inline
def char_at(buf, i):
    """Code point and byte length of the UTF-8 character at ``buf[i]`` (input is valid)."""
    b0 = np.int64(buf[i])
    if b0 < 0x80:
        return b0, 1
    if b0 < 0xE0:
        return ((b0 & 0x1F) << 6) | (np.int64(buf[i + 1]) & 0x3F), 2
    if b0 < 0xF0:
        return (((b0 & 0x0F) << 12) | ((np.int64(buf[i + 1]) & 0x3F) << 6) | (np.int64(buf[i + 2]) & 0x3F)), 3
    return (
        ((b0 & 0x07) << 18)
        | ((np.int64(buf[i + 1]) & 0x3F) << 12)
        | ((np.int64(buf[i + 2]) & 0x3F) << 6)
        | (np.int64(buf[i + 3]) & 0x3F)
    ), 4


@jit_inline
def decode(buf, i, end):
    """(code point, byte length) of the UTF-8 sequence at ``buf[i]`` (a byte >= 0x80), or
    (-1, 1) if it is ill-formed: a stray continuation or invalid lead byte, a truncated
    sequence, an overlong form, a surrogate or a code point above U+10FFFF (Unicode table 3-7)."""
    b0 = np.int64(buf[i])
    if b0 < 0xC2:
        return -1, 1
    if b0 < 0xE0:
        if i + 1 >= end or buf[i + 1] & 0xC0 != 0x80:
            return -1, 1
        return ((b0 & 0x1F) << 6) | (np.int64(buf[i + 1]) & 0x3F), 2
    if b0 < 0xF0:
        if i + 2 >= end or buf[i + 1] & 0xC0 != 0x80 or buf[i + 2] & 0xC0 != 0x80:
            return -1, 1
        cp = ((b0 & 0x0F) << 12) | ((np.int64(buf[i + 1]) & 0x3F) << 6) | (np.int64(buf[i + 2]) & 0x3F)
        if cp < 0x800 or 0xD800 <= cp <= 0xDFFF:
            return -1, 1
        return cp, 3
    if b0 < 0xF5:
        if (
            i + 3 >= end
            or buf[i + 1] & 0xC0 != 0x80
            or buf[i + 2] & 0xC0 != 0x80
            or buf[i + 3] & 0xC0 != 0x80
        ):
            return -1, 1
        cp = (
            ((b0 & 0x07) << 18)
            | ((np.int64(buf[i + 1]) & 0x3F) << 12)
            | ((np.int64(buf[i + 2]) & 0x3F) << 6)
            | (np.int64(buf[i + 3]) & 0x3F)
        )
        if cp < 0x10000 or cp > 0x10FFFF:
            return -1, 1
        return cp, 4
    return -1, 1
