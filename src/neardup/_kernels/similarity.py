"""Exact similarity of documents from their features: the check behind ``--verify``.

SimHash estimates the angle between feature vectors; these kernels compute what it
estimates (cosine) or the set overlap (Jaccard) exactly, from the same features.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit, jit_inline


@jit_inline
def similarity_of(doc_offsets, hashes, weights, a, b, cosine):
    """The similarity of documents ``a`` and ``b`` (positions in the CSR): the cosine of their
    weight vectors when ``cosine``, else the Jaccard index of their feature sets. Two documents
    without features are identical (1.0)."""
    i, i_end = doc_offsets[a], doc_offsets[a + 1]
    j, j_end = doc_offsets[b], doc_offsets[b + 1]
    n_a, n_b = i_end - i, j_end - j
    if n_a == 0 and n_b == 0:
        return 1.0
    shared = 0
    dot = norm_a = norm_b = 0.0
    if cosine:
        for k in range(i, i_end):
            norm_a += weights[k] * weights[k]
        for k in range(j, j_end):
            norm_b += weights[k] * weights[k]
    while i < i_end and j < j_end:
        if hashes[i] == hashes[j]:
            shared += 1
            dot += weights[i] * weights[j]
            i += 1
            j += 1
        elif hashes[i] < hashes[j]:
            i += 1
        else:
            j += 1
    if cosine:
        return dot / np.sqrt(norm_a * norm_b) if norm_a > 0 and norm_b > 0 else 0.0
    return shared / (n_a + n_b - shared)


@jit
def pair_similarity(doc_offsets, hashes, weights, first, second, cosine):
    """float64, shape (m,): :func:`similarity_of` documents ``first[p]`` and ``second[p]``."""
    out = np.empty(first.shape[0], dtype=np.float64)
    for p in range(first.shape[0]):
        out[p] = similarity_of(doc_offsets, hashes, weights, first[p], second[p], cosine)
    return out
