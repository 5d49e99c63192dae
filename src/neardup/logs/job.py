"""``neardup logs``' job: read log lines, give each its template, write lines and templates.

Lines are read as every command reads its inputs (:mod:`neardup.io`): a text file holds one
line a document, a JSONL, CSV or Parquet file one record a line (its ``text_field``). Memory
holds the templates and one block of lines; each line's template is spooled to a temporary
file, since a later line can merge the template an earlier one was given, and the lines'
output is written from the spool at the end with every id made final.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np
import pyarrow as pa

from .._atomic import atomic_path
from .._prefetch import prefetch
from .._progress import Progress
from ..io.arrays import int64_array, prefixed, string_array
from ..io.batch import Batch, ReadOptions
from ..io.dispatch import read_documents
from ..io.rejects import Rejects
from ..io.sources import Source
from ..io.writers import TableWriter, table_format, write_table
from .templates import LogTemplates

LINE_COLUMNS = ("line", "template_id")
TEMPLATE_COLUMNS = ("template_id", "template", "count", "first_line")
_SPOOLED = np.dtype([("source", np.int32), ("row", np.int64), ("template", np.int64)])
_WRITE_ROWS = 65536


@dataclass
class LogsRun:
    """What a run did: lines read and skipped, templates before and after, seconds."""

    lines: int
    skipped: int
    templates_before: int
    templates: int
    seconds: float
    skipped_summary: str = ""

    def summary(self) -> str:
        new = self.templates - self.templates_before
        text = f"{self.lines:,} lines into {self.templates:,} templates"
        if self.templates_before:
            text += f" ({new:,} new)"
        text += f" in {self.seconds:.1f} s ({self.lines / max(self.seconds, 1e-9):,.0f} lines/s)"
        if self.skipped:
            text += f"\nskipped {self.skipped:,} bad lines: {self.skipped_summary}"
        return text


def mine(
    sources: list[Source],
    templates: LogTemplates,
    read: ReadOptions,
    *,
    lines_path: str | None = None,
    progress: Progress | None = None,
) -> LogsRun:
    """Give every line of ``sources`` its template in ``templates``; with ``lines_path``,
    write each line's id and final template there (atomically, the format by suffix)."""
    started = time.perf_counter()
    progress = progress or Progress(enabled=False)
    before = len(templates)
    lines = 0
    rejects = Rejects(read.errors)
    with _Spool(lines_path is not None) as spool:
        with progress.stage("read", total=sum(source.size for source in sources)) as stage:
            for batch, where in prefetch(read_documents(sources, read, rejects)):
                found = templates.add_texts(_strings(batch.texts))
                lines += len(found)
                spool.add(where, batch, found)
                stage.update(batch.consumed, lines)
        rejects.check_share(lines + rejects.count, read.max_skipped)
        if lines_path is not None:
            with progress.stage("write", total=lines, unit="lines"):
                _write_lines(lines_path, spool, sources, templates)
    return LogsRun(
        lines, rejects.count, before, len(templates), time.perf_counter() - started, rejects.summary()
    )


def _strings(texts: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A batch's texts as one large string array (they are valid UTF-8 once read)."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    return texts if texts.type == pa.large_string() else texts.cast(pa.large_string())


def write_templates(path: str | IO[bytes] | pa.NativeFile, templates: LogTemplates, format: str) -> None:
    """The live templates, one row each (``TEMPLATE_COLUMNS``), by id."""
    live = templates.templates()
    arrays = [
        int64_array(np.array([t.id for t in live], dtype=np.int64)),
        string_array([t.text for t in live]),
        int64_array(np.array([t.count for t in live], dtype=np.int64)),
        string_array([t.first for t in live]),
    ]
    table = pa.Table.from_arrays(arrays, names=list(TEMPLATE_COLUMNS))
    if isinstance(path, str):
        with atomic_path(path) as target:
            write_table(table, target, format)
    else:
        write_table(table, path, format)


class _Spool:
    """Each line's source, row (or id) and template as first given, on disk, in order."""

    def __init__(self, wanted: bool) -> None:
        self.wanted = wanted
        self.file: IO[bytes] | None = None
        self.ids: list[pa.Array] = []  # the id field's values, when the input names ids
        self.rows = 0

    def __enter__(self) -> _Spool:
        if self.wanted:
            self.file = tempfile.TemporaryFile(prefix="neardup-logs-")
        return self

    def __exit__(self, *_: object) -> None:
        if self.file is not None:
            self.file.close()

    def add(self, where: int | np.ndarray, batch: Batch, found: np.ndarray) -> None:
        if self.file is None:
            return
        rows = np.empty(len(found), dtype=_SPOOLED)
        rows["source"] = where
        rows["row"] = batch.rows
        rows["template"] = found
        self.file.write(rows.tobytes())
        if batch.ids is not None:
            self.ids.append(batch.ids)
        self.rows += len(found)

    def chunks(self) -> Iterator[np.ndarray]:
        assert self.file is not None
        self.file.flush()
        self.file.seek(0)
        for start in range(0, self.rows, _WRITE_ROWS):
            count = min(_WRITE_ROWS, self.rows - start)
            yield np.frombuffer(self.file.read(count * _SPOOLED.itemsize), dtype=_SPOOLED)


def _names(sources: Sequence[Source], owners: np.ndarray, rows: np.ndarray) -> pa.Array:
    """``Source.document_id`` of each (source, row): ``name:row``, a run of one source at a
    time (rows start at 1: every line is a document here)."""
    cuts = [0, *(np.flatnonzero(owners[1:] != owners[:-1]) + 1).tolist(), len(owners)]
    runs = [
        prefixed(sources[int(owners[begin])].name + ":", rows[begin:end])
        for begin, end in itertools.pairwise(cuts)
    ]
    return pa.concat_arrays(runs) if runs else string_array([])


def _write_lines(path: str, spool: _Spool, sources: Sequence[Source], templates: LogTemplates) -> None:
    roots = templates.resolve(np.arange(templates.next_id))
    format = table_format(path)
    with atomic_path(path) as target:
        writer = TableWriter(Path(target), format, name=os.path.basename(path))
        # Each batch is made in a thread while the last is formatted: both let go of the GIL.
        for batch in prefetch(_line_batches(spool, sources, roots)):
            writer.write(batch)
        if writer.schema is None:  # no line: the columns still say what the file holds
            empty = [string_array([]), int64_array(np.empty(0, dtype=np.int64))]
            writer.write(pa.record_batch(empty, names=list(LINE_COLUMNS)))
        writer.close()


def _line_batches(spool: _Spool, sources: Sequence[Source], roots: np.ndarray) -> Iterator[pa.RecordBatch]:
    """The spooled lines as rows of ``LINE_COLUMNS``: each line's id, its final template."""
    given = pa.chunked_array(spool.ids, pa.string()) if spool.ids else None
    start = 0
    for chunk in spool.chunks():
        if given is not None:
            names = given.slice(start, len(chunk)).combine_chunks()
        else:
            names = _names(sources, chunk["source"], chunk["row"])
        start += len(chunk)
        yield pa.record_batch([names, int64_array(roots[chunk["template"]])], names=list(LINE_COLUMNS))
