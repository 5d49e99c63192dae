"""CSV, TSV and Parquet: tables read in record batches by pyarrow.

CSV columns are all read as strings, so that a kept row is written back with every value as
it was ("007" stays "007"). Rows are numbered from 1 among the data rows pyarrow parsed.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv

from .._errors import FormatError
from .batch import Batch, ReadOptions
from .encoding import rejected_as_not_utf8
from .lines import open_stream
from .rejects import Rejects
from .sources import Source

if TYPE_CHECKING:  # imported where a Parquet file is read: 20 ms of every start otherwise
    import pyarrow.parquet as pq

_PARQUET_BATCH_ROWS = 8192


def _delimiter(source: Source) -> str:
    return "\t" if source.format == "tsv" else ","


class _CsvReader:
    """pyarrow's streaming CSV reader of one source, every column typed as a string.

    pyarrow swallows an exception raised in its bad-row handler, so in ``raise`` mode the
    handler only notes the row and stops the reader; the error is raised after."""

    def __init__(self, source: Source, options: ReadOptions, rejects: Rejects) -> None:
        self.source = source
        self.rejects = rejects
        self.raw: pa.NativeFile | None = None
        self.failed: tuple[int, int] | None = None
        parse = pa_csv.ParseOptions(
            delimiter=_delimiter(source), newlines_in_values=True, invalid_row_handler=self._bad_row
        )
        read = pa_csv.ReadOptions(block_size=options.block_bytes)
        try:  # a first look for the column names; bad rows are for the real read to report
            sniff = pa_csv.ParseOptions(
                delimiter=_delimiter(source), newlines_in_values=True, invalid_row_handler=lambda row: "skip"
            )
            names = pa_csv.open_csv(
                open_stream(source)[1], read_options=read, parse_options=sniff
            ).schema.names
        except pa.ArrowInvalid as e:
            if "Empty CSV file" in str(e):
                self.reader = None
                return
            raise self._error(e) from None
        self.raw, stream = open_stream(source)
        convert = pa_csv.ConvertOptions(
            column_types={name: pa.string() for name in names}, strings_can_be_null=False
        )
        try:  # pyarrow parses the first block here already
            self.reader = pa_csv.open_csv(
                stream, read_options=read, parse_options=parse, convert_options=convert
            )
        except (pa.ArrowInvalid, OSError) as e:
            raise self._error(e) from None

    def _bad_row(self, row: Any) -> str:
        problem = f"{row.actual_columns} fields where the header has {row.expected_columns}"
        if self.rejects.errors == "raise":
            self.failed = (row.expected_columns, row.actual_columns)
            return "error"
        self.rejects.reject(
            f"{self.source.name}: the row {row.text[:80]!r}", problem, "wrong number of fields"
        )
        return "skip"

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        if self.reader is None:
            return
        try:
            yield from self.reader
        except (pa.ArrowInvalid, OSError) as e:
            raise self._error(e) from None

    def _error(self, e: Exception) -> FormatError:
        if self.failed is not None:  # raises, naming the line
            expected, actual = self.failed
            self.rejects.reject(
                _locate_bad_row(self.source, expected),
                f"{actual} fields where the header has {expected}",
                "wrong number of fields",
            )
        return FormatError(f"{self.source.name}: cannot be read as {_kind(self.source)} ({e})")


def _head(source: Source) -> bytes:
    """The first bytes of ``source``, decompressed (empty if it cannot be read: the reader
    proper says why)."""
    try:
        with open_stream(source)[1] as stream:
            return stream.read(4)
    except (OSError, pa.ArrowInvalid):
        return b""


def _locate_bad_row(source: Source, expected: int) -> str:
    """``file:line`` of the first row whose field count is not ``expected`` (Python's csv
    module, on the error path only: pyarrow does not tell the line)."""
    _, stream = open_stream(source)
    with stream:
        text = io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline="")
        reader = csv.reader(text, delimiter=_delimiter(source))
        start = 1
        for row in reader:
            if len(row) != expected:
                return f"{source.name}:{start}"
            start = reader.line_num + 1
    return source.name


def _kind(source: Source) -> str:
    return source.format.upper() + (f" ({source.compression})" if source.compression else "")


def read_csv(source: Source, options: ReadOptions, rejects: Rejects) -> Iterator[Batch]:
    """The documents of a CSV or TSV file with a header row."""
    if rejected_as_not_utf8(source.name, _head(source), rejects):
        return
    reader = _CsvReader(source, options, rejects)
    if reader.reader is None:
        return
    assert reader.raw is not None  # opened together with reader.reader
    _check_columns(source, reader.reader.schema, options)
    yield from _documents(source, iter(reader), options, rejects, reader.raw.tell)


def read_parquet(source: Source, options: ReadOptions, rejects: Rejects) -> Iterator[Batch]:
    """The documents of a Parquet file; only the text and id columns are read."""
    parquet = _open_parquet(source)
    schema = parquet.schema_arrow
    _check_columns(source, schema, options)
    text_type = schema.field(options.text_field).type
    if not (
        pa.types.is_string(text_type)
        or pa.types.is_large_string(text_type)
        or pa.types.is_binary(text_type)
        or pa.types.is_large_binary(text_type)
        or pa.types.is_string_view(text_type)
    ):
        raise FormatError(
            f"{source.name}: column {options.text_field!r} holds {text_type}, not text; "
            f"name the text column with --text-field"
        )
    columns = [options.text_field] + ([options.id_field] if options.id_field else [])
    batches = _parquet_batches(source, parquet, columns)
    done = [0]

    def consumed() -> int:
        return source.size * done[0] // max(parquet.metadata.num_rows, 1)

    def counted() -> Iterator[pa.RecordBatch]:
        for batch in batches:
            done[0] += batch.num_rows
            yield batch

    yield from _documents(source, counted(), options, rejects, consumed)


def _open_parquet(source: Source) -> pq.ParquetFile:
    import pyarrow.parquet as pq

    try:
        # pre_buffer would keep every column chunk read so far: memory grows with the file.
        return pq.ParquetFile(source.path, pre_buffer=False)
    except (pa.ArrowInvalid, OSError) as e:
        raise FormatError(f"{source.name}: not a readable Parquet file ({e})") from None


def _check_columns(source: Source, schema: pa.Schema, options: ReadOptions) -> None:
    for field, flag in ((options.text_field, "--text-field"), (options.id_field, "--id-field")):
        if field is not None and field not in schema.names:
            columns = ", ".join(repr(n) for n in schema.names[:20])
            raise FormatError(
                f"{source.name}: no column {field!r} (columns: {columns}); name another with {flag}"
            )


def _parquet_batches(
    source: Source, parquet: pq.ParquetFile, columns: list[str] | None
) -> Iterator[pa.RecordBatch]:
    try:
        yield from parquet.iter_batches(batch_size=_PARQUET_BATCH_ROWS, columns=columns)
    except (pa.ArrowInvalid, OSError) as e:
        raise FormatError(f"{source.name}: cannot be read as Parquet ({e})") from None


def _documents(
    source: Source, batches: Iterator[pa.RecordBatch], options: ReadOptions, rejects: Rejects, consumed: Any
) -> Iterator[Batch]:
    """Batches of documents from record batches: rows without a usable text or id are
    rejected, naming their row."""
    first_row = 1
    for record_batch in batches:
        n = record_batch.num_rows
        texts = record_batch.column(options.text_field)
        ids = record_batch.column(options.id_field).cast(pa.string()) if options.id_field else None
        bad = _bad_rows(source, texts, ids, first_row, options, rejects)
        rows = np.arange(first_row, first_row + n, dtype=np.int64)
        if bad is not None:
            keep = pa.array(~bad)
            texts, rows = texts.filter(keep), rows[~bad]
            ids = ids.filter(keep) if ids is not None else None
        first_row += n
        if rows.size:
            yield Batch(texts, rows, ids, consumed())


def _bad_rows(
    source: Source,
    texts: pa.Array,
    ids: pa.Array | None,
    first_row: int,
    options: ReadOptions,
    rejects: Rejects,
) -> np.ndarray | None:
    """A bool mask of the rows to leave out (None when all are good); each is rejected."""
    import pyarrow.compute as pc  # here: 40-50 ms of every start otherwise

    bad = np.zeros(len(texts), dtype=bool)
    for column, field in ((texts, options.text_field), (ids, options.id_field)):
        if column is not None and column.null_count:
            for r in np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False)).tolist():
                rejects.reject(
                    f"{source.name}:row {first_row + r}",
                    f"column {field!r} is empty (null)",
                    f"{field!r} null",
                )
                bad[r] = True
    sizes = pc.fill_null(pc.binary_length(texts), 0).to_numpy(zero_copy_only=False)
    for r in np.flatnonzero(sizes > options.max_document_bytes).tolist():
        rejects.reject(
            f"{source.name}:row {first_row + r}",
            f"a text of {sizes[r] / 2**20:.1f} MiB, over "
            f"the limit of {options.max_document_bytes / 2**20:.0f} MiB (--max-document-mb)",
            "document too large",
        )
        bad[r] = True
    if (pa.types.is_binary(texts.type) or pa.types.is_large_binary(texts.type)) and not _utf8(texts):
        for r in np.flatnonzero(~bad).tolist():
            try:
                texts[r].as_py().decode("utf-8")
            except UnicodeDecodeError:
                rejects.reject(
                    f"{source.name}:row {first_row + r}", "the text is not valid UTF-8", "invalid UTF-8"
                )
                bad[r] = True
    return bad if bad.any() else None


def _utf8(texts: pa.Array) -> bool:
    try:
        texts.cast(pa.large_string())
    except pa.ArrowInvalid:
        return False
    return True


def kept_table_records(source: Source, options: ReadOptions, rows: np.ndarray) -> Iterator[pa.RecordBatch]:
    """The rows numbered ``rows`` (sorted, 1-based) of a CSV, TSV or Parquet file, every
    column as it was read."""
    if source.format == "parquet":
        batches: Iterator[pa.RecordBatch] = _parquet_batches(source, _open_parquet(source), None)
    else:
        batches = iter(_CsvReader(source, options, Rejects("skip")))
    first_row = 1
    for batch in batches:
        lo, hi = np.searchsorted(rows, [first_row, first_row + batch.num_rows])
        if hi > lo:
            yield batch.take(pa.array(rows[lo:hi] - first_row))
        first_row += batch.num_rows
