"""XXH64 (Yann Collet's xxHash, 64-bit variant) over a slice of a byte buffer.

Follows the reference algorithm (xxhash.h, XXH64); tests check it against the ``xxhash``
package. All arithmetic is on uint64 and wraps modulo 2**64.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

P1 = np.uint64(0x9E3779B185EBCA87)
P2 = np.uint64(0xC2B2AE3D27D4EB4F)
P3 = np.uint64(0x165667B19E3779F9)
P4 = np.uint64(0x85EBCA77C2B2AE63)
P5 = np.uint64(0x27D4EB2F165667C5)


@jit
def _rotl(x, r):
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


@jit
def _read64(buf, i):
    return (np.uint64(buf[i]) | (np.uint64(buf[i + 1]) << np.uint64(8))
            | (np.uint64(buf[i + 2]) << np.uint64(16)) | (np.uint64(buf[i + 3]) << np.uint64(24))
            | (np.uint64(buf[i + 4]) << np.uint64(32)) | (np.uint64(buf[i + 5]) << np.uint64(40))
            | (np.uint64(buf[i + 6]) << np.uint64(48)) | (np.uint64(buf[i + 7]) << np.uint64(56)))


@jit
def _read32(buf, i):
    return (np.uint64(buf[i]) | (np.uint64(buf[i + 1]) << np.uint64(8))
            | (np.uint64(buf[i + 2]) << np.uint64(16)) | (np.uint64(buf[i + 3]) << np.uint64(24)))


@jit
def _round(acc, lane):
    acc = acc + lane * P2
    acc = _rotl(acc, 31)
    return acc * P1


@jit
def _merge_round(acc, val):
    acc = acc ^ _round(np.uint64(0), val)
    return acc * P1 + P4


@jit
def _avalanche(h):
    h = h ^ (h >> np.uint64(33))
    h = h * P2
    h = h ^ (h >> np.uint64(29))
    h = h * P3
    return h ^ (h >> np.uint64(32))


@jit
def xxh64(buf, start, end, seed):
    """XXH64 of ``buf[start:end]`` (uint8) with a uint64 ``seed``."""
    n = end - start
    i = start
    if n >= 32:
        v1 = seed + P1 + P2
        v2 = seed + P2
        v3 = seed
        v4 = seed - P1
        limit = end - 32
        while i <= limit:
            v1 = _round(v1, _read64(buf, i))
            v2 = _round(v2, _read64(buf, i + 8))
            v3 = _round(v3, _read64(buf, i + 16))
            v4 = _round(v4, _read64(buf, i + 24))
            i += 32
        h = _rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)
        h = _merge_round(h, v1)
        h = _merge_round(h, v2)
        h = _merge_round(h, v3)
        h = _merge_round(h, v4)
    else:
        h = seed + P5
    h = h + np.uint64(n)
    while i + 8 <= end:
        h = h ^ _round(np.uint64(0), _read64(buf, i))
        h = _rotl(h, 27) * P1 + P4
        i += 8
    if i + 4 <= end:
        h = h ^ (_read32(buf, i) * P1)
        h = _rotl(h, 23) * P2 + P3
        i += 4
    while i < end:
        h = h ^ (np.uint64(buf[i]) * P5)
        h = _rotl(h, 11) * P1
        i += 1
    return _avalanche(h)


@jit
def xxh64_u64(value, seed):
    """XXH64 of the 8 little-endian bytes of the uint64 ``value`` (the second 64 bits of a
    128-bit fingerprint come from this, applied to the feature's first hash)."""
    h = seed + P5 + np.uint64(8)
    h = h ^ _round(np.uint64(0), value)
    h = _rotl(h, 27) * P1 + P4
    return _avalanche(h)
