"""The keys of log lines (``neardup.logs.masking``) in compiled code, byte for byte.

The masks are regular expressions run over a block of lines: clear, but about 65k lines a
second, slower than the rest of ``neardup logs`` together. Here each of them is a small
hand-written scanner over the line's UTF-8 bytes that takes the path the regular expression
engine takes (its greedy choices and backtracking worked out once, in the comments). The
three steps, the masks, the digit rule and the joins, run in one pass over the line
(``_key``), each over what the one before gives, with the same result as the substitutions
one after another: three passes took 1.3x as long. The tests hold every key equal to the
regular expressions' on generated and real lines: a change to the expressions needs the same
change here.

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


# --- the key: the three steps in one pass


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
def _join_word(out, start, end, join_at):
    """Step 3's joins over a finished word ``out[start:end]``, in place: each ``<*>`` right
    after ``join_at`` (the end of a ``<*>`` followed by joiners only, or -1) is dropped with
    the joiners, as ``<*>(?:[.:\\-/,]+<*>)+`` becomes one. Returns (end, join_at)."""
    r = start
    w = start
    while r < end:
        if r + 3 <= end and _is_variable(out, r, end):
            if join_at >= 0 and w > join_at:
                w = join_at
            else:
                w = _put_variable(out, w)
            join_at = w
            r += 3
        else:
            out[w] = out[r]
            if (_CLASSES[out[r]] & _JOINER) == 0:
                join_at = -1
            w += 1
            r += 1
    return w, join_at


@jit_inline
def _end_word(out, word, o, digits, has_variable, join_at):
    """The word ``out[word:o]`` ends: step 2's digit rule, then step 3's joins over it (where
    it may have any: it became or holds a ``<*>``, or follows one). Returns (end, join_at)."""
    end = _word_end(out, word, o, digits)
    if digits or has_variable or join_at >= 0:
        return _join_word(out, word, end, join_at)
    return end, join_at


@jit_inline
def _after_neighbour(out, token, o, after_variable):
    """Step 3's neighbour rule at the end of the word ``out[token:o]``: it goes, with the
    space before it, if it and the word before are ``<*>``. Returns (end, it is ``<*>``)."""
    variable = o - token == 3 and _is_variable(out, token, o)
    return (token - 1 if variable and after_variable else o), variable


@jit_inline
def _key(src, n, out, first, patterns):
    """The key of the line ``src[:n]``, written at ``out[first:]`` (room for ``3 * n``
    bytes); returns its end. The three steps run in one pass, each over what the one before
    gives, as the substitutions do one after another:

    1. the masks (``patterns``): tried at each position after a character that is not \\w,
       those the run of \\w there allows (a date's day is three capitals, a size's number
       ends in its unit, a host name's first label at '.' or '-'); a match gives ``<*>``;
    2. the digit rule: a word (a run of characters but spaces, '=' and dots next to a dot)
       is written as step 1 gives it and replaced by ``<*>`` at its end if it must go;
    3. each finished word's joins (``_join_word``); each run of [ \\t\\r\\f\\v] one
       space; of the words between spaces, a ``<*>`` after a ``<*>`` goes (the regular
       expression's ``(?<!\\S)<\\*>(?:[ \\t]+<\\*>(?!\\S))+``); the spaces at either end go.

    Step 2 reads a dot as in a word when neither byte step 1 gives beside it is a dot. The
    byte after a dot is ``src[i + 1]`` as it is: only a path starts with a dot, and no path
    follows one."""
    i = 0
    o = first
    word = -1  # step 2: where the word being read starts in out; -1 between words
    digits = 0
    has_variable = False  # the word holds a '<', perhaps a <*> that step 3 may join
    last = 0  # the last byte step 1 gave
    token = first  # step 3: where the word since the last space starts
    after_variable = False  # the word before it is <*>
    join_at = -1  # step 3: the end of the last <*> while only joiners follow it; -1 else
    in_blank = False  # step 3: the last byte was a blank, and the space is written
    while i < n:
        c = src[i]
        flags = _CLASSES[c]
        starts = i == 0 or (_CLASSES[src[i - 1]] & _WORD) == 0
        e = -1
        if (flags & _WORD) != 0 and starts:
            # A run of \w: copied and its digits counted as it is read, kept unless a mask
            # matches from its start.
            r = i
            run_digits = 0
            while r < n:
                f = _CLASSES[src[r]]
                if (f & _WORD) == 0:
                    break
                out[o + r - i] = src[r]
                run_digits += (f & _DIGIT) != 0
                r += 1
            if patterns:
                if (flags & _UPPER) != 0 and r - i == 3:
                    e = _date_end(src, i, n)
                # A size's unit is in the run, or after a space or its decimals.
                if (
                    e < 0
                    and (flags & _DIGIT) != 0
                    and (run_digits < r - i or (r < n and (src[r] == _SPACE_BYTE or src[r] == _DOT)))
                ):
                    e = _size_end(src, i, n)
                if e < 0 and r < n and (src[r] == _DOT or src[r] == 45):
                    e = _host_end(src, i, n)
            if e < 0:
                if word < 0:
                    word, digits, has_variable = o, 0, False
                digits += run_digits
                o += r - i
                last = src[r - 1]
                i = r
                in_blank = False
                continue
        elif patterns and starts:
            if (flags & _SIZE_START) != 0:
                e = _size_end(src, i, n)
            if e < 0 and (flags & _PATH_START) != 0:
                e = _path_end(src, i, n)
            if e < 0 and c == 45:  # '-', a host name's label
                e = _host_end(src, i, n)
        if e >= 0:  # a mask matched
            if word < 0:
                word, digits = o, 0
            has_variable = True
            o = _put_variable(out, o)
            last = _GT
            i = e
            in_blank = False
            continue
        in_word = (flags & _STOP) == 0
        if not in_word and c == _DOT:
            in_word = last != _DOT and (i + 1 >= n or src[i + 1] != _DOT)
        last = c
        i += 1
        if in_word:
            if word < 0:
                word, digits, has_variable = o, 0, False
            digits += (flags & _DIGIT) != 0
            has_variable |= c == _LT
            out[o] = c
            o += 1
            in_blank = False
            continue
        if word >= 0:
            o, join_at = _end_word(out, word, o, digits, has_variable, join_at)
            word = -1
        if (flags & _BLANK) != 0:
            if not in_blank:  # a run of blanks: one space, after the neighbour rule
                o, after_variable = _after_neighbour(out, token, o, after_variable)
                if o > first:
                    out[o] = _SPACE_BYTE
                    o += 1
                token = o
                in_blank = True
                join_at = -1
            continue
        in_blank = False
        if (flags & _JOINER) == 0:
            join_at = -1
        out[o] = c
        o += 1
    if word >= 0:
        o, join_at = _end_word(out, word, o, digits, has_variable, join_at)
    o, _ = _after_neighbour(out, token, o, after_variable)
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
    capacity = max(np.int64(64), offsets[n_lines] - offsets[0] + 64)
    key_data = np.empty(capacity, dtype=np.uint8)
    key_offsets = np.empty(n_lines + 1, dtype=np.int64)
    hashes = np.empty(n_lines, dtype=np.uint64)
    o = 0
    key_offsets[0] = 0
    for line in range(n_lines):
        start = offsets[line]
        n = offsets[line + 1] - start
        # Each <*> stands for at least one character: a key is at most 3x its line, while
        # it is written.
        if o + 3 * n + 8 > capacity:
            capacity = max(2 * capacity, o + 3 * n + 8)
            grown = np.empty(capacity, dtype=np.uint8)
            grown[:o] = key_data[:o]
            key_data = grown
        # The key is read and written through pointers: see byte_pointer. They are taken
        # here, in the loop, so that the arrays are in use, and alive, while they are.
        end = _key(byte_pointer(data, start), n, byte_pointer(key_data, 0), o, patterns)
        hashes[line] = xxh3_64(key_data, o, end, np.uint64(0))
        o = end
        key_offsets[line + 1] = o
    return key_data[:o].copy(), key_offsets, hashes
