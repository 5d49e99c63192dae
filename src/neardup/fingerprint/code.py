"""The features of source code (``features="code"``): each document lexed by pygments (the
``code`` extra), comments, docstrings and whitespace left out, identifiers and literals made
placeholders under ``code_normalize="identifiers"``, and the tokens handed to the compiled
shingling and voting (``_kernels/code.py``) in one buffer (docs/fingerprint-spec.md, code).

Lexing is Python (pygments), about 1 MB/s a core, run on every core in worker processes
(``lexing.py``); the hashing after it is compiled.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

import numpy as np

from .._config import FingerprintConfig
from .._lexers import lexer_for
from .features import normalize
from .lexing import Names, TokenBuffer, lexed
from .pygments_loop import tokens as tokens_of
from .text_buffers import TextBuffer

# What a token becomes, by its pygments type (``_action``).
DROP, KEEP, IDENTIFIER, STRING, NUMBER, LITERAL = range(6)
PLACEHOLDERS = {IDENTIFIER: "$id", STRING: "$str", NUMBER: "$num", LITERAL: "$lit"}
MARK = b"\x01"
"""Opens every token's bytes: no word of prose holds it (control characters are not word
characters), so a code feature never has a prose feature's hash."""


@functools.cache
def _action(token_type: Any) -> int:
    """DROP comments, docstrings and whitespace; IDENTIFIER any name; STRING, NUMBER or
    LITERAL a literal; KEEP the rest (keywords, operators, punctuation)."""
    from pygments import token

    if token_type in token.Comment or token_type in token.String.Doc or token_type in token.Whitespace:
        return DROP
    if token_type in token.Name:
        return IDENTIFIER
    if token_type in token.String:
        return STRING
    if token_type in token.Number:
        return NUMBER
    if token_type in token.Literal:
        return LITERAL
    return KEEP


def code_tokens(text: str, lexer: Any, identifiers: bool, fold: bool) -> list[str]:
    """The tokens of ``text`` a code fingerprint is made of: ``lexer``'s tokens less comments,
    docstrings, whitespace and backslashes ending a line (each token stripped, and the space
    inside one, as in ``yield from``, made one space); the parts of one string literal (quotes, escapes, an
    f-string's text) one token; with ``identifiers``, each name ``$id`` and each literal
    ``$str``, ``$num`` or ``$lit``; with ``fold``, the rest NFKC-normalised and casefolded."""
    tokens, _starts, _ends = _lexed(text, lexer, identifiers, fold, spans=False)
    return tokens


def code_token_spans(
    text: str, lexer: Any, identifiers: bool, fold: bool
) -> tuple[list[str], np.ndarray, np.ndarray]:
    r""":func:`code_tokens`, with where each lies in ``text``: (tokens, starts, ends), the
    code point offsets ``[start, end)`` of each token's first and last character (int64; a
    string literal's parts joined span them all; the space a token was stripped of left out).
    The lexer reads ``text`` without a byte-order mark opening it, its line breaks made ``\n``
    and the ones opening it dropped; :func:`lexed_positions` maps its offsets back."""
    tokens, starts, ends = _lexed(text, lexer, identifiers, fold, spans=True)
    positions = lexed_positions(text)
    first = positions[np.asarray(starts, dtype=np.int64)]
    last = positions[np.asarray(ends, dtype=np.int64) - 1] + 1
    return tokens, first, last


def lexed_positions(text: str) -> np.ndarray:
    r"""Where each character of the text pygments lexes lies in ``text`` (int64): pygments'
    ``Lexer.get_tokens`` drops a byte-order mark, makes ``\r\n`` and ``\r`` one ``\n``, strips
    the line breaks opening and closing the text and ends it with one (its options stripnl and
    ensurenl, on by default; the ending one maps past ``text``)."""
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    kept = np.ones(len(points), dtype=bool)
    kept[:-1] = ~((points[:-1] == 13) & (points[1:] == 10))  # \r\n is one break: its \n stays
    if len(points) and points[0] == 0xFEFF:
        kept[0] = False
    positions = np.flatnonzero(kept)
    lexed = points[positions]
    breaks = (lexed == 10) | (lexed == 13)
    opening = int(np.argmin(breaks)) if not breaks.all() else len(breaks)
    return np.append(positions[opening:], len(points)).astype(np.int64)


def _lexed(
    text: str, lexer: Any, identifiers: bool, fold: bool, spans: bool
) -> tuple[list[str], list[int], list[int]]:
    """The tokens, and with ``spans`` their [start, end) in the lexed text (see
    :func:`code_token_spans`): one loop, so that passages and fingerprints lex alike."""
    tokens: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    in_string = False  # the last token is a string literal that a string part extends
    at = 0
    for token_type, raw in tokens_of(lexer, text):
        start, at = at, at + len(raw)
        action = _action(token_type)
        if action == DROP:
            continue
        value = raw.strip()
        if not value or (value == "\\" and action == KEEP):  # layout: space, a line continued
            continue
        if spans:
            start += len(raw) - len(raw.lstrip())
            end = at - (len(raw) - len(raw.rstrip()))
        if " " in value or not value.isprintable():
            value = " ".join(value.split())  # one keyword of words: "yield from", "is not"
        if action == STRING and in_string:
            if not identifiers:
                tokens[-1] += value
            if spans:
                ends[-1] = end
            continue
        in_string = action == STRING
        tokens.append(PLACEHOLDERS[action] if identifiers and action != KEEP else value)
        if spans:
            starts.append(start)
            ends.append(end)
    if fold:
        # After the joining: the spec folds a string literal whole (section 5.1, steps 2 and
        # 4), not part by part; the placeholders are lower-case ASCII already.
        tokens = [t.lower() if t.isascii() else normalize(t).lower() for t in tokens]
    return tokens, starts, ends


def document_tokens(
    buffer: TextBuffer, names: Names | None, language: str | None, identifiers: bool, fold: bool
) -> list[list[str]]:
    """The tokens of each document of ``buffer`` (none for a skipped one), as
    :func:`code_tokens` makes them; ``names`` are the documents' file names, whose suffixes
    choose the lexer when ``language`` is None."""
    out: list[list[str]] = []
    data, offsets = buffer.data, buffer.offsets
    for d, skipped in enumerate(buffer.skipped.tolist()):
        if skipped:
            out.append([])
            continue
        lexer = lexer_for(language, None if names is None else names[d])
        text = data[offsets[d] : offsets[d + 1]].tobytes().decode("utf-8", "replace")
        out.append(code_tokens(text, lexer, identifiers, fold))
    return out


def document_token_buffer(
    buffer: TextBuffer, names: Names | None, language: str | None, identifiers: bool, fold: bool
) -> TokenBuffer:
    """:func:`document_tokens` as one :func:`token_buffer`: what a lexing worker hands back."""
    return token_buffer(document_tokens(buffer, names, language, identifiers, fold))


def code_token_buffer(
    buffer: TextBuffer, names: Names | None, config: FingerprintConfig, workers: int = 1
) -> TokenBuffer:
    """The tokens of ``buffer``'s documents as ``config`` makes them, lexed on ``workers``
    processes (``lexing.py``)."""
    lex = functools.partial(
        document_token_buffer,
        language=config.language,
        identifiers=config.code_normalize == "identifiers",
        fold=config.normalize,
    )
    return lexed(buffer, names, lex, workers)


def token_buffer(documents: Iterable[list[str]]) -> TokenBuffer:
    """``documents``' tokens as the kernels take them: (uint8 bytes, each token opened by
    ``MARK``; int64 token offsets; int64 document offsets into the tokens)."""
    encoded: list[bytes] = []
    doc_offsets = [0]
    for tokens in documents:
        encoded += [MARK + token.encode("utf-8") for token in tokens]
        doc_offsets.append(len(encoded))
    token_offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=token_offsets[1:])
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    return data, token_offsets, np.array(doc_offsets, dtype=np.int64)


def fingerprints_of_tokens(tokens: TokenBuffer, config: FingerprintConfig, weighing: tuple) -> np.ndarray:
    """uint64 fingerprints (n, words) of the documents of a token buffer; ``weighing`` is
    ``Fingerprinter.weighing()``."""
    from .._kernels.code import fingerprint_code

    data, token_offsets, doc_offsets = tokens
    out = np.zeros((len(doc_offsets) - 1, config.bits // 64), dtype=np.uint64)
    fingerprint_code(data, token_offsets, doc_offsets, config.shingle_size, *weighing, out)
    return out


def feature_counts_of_tokens(
    tokens: TokenBuffer, config: FingerprintConfig
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each document's distinct feature hashes, ascending, with their counts: CSR, as
    ``simhash.feature_counts`` gives them for prose."""
    from .._kernels.code import code_feature_counts as kernel

    return kernel(*tokens, config.shingle_size, np.uint64(config.seed))


def code_fingerprints(
    buffer: TextBuffer,
    names: Names | None,
    config: FingerprintConfig,
    weighing: tuple,
    workers: int = 1,
) -> np.ndarray:
    """uint64 fingerprints (n, words) of ``buffer``'s documents as code, lexed on ``workers``
    processes; ``weighing`` is ``Fingerprinter.weighing()``."""
    return fingerprints_of_tokens(code_token_buffer(buffer, names, config, workers), config, weighing)


def code_feature_counts(
    buffer: TextBuffer, names: Names | None, config: FingerprintConfig, workers: int = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each document's distinct feature hashes as code, ascending, with their counts (CSR)."""
    return feature_counts_of_tokens(code_token_buffer(buffer, names, config, workers), config)
