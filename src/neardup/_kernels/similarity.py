"""Exact similarity of documents from their features: the check behind ``--verify``.

SimHash estimates the angle between feature vectors; these kernels compute what it
estimates (cosine) or the set overlap (Jaccard) exactly, from the same features.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from .simhash import _feature_hashes, _scratch


@jit
def feature_counts(buf, offsets, classes, lower, kind, size, seed):
    """Each document's distinct feature hashes, ascending, with how often each occurs, in
    CSR form: (int64 doc offsets, shape (n + 1,); uint64 hashes; int64 counts)."""
    n_docs = offsets.shape[0] - 1
    tokbuf, hashes, scratch, starts, lut = _scratch(offsets, 0, n_docs, kind, lower)
    capacity = offsets[n_docs] - offsets[0] + n_docs  # at most one feature per byte, or one
    out_hashes = np.empty(capacity, dtype=np.uint64)
    out_counts = np.empty(capacity, dtype=np.int64)
    doc_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    total = 0
    for d in range(n_docs):
        n = _feature_hashes(buf, offsets[d], offsets[d + 1], classes, lut, kind, size, seed,
                            tokbuf, scratch, starts, hashes)
        hashes[:n].sort()
        for j in range(n):
            if j > 0 and hashes[j] == hashes[j - 1]:
                out_counts[total - 1] += 1
            else:
                out_hashes[total] = hashes[j]
                out_counts[total] = 1
                total += 1
        doc_offsets[d + 1] = total
    return doc_offsets, out_hashes[:total].copy(), out_counts[:total].copy()


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
