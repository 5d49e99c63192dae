"""Exact similarity of documents from their features: the check behind ``--verify``.

SimHash estimates the angle between feature vectors; these kernels compute what it
estimates (cosine) or the set overlap (Jaccard) exactly, from the same features.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit


@jit
def pair_similarity(doc_offsets, hashes, weights, first, second, cosine):
    """Similarity of documents ``first[p]`` and ``second[p]`` (positions in the CSR), float64,
    shape (m,): the cosine of their weight vectors when ``cosine``, else the Jaccard index of
    their feature sets. Two documents without features are identical (1.0)."""
    out = np.empty(first.shape[0], dtype=np.float64)
    for p in range(first.shape[0]):
        i, i_end = doc_offsets[first[p]], doc_offsets[first[p] + 1]
        j, j_end = doc_offsets[second[p]], doc_offsets[second[p] + 1]
        n_a, n_b = i_end - i, j_end - j
        shared = 0
        dot = norm_a = norm_b = 0.0
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
        if n_a == 0 and n_b == 0:
            out[p] = 1.0
        elif cosine:
            out[p] = dot / np.sqrt(norm_a * norm_b) if norm_a > 0 and norm_b > 0 else 0.0
        else:
            out[p] = shared / (n_a + n_b - shared)
    return out
