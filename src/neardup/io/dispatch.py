"""Corpora: reading documents in bounded record batches and writing the kept ones."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa

from .._prefetch import prefetch
from .batch import Batch, ReadOptions
from .files import document_bytes, read_text_files
from .lines import copy_spans, kept_records, read_jsonl, read_lines
from .rejects import Rejects
from .sources import Source
from .tables import kept_table_records, read_csv, read_parquet
from .writers import TableWriter, copy_file

READERS = {
    "jsonl": read_jsonl,
    "lines": read_lines,
    "csv": read_csv,
    "tsv": read_csv,
    "parquet": read_parquet,
}


def read_documents(
    sources: list[Source], options: ReadOptions, rejects: Rejects
) -> Iterator[tuple[Batch, int | np.ndarray]]:
    """(batch, position in ``sources`` of its source, or of each document's source) for
    every document of every source, in order. A file with no document at all is rejected."""
    position = 0
    while position < len(sources):
        source = sources[position]
        if source.format == "text":
            end = position
            while end < len(sources) and sources[end].format == "text":
                end += 1
            yield from read_text_files(list(enumerate(sources))[position:end], options, rejects)
            position = end
            continue
        found, before = False, rejects.count
        for batch in READERS[source.format](source, options, rejects):
            found = True
            yield batch, position
        source.check_unchanged()  # what was read is what a later pass will find
        if not found and rejects.count == before:
            rejects.reject(source.name, "holds no documents (an empty file?)", "empty file")
        position += 1


def write_kept(
    source: Source,
    rows: np.ndarray,
    spans: np.ndarray,
    writer: TableWriter | None,
    folder: Path | None,
    options: ReadOptions,
    written: set[str],
) -> None:
    """Append the kept documents of ``source`` (their sorted ``rows``, and their ``spans``
    for line-based files) to the output: the lines as they are when the formats match, else
    records; one-document files are copied to ``folder``. A source that changed since it was
    found raises :class:`FormatError`, before and after its copy."""
    source.check_unchanged()
    _write_kept(source, rows, spans, writer, folder, options, written)
    source.check_unchanged()


def _write_kept(
    source: Source,
    rows: np.ndarray,
    spans: np.ndarray,
    writer: TableWriter | None,
    folder: Path | None,
    options: ReadOptions,
    written: set[str],
) -> None:
    if source.format == "text":
        if folder is not None:
            copy_file(source, folder, written)
            return
        assert writer is not None  # the caller makes a writer wherever it makes no folder
        text = document_bytes(source).decode("utf-8")
        writer.write(pa.RecordBatch.from_pydict({"id": [source.name], options.text_field: [text]}))
        return
    assert writer is not None
    if source.format in ("jsonl", "lines") and writer.format == source.format:
        for piece in copy_spans(source, spans, options):
            writer.write_bytes(piece)
        return
    records = kept_records if source.format in ("jsonl", "lines") else kept_table_records
    for batch in prefetch(records(source, options, rows)):  # decode the next while encoding this
        writer.write(batch)
