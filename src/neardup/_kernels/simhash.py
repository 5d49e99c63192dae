"""SimHash over Arrow-style text buffers: tokenise, shingle, hash, weight, accumulate.

Every step of docs/fingerprint-spec.md runs here, compiled, over one UTF-8 byte buffer plus
int64 offsets (document d is ``buf[offsets[d]:offsets[d + 1]]``), with no Python object per
token. ASCII letters are lowered here, and code points the normalisation table replaces alone
are replaced here where they can be (``_mark_non_ascii``). The fingerprint kernels take
documents as they come and hand back (UNPREPARED) any with ill-formed UTF-8 or a code point
whose normalisation they cannot apply, for ``text_buffers.prepare`` to ready; ``feature_counts`` and
``feature_spans`` take prepared text.
"""

from __future__ import annotations

import numba
import numpy as np

from ._jit import jit, jit_inline, jit_parallel
from ._memory import load_u64, store_u64, trailing_zeros
from .utf8 import char_at, decode
from .xxh3 import xxh3_3u64, xxh3_64, xxh3_u64, xxh3_upto16

# Character classes (src/neardup/_data/unicode_classes.txt).
OTHER, WORD, SOLO, SPACE = 0, 1, 2, 3
# Feature kinds and weightings, as FingerprintConfig names them.
WORDS, SHINGLES, CHAR_NGRAMS = 0, 1, 2
UNIFORM, TF, SUBLINEAR, TFIDF = 0, 1, 2, 3
# A document's feature count when it must be prepared first (``_feature_hashes``).
UNPREPARED = -1
# Code point actions (features.KEEP, features.REPLACE).
KEEP, REPLACE = 1, 2

# Eight bytes at a time (SWAR): each byte's top bit answers a question about that byte.
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_TOP = np.uint64(0x8080808080808080)
_EACH = np.uint64(0x0101010101010101)
_CASE = np.uint64(0x2020202020202020)


@jit_inline
def _in_range(x, lo, hi):
    """Top bit of each byte of ``x`` (all bytes < 0x80) set iff lo <= byte <= hi. No byte can
    carry into the next: each sum stays below 0x100."""
    at_least_lo = x + np.uint64(0x80 - lo) * _EACH
    above_hi = x + np.uint64(0x7F - hi) * _EACH
    return at_least_lo & ~above_hi & _TOP


@jit_inline
def _ascii_word_bytes(w):
    """Top bit of each byte of ``w`` set iff it is an ASCII letter or digit (the ASCII word
    characters of the class table)."""
    x = w & _LOW7
    letters = _in_range(x | _CASE, 0x61, 0x7A)
    return (letters | _in_range(x, 0x30, 0x39)) & ~w


@jit_inline
def _ascii_upper_bytes(w):
    return _in_range(w & _LOW7, 0x41, 0x5A) & ~w


_GATHER = np.uint64(0x0102040810204080)
_ALL = ~np.uint64(0)


@jit_inline
def _byte_flags(top_bits):
    """The top bit of each byte of ``top_bits`` as one bit per byte: byte k -> bit k. (The
    multiply's partial products land on distinct bits, so nothing carries.)"""
    return ((top_bits >> np.uint64(7)) * _GATHER) >> np.uint64(56)


@jit
def _token_hashes(buf, start, end, classes, table, lut, seed, text, bitmap, hashes):
    """Hash each token of one document (XXH3 of its UTF-8 bytes, ASCII mapped through ``lut``)
    into ``hashes`` in document order; return how many tokens there are, or UNPREPARED (see
    ``_feature_hashes``).

    Two passes with few branches. First a bit per byte, "in a token", eight bytes per step
    (``bitmap[2 * b]`` for bytes 64b..64b+63), with the document copied, mapped, to ``text``;
    non-ASCII code points, if any, are then classed one by one (``_mark_non_ascii``), and a
    solo one also gets a "token starts here" bit at its first byte and after its last
    (``bitmap[2 * b + 1]``).
    Then each token, a run of set bits cut at start bits, is found with two trailing-zero
    counts and hashed from ``text``. About 1.6x faster than a scalar scan on English, which
    waits on each byte's class before it can look at the next."""
    n = end - start
    lowering = lut[65] != 65
    case = _CASE if lowering else np.uint64(0)
    high = np.uint64(0)
    full = n >> 6
    for b in range(full):
        at = start + (b << 6)
        bits = np.uint64(0)
        for k in range(8):
            w = load_u64(buf, at + 8 * k)
            high |= w
            bits |= _byte_flags(_ascii_word_bytes(w)) << np.uint64(8 * k)
            store_u64(text, (b << 6) + 8 * k, w | ((_ascii_upper_bytes(w) >> np.uint64(2)) & case))
        bitmap[2 * b] = bits
    blocks = (n + 63) >> 6
    if n & 63:
        bits = np.uint64(0)
        for p in range(full << 6, n):
            c = buf[start + p]
            high |= np.uint64(c)
            text[p] = lut[c]
            if c < 0x80 and classes[c] == WORD:
                bits |= np.uint64(1) << np.uint64(p & 63)
        bitmap[2 * full] = bits
    # A zero word past the end closes a token that runs to the last byte, so XXH3 has one
    # call site (each call site inlines the whole hash, compiled anew).
    bitmap[2 * blocks] = 0
    marked = high & _TOP != 0
    if marked:
        for b in range(blocks + 1):
            bitmap[2 * b + 1] = 0
        if not _mark_non_ascii(buf, start, end, classes, table, text, bitmap):
            return UNPREPARED
    n_tok = 0
    open_at = -1  # where the token being read starts, or -1
    for b in range(blocks + 1):
        m = bitmap[2 * b]
        cuts = bitmap[2 * b + 1] if marked else np.uint64(0)
        base = b << 6
        while True:
            if open_at < 0:
                if m == 0:
                    break
                s = trailing_zeros(m)
                open_at = base + np.int64(s)
                # The token ends at the first clear bit or start bit after its first.
                gaps = (~m | (cuts & ~(np.uint64(1) << s))) & (_ALL << s)
            else:  # a token from the previous word goes on from bit 0, unless cut there
                gaps = ~m | cuts
            if gaps == 0:
                break  # it goes on into the next word
            e = trailing_zeros(gaps)
            close_at = base + np.int64(e)
            # Most tokens are short: hashed from two loads (``text`` has 8 bytes to spare).
            if close_at - open_at <= 16:
                first8 = load_u64(text, open_at)
                last8 = load_u64(text, close_at - 8) if close_at - open_at > 8 else first8
                hashes[n_tok] = xxh3_upto16(first8, last8, close_at - open_at, seed)
            else:
                hashes[n_tok] = xxh3_64(text, open_at, close_at, seed)
            n_tok += 1
            open_at = -1
            m &= _ALL << e
    return n_tok


@jit
def _mark_non_ascii(buf, start, end, classes, table, text, bitmap):
    """Set the bits ``_token_hashes`` could not see in its ASCII pass (``_mark``), normalising
    on the way where ``table`` (the arrays of a ``features.NormalizationTable``: actions,
    replacement offsets, replacement bytes; empty actions: the text is ready) says a code
    point is replaced in any context: in ``text`` when its replacement is as long, or by
    marking nothing when no token character is in it (punctuation). False if the document
    must be prepared first (``text_buffers.prepare``): ill-formed UTF-8, or a code point that needs
    more."""
    actions, replacement_offsets, replacement_bytes = table
    checking = actions.shape[0] > 0
    i = start
    while i < end:
        if i + 8 <= end and load_u64(buf, i) & _TOP == 0:
            i += 8
            continue
        if buf[i] < 0x80:
            i += 1
            continue
        cp, width = decode(buf, i, end)
        if cp < 0:
            return False
        action = KEEP
        if checking:
            action = actions[cp] if cp < actions.shape[0] else 0  # 0: to Python
        p = i - start
        if action == KEEP:
            _mark(bitmap, p, width, classes[cp])
        elif action == REPLACE:
            first = replacement_offsets[cp]
            last = replacement_offsets[cp + 1]
            in_place = last - first == width
            q = first
            while q < last:
                part, part_width = char_at(replacement_bytes, q)
                cls = classes[part]
                if cls in (WORD, SOLO):
                    if not in_place:
                        return False
                    _mark(bitmap, p + q - first, part_width, cls)
                q += part_width
            if in_place:
                for k in range(width):
                    text[p + k] = replacement_bytes[first + k]
        else:
            return False
        i += width
    return True


@jit_inline
def _mark(bitmap, p, width, cls):
    """Mark the code point of class ``cls`` at bytes ``p:p + width`` of the document in the
    ``_token_hashes`` bitmap: each byte of a word or solo one is in a token, and a solo one
    starts a token and ends it."""
    if cls in (WORD, SOLO):
        last = p + width - 1
        ones = (np.uint64(1) << np.uint64(width)) - np.uint64(1)
        bitmap[2 * (p >> 6)] |= ones << np.uint64(p & 63)  # bits past 63 fall off...
        if last >> 6 != p >> 6:  # ...and go to the next word
            bitmap[2 * (last >> 6)] |= ones >> np.uint64(64 - (p & 63))
        if cls == SOLO:
            q = p + width
            bitmap[2 * (p >> 6) + 1] |= np.uint64(1) << np.uint64(p & 63)
            bitmap[2 * (q >> 6) + 1] |= np.uint64(1) << np.uint64(q & 63)


@jit_inline
def _ready(cp, actions):
    """Whether a non-ASCII code point (-1: ill-formed UTF-8) can be tokenised as it stands:
    well-formed and, when checking (``actions`` not empty), one normalisation keeps. ``actions``
    covers the code points below its length; any above is not ready."""
    if cp < 0:
        return False
    return actions.shape[0] == 0 or (cp < actions.shape[0] and actions[cp] == KEEP)


@jit
def _collapse_spaces(buf, start, end, classes, actions, lut, scratch, char_start):
    """Write the document with each run of whitespace made one space, ends stripped; return its
    length in code points (or UNPREPARED). Code point c is
    ``scratch[char_start[c]:char_start[c + 1]]``."""
    n_chars = 0
    pos = 0
    pending_space = False
    i = start
    while i < end:
        if buf[i] < 0x80:
            cp, width = np.int64(buf[i]), 1
        else:
            cp, width = decode(buf, i, end)
            if not _ready(cp, actions):
                return UNPREPARED
        if classes[cp] == SPACE:
            pending_space = n_chars > 0
        else:
            if pending_space:
                char_start[n_chars] = pos
                scratch[pos] = 32
                pos += 1
                n_chars += 1
                pending_space = False
            char_start[n_chars] = pos
            if width == 1:
                scratch[pos] = lut[buf[i]]
            else:
                for k in range(width):
                    scratch[pos + k] = buf[i + k]
            pos += width
            n_chars += 1
        i += width
    char_start[n_chars] = pos
    return n_chars


@jit
def _feature_hashes(buf, start, end, classes, table, lut, kind, size, seed, scratch, starts, bitmap, hashes):
    """Fill ``hashes`` with the first 64-bit hash of each feature of one document, in document
    order; return how many. ``starts`` is needed for char n-grams only, ``bitmap`` for words.

    Return UNPREPARED instead for a document the kernels cannot take as it is: ill-formed
    UTF-8, or, normalising with ``table`` (the arrays of ``features.normalization_table()``, or
    of one whose actions are a prefix of it; empty actions: not checked), a code point whose
    normalisation the kernels cannot apply themselves (``_mark_non_ascii``; char n-grams apply
    none). ``text_buffers.prepare`` makes it ready."""
    if kind == CHAR_NGRAMS:
        n_chars = _collapse_spaces(buf, start, end, classes, table[0], lut, scratch, starts)
        if n_chars <= 0:
            return n_chars
        if n_chars < size:
            hashes[0] = xxh3_64(scratch, 0, starts[n_chars], seed)
            return 1
        for c in range(n_chars - size + 1):
            first, last = starts[c], starts[c + size]
            if last - first <= 16:  # as for tokens (``scratch`` has 8 bytes to spare)
                first8 = load_u64(scratch, first)
                last8 = load_u64(scratch, last - 8) if last - first > 8 else first8
                hashes[c] = xxh3_upto16(first8, last8, last - first, seed)
            else:
                hashes[c] = xxh3_64(scratch, first, last, seed)
        return n_chars - size + 1
    n_tok = _token_hashes(buf, start, end, classes, table, lut, seed, scratch, bitmap, hashes)
    if kind != SHINGLES:
        return n_tok
    return shingle_hashes(hashes, n_tok, size, seed)


@jit_inline
def shingle_hashes(hashes, n_tok, size, seed):
    """The first ``n_tok`` token hashes made shingles of ``size`` tokens in place (left as they
    are when there are fewer); returns how many. A shingle's hash is XXH3 of its tokens'
    hashes (8 little-endian bytes each); shingle t overwrites token t, which no later
    shingle reads. Word shingles and code shingles alike."""
    if n_tok < size:
        return n_tok
    if size == 3:  # the default, from registers
        a, b = hashes[0], hashes[1]
        for t in range(n_tok - 2):
            c = hashes[t + 2]
            hashes[t] = xxh3_3u64(a, b, c, seed)
            a, b = b, c
        return n_tok - 2
    hash_bytes = hashes.view(np.uint8)
    for t in range(n_tok - size + 1):
        hashes[t] = xxh3_64(hash_bytes, 8 * t, 8 * (t + size), seed)
    return n_tok - size + 1


@jit_inline
def _spill(lane, ones, base, r):
    """Add the eight byte counters of ``lane`` (bits base + r, base + 8 + r, ...) into ``ones``."""
    for byte in range(8):
        ones[base + 8 * byte + r] += np.int64((lane >> np.uint64(8 * byte)) & np.uint64(0xFF))


@jit
def _count_word(hashes, n, seed, second, ones, base):
    """Add into ``ones[base:base + 64]`` how many of ``hashes[:n]`` have each bit set (of the
    hash itself, or with ``second`` of its 128-bit second word). Eight byte-wide counters add
    eight bits at a time (SWAR), kept in registers and spilled before any can overflow."""
    j = 0
    while j < n:
        stop = min(n, j + 255)
        c0 = c1 = c2 = c3 = c4 = c5 = c6 = c7 = np.uint64(0)
        for k in range(j, stop):
            h = xxh3_u64(hashes[k], seed) if second else hashes[k]
            c0 += h & _EACH
            c1 += (h >> np.uint64(1)) & _EACH
            c2 += (h >> np.uint64(2)) & _EACH
            c3 += (h >> np.uint64(3)) & _EACH
            c4 += (h >> np.uint64(4)) & _EACH
            c5 += (h >> np.uint64(5)) & _EACH
            c6 += (h >> np.uint64(6)) & _EACH
            c7 += (h >> np.uint64(7)) & _EACH
        _spill(c0, ones, base, 0)
        _spill(c1, ones, base, 1)
        _spill(c2, ones, base, 2)
        _spill(c3, ones, base, 3)
        _spill(c4, ones, base, 4)
        _spill(c5, ones, base, 5)
        _spill(c6, ones, base, 6)
        _spill(c7, ones, base, 7)
        j = stop


@jit
def _idf_of(h, idf_hashes, idf_values, idf_default):
    k = np.searchsorted(idf_hashes, h)
    if k < idf_hashes.shape[0] and idf_hashes[k] == h:
        return idf_values[k]
    return idf_default


@jit_inline
def _real_weight(h, count, weighting, idf_hashes, idf_values, idf_default):
    """The weight of a feature of hash ``h`` occurring ``count`` times, under ``sublinear``
    (1 + ln c) or ``tfidf`` (c * idf): docs/fingerprint-spec.md, section 6."""
    if weighting == TFIDF:
        return count * _idf_of(h, idf_hashes, idf_values, idf_default)
    return 1.0 + np.log(np.float64(count))


@jit_inline
def _add_weighted(totals, h, weight, seed, words):
    """V += weight * (+1 where the feature's hyperplane bit is 1, -1 where it is 0)."""
    for w in range(words):
        hw = h if w == 0 else xxh3_u64(h, seed)
        for b in range(64):
            if (hw >> np.uint64(b)) & np.uint64(1):
                totals[64 * w + b] += weight
            else:
                totals[64 * w + b] -= weight


@jit_inline
def _sign_bits(totals, words, out, d):
    """``out[d]``: bit i set iff ``totals[i] > 0`` (a tie gives 0)."""
    for w in range(words):
        word = np.uint64(0)
        for b in range(64):
            if totals[64 * w + b] > 0:
                word |= np.uint64(1) << np.uint64(b)
        out[d, w] = word


_SORT_MAX_BITS = 16


@jit_inline
def _bucket_bits(n):
    """How many top bits ``_sort_hashes`` buckets ``n`` hashes by: about one bucket per hash."""
    bits = 4
    while (1 << bits) < n and bits < _SORT_MAX_BITS:
        bits += 1
    return bits


@jit
def _sort_buffers(n, weighting):
    """Scratch for ``_sort_hashes`` of up to ``n`` hashes (tf needs no sort: one-element
    placeholders). Bucket counts for ``n``, not the most buckets (2**16 + 1 counts, 512 KiB):
    a chunk of short documents needs few."""
    if weighting == TF:
        return np.empty(1, dtype=np.uint64), np.empty(1, dtype=np.int64)
    return np.empty(n, dtype=np.uint64), np.empty((1 << _bucket_bits(n)) + 1, dtype=np.int64)


@jit
def _sort_hashes(hashes, n, tmp, counts):
    """Sort ``hashes[:n]`` ascending. Feature hashes are uniform, so a counting sort on their
    top bits (about one bucket per hash) leaves only the few inversions inside buckets for an
    insertion sort to fix: linear time, where np.sort's quicksort pays n log n in
    mispredicted branches (measured: sorting was most of a uniform or sublinear fingerprint)."""
    if n <= 16:
        _insertion_sort(hashes, n)
        return
    bits = _bucket_bits(n)
    shift = np.uint64(64 - bits)
    n_buckets = 1 << bits
    counts[: n_buckets + 1] = 0
    for j in range(n):
        counts[np.int64(hashes[j] >> shift) + 1] += 1
    for b in range(n_buckets):
        counts[b + 1] += counts[b]
    for j in range(n):
        k = np.int64(hashes[j] >> shift)
        tmp[counts[k]] = hashes[j]
        counts[k] += 1
    hashes[:n] = tmp[:n]
    _insertion_sort(hashes, n)


@jit_inline
def _insertion_sort(a, n):
    for j in range(1, n):
        v = a[j]
        i = j
        while i > 0 and a[i - 1] > v:
            a[i] = a[i - 1]
            i -= 1
        a[i] = v


@jit
def _fingerprint_one(
    hashes,
    n,
    weighting,
    seed,
    words,
    idf_hashes,
    idf_values,
    idf_default,
    ones,
    totals,
    sort_tmp,
    sort_counts,
    out,
    d,
):
    """Fingerprint one document from its feature hashes (``hashes[:n]``, reordered in place)."""
    bits = 64 * words
    if weighting in (TF, UNIFORM):
        if weighting == UNIFORM and n > 1:
            # Set semantics: each distinct feature once.
            _sort_hashes(hashes, n, sort_tmp, sort_counts)
            m = 1
            for j in range(1, n):
                if hashes[j] != hashes[m - 1]:
                    hashes[m] = hashes[j]
                    m += 1
            n = m
        ones[:bits] = 0
        _count_word(hashes, n, seed, False, ones, 0)
        if words == 2:
            _count_word(hashes, n, seed, True, ones, 64)
        # V[i] = ones - zeros = 2 * ones - n.
        for i in range(bits):
            ones[i] = 2 * ones[i] - n
        _sign_bits(ones, words, out, d)
        return
    # Real-valued weights: sum in ascending order of the first hash, fixed by the spec.
    _sort_hashes(hashes, n, sort_tmp, sort_counts)
    totals[:bits] = 0.0
    j = 0
    while j < n:
        h = hashes[j]
        count = 1
        while j + count < n and hashes[j + count] == h:
            count += 1
        j += count
        weight = _real_weight(h, count, weighting, idf_hashes, idf_values, idf_default)
        _add_weighted(totals, h, weight, seed, words)
    _sign_bits(totals, words, out, d)


@jit
def _scratch(offsets, first, last, kind, lower):
    """Buffers for documents ``first..last-1``, sized by the longest of them: feature hashes
    (uint64; at most one per byte), a copy of the text, code point starts (char n-grams only;
    np.empty leaves untouched pages unallocated), two bits per byte (words: see
    ``_token_hashes``), and the ASCII map (lowering A-Z when ``lower``)."""
    longest = 0
    for d in range(first, last):
        longest = max(longest, offsets[d + 1] - offsets[d])
    hashes = np.empty(longest + 2, dtype=np.uint64)
    scratch = np.empty(longest + 8, dtype=np.uint8)
    starts = np.empty(longest + 8 if kind == CHAR_NGRAMS else 1, dtype=np.int64)
    bitmap = np.empty(2 * ((longest >> 6) + 2), dtype=np.uint64)
    lut = np.arange(256).astype(np.uint8)
    if lower:
        for c in range(65, 91):
            lut[c] = c + 32
    return hashes, scratch, starts, bitmap, lut


@jit_parallel
def fingerprint_buffer(
    buf,
    offsets,
    chunk_bounds,
    classes,
    actions,
    replacement_offsets,
    replacement_bytes,
    lower,
    kind,
    size,
    weighting,
    seed,
    words,
    idf_hashes,
    idf_values,
    idf_default,
    out,
    unprepared,
):
    """Fingerprint every document of ``buf``/``offsets`` into ``out`` (uint64, (n_docs, words)),
    except those to prepare first (``_feature_hashes``), marked in ``unprepared`` (bool, (n_docs,)).
    The normalisation table comes as its three arrays (a named tuple costs numba's dispatcher
    a microsecond a call to type).

    Documents are split into chunks (``chunk_bounds``, int64, (n_chunks + 1,)); each chunk runs on
    one thread with its own scratch buffers."""
    table = (actions, replacement_offsets, replacement_bytes)
    for c in numba.prange(chunk_bounds.shape[0] - 1):
        _fingerprint_docs(
            buf,
            offsets,
            chunk_bounds[c],
            chunk_bounds[c + 1],
            classes,
            table,
            lower,
            kind,
            size,
            weighting,
            seed,
            words,
            idf_hashes,
            idf_values,
            idf_default,
            out,
            unprepared,
        )


@jit
def fingerprint_buffer_serial(
    buf,
    offsets,
    classes,
    actions,
    replacement_offsets,
    replacement_bytes,
    lower,
    kind,
    size,
    weighting,
    seed,
    words,
    idf_hashes,
    idf_values,
    idf_default,
    out,
    unprepared,
):
    """``fingerprint_buffer`` on the calling thread alone: for a few documents, where starting
    the thread pool would cost far more than the work (one text: 5 us instead of 150 us)."""
    table = (actions, replacement_offsets, replacement_bytes)
    _fingerprint_docs(
        buf,
        offsets,
        0,
        offsets.shape[0] - 1,
        classes,
        table,
        lower,
        kind,
        size,
        weighting,
        seed,
        words,
        idf_hashes,
        idf_values,
        idf_default,
        out,
        unprepared,
    )


@jit
def _fingerprint_docs(
    buf,
    offsets,
    first,
    last,
    classes,
    table,
    lower,
    kind,
    size,
    weighting,
    seed,
    words,
    idf_hashes,
    idf_values,
    idf_default,
    out,
    unprepared,
):
    """``fingerprint_buffer`` for documents ``first..last-1``, with scratch buffers of their own."""
    hashes, scratch, starts, bitmap, lut = _scratch(offsets, first, last, kind, lower)
    ones = np.zeros(64 * words, dtype=np.int64)
    totals = np.zeros(64 * words, dtype=np.float64)
    sort_tmp, sort_counts = _sort_buffers(hashes.shape[0], weighting)
    for d in range(first, last):
        n = _feature_hashes(
            buf,
            offsets[d],
            offsets[d + 1],
            classes,
            table,
            lut,
            kind,
            size,
            seed,
            scratch,
            starts,
            bitmap,
            hashes,
        )
        if n == UNPREPARED:
            unprepared[d] = True
        else:
            _fingerprint_one(
                hashes,
                n,
                weighting,
                seed,
                words,
                idf_hashes,
                idf_values,
                idf_default,
                ones,
                totals,
                sort_tmp,
                sort_counts,
                out,
                d,
            )


@jit
def _unchecked():
    """A normalisation table with no actions: the text is ready as it is."""
    return np.empty(0, dtype=np.uint8), np.empty(1, dtype=np.int64), np.empty(0, dtype=np.uint8)


@jit
def distinct_features(
    buf, start, end, classes, table, lut, kind, size, seed, scratch, starts, bitmap, hashes,
    sort_tmp, sort_counts, counts,
):  # fmt: skip
    """One document's distinct feature hashes, ascending, into ``hashes[:m]``, with how often
    each occurs into ``counts[:m]``; returns m. ``_feature_hashes``' arguments, then
    ``_sort_buffers``' two and room for the counts."""
    n = max(
        _feature_hashes(
            buf, start, end, classes, table, lut, kind, size, seed, scratch, starts, bitmap, hashes
        ),
        0,
    )
    _sort_hashes(hashes, n, sort_tmp, sort_counts)
    m = 0
    for j in range(n):
        if m > 0 and hashes[j] == hashes[m - 1]:
            counts[m - 1] += 1
        else:
            hashes[m] = hashes[j]
            counts[m] = 1
            m += 1
    return m


@jit
def feature_counts(buf, offsets, classes, lower, kind, size, seed):
    """Each document's distinct feature hashes, ascending, with how often each occurs, in
    CSR form: (int64 doc offsets, shape (n + 1,); uint64 hashes; int64 counts). The buffer
    must be prepared (``text_buffers.prepare``). The hashes and counts are views of room for
    one feature a byte (its untouched pages never faulted in): copy them to keep them."""
    n_docs = offsets.shape[0] - 1
    unchecked = _unchecked()
    hashes, scratch, starts, bitmap, lut = _scratch(offsets, 0, n_docs, kind, lower)
    counts = np.empty(hashes.shape[0], dtype=np.int64)  # one document's
    sort_tmp, sort_counts = _sort_buffers(hashes.shape[0], UNIFORM)
    capacity = offsets[n_docs] - offsets[0] + n_docs  # at most one feature per byte, or one
    out_hashes = np.empty(capacity, dtype=np.uint64)
    out_counts = np.empty(capacity, dtype=np.int64)
    doc_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    total = 0
    for d in range(n_docs):
        m = distinct_features(
            buf, offsets[d], offsets[d + 1], classes, unchecked, lut, kind, size, seed,
            scratch, starts, bitmap, hashes, sort_tmp, sort_counts, counts,
        )  # fmt: skip
        out_hashes[total : total + m] = hashes[:m]
        out_counts[total : total + m] = counts[:m]
        total += m
        doc_offsets[d + 1] = total
    return doc_offsets, out_hashes[:total], out_counts[:total]


@jit
def _count_word_times(hashes, counts, lo, hi, seed, second, ones, base):
    """``_count_word`` of ``hashes[lo:hi]``, each counted ``counts[f]`` times: byte-wide
    counters spilled before the counts they add can pass 255."""
    j = lo
    while j < hi:
        c0 = c1 = c2 = c3 = c4 = c5 = c6 = c7 = np.uint64(0)
        room = 255
        while j < hi and counts[j] <= room:
            h = xxh3_u64(hashes[j], seed) if second else hashes[j]
            c = np.uint64(counts[j])
            room -= counts[j]
            c0 += c * (h & _EACH)
            c1 += c * ((h >> np.uint64(1)) & _EACH)
            c2 += c * ((h >> np.uint64(2)) & _EACH)
            c3 += c * ((h >> np.uint64(3)) & _EACH)
            c4 += c * ((h >> np.uint64(4)) & _EACH)
            c5 += c * ((h >> np.uint64(5)) & _EACH)
            c6 += c * ((h >> np.uint64(6)) & _EACH)
            c7 += c * ((h >> np.uint64(7)) & _EACH)
            j += 1
        _spill(c0, ones, base, 0)
        _spill(c1, ones, base, 1)
        _spill(c2, ones, base, 2)
        _spill(c3, ones, base, 3)
        _spill(c4, ones, base, 4)
        _spill(c5, ones, base, 5)
        _spill(c6, ones, base, 6)
        _spill(c7, ones, base, 7)
        if j < hi and counts[j] > 255:  # a feature too frequent for a byte: bit by bit
            h = xxh3_u64(hashes[j], seed) if second else hashes[j]
            for b in range(64):
                if (h >> np.uint64(b)) & np.uint64(1):
                    ones[base + b] += counts[j]
            j += 1


@jit
def _fingerprint_counted(
    hashes, counts, lo, hi, weighting, seed, words, idf_hashes, idf_values, idf_default, out, d
):
    """Fingerprint ``out[d]`` of a document from its distinct feature hashes
    ``hashes[lo:hi]``, ascending, occurring ``counts[lo:hi]`` times: the fingerprint
    ``fingerprint_buffer`` gives its text (the spec sums over distinct features in ascending
    hash order), for ``minhash.features_and_keys``."""
    bits = 64 * words
    if weighting in (TF, UNIFORM):
        ones = np.zeros(bits, dtype=np.int64)
        total = 0
        if weighting == UNIFORM:
            total = hi - lo
            _count_word(hashes[lo:hi], hi - lo, seed, False, ones, 0)
            if words == 2:
                _count_word(hashes[lo:hi], hi - lo, seed, True, ones, 64)
        else:
            for f in range(lo, hi):
                total += counts[f]
            _count_word_times(hashes, counts, lo, hi, seed, False, ones, 0)
            if words == 2:
                _count_word_times(hashes, counts, lo, hi, seed, True, ones, 64)
        for i in range(bits):  # V[i] = ones - zeros
            ones[i] = 2 * ones[i] - total
        _sign_bits(ones, words, out, d)
        return
    totals = np.zeros(bits, dtype=np.float64)  # ascending hashes: the spec's order
    for f in range(lo, hi):
        weight = _real_weight(hashes[f], counts[f], weighting, idf_hashes, idf_values, idf_default)
        _add_weighted(totals, hashes[f], weight, seed, words)
    _sign_bits(totals, words, out, d)


@jit
def fingerprint_weighted(buf, offsets, weights, seed, words):
    """Fingerprint caller-given features: feature f is ``buf[offsets[f]:offsets[f + 1]]`` with
    float64 ``weights[f]``. Weights of equal features add up in input order; features then add
    into V in ascending hash order, as in the spec. Returns uint64, shape (words,)."""
    hashes = np.empty(weights.shape[0], dtype=np.uint64)
    for f in range(weights.shape[0]):
        hashes[f] = xxh3_64(buf, offsets[f], offsets[f + 1], seed)
    order = np.argsort(hashes, kind="mergesort")
    totals = np.zeros(64 * words, dtype=np.float64)
    j = 0
    n = hashes.shape[0]
    while j < n:
        h = hashes[order[j]]
        weight = 0.0
        while j < n and hashes[order[j]] == h:
            weight += weights[order[j]]
            j += 1
        _add_weighted(totals, h, weight, seed, words)
    out = np.zeros((1, words), dtype=np.uint64)
    _sign_bits(totals, words, out, 0)
    return out[0]


@jit
def feature_spans(buf, classes, lower, kind, size, seed):
    """The features of one document (all of ``buf``) and where each lies, to explain a
    fingerprint: ``(hashes, first, last, text, ok)``. Feature f has the first hash ``hashes[f]``
    (uint64, computed by ``_feature_hashes`` as for the fingerprint) and the characters
    ``text[first[f]:last[f]]`` (int64 byte offsets). ``text`` is the document with ASCII mapped
    as the hash sees it (lowered when ``lower``), or for char n-grams the collapsed-whitespace
    text the n-grams are cut from. A shingle spans its first token's start to its last token's
    end. ``ok`` is False if the spans disagree with the hashes on how many features there are.
    The document must be prepared (``text_buffers.prepare``)."""
    end = buf.shape[0]
    unchecked = _unchecked()
    offsets = np.array([0, end], dtype=np.int64)
    hashes, scratch, starts, bitmap, lut = _scratch(offsets, 0, 1, kind, lower)
    n = _feature_hashes(
        buf, 0, end, classes, unchecked, lut, kind, size, seed, scratch, starts, bitmap, hashes
    )
    first = np.empty(n, dtype=np.int64)
    last = np.empty(n, dtype=np.int64)
    if kind == CHAR_NGRAMS:
        n_chars = _collapse_spaces(buf, 0, end, classes, unchecked[0], lut, scratch, starts)
        span = min(size, n_chars)
        expected = n_chars - span + 1 if n_chars else 0
        for c in range(min(n, expected)):
            first[c] = starts[c]
            last[c] = starts[c + span]
        text = scratch[: starts[n_chars]].copy()
    else:
        # Token spans by the classes _token_hashes uses: a run of word code points, or one solo.
        tok_first = np.empty(end + 1, dtype=np.int64)
        tok_last = np.empty(end + 1, dtype=np.int64)
        n_tok = 0
        i = 0
        while i < end:
            cp, width = char_at(buf, i)
            cls = classes[cp]
            j = i + width
            if cls == WORD:
                while j < end:
                    cp, width = char_at(buf, j)
                    if classes[cp] != WORD:
                        break
                    j += width
            if cls in (WORD, SOLO):
                tok_first[n_tok] = i
                tok_last[n_tok] = j
                n_tok += 1
            i = j
        span = size if kind == SHINGLES and n_tok >= size else 1
        expected = n_tok - span + 1 if n_tok else 0
        for f in range(min(n, expected)):
            first[f] = tok_first[f]
            last[f] = tok_last[f + span - 1]
        text = np.empty(end, dtype=np.uint8)
        for k in range(end):
            text[k] = lut[buf[k]]
    return hashes[:n].copy(), first[:n], last[:n], text, expected == n
