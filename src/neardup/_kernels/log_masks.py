"""The keys of log lines (``neardup.logs.masking``) in compiled code, byte for byte.

The masks are regular expressions run over a block of lines: clear, but about 65k lines a
second, slower than the rest of ``neardup logs`` together. Here each of them is a small
hand-written scanner over the line's UTF-8 bytes that takes the path the regular expression
engine takes (its greedy choices and backtracking worked out once, in the comments). The
steps run one after another, each over what the one before wrote, as the substitutions do:
the masks (``_patterns``), the digit rule (``_digit_words``), the joins (``_joins``). The
tests hold every key equal to the regular expressions' on generated and real lines: a change
to the expressions needs the same change here.

Bytes stand for characters safely: the expressions use ASCII classes (``re.ASCII``), every
mask starts with an ASCII character, and a byte of a multi-byte UTF-8 character is, like the
character, neither ``\\w`` nor ``\\s`` nor a digit nor punctuation, before or after a match.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit, jit_inline
from ._memory import byte_pointer
from .xxh3 import xxh3_64

# Byte classes, as flags in one table.
_WORD = 1  # \w: [A-Za-z0-9_]
_DIGIT = 2  # \d: [0-9]
_SPACE = 4  # \s: [ \t\n\r\f\v]
_UPPER = 8  # [A-Z]
_LOWER = 16  # [a-z]
_LABEL = 32  # [A-Za-z0-9-]: a host name's label
_PATH = 64  # [\w.\-@%+~]: a path's segment
_HOST = 128  # [\w.\-]: what may not touch a host name
_STOP = 256  # [\s=.]: what may end a word
_BLANK = 512  # [ \t\r\f\v]: what becomes one space
_SIZE_START = 1024  # [<>=+\-0-9]
_PATH_START = 2048  # [./]
_JOINER = 4096  # [.:\-/,]: what joins variables
_OPENS = 8192  # [ \t\r\f\v<]: where the joins may have something to do


def _classes() -> np.ndarray:
    table = np.zeros(256, dtype=np.uint16)
    for c in range(128):
        ch = chr(c)
        word = ch.isalnum() or ch == "_"
        flags = (
            (_WORD if word else 0)
            | (_DIGIT if ch.isdigit() else 0)
            | (_SPACE if ch in " \t\n\r\f\v" else 0)
            | (_UPPER if "A" <= ch <= "Z" else 0)
            | (_LOWER if "a" <= ch <= "z" else 0)
            | (_LABEL if (word and ch != "_") or ch == "-" else 0)
            | (_PATH if word or ch in ".-@%+~" else 0)
            | (_HOST if word or ch in ".-" else 0)
            | (_STOP if ch in " \t\n\r\f\v=." else 0)
            | (_BLANK if ch in " \t\r\f\v" else 0)
            | (_SIZE_START if ch.isdigit() or ch in "<>=+-" else 0)
            | (_PATH_START if ch in "./" else 0)
            | (_JOINER if ch in ".:-/," else 0)
            | (_OPENS if ch in " \t\r\f\v<" else 0)
        )
        table[c] = flags
    return table


_CLASSES = _classes()

_DOT, _SLASH, _EQUALS, _SPACE_BYTE = 46, 47, 61, 32
_LT, _STAR, _GT = 60, 42, 62


def _packed(word: str) -> int:
    """A word of up to 7 ASCII letters as one integer (``_pack`` in compiled code)."""
    value = 0
    for ch in word:
        value = (value << 8) | ord(ch)
    return value


def _table(words: str) -> np.ndarray:
    return np.array([_packed(w) for w in words.split(" ")], dtype=np.int64)


_DAYS = _table("Mon Tue Wed Thu Fri Sat Sun")
_MONTHS = _table("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec")
# The units of masking._UNIT but [KMGTP]i?B, which is checked apart.
_UNITS = _table("B s ms us ns sec min secs mins hour bytes hours seconds minutes")
_TLDS = _table("com net org edu gov mil int info biz")
_MULTIPLES = np.array([ord(c) for c in "KMGTP"], dtype=np.uint8)


@jit_inline
def _is(buf, i, n, flag):
    """``buf[i]`` is in class ``flag`` (False past the end)."""
    return i < n and (_CLASSES[buf[i]] & flag) != 0


@jit_inline
def _run(buf, i, n, flag):
    """The end of the run of class ``flag`` from ``i``."""
    while i < n and (_CLASSES[buf[i]] & flag) != 0:
        i += 1
    return i


@jit_inline
def _spaces(buf, i, n):
    """The end of the run of spaces (' ' alone) from ``i``."""
    while i < n and buf[i] == _SPACE_BYTE:
        i += 1
    return i


@jit_inline
def _pack(buf, start, end):
    value = np.int64(0)
    for i in range(start, end):
        value = (value << 8) | np.int64(buf[i])
    return value


@jit_inline
def _among(value, table):
    for t in table:  # noqa: SIM110 (numba compiles no generator into any())
        if t == value:
            return True
    return False


@jit_inline
def _is_variable(buf, i, n):
    """``<*>`` at ``i``."""
    return i + 3 <= n and buf[i] == _LT and buf[i + 1] == _STAR and buf[i + 2] == _GT


@jit_inline
def _put_variable(out, o):
    out[o] = _LT
    out[o + 1] = _STAR
    out[o + 2] = _GT
    return o + 3


# --- the date: \b DAY,? +MONTH +\d{1,2} +\d{1,2}:\d{2}(?::\d{2})?(?: +[A-Z]{2,5})?(?: +\d{4})?\b
# Each ' +' takes every space (fewer would leave a space where a digit or letter must be) and
# each \d{1,2} a whole run of digits (what follows is not a digit). Backtracking is left to
# the optional tail: the seconds, then a zone of 2-5 capitals (longest first), then a year,
# each tried with and without, until the closing \b holds.


@jit_inline
def _date_year(buf, t, n):
    """End of ``(?: +\\d{4})?\\b`` at ``t`` (after a word character), or -1."""
    u = _spaces(buf, t, n)
    if u > t and u + 4 <= n and _run(buf, u, u + 4, _DIGIT) == u + 4 and not _is(buf, u + 4, n, _WORD):
        return u + 4
    if not _is(buf, t, n, _WORD):
        return t
    return -1


@jit_inline
def _date_tail(buf, s, n):
    """End of ``(?: +[A-Z]{2,5})?(?: +\\d{4})?\\b`` at ``s``, or -1."""
    u = _spaces(buf, s, n)
    if u > s:
        k = min(_run(buf, u, n, _UPPER) - u, 5)
        while k >= 2:
            e = _date_year(buf, u + k, n)
            if e >= 0:
                return e
            k -= 1
    return _date_year(buf, s, n)


@jit
def _date_end(buf, p, n):
    """End of the date mask's match at ``p``, or -1."""
    if (p > 0 and _is(buf, p - 1, n, _WORD)) or p + 3 > n or not _among(_pack(buf, p, p + 3), _DAYS):
        return -1
    q = p + 3
    if q < n and buf[q] == 44:  # ','
        q += 1
    r = _spaces(buf, q, n)
    if r == q or r + 3 > n or not _among(_pack(buf, r, r + 3), _MONTHS):
        return -1
    q = _spaces(buf, r + 3, n)
    if q == r + 3:
        return -1
    d = _run(buf, q, n, _DIGIT)
    if d == q or d > q + 2:
        return -1
    q = _spaces(buf, d, n)
    if q == d:
        return -1
    d = _run(buf, q, n, _DIGIT)  # the hour
    if d == q or d > q + 2 or d >= n or buf[d] != 58:  # ':'
        return -1
    m = d + 3  # the minutes: exactly two digits
    if m > n or not (_is(buf, d + 1, n, _DIGIT) and _is(buf, d + 2, n, _DIGIT)):
        return -1
    if m + 3 <= n and buf[m] == 58 and _is(buf, m + 1, n, _DIGIT) and _is(buf, m + 2, n, _DIGIT):
        e = _date_tail(buf, m + 3, n)
        if e >= 0:
            return e
    return _date_tail(buf, m, n)


# --- the size: (?<![\w.])[<>]?=?NUMBER ?UNIT(?: \(NUMBER ?UNIT\))?(?!\w)
# Every optional piece before the unit is taken when present (leaving it out would leave a
# character the next piece cannot start with), and NUMBER's digit runs are whole. A unit is
# letters, followed by (?!\w) or by ')': whichever alternative is chosen, it must be the whole
# run of \w from where it starts, so the run is looked up among the units.


@jit_inline
def _number_end(buf, q, n):
    """End of ``[-+]?\\d+(?:\\.\\d+)?`` at ``q``, or -1."""
    if q < n and (buf[q] == 45 or buf[q] == 43):
        q += 1
    d = _run(buf, q, n, _DIGIT)
    if d == q:
        return -1
    if d + 1 < n and buf[d] == _DOT and _is(buf, d + 1, n, _DIGIT):
        d = _run(buf, d + 1, n, _DIGIT)
    return d


@jit_inline
def _unit_end(buf, q, n):
    """End of the run of \\w at ``q`` if it is a unit, else -1."""
    if not _is(buf, q, n, _UPPER | _LOWER):  # every unit is letters
        return -1
    e = _run(buf, q, n, _WORD)
    size = e - q
    if size > 7:
        return -1
    if (size == 2 or (size == 3 and buf[q + 1] == 105)) and buf[e - 1] == 66:  # [KMGTP]i?B
        for c in _MULTIPLES:
            if buf[q] == c:
                return e
    return e if _among(_pack(buf, q, e), _UNITS) else -1


@jit
def _size_end(buf, p, n):
    """End of the size mask's match at ``p``, or -1."""
    if p > 0 and (_is(buf, p - 1, n, _WORD) or buf[p - 1] == _DOT):
        return -1
    q = p
    if q < n and (buf[q] == _LT or buf[q] == _GT):
        q += 1
    if q < n and buf[q] == _EQUALS:
        q += 1
    q = _number_end(buf, q, n)
    if q < 0:
        return -1
    if q < n and buf[q] == _SPACE_BYTE:
        q += 1
    e = _unit_end(buf, q, n)
    if e < 0:
        return -1
    if e + 1 < n and buf[e] == _SPACE_BYTE and buf[e + 1] == 40:  # ' ('
        r = _number_end(buf, e + 2, n)
        if r >= 0:
            if r < n and buf[r] == _SPACE_BYTE:
                r += 1
            u = _unit_end(buf, r, n)
            if u >= 0 and u < n and buf[u] == 41 and not _is(buf, u + 1, n, _WORD):  # ')'
                return u + 1
    return e


# --- the path: (?<![\w/.])(?:\.{0,2}/[\w.\-@%+~]+)+/?(?:\?[^\s\"']*)?
# Nothing after the first segment can fail, so the greedy path is the match: every segment
# (after the first, a '/' and a run: the run before it took the dots), a '/', a query.


@jit
def _path_end(buf, p, n):
    """End of the path mask's match at ``p``, or -1."""
    if p > 0 and (_is(buf, p - 1, n, _WORD) or buf[p - 1] == _SLASH or buf[p - 1] == _DOT):
        return -1
    d = p
    while d < n and buf[d] == _DOT:
        d += 1
    if d - p > 2 or d >= n or buf[d] != _SLASH or not _is(buf, d + 1, n, _PATH):
        return -1
    q = _run(buf, d + 1, n, _PATH)
    while q < n and buf[q] == _SLASH and _is(buf, q + 1, n, _PATH):
        q = _run(buf, q + 1, n, _PATH)
    if q < n and buf[q] == _SLASH:
        q += 1
    if q < n and buf[q] == 63:  # '?'
        q += 1
        while q < n and not _is(buf, q, n, _SPACE) and buf[q] != 34 and buf[q] != 39:
            q += 1
    return q


# --- the host: (?<![\w.\-])(?:[A-Za-z0-9-]+\.)+(?:com|...|[a-z]{2})(?![\w.\-])
# The labels are taken greedily. Giving one back would put the domain where a label and its
# dot are, and a dot may not follow it; so the domain comes after the last label, and it is
# the whole run of [\w.\-] there.


@jit
def _host_end(buf, p, n):
    """End of the host mask's match at ``p``, or -1."""
    if p > 0 and _is(buf, p - 1, n, _HOST):
        return -1
    q = p
    while True:
        r = _run(buf, q, n, _LABEL)
        if r == q or r >= n or buf[r] != _DOT:
            break
        q = r + 1
    if q == p:
        return -1
    e = _run(buf, q, n, _HOST)
    size = e - q
    if size == 2 and _is(buf, q, n, _LOWER) and _is(buf, q + 1, n, _LOWER):
        return e
    if (size == 3 or size == 4) and _among(_pack(buf, q, e), _TLDS):
        return e
    return -1


# --- the steps


@jit_inline
def _patterns(src, n, out):
    """Step 1: the default masks, tried at each position in their order; returns the length.
    Every mask starts after a character that is not \\w, so only there are they tried, and
    only those the run of \\w there allows: a date's day is three letters, a host name's
    first label ends at '.' or goes on with '-'. The rest of the run is copied."""
    i = 0
    o = 0
    while i < n:
        c = src[i]
        flags = _CLASSES[c]
        e = -1
        if i == 0 or (_CLASSES[src[i - 1]] & _WORD) == 0:
            r = _run(src, i, n, _WORD)
            if (flags & _UPPER) != 0 and r - i == 3:
                e = _date_end(src, i, n)
            if e < 0 and (flags & _SIZE_START) != 0:
                e = _size_end(src, i, n)
            if e < 0 and (flags & _PATH_START) != 0:
                e = _path_end(src, i, n)
            if e < 0 and (flags & _LABEL) != 0 and r < n and (src[r] == _DOT or src[r] == 45):
                e = _host_end(src, i, n)
            if e < 0 and r > i:
                for k in range(i, r):
                    out[o] = src[k]
                    o += 1
                i = r
                continue
        if e >= 0:
            o = _put_variable(out, o)
            i = e
        else:
            out[o] = c
            o += 1
            i += 1
    return o


@jit_inline
def _word_end(out, word, o, digits):
    """Where the word ``out[word:o]`` with ``digits`` digits ends once the digit rule is
    applied: ``<*>`` in its place, unless it has none or is letters and one digit."""
    if digits == 0:
        return o
    if (
        digits == 1
        and o - word >= 3
        and (_CLASSES[out[o - 1]] & _DIGIT) != 0
        and _run(out, word, o - 1, _UPPER | _LOWER) == o - 1
    ):
        return o
    return _put_variable(out, word)


@jit_inline
def _digit_words(src, n, out):
    """Step 2: each word with a digit becomes ``<*>``, but letters and one digit (``eth0``).
    A word is a run of characters but spaces, '=' and dots next to a dot; it is copied as it
    is read, and taken back at its end if it must go."""
    o = 0
    word = -1  # where the word being read starts in out; -1 between words
    digits = 0
    for i in range(n):
        c = src[i]
        flags = _CLASSES[c]
        in_word = (flags & _STOP) == 0
        if not in_word and c == _DOT:
            in_word = (i == 0 or src[i - 1] != _DOT) and (i + 1 >= n or src[i + 1] != _DOT)
        if in_word:
            if word < 0:
                word = o
                digits = 0
            if (flags & _DIGIT) != 0:
                digits += 1
        elif word >= 0:
            o = _word_end(out, word, o, digits)
            word = -1
        out[o] = c
        o += 1
    if word >= 0:
        o = _word_end(out, word, o, digits)
    return o


@jit_inline
def _is_token_variable(out, start, end):
    return end - start == 3 and _is_variable(out, start, end)


@jit_inline
def _joins(src, n, out, o):
    """Step 3, written at ``out[o:]``; returns the end. ``<*>`` joined to ``<*>`` by runs of
    ``.:-/,`` become one, each run of [ \\t\\r\\f\\v] one space, then neighbours: of the
    words this leaves between spaces, a run of ``<*>`` is one (the regular expression's
    ``(?<!\\S)<\\*>(?:[ \\t]+<\\*>(?!\\S))+``), and the spaces at either end go."""
    first = o
    word = o  # where the word being written starts
    after_variable = False  # the word before it is <*>
    i = 0
    while True:
        if i < n and (_CLASSES[src[i]] & _OPENS) == 0:  # the most of a line: copied
            out[o] = src[i]
            o += 1
            i += 1
        elif i == n or (_CLASSES[src[i]] & _BLANK) != 0:
            variable = _is_token_variable(out, word, o)
            if variable and after_variable:
                o = word - 1  # the space before it and it
            after_variable = variable
            if i == n:
                break
            if o > first:
                out[o] = _SPACE_BYTE
                o += 1
            word = o
            i = _run(src, i + 1, n, _BLANK)
        elif _is_variable(src, i, n):
            end = i + 3
            while True:
                k = end
                while k < n and (_CLASSES[src[k]] & _JOINER) != 0:
                    k += 1
                if k == end or not _is_variable(src, k, n):
                    break
                end = k + 3
            o = _put_variable(out, o)
            i = end
        else:
            out[o] = src[i]
            o += 1
            i += 1
    if o > first and out[o - 1] == _SPACE_BYTE:
        o -= 1
    return o


@jit
def mask_lines(data, offsets, patterns):
    """The key of each line ``data[offsets[i]:offsets[i + 1]]`` (UTF-8, uint8), as
    ``Masker.keys`` makes it with the default masks (``patterns``) or none (the caller has
    applied its own): (key_data uint8, key_offsets int64 shape (n + 1,), hashes uint64 shape
    (n,): the XXH3-64 of each key's bytes, seed 0). The lines hold no newline: the caller
    makes them spaces, as the regular expressions read them."""
    n_lines = offsets.shape[0] - 1
    longest = 0
    for line in range(n_lines):
        longest = max(longest, offsets[line + 1] - offsets[line])
    # Each <*> stands for at least one character, so no step makes a line over 3x longer.
    width = 3 * longest + 8
    first = np.empty(width, dtype=np.uint8)
    second = np.empty(width, dtype=np.uint8)
    capacity = max(np.int64(64), offsets[n_lines] - offsets[0] + 64)
    key_data = np.empty(capacity, dtype=np.uint8)
    key_offsets = np.empty(n_lines + 1, dtype=np.int64)
    hashes = np.empty(n_lines, dtype=np.uint64)
    o = 0
    key_offsets[0] = 0
    for line in range(n_lines):
        start = offsets[line]
        n = offsets[line + 1] - start
        # The steps read and write through pointers: see byte_pointer. Each is taken here,
        # in the loop, so that the arrays are in use, and alive, for as long as the loop.
        src, first_at, second_at = byte_pointer(data, start), byte_pointer(first, 0), byte_pointer(second, 0)
        if patterns:
            n = _patterns(src, n, first_at)
            n = _digit_words(first_at, n, second_at)
        else:
            n = _digit_words(src, n, second_at)
        if o + n > capacity:
            capacity = max(2 * capacity, o + n)
            grown = np.empty(capacity, dtype=np.uint8)
            grown[:o] = key_data[:o]
            key_data = grown
        end = _joins(second_at, n, byte_pointer(key_data, 0), o)
        hashes[line] = xxh3_64(key_data, o, end, np.uint64(0))
        o = end
        key_offsets[line + 1] = o
    return key_data[:o].copy(), key_offsets, hashes
