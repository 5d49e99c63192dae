"""The code tokens of a corpus as one array of 32-bit hashes, for passages of source code
(``neardup passages --features code``): each document lexed as its code fingerprint is
(``fingerprint/code.py``: comments, docstrings and whitespace out; identifiers and literals
placeholders under ``code_normalize="identifiers"``; the rest casefolded), with where each
token lies, in code points and in lines, so that a passage of tokens maps back to the text.

Under ``"identifiers"`` a name's placeholder also says how many tokens back the same name was
last used, within ``LAST_USE_WINDOW`` (Baker's parameterized matching, "On finding duplication
and near-duplication in large software systems", 1995): a copy with its names renamed
consistently reads the same, while code of the same shape whose names repeat differently (the
bulk of chance matches between unrelated files) does not. On the planted functions of
``benchmarks/bench_code.py`` this cut the passages that are not copies from 3,325 to 334 and
lost none of the copies.

A line ends at ``\\n``, ``\\r\\n`` or a lone ``\\r``, the breaks pygments lexes as one; lines count
from 1. Lexing is Python (pygments, about 1 MB/s a core): it bounds this stage, not the hashing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..fingerprint.code import code_token_spans
from ..fingerprint.text_buffers import raw_buffers
from .passage_words import CorpusTexts

LAST_USE_WINDOW = 128
"""Tokens back within which a name's last use is told in its placeholder, and ahead within
which its next use is kept (``next_use``). A copied function's first use of each name looks
back past the copy's start, into text the copies do not share; the window bounds how far.
128 kept every planted copy; 16 let in twice the chance matches, no window lost 5% of copies."""


def line_breaks(text: str) -> np.ndarray:
    """The code point offsets of ``text``'s line breaks (int64, ascending): each ``\\n``, and
    each ``\\r`` not followed by one. A character at offset o lies on line
    ``searchsorted(breaks, o) + 1``."""
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    lone_cr = points == 13
    lone_cr[:-1] &= points[1:] != 10
    return np.flatnonzero((points == 10) | lone_cr).astype(np.int64)


class CorpusCode(CorpusTexts):
    """Documents numbered 0, 1, ... in the order added, their code tokens and their texts.

    Args:
        code_normalize: ``"identifiers"`` (each name ``$id``, each literal ``$str``, ``$num``
            or ``$lit``: renamed copies match) or ``"none"`` (tokens as written, casefolded).

    Attributes:
        hashes: uint32, every token's hash; document d's are ``hashes[offsets[d]:offsets[d + 1]]``.
        offsets: int64, shape (documents + 1,).
        spans: int64, shape (tokens, 4): each token's first and last code point (``[start,
            end)``) and its first and last line.
        names: int32, each token's name (one number a distinct name, as written) or -1 where
            the token is no name.
        next_use: int32, tokens ahead to the same name's next use in the document, or 0 when
            there is none within ``LAST_USE_WINDOW`` (or the token is no name).
    """

    def __init__(self, code_normalize: str = "identifiers") -> None:
        super().__init__()
        self._identifiers = code_normalize == "identifiers"
        self._token_hash: dict[str, int] = {}
        self._spans: list[np.ndarray] = []  # per batch: int64 (tokens, 4): start, end, line, end line
        self._names: list[np.ndarray] = []
        self._next_use: list[np.ndarray] = []
        self._name_numbers: dict[str, int] = {}
        self.spans = np.zeros((0, 4), dtype=np.int64)
        self.names = np.zeros(0, dtype=np.int32)
        self.next_use = np.zeros(0, dtype=np.int32)

    def add(self, texts: Any, lexers: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
        """Add ``texts`` (a pyarrow string or binary array, or a list of str), document i lexed
        by ``lexers[i]``; return their tokens as (hashes, offsets from 0), for the caller's seeds."""
        parts = []
        done = 0
        for buffer in raw_buffers(texts):
            hashes, counts, spans, names, next_uses = [], [], [], [], []
            for d in range(len(buffer)):
                data = buffer.data[buffer.offsets[d] : buffer.offsets[d + 1]]
                text = data.tobytes().decode("utf-8", "replace")
                tokens, starts, ends = code_token_spans(text, lexers[done + d], self._identifiers, True)
                breaks = line_breaks(text)
                numbers = self._numbered(text, tokens, starts, ends)
                last_use, next_use = uses(numbers, LAST_USE_WINDOW)
                if self._identifiers:
                    tokens = [f"$id{b}" if b else t for t, b in zip(tokens, last_use.tolist())]
                hashes.append(self._hashes_of(tokens))
                names.append(numbers)
                next_uses.append(next_use)
                counts.append(len(tokens))
                lines = np.searchsorted(breaks, starts) + 1, np.searchsorted(breaks, ends - 1) + 1
                spans.append(np.stack([starts, ends, *lines], axis=1).reshape(-1, 4))
            done += len(buffer)
            parts.append((buffer, _joined(hashes, np.uint32), np.array(counts, dtype=np.int64)))
            self._spans.append(np.concatenate(spans) if spans else np.zeros((0, 4), np.int64))
            self._names.append(_joined(names, np.int32))
            self._next_use.append(_joined(next_uses, np.int32))
        return self._added(parts)

    def _numbered(self, text: str, tokens: list[str], starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """int32: each token's name as a number (the same for the same name as written, in
        any document), -1 for a token that is no name. Names are told only where they are
        placeholders (``code_normalize="identifiers"``): as written, equal tokens are equal names."""
        numbers = self._name_numbers
        out = np.full(len(tokens), -1, dtype=np.int32)
        if self._identifiers:
            for i, (token, start, end) in enumerate(zip(tokens, starts.tolist(), ends.tolist())):
                if token == "$id":
                    out[i] = numbers.setdefault(text[start:end], len(numbers))
        return out

    def _hashes_of(self, tokens: list[str]) -> np.ndarray:
        """uint32: each token's hash, the first 4 bytes of its BLAKE2b (the same in every run;
        the placeholders make few distinct tokens, each hashed once)."""
        known = self._token_hash
        for token in set(tokens).difference(known):
            digest = hashlib.blake2b(token.encode("utf-8", "surrogatepass"), digest_size=4).digest()
            known[token] = int.from_bytes(digest, "little")
        return np.fromiter((known[t] for t in tokens), dtype=np.uint32, count=len(tokens))

    def freeze(self) -> None:
        super().freeze()
        if self._spans:
            self.spans = np.concatenate(self._spans)
            self.names = np.concatenate(self._names)
            self.next_use = np.concatenate(self._next_use)
        self._spans, self._names, self._next_use = [], [], []

    def char_offsets(
        self, docs: np.ndarray, first_token: np.ndarray, last_token: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The code point offsets [start, end) of tokens ``first_token..last_token`` (inclusive,
        numbered within each document) of documents ``docs``: two int64 arrays. After ``freeze``."""
        first, last = self._rows(docs, first_token, last_token)
        return self.spans[first, 0], self.spans[last, 1]

    def line_ranges(
        self, docs: np.ndarray, first_token: np.ndarray, last_token: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The lines (1-based, inclusive) of the first character of token ``first_token`` and
        the last of ``last_token`` of documents ``docs``: two int64 arrays. After ``freeze``."""
        first, last = self._rows(docs, first_token, last_token)
        return self.spans[first, 2], self.spans[last, 3]

    def _rows(
        self, docs: np.ndarray, first_token: np.ndarray, last_token: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        base = self.offsets[np.asarray(docs, dtype=np.int64)]
        return base + np.asarray(first_token, np.int64), base + np.asarray(last_token, np.int64)


def uses(names: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """(last_use, next_use), int32 each: for each token of one document, the tokens back to the
    last use of its name (``names``, -1 for no name) and ahead to the next, 0 where there is
    none within ``window`` or the token is no name."""
    at = np.flatnonzero(names >= 0)
    order = at[np.argsort(names[at], kind="stable")]  # each name's uses in a row, in order
    same = names[order[1:]] == names[order[:-1]]
    gap = (order[1:] - order[:-1]).astype(np.int32)
    near = same & (gap <= window)
    last_use = np.zeros(len(names), dtype=np.int32)
    next_use = np.zeros(len(names), dtype=np.int32)
    last_use[order[1:][near]] = gap[near]
    next_use[order[:-1][near]] = gap[near]
    return last_use, next_use


def _joined(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)
