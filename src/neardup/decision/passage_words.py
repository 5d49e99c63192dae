"""The words of a corpus as one array of 32-bit hashes, grown a batch of documents at a time,
with the texts kept to find each passage's characters.

A word is what the fingerprint's tokeniser calls one (docs/fingerprint-spec.md): a run of word
code points, or one solo code point (a CJK ideograph, for example). Two words are the same
when their code points lower-cased one by one are (``str.lower`` of each, where that is one
code point: U+0130 İ, whose lower case is two, stays as it is); the text is not otherwise
normalised, so that offsets point into the text as given.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .._kernels.passages import char_counts, char_spans, word_hashes
from ..fingerprint.features import TABLE_LIMIT, char_classes
from ..fingerprint.text_buffers import TextBuffer, raw_buffers


@functools.cache
def lower_case() -> np.ndarray:
    """Each code point's lower case where it is one code point (int64, shape (TABLE_LIMIT,));
    code points above compare as they are."""
    table = np.arange(TABLE_LIMIT, dtype=np.int64)
    for cp in range(TABLE_LIMIT):
        lowered = chr(cp).lower()
        if len(lowered) == 1 and lowered != chr(cp):
            table[cp] = ord(lowered)
    table.setflags(write=False)
    return table


class CorpusTexts:
    """Documents numbered 0, 1, ... in the order added, the units a passage is made of (words
    here; code tokens in ``passage_code.py``) and their texts.

    Attributes:
        hashes: uint32, every unit's hash; document d's are ``hashes[offsets[d]:offsets[d + 1]]``.
        offsets: int64, shape (documents + 1,).
    """

    def __init__(self) -> None:
        self._buffers: list[TextBuffer] = []
        self._firsts = [0]  # the first document of each buffer, and one past the last
        self._hashes: list[np.ndarray] = []
        self._counts: list[np.ndarray] = []
        self.hashes = np.zeros(0, dtype=np.uint32)
        self.offsets = np.zeros(1, dtype=np.int64)
        self._char_counts: np.ndarray | None = None

    def __len__(self) -> int:
        return self._firsts[-1]

    @property
    def text_bytes(self) -> int:
        """The UTF-8 size of every text added."""
        return sum(int(b.offsets[-1] - b.offsets[0]) for b in self._buffers)

    def _added(self, parts: list[tuple[TextBuffer, np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
        """Keep each (buffer, its units' hashes, each document's count); return the units
        added as (hashes, offsets from 0)."""
        self._char_counts = None
        for buffer, hashes, counts in parts:
            self._buffers.append(buffer)
            self._firsts.append(self._firsts[-1] + len(buffer))
            self._hashes.append(hashes)
            self._counts.append(counts)
        counts = np.concatenate([c for _, _, c in parts]) if parts else np.zeros(0, np.int64)
        hashes = np.concatenate([h for _, h, _ in parts]) if parts else np.zeros(0, np.uint32)
        return hashes, _offsets(counts)

    def freeze(self) -> None:
        """Join the batches' units into ``hashes`` and ``offsets``, once all are added."""
        if self._hashes:
            self.hashes = np.concatenate(self._hashes)
            self.offsets = _offsets(np.concatenate(self._counts))
        self._hashes, self._counts = [], []

    def char_counts(self) -> np.ndarray:
        """Each document's length in code points (int64; counted once for the documents added so far)."""
        if self._char_counts is None:
            counts = [char_counts(buffer.data, buffer.offsets) for buffer in self._buffers]
            self._char_counts = np.concatenate(counts) if counts else np.zeros(0, np.int64)
        return self._char_counts

    def text(self, doc: int) -> str:
        """Document ``doc``'s text (ill-formed UTF-8 replaced)."""
        b = int(np.searchsorted(self._firsts, doc, side="right")) - 1
        buffer, local = self._buffers[b], doc - self._firsts[b]
        data = buffer.data[buffer.offsets[local] : buffer.offsets[local + 1]]
        return data.tobytes().decode("utf-8", "replace")


class CorpusWords(CorpusTexts):
    """Documents numbered 0, 1, ... in the order added, their words and their texts.

    Attributes:
        hashes: uint32, every word's hash; document d's are ``hashes[offsets[d]:offsets[d + 1]]``.
        offsets: int64, shape (documents + 1,).
    """

    def add(self, texts: Any) -> tuple[np.ndarray, np.ndarray]:
        """Add ``texts`` (a pyarrow string or binary array, or a list of str); return their
        words as (hashes, offsets from 0), for the caller's seeds."""
        classes, lower = char_classes(), lower_case()
        parts = []
        for buffer in raw_buffers(texts):
            hashes, counts = word_hashes(buffer.data, buffer.offsets, classes, lower)
            parts.append((buffer, hashes, counts))
        return self._added(parts)

    def char_offsets(
        self, docs: np.ndarray, first_word: np.ndarray, last_word: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The code point offsets [start, end) of words ``first_word..last_word`` (inclusive,
        numbered within each document) of documents ``docs``: two int64 arrays. After
        ``freeze``."""
        start = np.empty(len(docs), dtype=np.int64)
        end = np.empty(len(docs), dtype=np.int64)
        order = np.argsort(docs, kind="stable")
        owner = np.searchsorted(self._firsts, docs[order], side="right") - 1
        bounds = np.flatnonzero(np.diff(owner, prepend=-1, append=len(self._buffers)))
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            b = int(owner[lo])
            rows = order[lo:hi]
            buffer = self._buffers[b]
            local = (docs[rows] - self._firsts[b]).astype(np.int64)
            words = self.offsets[docs[rows] + 1] - self.offsets[docs[rows]]
            start[rows], end[rows] = char_spans(
                buffer.data,
                buffer.offsets,
                char_classes(),
                lower_case(),
                local,
                words,
                first_word[rows].astype(np.int64),
                last_word[rows].astype(np.int64),
            )
        return start, end


def _offsets(counts: np.ndarray) -> np.ndarray:
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets
