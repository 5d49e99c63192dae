"""The compiled XXH3-64 equals the reference (xxHash 0.8 through the ``xxhash`` package)."""

from __future__ import annotations

import struct

import numba
import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._kernels.xxh3 import xxh3_3u64, xxh3_64, xxh3_u64, xxh3_upto16

SEEDS = [0, 1, 0x9E3779B97F4A7C15, 2**32 - 1, 2**32, 2**63, 2**64 - 1]
# Every length up to 300 crosses each code path (0, 1-3, 4-8, 9-16, 17-128, 129-240, long) and
# its boundaries; the long lengths cross the stripe (64), block (1024) and last-stripe cases.
LENGTHS = [*list(range(301)), 1000, 1023, 1024, 1025, 1088, 4096, 100000]


# The hash functions are inline helpers; numba runs them only inside a compiled caller.
@numba.njit
def _hash_slice(buf, start, end, seed):
    return xxh3_64(buf, start, end, seed)


@numba.njit
def _hash_u64(value, seed):
    return xxh3_u64(value, seed)


@numba.njit
def _hash_words(first8, last8, n, seed):
    return xxh3_upto16(first8, last8, n, seed)


@numba.njit
def _hash_3u64(a, b, c, seed):
    return xxh3_3u64(a, b, c, seed)


def compiled_xxh3(data: bytes, seed: int, pad: int = 0) -> int:
    """XXH3 of ``data`` read from inside a larger buffer, ``pad`` bytes from its start."""
    buf = np.frombuffer(b"\xa5" * pad + data + b"\x5a" * 7, dtype=np.uint8)
    return int(_hash_slice(buf, pad, pad + len(data), np.uint64(seed)))


def reference_bytes(n: int) -> bytes:
    return bytes((i * 131 + (i >> 8) * 7 + 1) & 0xFF for i in range(n))


DATA = reference_bytes(100_000)


@pytest.mark.parametrize("seed", SEEDS)
def test_xxh3_64_equals_xxhash_for_every_length(seed):
    for n in LENGTHS:
        data = DATA[:n]
        assert compiled_xxh3(data, seed) == xxhash.xxh3_64_intdigest(data, seed=seed), (n, seed)


def test_xxh3_64_reads_only_its_slice():
    for n in (0, 3, 8, 16, 17, 128, 129, 240, 241, 1025):
        for pad in (1, 5, 13):
            data = DATA[:n]
            assert compiled_xxh3(data, 7, pad) == xxhash.xxh3_64_intdigest(data, seed=7), (n, pad)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=600), seed=st.integers(0, 2**64 - 1), pad=st.integers(0, 9))
def test_xxh3_64_equals_xxhash_on_random_bytes(data, seed, pad):
    assert compiled_xxh3(data, seed, pad) == xxhash.xxh3_64_intdigest(data, seed=seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_xxh3_u64_is_xxh3_of_le64(seed):
    for value in (0, 1, 0xFF, 2**32 - 1, 2**32, 0x0123456789ABCDEF, 2**63, 2**64 - 1):
        expected = xxhash.xxh3_64_intdigest(struct.pack("<Q", value), seed=seed)
        assert int(_hash_u64(np.uint64(value), np.uint64(seed))) == expected, (value, seed)


@settings(max_examples=300, deadline=None)
@given(value=st.integers(0, 2**64 - 1), seed=st.integers(0, 2**64 - 1))
def test_xxh3_u64_equals_xxhash_on_random_values(value, seed):
    expected = xxhash.xxh3_64_intdigest(struct.pack("<Q", value), seed=seed)
    assert int(_hash_u64(np.uint64(value), np.uint64(seed))) == expected


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=16), after=st.binary(min_size=8, max_size=8), seed=st.integers(0, 2**64 - 1))
def test_xxh3_upto16_ignores_the_bytes_past_the_end(data, after, seed):
    # What the tokeniser hands over: 8 bytes from the start, whatever follows the key.
    first8 = int.from_bytes((data + after)[:8], "little")
    last8 = int.from_bytes(data[-8:], "little") if len(data) > 8 else first8
    got = _hash_words(np.uint64(first8), np.uint64(last8), len(data), np.uint64(seed))
    assert int(got) == xxhash.xxh3_64_intdigest(data, seed=seed)


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.integers(0, 2**64 - 1), min_size=3, max_size=3),
    seed=st.sampled_from(SEEDS) | st.integers(0, 2**64 - 1),
)
def test_xxh3_3u64_is_xxh3_of_three_le64(words, seed):
    expected = xxhash.xxh3_64_intdigest(struct.pack("<3Q", *words), seed=seed)
    assert int(_hash_3u64(*(np.uint64(w) for w in words), np.uint64(seed))) == expected
