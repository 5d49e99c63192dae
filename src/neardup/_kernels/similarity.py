"""Exact similarity of documents from their features: the check behind ``--verify``.

SimHash estimates the angle between feature vectors; these kernels compute what it
estimates (cosine) or the set overlap (Jaccard) exactly, from the same features.
"""

from __future__ import annotations

import numba
import numpy as np

from ._jit import jit_inline, jit_parallel

BELOW = -1.0
"""What :func:`similarity_of` returns for a Jaccard pair it proved below its floor."""


@jit_inline
def similarity_of(doc_offsets, hashes, weights, a, b, cosine, floor):
    """The similarity of documents ``a`` and ``b`` (positions in the CSR): the cosine of their
    weight vectors when ``cosine``, else the Jaccard index of their feature sets (``weights``
    unread: it may be empty). Two documents without features are identical (1.0).

    A Jaccard pair that cannot reach ``floor`` gets BELOW as soon as that is certain: when the
    smaller set is under ``floor`` times the larger, or when the features left to merge can no
    longer bring the overlap to ``floor / (1 + floor)`` of the two sizes (J >= f exactly when
    shared >= f / (1 + f) * (|A| + |B|)). ``floor`` 0 computes every value."""
    i, i_end = doc_offsets[a], doc_offsets[a + 1]
    j, j_end = doc_offsets[b], doc_offsets[b + 1]
    if i == i_end and j == j_end:
        return 1.0
    if cosine:
        return _cosine(hashes, weights, i, i_end, j, j_end)
    return _jaccard(hashes, i, i_end, j, j_end, floor)


# Both merges advance without branching on the hashes: which list moves on is a coin toss for
# random hashes, so a branch on it would mispredict half the time.


@jit_inline
def _jaccard(hashes, i, i_end, j, j_end, floor):
    n_a, n_b = i_end - i, j_end - j
    needed = 0.0
    if floor > 0.0:
        if min(n_a, n_b) < floor * max(n_a, n_b) - 1e-9:
            return BELOW
        needed = floor / (1.0 + floor) * (n_a + n_b) - 1e-9
    shared = 0
    while i < i_end and j < j_end:
        # Each step moves i or j or both: this many keep both in range; the bound after.
        for _ in range(min(i_end - i, j_end - j, 32)):
            x, y = hashes[i], hashes[j]
            shared += np.int64(x == y)
            i += np.int64(x <= y)
            j += np.int64(y <= x)
        if shared + min(i_end - i, j_end - j) < needed:
            return BELOW
    return shared / (n_a + n_b - shared)


@jit_inline
def _cosine(hashes, weights, i, i_end, j, j_end):
    dot = norm_a = norm_b = 0.0
    for k in range(i, i_end):
        norm_a += weights[k] * weights[k]
    for k in range(j, j_end):
        norm_b += weights[k] * weights[k]
    while i < i_end and j < j_end:
        x, y = hashes[i], hashes[j]
        if x == y:  # mostly true, or mostly false, for one pair: predicted
            dot += weights[i] * weights[j]
        i += np.int64(x <= y)
        j += np.int64(y <= x)
    return dot / np.sqrt(norm_a * norm_b) if norm_a > 0 and norm_b > 0 else 0.0


@jit_parallel
def pair_similarity(doc_offsets, hashes, weights, first, second, cosine, floor):
    """float64, shape (m,): :func:`similarity_of` documents ``first[p]`` and ``second[p]``
    (BELOW for Jaccard pairs proved under ``floor``); all cores."""
    out = np.empty(first.shape[0], dtype=np.float64)
    for p in numba.prange(first.shape[0]):
        out[p] = similarity_of(doc_offsets, hashes, weights, first[p], second[p], cosine, floor)
    return out
