"""The documents a dedup runs over: files on disk (read again for each pass, never held in
memory) or data already in memory (a list of texts, a DataFrame, a pyarrow Table)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from .._errors import ConfigError
from .._prefetch import prefetch
from .batch import Batch, ReadOptions
from .dispatch import read_documents
from .rejects import Rejects
from .sources import Source, check_outputs, find_sources

_MEMORY_BATCH = 65536
_PATHS_CHECKED = 100
"""Texts that are all paths of files: the first this many are asked of the file system."""


class FileCorpus:
    """Documents in files (see :func:`neardup.io.find_sources` for formats)."""

    def __init__(self, sources: list[Source], options: ReadOptions, inputs: list[str] | None = None) -> None:
        self.sources = sources
        self.options = options
        self.inputs = inputs if inputs is not None else [str(source.path) for source in sources]
        """The files and folders given, which no output may replace or lie in."""
        self.total_bytes = sum(source.size for source in sources)

    def check_outputs(self, outputs: dict[str, Any], folders: tuple[str, ...] = ()) -> None:
        """Refuse an output that is an input or lies in an input folder, two on one path, and
        one that cannot be written (see :func:`neardup.io.sources.check_outputs`)."""
        check_outputs(outputs, self.inputs, folders=folders)

    def batches(self, rejects: Rejects) -> Iterator[tuple[Batch, int | np.ndarray]]:
        """(batch, source position(s)) in order; files are read one block ahead, in a thread,
        while the caller fingerprints the last block."""
        return prefetch(read_documents(self.sources, self.options, rejects))

    def default_ids(self, rows: np.ndarray, owners: np.ndarray) -> list[str]:
        """``file:line`` (``file:row`` for tables; ``file`` for one-document files)."""
        return [self.sources[o].document_id(r) for o, r in zip(owners.tolist(), rows.tolist())]


class MemoryCorpus:
    """Documents already in memory: ``texts`` a pyarrow string array (or chunked array) or
    a list, with optional ``ids``."""

    def __init__(self, texts: Any, ids: Any = None) -> None:
        self.texts = texts
        self.ids = ids
        self.total_bytes = None

    def batches(self, rejects: Rejects) -> Iterator[tuple[Batch, int]]:
        n = len(self.texts)
        for start in range(0, n, _MEMORY_BATCH):
            stop = min(start + _MEMORY_BATCH, n)
            texts = self.texts[start:stop]
            positions = np.arange(start, stop, dtype=np.int64)
            ids = None if self.ids is None else pa.array([str(i) for i in self.ids[start:stop]], pa.string())
            if isinstance(texts, list):
                texts, good = _only_texts(texts, start, rejects)
                positions = positions[good]
                ids = None if ids is None else ids.filter(pa.array(good))
            elif texts.null_count:
                good = ~texts.is_null().to_numpy(zero_copy_only=False)
                for p in np.flatnonzero(~good).tolist():
                    rejects.reject(f"document {start + p}", "is null, not text", "not text")
                texts, positions = texts.filter(pa.array(good)), positions[good]
                ids = None if ids is None else ids.filter(pa.array(good))
            if len(positions):
                yield Batch(texts, positions, ids, stop), 0

    def default_ids(self, rows: np.ndarray, owners: np.ndarray) -> list[int]:
        """Positions in the data."""
        return rows.tolist()


def _only_texts(texts: list, start: int, rejects: Rejects) -> tuple[list, np.ndarray]:
    """The str and bytes items of ``texts`` and a mask of them; any other item is rejected."""
    good = np.array([isinstance(t, (str, bytes)) for t in texts], dtype=bool)
    for p in np.flatnonzero(~good).tolist():
        rejects.reject(f"document {start + p}", f"is a {type(texts[p]).__name__}, not text", "not text")
    if good.all():
        return texts, good
    return [t for t, ok in zip(texts, good) if ok], good


def open_corpus(
    data: Any,
    *,
    text_field: str,
    id_field: str | None,
    options: ReadOptions,
    input_format: str | None = None,
    compression: str | None = None,
    lines: bool = False,
) -> FileCorpus | MemoryCorpus:
    """The corpus of ``data``: a path (str or ``os.PathLike``) or a list of ``Path`` objects
    are files; a list of texts, a pandas or polars DataFrame or a pyarrow Table (column
    ``text_field``, ids from ``id_field``) are in memory. A list of :class:`~.sources.Source`
    (from :func:`~.sources.find_sources`, or stdin saved to a file) is those files as found."""
    if isinstance(data, (str, os.PathLike)):  # one path, even as a str (a list of str is texts)
        data = [Path(data)]
    if isinstance(data, list) and data and all(isinstance(d, Source) for d in data):
        return FileCorpus(data, options)
    if isinstance(data, (list, tuple)) and data and all(isinstance(d, os.PathLike) for d in data):
        inputs = [os.fspath(d) for d in data]
        sources = find_sources(inputs, format=input_format, compression=compression, lines=lines)
        return FileCorpus(sources, options, inputs)
    if isinstance(data, (list, tuple, pa.Array, pa.ChunkedArray)):
        _check_texts(data, text_field, id_field)
        return MemoryCorpus(list(data) if isinstance(data, (list, tuple)) else data)
    table = _as_table(data)
    if table is None:
        raise TypeError(
            f"cannot deduplicate a {type(data).__name__}: pass a list of texts, a pandas "
            f"or polars DataFrame, a pyarrow Table, or file paths (str or Path)"
        )
    for field, name in ((text_field, "text_field"), (id_field, "id_field")):
        if field is not None and field not in table.column_names:
            raise KeyError(
                f"no column {field!r} (columns: {', '.join(map(repr, table.column_names))}); "
                f"name the column with {name}="
            )
    ids = table.column(id_field).to_pylist() if id_field else None
    return MemoryCorpus(table.column(text_field), ids)


def read_corpus(data: Any, read: ReadOptions) -> FileCorpus | MemoryCorpus:
    """:func:`open_corpus` with every reading setting from ``read`` (the library's jobs:
    ``neardup.dedup``, ``neardup.passages``)."""
    return open_corpus(
        data,
        text_field=read.text_field,
        id_field=read.id_field,
        options=read,
        input_format=read.input_format,
        compression=read.compression,
        lines=read.lines,
    )


def _check_texts(data: Any, text_field: str, id_field: str | None) -> None:
    """Refuse what would make texts of ``data`` silently wrong: a field named for texts,
    which have none, or a list of str that are all paths of files (a list of str is texts;
    a list of ``Path`` is files)."""
    named = [
        f"{name}={value!r}"
        for name, value, default in (("text_field", text_field, "text"), ("id_field", id_field, None))
        if value != default
    ]
    if named:
        raise ConfigError(
            f"{' and '.join(named)} {'name' if len(named) > 1 else 'names'} a field, but the data "
            f"is texts, which have none; "
            f"pass a table (pyarrow, pandas, polars) with that column, or files as Path objects"
        )
    first = data[:_PATHS_CHECKED] if isinstance(data, (list, tuple)) else []
    if first and all(isinstance(d, str) and len(d) < 4096 and os.path.isfile(d) for d in first):
        shown = ", ".join(repr(d) for d in data[:3])
        raise ConfigError(
            f"a list of str is deduplicated as texts, but these texts are all paths of "
            f"files ({shown}{', ...' if len(data) > 3 else ''}); to read the files, pass "
            f"them as a path or a list of Path: [Path(p) for p in paths]"
        )


def _as_table(data: Any) -> pa.Table | None:
    if isinstance(data, pa.Table):
        return data
    module = type(data).__module__.split(".")[0]
    if module == "pandas":
        return pa.Table.from_pandas(data, preserve_index=False)
    if module == "polars":
        return data.to_arrow()
    return None


def file_names(corpus: FileCorpus | MemoryCorpus, batch: Batch, owner: Any) -> list[str | None] | None:
    """Each document of ``batch`` (read from ``owner``, a source position or an array of them)
    named by its file, whose suffix says the language of code: a one-document file's (row 0);
    None for a line or row of a file; None in all for texts in memory."""
    sources = getattr(corpus, "sources", None)
    if sources is None:
        return None
    owned = np.broadcast_to(owner, len(batch)).tolist()
    return [sources[o].name if row == 0 else None for o, row in zip(owned, batch.rows.tolist())]


def texts_by_id(corpus: FileCorpus | MemoryCorpus, wanted: set) -> dict:
    """The texts of the documents whose ids are in ``wanted`` (one pass over the corpus;
    bad records are passed over)."""
    found = {}
    for batch, owners in corpus.batches(Rejects("skip")):
        if batch.ids is not None:
            ids = batch.ids.to_pylist()
        else:
            ids = corpus.default_ids(batch.rows, np.broadcast_to(owners, len(batch)))
        for position, doc_id in enumerate(ids):
            if doc_id in wanted:
                text = batch.texts[position]
                found[doc_id] = text if isinstance(text, str) else text.as_py()
    return {k: v.decode("utf-8", "replace") if isinstance(v, bytes) else v for k, v in found.items()}
