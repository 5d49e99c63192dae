"""MinHash band keys by one permutation hashing, for the ``--jaccard`` candidate generator.

One permutation hashing (Li, Owen & Zhang 2012) with optimal densification (Shrivastava 2017):
each feature hash h is mixed once, ``g = fmix64(h ^ seed)``; its high 32 bits pick one of K
bins (``(hi32 * K) >> 32``) and its low 32 bits are its value there. A bin keeps the least
value that falls in it; an empty bin i copies the bin that the sequence ``fmix64(seed2 ^ (i <<
32 | attempt))`` first reaches among the bins that were filled. Two feature sets then agree on a
bin with probability their Jaccard index, as K independent MinHash permutations would, at the
cost of one hash per feature instead of K. Repeated features change no minimum, so the
features are taken as the tokeniser yields them, without sorting.

``rows`` consecutive bins make a band, hashed to one 64-bit key: documents sharing a key are
candidates (about 1 - (1 - J^rows)^bands for a pair of Jaccard J; the bins of one document are
slightly dependent, which benchmarks/bench_curves.py measures). A chance agreement of 32-bit
values only adds candidates: every candidate is verified exactly.
"""

from __future__ import annotations

import numba
import numpy as np

from ._jit import jit, jit_inline, jit_parallel
from .simhash import (
    UNIFORM,
    _feature_hashes,
    _fingerprint_counted,
    _scratch,
    _sort_buffers,
    _unchecked,
    distinct_features,
)

_DENSIFY = np.uint64(0x2545F4914F6CDD1D)


@jit_inline
def _fmix64(h):
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


@jit_inline
def _add(h, seed, bins, values, filled):
    g = _fmix64(h ^ seed)
    b = ((g >> np.uint64(32)) * np.uint64(bins)) >> np.uint64(32)
    v = np.uint32(g & np.uint64(0xFFFFFFFF))
    if not filled[b] or v < values[b]:
        values[b] = v
        filled[b] = True


@jit_inline
def _keys(seed, bands, rows, values, filled, out, d):
    """Densify the bins of document ``d`` and write its band keys to ``out[d]``."""
    bins = bands * rows
    any_filled = False
    for i in range(bins):
        any_filled |= filled[i]
    if any_filled:
        for i in range(bins):
            if not filled[i]:
                attempt = np.uint64(1)
                while True:
                    g = _fmix64(seed ^ _DENSIFY ^ ((np.uint64(i) << np.uint64(32)) | attempt))
                    j = ((g >> np.uint64(32)) * np.uint64(bins)) >> np.uint64(32)
                    if filled[j]:
                        values[i] = values[j]
                        break
                    attempt += np.uint64(1)
    for b in range(bands):
        key = np.uint64(b)
        for r in range(b * rows, (b + 1) * rows):
            key = _fmix64(key * np.uint64(0x9E3779B97F4A7C15) + np.uint64(values[r]) + np.uint64(1))
        out[d, b] = key
    for i in range(bins):  # ready for the next document
        filled[i] = False
        values[i] = np.uint32(0xFFFFFFFF)


@jit_parallel
def band_keys(doc_offsets, hashes, seed, bands, rows):
    """uint64, shape (n, bands): the band keys of documents given as feature hashes (uint64,
    CSR by ``doc_offsets``; repeats and order do not matter). A document without features gets
    the keys of all-empty bins (every such document the same)."""
    n = doc_offsets.shape[0] - 1
    out = np.empty((n, bands), dtype=np.uint64)
    for d in numba.prange(n):
        values = np.full(bands * rows, np.uint32(0xFFFFFFFF), dtype=np.uint32)
        filled = np.zeros(bands * rows, dtype=np.bool_)
        for f in range(doc_offsets[d], doc_offsets[d + 1]):
            _add(hashes[f], seed, bands * rows, values, filled)
        _keys(seed, bands, rows, values, filled, out, d)
    return out


@jit_parallel
def text_band_keys(buf, offsets, chunk_bounds, classes, lower, kind, size, feature_seed, seed, bands, rows):
    """:func:`band_keys` of the documents of a prepared buffer (``buffers.prepare``), their
    features extracted as the fingerprint extracts them (``feature_seed``), without building
    feature lists. Documents are split into chunks (``chunk_bounds``), each run on one thread
    with its own scratch."""
    n = offsets.shape[0] - 1
    out = np.empty((n, bands), dtype=np.uint64)
    unchecked = _unchecked()
    for c in numba.prange(chunk_bounds.shape[0] - 1):
        first, last = chunk_bounds[c], chunk_bounds[c + 1]
        hashes, scratch, starts, bitmap, lut = _scratch(offsets, first, last, kind, lower)
        values = np.full(bands * rows, np.uint32(0xFFFFFFFF), dtype=np.uint32)
        filled = np.zeros(bands * rows, dtype=np.bool_)
        for d in range(first, last):
            count = _feature_hashes(
                buf,
                offsets[d],
                offsets[d + 1],
                classes,
                unchecked,
                lut,
                kind,
                size,
                feature_seed,
                scratch,
                starts,
                bitmap,
                hashes,
            )
            for f in range(max(count, 0)):
                _add(hashes[f], seed, bands * rows, values, filled)
            _keys(seed, bands, rows, values, filled, out, d)
    return out


@jit
def features_and_keys(
    buf,
    offsets,
    classes,
    lower,
    kind,
    size,
    feature_seed,
    seed,
    bands,
    rows,
    weighting,
    fingerprint_seed,
    words,
    idf_hashes,
    idf_values,
    idf_default,
):
    """One pass over the documents of a prepared buffer (``text_buffers.prepare``), each while
    its features are in cache: its distinct feature hashes, ascending (``feature_counts``' CSR
    form without the counts: int64 doc offsets, uint64 hashes), its band keys (:func:`band_keys`
    of them, shape (n, bands)) and, when ``words`` is 1 or 2, its fingerprint from them and
    their counts (``simhash._fingerprint_counted``; the last six arguments are
    ``Fingerprinter.weighing()``; shape (n, words), else (n, 1) of zeros). The hashes are a
    view of room for one a byte (its untouched pages never faulted in): copy them to keep them."""
    n_docs = offsets.shape[0] - 1
    unchecked = _unchecked()
    hashes, scratch, starts, bitmap, lut = _scratch(offsets, 0, n_docs, kind, lower)
    counts = np.empty(hashes.shape[0], dtype=np.int64)  # one document's
    sort_tmp, sort_counts = _sort_buffers(hashes.shape[0], UNIFORM)
    out_hashes = np.empty(offsets[n_docs] - offsets[0] + n_docs, dtype=np.uint64)
    doc_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    keys = np.empty((n_docs, bands), dtype=np.uint64)
    fingerprints = np.zeros((n_docs, max(words, 1)), dtype=np.uint64)
    bins = bands * rows
    values = np.full(bins, np.uint32(0xFFFFFFFF), dtype=np.uint32)
    filled = np.zeros(bins, dtype=np.bool_)
    total = 0
    for d in range(n_docs):
        m = distinct_features(
            buf, offsets[d], offsets[d + 1], classes, unchecked, lut, kind, size, feature_seed,
            scratch, starts, bitmap, hashes, sort_tmp, sort_counts, counts,
        )  # fmt: skip
        for f in range(m):
            out_hashes[total + f] = hashes[f]
            _add(hashes[f], seed, bins, values, filled)
        _keys(seed, bands, rows, values, filled, keys, d)
        if words > 0:
            _fingerprint_counted(
                hashes, counts, 0, m, weighting, fingerprint_seed, words, idf_hashes, idf_values, idf_default,
                fingerprints, d,
            )  # fmt: skip
        total += m
        doc_offsets[d + 1] = total
    return doc_offsets, out_hashes[:total], keys, fingerprints
