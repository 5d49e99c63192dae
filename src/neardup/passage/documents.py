"""The documents with what they copy: each one's copied share, its text with the copies cut
out, and the documents written back in their own format (``neardup passages --documents``).

A document copies a passage when a document before it in ``keep`` order (``first``: the
input's, ``longest``, ``shortest``, ``lowest-id``, as ``dedup --keep``) holds it too: the later
of a pair of matches, and every copy of a common passage but the one that comes first.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from .._atomic import atomic_path
from .._errors import ConfigError
from ..decision.choices import KEEP
from ..decision.passage_words import CorpusTexts
from ..decision.steps import priority
from ..io.batch import ReadOptions
from ..io.corpus import FileCorpus, MemoryCorpus
from ..io.files import document_bytes
from ..io.lines import kept_records
from ..io.sources import Source
from ..io.tables import kept_table_records
from ..io.writers import TableWriter, output_format


@dataclass
class CopiedSpans:
    """The characters each document copies: spans ``[start, end)`` of document ``doc``
    (int64 arrays, sorted by document, then start; spans may overlap)."""

    doc: np.ndarray
    start: np.ndarray
    end: np.ndarray

    @classmethod
    def of(cls, doc: np.ndarray, start: np.ndarray, end: np.ndarray) -> CopiedSpans:
        order = np.lexsort((start, doc))
        return cls(doc[order], start[order], end[order])

    def copied_chars(self, documents: int) -> np.ndarray:
        """Characters copied in each document, overlaps counted once (int64, (documents,))."""
        if not len(self.doc):
            return np.zeros(documents, dtype=np.int64)
        # Shifted so that each document's spans lie above the last one's: one running maximum
        # of the ends then says how far the spans before each one already reached.
        shift = self.doc * (int(self.end.max()) + 1)
        start, end = self.start + shift, self.end + shift
        reached = np.maximum.accumulate(end)
        before = np.concatenate([[0], reached[:-1]])
        new = np.maximum(end - np.maximum(start, before), 0)
        return np.bincount(self.doc, weights=new, minlength=documents).astype(np.int64)

    def cut(self, doc: int, text: str) -> str:
        """``text`` (document ``doc``'s) without its copied characters."""
        lo, hi = np.searchsorted(self.doc, [doc, doc + 1])
        if lo == hi:
            return text
        pieces, at = [], 0
        for start, end in zip(self.start[lo:hi].tolist(), self.end[lo:hi].tolist()):
            if start > at:
                pieces.append(text[at:start])
            at = max(at, end)
        pieces.append(text[at:])
        return "".join(pieces)


@dataclass
class Copies:
    """Every copy found, of either side: each match's two places (``doc_a``, ``doc_b`` and their
    ``[start, end)``), and each common passage's copies (``common_doc``, ``common_start``,
    ``common_end``, ``passage``, sorted by passage)."""

    doc_a: np.ndarray
    doc_b: np.ndarray
    places: tuple[np.ndarray, ...]
    common_doc: np.ndarray
    common_start: np.ndarray
    common_end: np.ndarray
    passage: np.ndarray

    def copied(self, rank: np.ndarray) -> CopiedSpans:
        """What each document copies when ``rank`` (int64, a document's place in keep order)
        says which comes first."""
        start_a, end_a, start_b, end_b = self.places
        b_later = rank[self.doc_b] > rank[self.doc_a]
        # Of each common passage's copies, the one whose document comes first stays.
        order = np.lexsort((rank[self.common_doc], self.passage))
        first = order[np.flatnonzero(np.diff(self.passage[order], prepend=-1))]
        others = np.ones(len(self.passage), dtype=bool)
        others[first] = False
        return CopiedSpans.of(
            np.concatenate([np.where(b_later, self.doc_b, self.doc_a), self.common_doc[others]]),
            np.concatenate([np.where(b_later, start_b, start_a), self.common_start[others]]),
            np.concatenate([np.where(b_later, end_b, end_a), self.common_end[others]]),
        )


class Documents:
    """The documents read, by number: their texts, ids and places, and what they copy."""

    def __init__(
        self,
        words: CorpusTexts,
        ids: list,
        corpus: FileCorpus | MemoryCorpus,
        owners: np.ndarray,
        rows: np.ndarray,
        copies: Copies,
    ) -> None:
        self.words, self.ids, self.corpus = words, ids, corpus
        self.owners, self.rows, self.copies = owners, rows, copies

    def copied(self, keep: str) -> CopiedSpans:
        """What each document copies, in ``keep`` order."""
        if keep not in KEEP:
            raise ConfigError(f"keep={keep!r} is not known; choose one of {', '.join(KEEP)}")
        n = len(self.ids)
        ids = pa.array(self.ids) if keep == "lowest-id" else None
        rank = np.empty(n, dtype=np.int64)
        rank[priority(n, keep, self.words.char_counts(), ids)] = np.arange(n)
        return self.copies.copied(rank)

    def copied_share(self, keep: str) -> np.ndarray:
        """The share of each document's characters that one before it in ``keep`` order holds
        (float64)."""
        return self._share(self.copied(keep))

    def _share(self, copied: CopiedSpans) -> np.ndarray:
        chars = self.words.char_counts()
        return copied.copied_chars(len(chars)) / np.maximum(chars, 1)

    def text(self, doc: int, copied: CopiedSpans | None) -> str:
        """Document ``doc``'s text, without what ``copied`` says it copies."""
        text = self.words.text(doc)
        return copied.cut(doc, text) if copied is not None else text

    def write(self, path: str | os.PathLike, strip: bool, max_copied: float | None, keep: str) -> int:
        """Write the documents to ``path``, atomically, in the inputs' format or the one its
        suffix names; with ``strip``, without what they copy; with ``max_copied``, leaving out
        those whose copied share is at least that. Returns how many were written."""
        copied = self.copied(keep)
        kept = np.ones(len(self.ids), dtype=bool)
        if max_copied is not None:
            kept = self._share(copied) < max_copied
        sources = self.corpus.sources if isinstance(self.corpus, FileCorpus) else []
        fmt, compression = output_format(str(path), None, sources)
        if fmt == "text":
            raise ConfigError(
                f"{Path(path).name}: the documents are written as one file (JSONL, CSV, Parquet "
                f"or lines), not a folder of text files; name one with its suffix"
            )
        text_field = self.corpus.options.text_field if isinstance(self.corpus, FileCorpus) else "text"
        with atomic_path(path) as temporary:
            writer = TableWriter(temporary, fmt, compression, text_field, Path(path).name)
            for batch in self._records(np.flatnonzero(kept), copied if strip else None):
                writer.write(batch)
            writer.close()
        return int(kept.sum())

    def _records(self, docs: np.ndarray, copied: CopiedSpans | None) -> Iterator[pa.RecordBatch]:
        if isinstance(self.corpus, MemoryCorpus):
            ids = pa.array([self.ids[d] for d in docs.tolist()])
            yield pa.record_batch(
                {"id": ids, "text": pa.array([self.text(d, copied) for d in docs.tolist()])}
            )
            return
        options = self.corpus.options
        bounds = np.searchsorted(self.owners[docs], np.arange(len(self.corpus.sources) + 1))
        for position, source in enumerate(self.corpus.sources):
            mine = docs[bounds[position] : bounds[position + 1]]
            if len(mine):
                source.check_unchanged()  # the records are read again, by row
                yield from _with_texts(
                    self._source_records(source, mine, options),
                    [self.text(d, copied) for d in mine.tolist()],
                    options.text_field,
                )
                source.check_unchanged()

    def _source_records(
        self, source: Source, docs: np.ndarray, options: ReadOptions
    ) -> Iterator[pa.RecordBatch]:
        if source.format == "text":
            text = document_bytes(source).decode("utf-8", "replace")
            yield pa.record_batch({"id": [source.name], options.text_field: [text]})
        elif source.format in ("jsonl", "lines"):
            yield from kept_records(source, options, self.rows[docs])
        else:
            yield from kept_table_records(source, options, self.rows[docs])


def _with_texts(batches: Iterator[pa.RecordBatch], texts: list[str], field: str) -> Iterator[pa.RecordBatch]:
    """``batches`` with their column ``field`` replaced by ``texts``, in order."""
    at = 0
    for batch in batches:
        column = pa.array(texts[at : at + batch.num_rows], pa.string())
        at += batch.num_rows
        yield batch.set_column(batch.schema.get_field_index(field), field, column)
    if at != len(texts):
        raise RuntimeError(f"read {at} records back where {len(texts)} were asked")
