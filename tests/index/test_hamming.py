"""Hamming utilities against XOR + popcount written out with Python ints."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup import distance_for_cosine, estimate_cosine, hamming, hamming_many, hamming_pairwise

u64 = st.integers(0, 2**64 - 1)
u128 = st.integers(0, 2**128 - 1)


def _bits(x: int) -> int:
    return bin(x).count("1")


def _rows(values: list[int], words: int) -> np.ndarray:
    return np.array(
        [[(v >> (64 * w)) & (2**64 - 1) for w in range(words)] for v in values], dtype=np.uint64
    ).reshape(len(values), words)


@given(u128, u128)
def test_hamming_of_ints_is_popcount_of_xor(a, b):
    assert hamming(a, b) == _bits(a ^ b)


@given(u64, u64, u64)
def test_hamming_is_a_metric(a, b, c):
    assert hamming(a, a) == 0
    assert hamming(a, b) == hamming(b, a)
    assert hamming(a, c) <= hamming(a, b) + hamming(b, c)


@given(st.lists(u64, min_size=1, max_size=30), u64)
def test_hamming_many_64(values, query):
    got = hamming_many(np.array(values, dtype=np.uint64), query)
    assert got.dtype == np.int64
    assert got.tolist() == [_bits(v ^ query) for v in values]


@given(st.lists(u128, min_size=1, max_size=30), u128)
def test_hamming_many_128(values, query):
    got = hamming_many(_rows(values, 2), _rows([query], 2)[0])
    assert got.tolist() == [_bits(v ^ query) for v in values]


@given(st.lists(u128, min_size=1, max_size=12), st.lists(u128, min_size=1, max_size=12))
def test_hamming_pairwise(a, b):
    got = hamming_pairwise(_rows(a, 2), _rows(b, 2))
    assert got.shape == (len(a), len(b))
    assert got.tolist() == [[_bits(x ^ y) for y in b] for x in a]
    assert hamming_pairwise(_rows(a, 2)).tolist() == [[_bits(x ^ y) for y in a] for x in a]


def test_bad_shapes_and_dtypes():
    with pytest.raises(TypeError, match="uint64"):
        hamming_many(np.array([1.5, 2.0]), 1)
    with pytest.raises(ValueError, match=r"shape \(2, 3\)"):
        hamming_many(np.zeros((2, 3), dtype=np.uint64), 1)
    with pytest.raises(ValueError, match="negative"):
        hamming_many(np.array([-1, 2]), 1)
    with pytest.raises(ValueError, match="2\\*\\*128"):
        hamming(2**128, 0)


def test_estimate_cosine_and_its_inverse():
    assert estimate_cosine(0) == 1.0
    assert estimate_cosine(32) == pytest.approx(0.0, abs=1e-12)
    assert estimate_cosine(64, bits=128) == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(estimate_cosine(np.array([0, 64])), [1.0, -1.0])
    assert distance_for_cosine(0.95) == 6
    assert distance_for_cosine(1.0) == 0
    assert distance_for_cosine(-1.0) == 64
    with pytest.raises(ValueError, match="bits=32"):
        estimate_cosine(3, bits=32)
    with pytest.raises(ValueError, match="similarity"):
        distance_for_cosine(1.5)


@given(st.floats(-1.0, 1.0), st.sampled_from([64, 128]))
def test_distance_for_cosine_is_the_largest_radius_at_least_that_similar(s, bits):
    d = distance_for_cosine(s, bits)
    assert estimate_cosine(d, bits) >= s - 1e-12
    if d < bits:
        assert estimate_cosine(d + 1, bits) < s
    assert d == max(k for k in range(bits + 1) if math.cos(math.pi * k / bits) >= s - 1e-12)
