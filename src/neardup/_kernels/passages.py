"""Near-duplicate passages: words, sampled word n-gram seeds, the documents that share them,
chains of shared seeds, and a banded local alignment that finds each passage's ends.

Words are cut by the fingerprint's character classes (a run of word code points, or one solo
code point such as a CJK ideograph) and compared by a 32-bit hash of their lower-cased code
points (``lower``: code point -> its lower case, for the planes it covers). Offsets are in code
points (Python ``str`` indices); an ill-formed UTF-8 sequence counts as one, as Python's
``bytes.decode("utf-8", "replace")`` makes one U+FFFD of each maximal ill-formed part.

A seed is a hash of ``size`` consecutive words, kept when ``seed % sample == 0``: the same
words give the same seed in every document, so a sampled seed is sampled wherever it occurs.
"""

from __future__ import annotations

import numba
import numpy as np

from ._jit import jit, jit_inline, jit_parallel
from .utf8 import decode

OTHER, WORD, SOLO, SPACE = 0, 1, 2, 3
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_HASH, _CHARS = 1, 2
_CHAIN_PARTS = 64
"""Parts of about equal hits that ``chain_hits`` hands to the threads."""
_OPEN_CHAINS = 16
"""Chains of one pair of documents followed at once (more: the one idle longest is closed)."""
_EXPANSIONS = 24
"""How often an alignment that comes near its region's edge may be redone on a wider region."""
_NEAR_DIAGONALS = 3
"""Diagonals either side of a chain's own that its quick count of matched words looks at."""
_BAND_GROWTH = 128
"""Diagonals a widened region gains at most on each side (indels accumulate along long copies)."""


@jit_inline
def _mix(x):
    """splitmix64's finaliser: every input bit moves every output bit."""
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


@jit_inline
def _code_point(buf, i, end):
    """(code point, bytes) at ``buf[i]``; an ill-formed sequence is (-1, the bytes of its
    maximal part: what one U+FFFD replaces)."""
    b = buf[i]
    if b < 0x80:
        return np.int64(b), 1
    cp, width = decode(buf, i, end)
    if cp >= 0:
        return cp, width
    return np.int64(-1), _ill_formed_width(buf, i, end)


@jit_inline
def _ill_formed_width(buf, i, end):
    """The bytes of the maximal ill-formed part at ``buf[i]`` (Unicode 3.9, U+FFFD
    substitution of maximal subparts, as Python decodes): a lead byte and the continuation
    bytes that could still have completed it."""
    b0 = buf[i]
    if 0xC2 <= b0 <= 0xDF:
        need, lo, hi = 1, 0x80, 0xBF
    elif 0xE0 <= b0 <= 0xEF:
        need = 2
        lo = 0xA0 if b0 == 0xE0 else 0x80
        hi = 0x9F if b0 == 0xED else 0xBF
    elif 0xF0 <= b0 <= 0xF4:
        need = 3
        lo = 0x90 if b0 == 0xF0 else 0x80
        hi = 0x8F if b0 == 0xF4 else 0xBF
    else:
        return 1
    width = 1
    while width <= need and i + width < end:
        c = buf[i + width]
        if width == 1:
            if c < lo or c > hi:
                break
        elif c < 0x80 or c > 0xBF:
            break
        width += 1
    return width


@jit
def _scan(buf, start, end, classes, lower, mode, hashes, char_first, char_last):
    """The words of ``buf[start:end]``; return how many. ``mode`` _HASH writes each word's
    hash to ``hashes``, _CHARS its code point offsets [first, last) to ``char_first`` and
    ``char_last``. The one rule of what a word is."""
    n = 0
    chars = 0
    i = start
    while i < end:
        cp, width = _code_point(buf, i, end)
        cls = classes[cp] if cp >= 0 else OTHER
        if cls != WORD and cls != SOLO:
            i += width
            chars += 1
            continue
        first = chars
        h = _FNV_OFFSET
        while True:
            lowered = lower[cp] if cp < lower.shape[0] else cp
            h = (h ^ np.uint64(lowered)) * _FNV_PRIME
            i += width
            chars += 1
            if cls == SOLO or i >= end:
                break
            cp, width = _code_point(buf, i, end)
            if cp < 0 or classes[cp] != WORD:
                break
        if mode == _HASH:
            hashes[n] = np.uint32(_mix(h) >> np.uint64(32))
        elif mode == _CHARS:
            char_first[n] = first
            char_last[n] = chars
        n += 1
    return n


@jit_parallel
def word_hashes(buf, offsets, classes, lower):
    """Every word's hash and each document's count: (uint32 hashes, int64 counts), document
    d's words ``hashes[sum(counts[:d]):][:counts[d]]``. One scan: each document's hashes go
    where its bytes are in a scratch array (a word takes a byte at least), then are packed."""
    n = offsets.shape[0] - 1
    first = offsets[0]
    scratch = np.empty(offsets[n] - first, dtype=np.uint32)
    counts = np.empty(n, dtype=np.int64)
    no_chars = np.empty(0, dtype=np.int64)
    for d in numba.prange(n):
        lo, hi = offsets[d], offsets[d + 1]
        counts[d] = _scan(buf, lo, hi, classes, lower, _HASH, scratch[lo - first :], no_chars, no_chars)
    starts = np.empty(n + 1, dtype=np.int64)
    starts[0] = 0
    for d in range(n):
        starts[d + 1] = starts[d] + counts[d]
    out = np.empty(starts[n], dtype=np.uint32)
    for d in numba.prange(n):
        at = offsets[d] - first
        out[starts[d] : starts[d + 1]] = scratch[at : at + counts[d]]
    return out, counts


@jit_parallel
def char_counts(buf, offsets):
    """Each document's length in code points, as Python counts a valid text's (int64)."""
    n = offsets.shape[0] - 1
    counts = np.empty(n, dtype=np.int64)
    for d in numba.prange(n):
        c = 0
        for i in range(offsets[d], offsets[d + 1]):
            if buf[i] & 0xC0 != 0x80:
                c += 1
        counts[d] = c
    return counts


@jit_parallel
def char_spans(buf, offsets, classes, lower, docs, words, first_word, last_word):
    """The code point offsets [start, end) of words ``first_word[q]..last_word[q]`` (inclusive)
    of document ``docs[q]``, which holds ``words[q]`` words: two int64 arrays, shape
    (len(docs),). Queries of one document come together: its words are scanned once for them,
    documents in parallel."""
    q_count = docs.shape[0]
    start = np.empty(q_count, dtype=np.int64)
    end = np.empty(q_count, dtype=np.int64)
    groups = np.empty(q_count + 1, dtype=np.int64)
    g_count = 0
    for q in range(q_count):
        if q == 0 or docs[q] != docs[q - 1]:
            groups[g_count] = q
            g_count += 1
    groups[g_count] = q_count
    no_hashes = np.empty(0, dtype=np.uint32)
    for g in numba.prange(g_count):
        q0 = groups[g]
        doc = docs[q0]
        char_first = np.empty(words[q0], dtype=np.int64)
        char_last = np.empty(words[q0], dtype=np.int64)
        _scan(buf, offsets[doc], offsets[doc + 1], classes, lower, _CHARS, no_hashes, char_first, char_last)
        for q in range(q0, groups[g + 1]):
            start[q] = char_first[first_word[q]]
            end[q] = char_last[last_word[q]]
    return start, end


@jit_inline
def _seed_at(words, t, size):
    g = np.uint64(size)
    for j in range(size):
        g = _mix(g ^ np.uint64(words[t + j]))
    return g


@jit_parallel
def count_seeds(words, word_offsets, size, sample, min_words):
    """How many sampled seeds each document with at least ``min_words`` words holds."""
    n = word_offsets.shape[0] - 1
    counts = np.zeros(n, dtype=np.int64)
    for d in numba.prange(n):
        lo, hi = word_offsets[d], word_offsets[d + 1]
        if hi - lo < min_words:
            continue
        c = 0
        for t in range(lo, hi - size + 1):
            if _seed_at(words, t, size) % np.uint64(sample) == 0:
                c += 1
        counts[d] = c
    return counts


@jit_parallel
def fill_seeds(words, word_offsets, size, sample, min_words, seed_offsets, first_doc):
    """The sampled seeds counted by ``count_seeds``: (seed uint64, document int32 numbered
    from ``first_doc``, word position int32), documents in order, positions ascending."""
    n = word_offsets.shape[0] - 1
    total = seed_offsets[n]
    seeds = np.empty(total, dtype=np.uint64)
    docs = np.empty(total, dtype=np.int32)
    positions = np.empty(total, dtype=np.int32)
    for d in numba.prange(n):
        lo, hi = word_offsets[d], word_offsets[d + 1]
        if hi - lo < min_words:
            continue
        at = seed_offsets[d]
        for t in range(lo, hi - size + 1):
            g = _seed_at(words, t, size)
            if g % np.uint64(sample) == 0:
                seeds[at] = g
                docs[at] = first_doc + d
                positions[at] = t - lo
                at += 1
    return seeds, docs, positions


@jit
def seed_hits(seeds, docs, positions, common_docs):
    """Pairs of occurrences of one seed in two documents, from seeds sorted with their
    documents ascending within a seed: (doc_a, doc_b, pos_a, pos_b), doc_a < doc_b, and for
    each occurrence of a common seed (in ``common_docs`` documents or more), which makes no
    pairs, its number of documents (0 for the others: int32). A seed with more than
    4 * ``common_docs`` occurrences in fewer documents (a phrase repeated within documents)
    pairs only each document's first occurrence, so no seed makes more than
    ``common_docs ** 2 / 2`` pairs."""
    common = np.zeros(seeds.shape[0], dtype=np.int32)
    none = np.empty(0, dtype=np.int32)
    total = _seed_pairs(seeds, docs, positions, common_docs, common, False, none, none, none, none)
    doc_a = np.empty(total, dtype=np.int32)
    doc_b = np.empty(total, dtype=np.int32)
    pos_a = np.empty(total, dtype=np.int32)
    pos_b = np.empty(total, dtype=np.int32)
    _seed_pairs(seeds, docs, positions, common_docs, common, True, doc_a, doc_b, pos_a, pos_b)
    return doc_a, doc_b, pos_a, pos_b, common


@jit
def _seed_pairs(seeds, docs, positions, common_docs, common, fill, doc_a, doc_b, pos_a, pos_b):
    """``seed_hits``' two passes: count the pairs and mark ``common``, then ``fill``."""
    n = seeds.shape[0]
    at = 0
    s = 0
    while s < n:
        e = s + 1
        distinct = 1
        while e < n and seeds[e] == seeds[s]:
            if docs[e] != docs[e - 1]:
                distinct += 1
            e += 1
        if distinct >= common_docs:
            for x in range(s, e):
                common[x] = distinct
        elif distinct > 1:
            firsts_only = e - s > 4 * common_docs
            for x in range(s, e):
                if firsts_only and x > s and docs[x] == docs[x - 1]:
                    continue
                for y in range(x + 1, e):
                    if docs[y] == docs[x] or (firsts_only and docs[y] == docs[y - 1]):
                        continue
                    if fill:
                        doc_a[at] = docs[x]
                        doc_b[at] = docs[y]
                        pos_a[at] = positions[x]
                        pos_b[at] = positions[y]
                    at += 1
        s = e
    return at


@jit_parallel
def chain_hits(doc_a, doc_b, pos_a, pos_b, n_docs, max_gap, max_drift, min_hits, min_span):
    """Chains of hits that lie along one diagonal (``pos_b - pos_a`` drifting at most
    ``max_drift`` words from one hit to the next, at most ``max_gap`` words apart in a), from
    hits in any order, documents below ``n_docs``. Returns, per chain of more than
    ``min_hits`` hits, or of ``min_hits`` whose first and last lie ``min_span`` words apart or
    more (two overlapping seeds are one shared phrase of a few words, no passage): doc_a,
    doc_b, first and last pos_a, first and last pos_b, lowest and highest diagonal; by doc_a.

    The hits are bucketed by doc_a (a counting sort), and the buckets chained in parallel:
    each sorts its own hits by doc_b, and each pair's by (pos_a, pos_b), small sorts that are
    cheaper than one of every hit by four keys."""
    n = doc_a.shape[0]
    min_hits = max(min_hits, 1)
    starts = np.zeros(n_docs + 1, dtype=np.int64)
    for h in range(n):
        starts[doc_a[h] + 1] += 1
    room = np.zeros(n_docs + 1, dtype=np.int64)  # a bucket of m hits makes m // min_hits chains at most
    for d in range(n_docs):
        room[d + 1] = room[d] + starts[d + 1] // min_hits
        starts[d + 1] += starts[d]
    order = np.empty(n, dtype=np.int64)
    fill = starts[:-1].copy()
    for h in range(n):
        order[fill[doc_a[h]]] = h
        fill[doc_a[h]] += 1
    out = np.empty((room[n_docs], 8), dtype=np.int64)
    found = np.zeros(n_docs, dtype=np.int64)
    # Parts of about equal hits, many more than threads: early documents pair with more of the
    # later ones, and prange gives each thread one run of its parts.
    parts = np.empty(_CHAIN_PARTS + 1, dtype=np.int64)
    for p in range(_CHAIN_PARTS + 1):
        parts[p] = min(np.searchsorted(starts, n * p // _CHAIN_PARTS), n_docs)
    parts[_CHAIN_PARTS] = n_docs
    for part in numba.prange(_CHAIN_PARTS):
        for d in range(parts[part], parts[part + 1]):
            _chain_document(
                doc_b,
                pos_a,
                pos_b,
                order,
                starts,
                room,
                found,
                d,
                max_gap,
                max_drift,
                min_hits,
                min_span,
                out,
            )
    total = 0
    for d in range(n_docs):  # close up the buckets' rooms, rows moving only down
        for r in range(room[d], room[d] + found[d]):
            out[total] = out[r]
            total += 1
    return out[:total].copy()


@jit
def _chain_document(
    doc_b, pos_a, pos_b, order, starts, room, found, d, max_gap, max_drift, min_hits, min_span, out
):
    """``chain_hits``' work for the hits of document ``d`` as doc_a, ``order[starts[d]:starts[d + 1]]``:
    its chains from row ``room[d]`` of ``out`` on, ``found[d]`` of them."""
    lo, hi = starts[d], starts[d + 1]
    if hi - lo < min_hits:  # most documents share one seed with another: no chain
        return
    by_b = np.empty(hi - lo, dtype=np.int64)
    for x in range(lo, hi):
        by_b[x - lo] = (np.int64(doc_b[order[x]]) << 32) | (x - lo)
    by_b.sort()
    at = room[d]
    s = 0
    while s < hi - lo:
        e = s + 1
        while e < hi - lo and by_b[e] >> 32 == by_b[s] >> 32:
            e += 1
        if e - s >= min_hits:  # most pairs share one seed: no chain
            local = np.empty(e - s, dtype=np.int64)
            for x in range(s, e):
                h = order[lo + (by_b[x] & 0xFFFFFFFF)]
                local[x - s] = (np.int64(pos_a[h]) << 32) | np.int64(pos_b[h])
            local.sort()
            at = _chain_pair(local, d, by_b[s] >> 32, max_gap, max_drift, min_hits, min_span, out, at)
        s = e
    found[d] = at - room[d]


@jit
def _chain_pair(hits, da, db, max_gap, max_drift, min_hits, min_span, out, found):
    """``chain_hits`` for one pair of documents, whose hits are ``pos_a << 32 | pos_b``,
    ascending: the chains worth keeping are written to ``out`` from row ``found`` on."""
    # Open chains: first_a, last_a, first_b, last_b, last_d, low_d, high_d, hits
    chains = np.empty((_OPEN_CHAINS, 8), dtype=np.int64)
    open_count = 0
    for hit in hits:
        a, b = hit >> 32, hit & 0xFFFFFFFF
        d = b - a
        # Close the chains this hit is too far past.
        c = 0
        while c < open_count:
            if a - chains[c, 1] > max_gap:
                if _worth(chains[c], min_hits, min_span):
                    found = _emit(out, found, da, db, chains[c])
                open_count -= 1
                chains[c] = chains[open_count]
            else:
                c += 1
        best = -1
        best_drift = max_drift + 1
        for c in range(open_count):
            drift = abs(d - chains[c, 4])
            if drift < best_drift and b >= chains[c, 3] and (a > chains[c, 1] or b > chains[c, 3]):
                best, best_drift = c, drift
        if best >= 0:
            chains[best, 1] = a
            chains[best, 3] = b
            chains[best, 4] = d
            chains[best, 5] = min(chains[best, 5], d)
            chains[best, 6] = max(chains[best, 6], d)
            chains[best, 7] += 1
            continue
        if open_count == _OPEN_CHAINS:  # close the one idle longest
            oldest = 0
            for c in range(1, open_count):
                if chains[c, 1] < chains[oldest, 1]:
                    oldest = c
            if _worth(chains[oldest], min_hits, min_span):
                found = _emit(out, found, da, db, chains[oldest])
            open_count -= 1
            chains[oldest] = chains[open_count]
        chains[open_count, 0] = a
        chains[open_count, 1] = a
        chains[open_count, 2] = b
        chains[open_count, 3] = b
        chains[open_count, 4] = d
        chains[open_count, 5] = d
        chains[open_count, 6] = d
        chains[open_count, 7] = 1
        open_count += 1
    for c in range(open_count):
        if _worth(chains[c], min_hits, min_span):
            found = _emit(out, found, da, db, chains[c])
    return found


@jit_inline
def _worth(chain, min_hits, min_span):
    return chain[7] > min_hits or (chain[7] == min_hits and chain[1] - chain[0] >= min_span)


@jit_inline
def _emit(out, found, da, db, chain):
    out[found, 0] = da
    out[found, 1] = db
    out[found, 2] = chain[0]
    out[found, 3] = chain[1]
    out[found, 4] = chain[2]
    out[found, 5] = chain[3]
    out[found, 6] = chain[5]
    out[found, 7] = chain[6]
    return found + 1


@jit
def _align(a, b, masked_a, masked_b, row_lo, row_hi, d_lo, d_hi, match, mismatch, gap, result):
    """Best local alignment of ``a[row_lo:row_hi]`` with ``b``, on diagonals ``j - i`` in
    [d_lo, d_hi] (Smith-Waterman in a band; linear gaps), a word that is ``masked`` (non-zero
    uint8, one per word) matching none. ``result`` gets: first i, last i, first j, last j,
    matched words, score (0: nothing aligned)."""
    width = d_hi - d_lo + 1
    nb = b.shape[0]
    # Row i's cell k is (i, i + d_lo + k): its diagonal neighbour (i-1, j-1) is the previous
    # row's cell k, (i-1, j) the previous row's k+1 (cell ``width`` stays 0), (i, j-1) the
    # cell just computed. A cell holds its score, where its alignment starts (i << 32 | j)
    # and the words it matched; the first row's neighbours above are zeros.
    prev_h = np.zeros(width + 1, dtype=np.int64)
    prev_start = np.zeros(width + 1, dtype=np.int64)
    prev_m = np.zeros(width + 1, dtype=np.int64)
    cur_h = np.zeros(width + 1, dtype=np.int64)
    cur_start = np.zeros(width + 1, dtype=np.int64)
    cur_m = np.zeros(width + 1, dtype=np.int64)
    best = 0
    best_start = 0
    for r in range(6):
        result[r] = 0
    for i in range(row_lo, row_hi):
        left_h = 0
        left_start = 0
        left_m = 0
        for k in range(width):
            j = i + d_lo + k
            if j < 0 or j >= nb:
                cur_h[k] = 0
                left_h = 0
                continue
            same = a[i] == b[j] and masked_a[i] == 0 and masked_b[j] == 0
            h = 0
            start = (np.int64(i) << 32) | j
            m = 0
            if same:
                h = match
                m = 1
            up_left = prev_h[k]
            if up_left > 0:
                v = up_left + (match if same else -mismatch)
                if v > h:
                    h, start, m = v, prev_start[k], prev_m[k] + (1 if same else 0)
            up = prev_h[k + 1]
            if up > 0 and up - gap > h:
                h, start, m = up - gap, prev_start[k + 1], prev_m[k + 1]
            if left_h > 0 and left_h - gap > h:
                h, start, m = left_h - gap, left_start, left_m
            cur_h[k] = h
            cur_start[k] = start
            cur_m[k] = m
            left_h, left_start, left_m = h, start, m
            if h > best:
                best = h
                best_start = start
                result[1] = i
                result[3] = j
                result[4] = m
                result[5] = h
        prev_h, cur_h = cur_h, prev_h
        prev_start, cur_start = cur_start, prev_start
        prev_m, cur_m = cur_m, prev_m
    if best > 0:
        result[0] = best_start >> 32
        result[2] = best_start & 0xFFFFFFFF


@jit
def _diagonal_matches(a, b, masked_a, masked_b, row_lo, row_hi, d_lo, d_hi):
    """The rows of ``a[row_lo:row_hi]`` whose word and the next lie in ``b`` on one of the
    diagonals [d_lo, d_hi], none of the four ``masked``: two words in a row, since frequent
    words ("the", "of") match on some diagonal near any row by chance; a cheap bound on an
    alignment in that band."""
    found = 0
    nb = b.shape[0]
    for i in range(row_lo, min(row_hi, a.shape[0] - 1)):
        if masked_a[i] or masked_a[i + 1]:
            continue
        for d in range(d_lo, d_hi + 1):
            j = i + d
            if (
                0 <= j < nb - 1
                and a[i] == b[j]
                and a[i + 1] == b[j + 1]
                and masked_b[j] == 0
                and masked_b[j + 1] == 0
            ):
                found += 1
                break
    return found


@jit_parallel
def align_chains(
    words,
    word_offsets,
    masked,
    chains,
    bounds,
    size,
    margin,
    band,
    match,
    mismatch,
    gap,
    min_matches,
    skip_covered,
):
    """The best local alignment around each chain (``chain_hits``' rows, those of one pair of
    documents together, by first word in a): int64, shape (len(chains), 6) of first and last
    word in a, first and last word in b (positions within each document), matched words and
    score. All 0 for a chain with fewer than ``min_matches`` words matched along its own
    diagonals, a few either side (a shared phrase, not a passage: most chains, and cheaper to
    count than to align), and with ``skip_covered`` for one inside what an earlier chain of
    its pair aligned to, along the same diagonals (a long passage makes many chains). The
    region is the chain's words widened by ``margin`` words, its diagonals by ``band``; a
    region whose best alignment ends within ``margin // 2`` words of its edge (an edit there
    can stop it short of the copy's end) is widened and aligned again, never past the words
    [``bounds[c, 0]``, ``bounds[c, 1]``) of a. A word that is ``masked`` (uint8, one per word
    of ``words``; text reported apart, a common passage) matches none."""
    n = chains.shape[0]
    out = np.zeros((n, 6), dtype=np.int64)
    starts = np.empty(n + 1, dtype=np.int64)
    groups = 0
    for c in range(n):
        if c == 0 or chains[c, 0] != chains[c - 1, 0] or chains[c, 1] != chains[c - 1, 1]:
            starts[groups] = c
            groups += 1
    starts[groups] = n
    for g in numba.prange(groups):
        for c in range(starts[g], starts[g + 1]):
            if not (skip_covered and _covered(out, chains, starts[g], c, size, band)):
                _align_chain(
                    words,
                    word_offsets,
                    masked,
                    chains[c],
                    bounds[c],
                    size,
                    margin,
                    band,
                    match,
                    mismatch,
                    gap,
                    min_matches,
                    out[c],
                )
    return out


@jit
def _covered(out, chains, first, c, size, band):
    """Whether chain ``c`` lies inside an alignment of an earlier chain of its pair
    (``first``..``c - 1``), on the diagonals it spans give or take ``band``."""
    for k in range(first, c):
        if out[k, 5] == 0 or out[k, 0] > chains[c, 2] or chains[c, 3] + size - 1 > out[k, 1]:
            continue
        d_start, d_end = out[k, 2] - out[k, 0], out[k, 3] - out[k, 1]
        if min(d_start, d_end) - band <= chains[c, 6] and chains[c, 7] <= max(d_start, d_end) + band:
            return True
    return False


@jit
def _align_chain(
    words, word_offsets, masked, chain, bounds, size, margin, band, match, mismatch, gap, min_matches, result
):
    """``align_chains``' work for one chain, into ``result``."""
    da, db = chain[0], chain[1]
    a = words[word_offsets[da] : word_offsets[da + 1]]
    b = words[word_offsets[db] : word_offsets[db + 1]]
    masked_a = masked[word_offsets[da] : word_offsets[da + 1]]
    masked_b = masked[word_offsets[db] : word_offsets[db + 1]]
    lowest, highest = max(bounds[0], 0), min(bounds[1], a.shape[0])
    widen = margin
    slack = margin // 2
    row_lo = max(chain[2] - widen, lowest)
    row_hi = min(chain[3] + size + widen, highest)
    if row_lo >= row_hi:
        return
    if min_matches > 0:
        near = _NEAR_DIAGONALS
        found = _diagonal_matches(a, b, masked_a, masked_b, row_lo, row_hi, chain[6] - near, chain[7] + near)
        if found < min_matches:
            return
    d_lo, d_hi = chain[6] - band, chain[7] + band
    for _ in range(_EXPANSIONS):
        _align(a, b, masked_a, masked_b, row_lo, row_hi, d_lo, d_hi, match, mismatch, gap, result)
        near_start = row_lo > lowest and result[0] - row_lo < slack
        near_end = row_hi < highest and row_hi - 1 - result[1] < slack
        if result[5] == 0 or not (near_start or near_end):
            return
        widen *= 2
        if near_start:
            row_lo = max(row_lo - widen, lowest)
        if near_end:
            row_hi = min(row_hi + widen, highest)
        grown = min(widen // 8, _BAND_GROWTH)
        d_lo, d_hi = chain[6] - band - grown, chain[7] + band + grown


@jit
def common_runs(docs, positions, seeds, counts, size, max_gap, min_words):
    """Runs of common seeds within documents, from common occurrences sorted by (document,
    position): seeds at most ``max_gap`` words apart, in about as many documents each
    (``counts``, within a factor of 1.25: two common passages side by side, a footer in 200
    pages and another after it in 120, make two runs), spanning ``min_words`` words or more.
    Returns int64 rows of (document, first word, last word, the run's smallest seed as int64,
    its position): near-identical copies of one passage mostly share that smallest seed (a
    MinHash), and where it lies in each says how the copies line up."""
    n = docs.shape[0]
    out = np.empty((n + 1, 5), dtype=np.int64)
    found = 0
    s = 0
    while s < n:
        e = s + 1
        low = seeds[s]
        low_at = positions[s]
        while (
            e < n
            and docs[e] == docs[s]
            and positions[e] - positions[e - 1] <= max_gap
            and 4 * counts[e] <= 5 * counts[e - 1]
            and 4 * counts[e - 1] <= 5 * counts[e]
        ):
            if seeds[e] < low:
                low = seeds[e]
                low_at = positions[e]
            e += 1
        last = np.int64(positions[e - 1]) + size - 1
        if last - positions[s] + 1 >= min_words:
            out[found, 0] = docs[s]
            out[found, 1] = positions[s]
            out[found, 2] = last
            out[found, 3] = np.int64(low >> np.uint64(1))
            out[found, 4] = low_at
            found += 1
        s = e
    return out[:found].copy()
