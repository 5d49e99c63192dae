"""MinHash band keys of feature sets (Broder 1997; banding as in Leskovec, Rajaraman & Ullman,
*Mining of Massive Datasets*, ch. 3), for the ``--jaccard`` candidate generator.

Permutation i maps a feature hash h to ``fmix32(lo32(h) ^ seed[i])`` (MurmurHash3's 32-bit
finalizer, a bijection of 32-bit words): the document's value under it is the least image of its
features, and two sets agree on it with probability about their Jaccard index. ``rows``
consecutive values make a band, hashed to one 64-bit key: two documents share a band key with
probability ~ J^rows, and share one of ``bands`` keys with probability 1 - (1 - J^rows)^bands.
32-bit values keep the inner loop in 32-bit lanes (the compiler vectorises it); a chance 2^-32
agreement per row only adds candidates, and every candidate is verified exactly.
"""

from __future__ import annotations

import numba
import numpy as np

from ._jit import jit_inline, jit_parallel


@jit_inline
def _fmix32(h):
    # numba widens uint32 arithmetic: each step is cut back to 32 bits.
    h = np.uint32(h ^ (h >> np.uint32(16)))
    h = np.uint32(h * np.uint32(0x85EBCA6B))
    h = np.uint32(h ^ (h >> np.uint32(13)))
    h = np.uint32(h * np.uint32(0xC2B2AE35))
    return np.uint32(h ^ (h >> np.uint32(16)))


@jit_inline
def _fmix64(h):
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


def permutation_seeds(count: int, seed: int = 0) -> np.ndarray:
    """uint32, shape (count,): the seeds of the permutations, from splitmix64 of ``seed``
    (fixed: the same seed gives the same band keys on every machine)."""
    state = np.uint64(seed)
    out = np.empty(count, dtype=np.uint32)
    with np.errstate(over="ignore"):
        for i in range(count):
            state = np.uint64(state + np.uint64(0x9E3779B97F4A7C15))
            z = state
            z = np.uint64((z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9))
            z = np.uint64((z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB))
            out[i] = np.uint32((z ^ (z >> np.uint64(31))) & np.uint64(0xFFFFFFFF))
    return out


def band_keys(
    doc_offsets: np.ndarray, hashes: np.ndarray, seeds: np.ndarray, bands: int, rows: int
) -> np.ndarray:
    """uint64, shape (n, bands): each document's band keys, from its distinct feature
    ``hashes`` (uint64, CSR by ``doc_offsets``) under the ``bands * rows`` permutations of
    ``seeds``; all cores. A document without features has every value 2^32 - 1."""
    n = doc_offsets.shape[0] - 1
    pieces = min(n, 4 * numba.get_num_threads())
    return _band_keys(doc_offsets, hashes, seeds[: bands * rows], bands, rows, pieces)


@jit_parallel
def _band_keys(doc_offsets, hashes, seeds, bands, rows, pieces):
    n = doc_offsets.shape[0] - 1
    out = np.empty((n, bands), dtype=np.uint64)
    for piece in numba.prange(pieces):
        mins = np.empty(bands * rows, dtype=np.uint32)
        for d in range(piece * n // pieces, (piece + 1) * n // pieces):
            for i in range(bands * rows):
                mins[i] = np.uint32(0xFFFFFFFF)
            for f in range(doc_offsets[d], doc_offsets[d + 1]):
                h = np.uint32(hashes[f] & np.uint64(0xFFFFFFFF))
                for i in range(bands * rows):
                    v = _fmix32(h ^ seeds[i])
                    if v < mins[i]:
                        mins[i] = v
            for b in range(bands):
                key = np.uint64(b)
                for r in range(b * rows, (b + 1) * rows):
                    key = _fmix64(key * np.uint64(0x9E3779B97F4A7C15) + np.uint64(mins[r]) + np.uint64(1))
                out[d, b] = key
    return out
