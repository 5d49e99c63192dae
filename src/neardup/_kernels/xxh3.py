"""XXH3-64 with a seed (Yann Collet's xxHash 0.8, ``XXH3_64bits_withSeed``) over a byte slice.

The fingerprint spec hashes every feature with it: XXH3 is built for short keys (a word is a
few bytes), where it needs no loop at all. Tests check every length class against the
``xxhash`` package. All arithmetic is on uint64 and wraps modulo 2**64.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit, jit_inline
from ._memory import load_u32 as _read32
from ._memory import load_u64 as _read64
from ._memory import mul128_fold64

P32_1 = np.uint64(0x9E3779B1)
P32_2 = np.uint64(0x85EBCA77)
P32_3 = np.uint64(0xC2B2AE3D)
P64_1 = np.uint64(0x9E3779B185EBCA87)
P64_2 = np.uint64(0xC2B2AE3D27D4EB4F)
P64_3 = np.uint64(0x165667B19E3779F9)
P64_4 = np.uint64(0x85EBCA77C2B2AE63)
P64_5 = np.uint64(0x27D4EB2F165667C5)
PRIME_MX1 = np.uint64(0x165667919E3779F9)
PRIME_MX2 = np.uint64(0x9FB21C651E98DF25)
M32 = np.uint64(0xFFFFFFFF)

# The default secret of the reference implementation (XXH3_kSecret), 192 bytes.
SECRET = np.frombuffer(
    bytes.fromhex(
        "b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671f"
        "cb79e64eccc0e578825ad07dccff7221b8084674f743248ee03590e6813a264c"
        "3c2852bb91c300cb88d0658b1b532ea371644897a20df94e3819ef46a9deacd8"
        "a8fa763fe39c343ff9dcbbc7c70b4f1d8a51e04bcdb45931c89f7ec9d9787364"
        "eac5ac8334d3ebc3c581a0fffa1363eb170ddd51b7f0da49d316552629d4689e"
        "2b16be587d47a1fc8ff8b8d17ad031ce45cb3a8f95160428afd7fbcabb4b407e"
    ),
    dtype=np.uint8,
)
SECRET_SIZE = 192
STRIPE = 64
MIDSIZE_MAX = 240


@jit_inline
def _rotl(x, r):
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


@jit_inline
def _swap32(x):
    return (
        ((x & np.uint64(0xFF)) << np.uint64(24))
        | ((x & np.uint64(0xFF00)) << np.uint64(8))
        | ((x >> np.uint64(8)) & np.uint64(0xFF00))
        | ((x >> np.uint64(24)) & np.uint64(0xFF))
    )


@jit_inline
def _swap64(x):
    return (_swap32(x & M32) << np.uint64(32)) | _swap32(x >> np.uint64(32))


@jit_inline
def _xxh64_avalanche(h):
    h = h ^ (h >> np.uint64(33))
    h = h * P64_2
    h = h ^ (h >> np.uint64(29))
    h = h * P64_3
    return h ^ (h >> np.uint64(32))


@jit_inline
def _avalanche(h):
    h = h ^ (h >> np.uint64(37))
    h = h * PRIME_MX1
    return h ^ (h >> np.uint64(32))


@jit_inline
def _rrmxmx(h, n):
    h = h ^ (_rotl(h, 49) ^ _rotl(h, 24))
    h = h * PRIME_MX2
    h = h ^ ((h >> np.uint64(35)) + np.uint64(n))
    h = h * PRIME_MX2
    return h ^ (h >> np.uint64(28))


def _secret_word(offset: int, width: int = 8) -> np.uint64:
    return np.uint64(int.from_bytes(SECRET[offset : offset + width].tobytes(), "little"))


# The words of the secret the short paths read, as constants, so that ``xxh3_upto16`` touches
# no array at all: an inline helper handed an array that branches inside costs two refcount
# calls numba cannot prune, each time it runs (measured: twice as slow per token).
_FLIP_1TO3 = _secret_word(0, 4) ^ _secret_word(4, 4)
_FLIP_4TO8 = _secret_word(8) ^ _secret_word(16)
_FLIP_9TO16_LO = _secret_word(24) ^ _secret_word(32)
_FLIP_9TO16_HI = _secret_word(40) ^ _secret_word(48)
_FLIP_EMPTY = _secret_word(56) ^ _secret_word(64)
_SECRET_0, _SECRET_8, _SECRET_16, _SECRET_24 = (_secret_word(o) for o in (0, 8, 16, 24))


@jit_inline
def _mix_words(lo, hi, secret_lo, secret_hi, seed):
    return mul128_fold64(lo ^ (secret_lo + seed), hi ^ (secret_hi - seed))


@jit_inline
def _mix16(buf, i, secret, s, seed):
    return _mix_words(_read64(buf, i), _read64(buf, i + 8), _read64(secret, s), _read64(secret, s + 8), seed)


@jit_inline
def xxh3_upto16(first8, last8, n, seed):
    """XXH3-64 of ``n`` <= 16 bytes handed over in two words, with no array: ``first8``, the 8
    bytes from the start (little-endian; those past the end may be anything), and ``last8``,
    the 8 bytes that end at the end (read only when ``n`` > 8). A caller whose buffer has 8
    readable bytes past every key loads both with one ``load_u64`` each."""
    if n > 8:
        lo = first8 ^ (_FLIP_9TO16_LO + seed)
        hi = last8 ^ (_FLIP_9TO16_HI - seed)
        return _avalanche(np.uint64(n) + _swap64(lo) + hi + mul128_fold64(lo, hi))
    if n >= 4:
        seed = seed ^ (_swap32(seed & M32) << np.uint64(32))
        first = first8 & M32
        last = (first8 >> np.uint64(8 * (n - 4))) & M32
        return _rrmxmx((last + (first << np.uint64(32))) ^ (_FLIP_4TO8 - seed), n)
    if n > 0:
        c1 = first8 & np.uint64(0xFF)
        c2 = (first8 >> np.uint64(8 * (n >> 1))) & np.uint64(0xFF)
        c3 = (first8 >> np.uint64(8 * (n - 1))) & np.uint64(0xFF)
        combined = (c1 << np.uint64(16)) | (c2 << np.uint64(24)) | c3 | (np.uint64(n) << np.uint64(8))
        return _xxh64_avalanche(combined ^ (_FLIP_1TO3 + seed))
    return _xxh64_avalanche(seed ^ _FLIP_EMPTY)


@jit_inline
def _len_0to16(buf, i, n, seed):
    """``xxh3_upto16`` reading only ``buf[i:i + n]``."""
    if n > 8:
        return xxh3_upto16(_read64(buf, i), _read64(buf, i + n - 8), n, seed)
    first8 = np.uint64(0)
    if n >= 4:  # the two reads overlap where n < 8, with equal bytes
        first8 = _read32(buf, i) | (_read32(buf, i + n - 4) << np.uint64(8 * (n - 4)))
    elif n > 0:
        first8 = (
            np.uint64(buf[i])
            | (np.uint64(buf[i + (n >> 1)]) << np.uint64(8 * (n >> 1)))
            | (np.uint64(buf[i + n - 1]) << np.uint64(8 * (n - 1)))
        )
    return xxh3_upto16(first8, first8, n, seed)


@jit_inline
def _len_17to128(buf, i, n, seed):
    acc = np.uint64(n) * P64_1
    if n > 32:
        if n > 64:
            if n > 96:
                acc += _mix16(buf, i + 48, SECRET, 96, seed)
                acc += _mix16(buf, i + n - 64, SECRET, 112, seed)
            acc += _mix16(buf, i + 32, SECRET, 64, seed)
            acc += _mix16(buf, i + n - 48, SECRET, 80, seed)
        acc += _mix16(buf, i + 16, SECRET, 32, seed)
        acc += _mix16(buf, i + n - 32, SECRET, 48, seed)
    acc += _mix16(buf, i, SECRET, 0, seed)
    acc += _mix16(buf, i + n - 16, SECRET, 16, seed)
    return _avalanche(acc)


@jit
def _len_129to240(buf, i, n, seed):
    acc = np.uint64(n) * P64_1
    for r in range(8):
        acc += _mix16(buf, i + 16 * r, SECRET, 16 * r, seed)
    acc = _avalanche(acc)
    for r in range(8, n // 16):
        acc += _mix16(buf, i + 16 * r, SECRET, 16 * (r - 8) + 3, seed)
    acc += _mix16(buf, i + n - 16, SECRET, 136 - 17, seed)
    return _avalanche(acc)


@jit_inline
def _accumulate_512(acc, buf, i, secret, s):
    for lane in range(8):
        value = _read64(buf, i + 8 * lane)
        key = value ^ _read64(secret, s + 8 * lane)
        acc[lane ^ 1] += value
        acc[lane] += (key & M32) * (key >> np.uint64(32))


@jit
def _hash_long(buf, i, n, seed):
    secret = SECRET.copy()
    if seed != 0:
        # XXH3_initCustomSecret: the seed is added to and subtracted from alternate words.
        for k in range(SECRET_SIZE // 16):
            lo = _read64(SECRET, 16 * k) + seed
            hi = _read64(SECRET, 16 * k + 8) - seed
            for b in range(8):
                secret[16 * k + b] = np.uint8((lo >> np.uint64(8 * b)) & np.uint64(0xFF))
                secret[16 * k + 8 + b] = np.uint8((hi >> np.uint64(8 * b)) & np.uint64(0xFF))
    acc = np.empty(8, dtype=np.uint64)
    acc[0] = P32_3
    acc[1] = P64_1
    acc[2] = P64_2
    acc[3] = P64_3
    acc[4] = P64_4
    acc[5] = P32_2
    acc[6] = P64_5
    acc[7] = P32_1
    stripes_per_block = (SECRET_SIZE - STRIPE) // 8
    block = STRIPE * stripes_per_block
    n_blocks = (n - 1) // block
    for b in range(n_blocks):
        for s in range(stripes_per_block):
            _accumulate_512(acc, buf, i + b * block + s * STRIPE, secret, 8 * s)
        for lane in range(8):  # scramble
            a = acc[lane]
            a = a ^ (a >> np.uint64(47))
            a = a ^ _read64(secret, SECRET_SIZE - STRIPE + 8 * lane)
            acc[lane] = a * P32_1
    n_stripes = ((n - 1) - block * n_blocks) // STRIPE
    for s in range(n_stripes):
        _accumulate_512(acc, buf, i + n_blocks * block + s * STRIPE, secret, 8 * s)
    _accumulate_512(acc, buf, i + n - STRIPE, secret, SECRET_SIZE - STRIPE - 7)
    result = np.uint64(n) * P64_1
    for k in range(4):
        result += mul128_fold64(
            acc[2 * k] ^ _read64(secret, 11 + 16 * k), acc[2 * k + 1] ^ _read64(secret, 11 + 16 * k + 8)
        )
    return _avalanche(result)


@jit_inline
def xxh3_64(buf, start, end, seed):
    """XXH3-64 of ``buf[start:end]`` (uint8) with a uint64 ``seed``."""
    n = end - start
    if n <= 16:
        return _len_0to16(buf, start, n, seed)
    if n <= 128:
        return _len_17to128(buf, start, n, seed)
    if n <= MIDSIZE_MAX:
        return _len_129to240(buf, start, n, seed)
    return _hash_long(buf, start, n, seed)


@jit_inline
def xxh3_u64(value, seed):
    """XXH3-64 of the 8 little-endian bytes of the uint64 ``value``."""
    return xxh3_upto16(value, value, 8, seed)


@jit_inline
def xxh3_3u64(a, b, c, seed):
    """XXH3-64 of the 24 little-endian bytes of ``a``, ``b``, ``c`` (a 3-shingle's token
    hashes), from registers: the 17-128 byte path with its two 16-byte mixes fixed."""
    acc = np.uint64(24) * P64_1
    acc += _mix_words(a, b, _SECRET_0, _SECRET_8, seed)
    acc += _mix_words(b, c, _SECRET_16, _SECRET_24, seed)
    return _avalanche(acc)
