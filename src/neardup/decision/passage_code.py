"""The code tokens of a corpus as one array of 32-bit hashes, for passages of source code
(``neardup passages --features code``): each document lexed as its code fingerprint is
(``fingerprint/code.py``: comments, docstrings and whitespace out; identifiers and literals
placeholders under ``code_normalize="identifiers"``; the rest casefolded), with where each
token lies, in code points and in lines, so that a passage of tokens maps back to the text.

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
    """

    def __init__(self, code_normalize: str = "identifiers") -> None:
        super().__init__()
        self._identifiers = code_normalize == "identifiers"
        self._token_hash: dict[str, int] = {}
        self._spans: list[np.ndarray] = []  # per batch: int64 (tokens, 4): start, end, line, end line
        self.spans = np.zeros((0, 4), dtype=np.int64)

    def add(self, texts: Any, lexers: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
        """Add ``texts`` (a pyarrow string or binary array, or a list of str), document i lexed
        by ``lexers[i]``; return their tokens as (hashes, offsets from 0), for the caller's seeds."""
        parts = []
        done = 0
        for buffer in raw_buffers(texts):
            hashes, counts, spans = [], [], []
            for d in range(len(buffer)):
                data = buffer.data[buffer.offsets[d] : buffer.offsets[d + 1]]
                text = data.tobytes().decode("utf-8", "replace")
                tokens, starts, ends = code_token_spans(text, lexers[done + d], self._identifiers, True)
                breaks = line_breaks(text)
                hashes.append(self._hashes_of(tokens))
                counts.append(len(tokens))
                lines = np.searchsorted(breaks, starts) + 1, np.searchsorted(breaks, ends - 1) + 1
                spans.append(np.stack([starts, ends, *lines], axis=1).reshape(-1, 4))
            done += len(buffer)
            parts.append((buffer, _joined(hashes, np.uint32), np.array(counts, dtype=np.int64)))
            self._spans.append(np.concatenate(spans) if spans else np.zeros((0, 4), np.int64))
        return self._added(parts)

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
        self._spans = []

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


def _joined(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)
