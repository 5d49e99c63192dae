"""SimHash of source code from its lexed tokens (``features="code"``): hash, shingle, weigh,
vote, as ``simhash.py`` does for the words of prose.

The lexer runs in Python (``fingerprint/code.py``); what comes here is every token of a batch
as UTF-8 bytes in one buffer, each opened by the byte 0x01 that no word of prose holds (so
that a code feature never hashes as a prose one): token t is ``buf[token_offsets[t]:
token_offsets[t + 1]]``, and document d has tokens ``doc_offsets[d]`` to ``doc_offsets[d + 1]``.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from .simhash import UNIFORM, _fingerprint_one, _sort_buffers, _sort_hashes, shingle_hashes
from .xxh3 import xxh3_64


@jit
def _code_feature_hashes(buf, token_offsets, first, last, size, seed, hashes):
    """Fill ``hashes`` with the hash of each feature of tokens ``first..last-1`` (shingles of
    ``size`` tokens, or the tokens themselves when there are fewer), in order; return how
    many. A token's hash is XXH3-64 of its bytes; a shingle's, of its tokens' hashes (8
    little-endian bytes each), as for word shingles (docs/fingerprint-spec.md)."""
    n_tok = last - first
    for t in range(n_tok):
        hashes[t] = xxh3_64(buf, token_offsets[first + t], token_offsets[first + t + 1], seed)
    return shingle_hashes(hashes, n_tok, size, seed)


@jit
def _longest(doc_offsets):
    longest = 1
    for d in range(doc_offsets.shape[0] - 1):
        longest = max(longest, doc_offsets[d + 1] - doc_offsets[d])
    return longest


@jit
def fingerprint_code(
    buf, token_offsets, doc_offsets, size, weighting, seed, words, idf_hashes, idf_values, idf_default, out
):
    """Fingerprint every document's tokens into ``out`` (uint64, (n_docs, words)), weighing
    and voting as ``simhash.fingerprint_buffer`` does."""
    hashes = np.empty(_longest(doc_offsets), dtype=np.uint64)
    ones = np.zeros(64 * words, dtype=np.int64)
    totals = np.zeros(64 * words, dtype=np.float64)
    sort_tmp, sort_counts = _sort_buffers(hashes.shape[0], weighting)
    for d in range(doc_offsets.shape[0] - 1):
        n = _code_feature_hashes(buf, token_offsets, doc_offsets[d], doc_offsets[d + 1], size, seed, hashes)
        _fingerprint_one(
            hashes, n, weighting, seed, words, idf_hashes, idf_values, idf_default,
            ones, totals, sort_tmp, sort_counts, out, d,
        )  # fmt: skip


@jit
def code_feature_counts(buf, token_offsets, doc_offsets, size, seed):
    """Each document's distinct feature hashes, ascending, with how often each occurs, in
    CSR form, as ``simhash.feature_counts`` gives them for prose: (int64 doc offsets, shape
    (n + 1,); uint64 hashes; int64 counts)."""
    n_docs = doc_offsets.shape[0] - 1
    hashes = np.empty(_longest(doc_offsets), dtype=np.uint64)
    sort_tmp, sort_counts = _sort_buffers(hashes.shape[0], UNIFORM)
    out_hashes = np.empty(doc_offsets[n_docs] - doc_offsets[0], dtype=np.uint64)
    out_counts = np.empty(out_hashes.shape[0], dtype=np.int64)
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    total = 0
    for d in range(n_docs):
        n = _code_feature_hashes(buf, token_offsets, doc_offsets[d], doc_offsets[d + 1], size, seed, hashes)
        _sort_hashes(hashes, n, sort_tmp, sort_counts)
        for j in range(n):
            if j > 0 and hashes[j] == hashes[j - 1]:
                out_counts[total - 1] += 1
            else:
                out_hashes[total] = hashes[j]
                out_counts[total] = 1
                total += 1
        offsets[d + 1] = total
    return offsets, out_hashes[:total], out_counts[:total]
