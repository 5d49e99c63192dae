"""Find the passages documents share: read -> words and seeds -> matches
(``decision/passage_matching.py``)
-> offsets and ids -> a ``PassageResult``.

Memory holds the texts (to find each passage's characters), 5 bytes a word, 16 bytes a sampled
seed (one word in three) and 16 bytes a pair of seed occurrences: about 8 times the text of the
benchmark's real prose.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pyarrow as pa

from .._progress import Progress
from ..decision.code_passages import refined
from ..decision.passage_code import CorpusCode
from ..decision.passage_matching import Common, Matches, PassageOptions, Seeds, find_passages
from ..decision.passage_words import CorpusWords
from ..fingerprint.fingerprinter import _threads, resolve_threads
from ..io.batch import ReadOptions
from ..io.corpus import read_corpus
from ..io.ids import repeated_ids
from ..io.rejects import Rejects
from .documents import Copies, Documents
from .lexed import lexable
from .result import CODE_COMMON_COLUMNS, CODE_MATCH_COLUMNS, COMMON_COLUMNS, MATCH_COLUMNS, PassageResult


def passages(
    data: Any,
    options: PassageOptions | None = None,
    *,
    text_field: str = "text",
    id_field: str | None = None,
    errors: str = "raise",
    max_skipped: float | None = None,
    input_format: str | None = None,
    compression: str | None = None,
    lines: bool = False,
    max_document_mb: float = 32,
    block_mb: float = 16,
    n_jobs: int | None = None,
    progress: Progress | None = None,
    **option_keywords: Any,
) -> PassageResult:
    """Every passage of at least ``min_words`` words that two documents share, near copies
    included (about one word in ten changed, inserted or deleted), with where it lies in each.

    Args:
        data: what :func:`neardup.dedup` reads: a list of texts; a pandas or polars
            DataFrame or a pyarrow Table (column ``text_field``); or files: a path (str or
            ``Path``) or a list of ``Path`` (JSONL, Parquet, CSV/TSV, text; plain, .gz, .zst).
        options: a :class:`PassageOptions`, or its fields as keywords: ``min_words`` (50),
            ``min_similarity`` (0.8), ``common_docs`` (100: a passage in this many documents
            or more is listed once in ``result.common``, not as pairs); ``features="code"``
            (passages of source code tokens, the ``code`` extra) with ``language`` (None: each
            document's file name, or id, says it) and ``code_normalize`` ("identifiers").
        text_field, id_field, errors, max_skipped, input_format, compression, lines,
        max_document_mb, block_mb, n_jobs, progress: as for :func:`neardup.dedup`.

    Returns a :class:`PassageResult`: ``matches`` (``id_a, id_b, start_a, end_a, start_b,
    end_b, words, similarity``; offsets are ``str`` indices; for code, ``line_a, end_line_a,
    line_b, end_line_b`` after them, and ``words`` counts tokens) and ``common``.
    """
    if options is None:
        options = PassageOptions(**option_keywords)
    elif option_keywords:
        raise TypeError(
            f"pass options= or its fields as keywords, not both: {', '.join(sorted(option_keywords))}"
        )
    read = ReadOptions.from_keywords(
        text_field=text_field,
        id_field=id_field,
        errors=errors,
        max_skipped=max_skipped,
        input_format=input_format,
        compression=compression,
        lines=lines,
        max_document_mb=max_document_mb,
        block_mb=block_mb,
    )
    return run_job(data, options, read, n_jobs=n_jobs, progress=progress)


def run_job(
    data: Any,
    options: PassageOptions,
    read: ReadOptions,
    *,
    n_jobs: int | None = None,
    progress: Progress | None = None,
) -> PassageResult:
    """The passages job, as :func:`passages` and ``neardup passages`` run it: ``data`` read
    as ``read`` says, passages found as ``options`` say, on ``n_jobs`` threads (None: all
    cores). Its outputs are the result's to write (:meth:`PassageResult.write`)."""
    corpus = read_corpus(data, read)
    progress = progress or Progress(enabled=False)
    rejects = Rejects(read.errors)
    code = options.features == "code"
    words: CorpusWords | CorpusCode = CorpusCode(options.code_normalize) if code else CorpusWords()
    seeds = Seeds(options.min_words, options.seed_words)
    ids: list = []
    owners, rows = [], []
    with _threads(resolve_threads(n_jobs)):
        with progress.stage("words", total=getattr(corpus, "total_bytes", None)) as stage:
            for batch, where in corpus.batches(rejects):
                lexers = None
                if code:
                    batch, where, lexers = lexable(corpus, batch, where, options.language, rejects)
                    if not len(batch):
                        continue
                if batch.ids is not None:
                    ids += batch.ids.to_pylist()
                else:
                    ids += corpus.default_ids(batch.rows, np.broadcast_to(where, len(batch)))
                owners.append(np.broadcast_to(where, len(batch)))
                rows.append(batch.rows)
                first = len(words)
                hashes, offsets = _add(words, batch.texts, lexers)
                seeds.add(hashes, offsets, first)
                stage.update(batch.consumed if corpus.total_bytes else len(words), len(batch))
        rejects.check_share(len(ids), read.max_skipped)
        if read.id_field is not None and (repeated := repeated_ids(ids, read.id_field)) is not None:
            warnings.warn(repeated, UserWarning, stacklevel=3)  # the caller of passages or run_job
        words.freeze()
        with progress.stage("passages", unit="docs"):
            matches, common = find_passages(words.hashes, words.offsets, seeds, options)
            if isinstance(words, CorpusCode):
                matches = refined(matches, words, options)
            match_places = _places(words, matches)
            copy_start, copy_end = words.char_offsets(common.doc, common.first, common.last)
        copies = Copies(
            matches.doc_a, matches.doc_b, match_places, common.doc, copy_start, copy_end, common.passage
        )
        position = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        documents = Documents(words, ids, corpus, _concatenated(owners), position, copies)
        copy_places: tuple[np.ndarray, ...] = (copy_start, copy_end)
        if isinstance(words, CorpusCode):
            match_places = (*match_places, *_lines(words, matches))
            copy_places += words.line_ranges(common.doc, common.first, common.last)
        return PassageResult(
            _matches_table(matches, match_places, ids, code),
            _common_table(common, copy_places, ids, code),
            documents=len(ids),
            words=len(words.hashes),
            bytes=words.text_bytes,
            skipped=rejects.count,
            _documents=documents,
        )


def _concatenated(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)


def _add(
    words: CorpusWords | CorpusCode, texts: Any, lexers: list[Any] | None
) -> tuple[np.ndarray, np.ndarray]:
    """The units of ``texts`` added to ``words``: words, or code tokens read by ``lexers``."""
    if isinstance(words, CorpusCode):
        assert lexers is not None
        return words.add(texts, lexers)
    return words.add(texts)


def _lines(words: CorpusCode, m: Matches) -> tuple[np.ndarray, ...]:
    """line_a, end_line_a, line_b, end_line_b of each match: the lines of its first and last token."""
    return (
        *words.line_ranges(m.doc_a, m.first_a, m.last_a),
        *words.line_ranges(m.doc_b, m.first_b, m.last_b),
    )


def _places(words: CorpusWords | CorpusCode, m: Matches) -> tuple[np.ndarray, ...]:
    """start_a, end_a, start_b, end_b of each match, in characters."""
    return (
        *words.char_offsets(m.doc_a, m.first_a, m.last_a),
        *words.char_offsets(m.doc_b, m.first_b, m.last_b),
    )


def _matches_table(m: Matches, places: tuple[np.ndarray, ...], ids: list, code: bool) -> pa.Table:
    columns = [_ids(ids, m.doc_a), _ids(ids, m.doc_b), *places, m.words, np.round(m.similarity, 4)]
    return pa.table(dict(zip(CODE_MATCH_COLUMNS if code else MATCH_COLUMNS, columns)))


def _common_table(c: Common, places: tuple[np.ndarray, ...], ids: list, code: bool) -> pa.Table:
    firsts = np.flatnonzero(np.diff(c.passage, prepend=-1))
    columns = [
        np.arange(len(firsts), dtype=np.int64),
        c.documents(),
        _ids(ids, c.doc[firsts]),
        *(place[firsts] for place in places),
        c.last[firsts] - c.first[firsts] + 1,
    ]
    return pa.table(dict(zip(CODE_COMMON_COLUMNS if code else COMMON_COLUMNS, columns)))


def _ids(ids: list, docs: np.ndarray) -> pa.Array:
    kind = pa.string() if ids and isinstance(ids[0], str) else pa.int64() if ids else None
    return pa.array([ids[d] for d in docs.tolist()], type=kind)


def warm() -> None:
    """Compile (or load from the cache) the kernels ``passages`` runs: ``neardup warmup``."""
    words = [f"w{i}" for i in range(120)]
    shared = " ".join(words[:60])
    texts = [f"{shared} {i} Straße 文字" for i in range(4)] + [" ".join(words[30:]) + " tail"]
    passages(texts, common_docs=4).copied_share("longest")  # char_counts, for --documents
