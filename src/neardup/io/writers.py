"""Writers of the kept documents, and of tables (clusters, pairs), in any output format.

Each writes to a path it is given, a temporary one (``_atomic.atomic_path``): the caller
renames it once everything succeeded.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pa_csv

from .._errors import ConfigError, FormatError
from .formats import FORMATS, OUTPUT_FORMATS, TABLE_FORMATS
from .sources import Source, split_suffixes


def output_format(path: str, format: str | None, sources: list[Source]) -> tuple[str, str | None]:
    """(format, compression) of an output: ``format`` if given, else the one its name says
    (``kept.parquet``, ``kept.jsonl.zst``, ``kept.txt``), else that of all the inputs (JSONL
    for texts given in memory, which have no ``sources``)."""
    named, compression = split_suffixes(Path(path).name)
    if named is None and Path(path).name.lower().removesuffix(f".{compression or ''}").endswith(".txt"):
        named = "lines"
    chosen = format or named
    if chosen is None:
        formats = sorted({source.format for source in sources}) or ["jsonl"]
        if len(formats) > 1:
            raise ConfigError(
                f"the inputs mix formats ({', '.join(formats)}); name the output "
                f"format with --format or the output's suffix (.jsonl, .parquet, .csv)"
            )
        chosen = formats[0]
    if chosen not in OUTPUT_FORMATS:
        raise ConfigError(f"output format {chosen!r} is not known; choose one of {', '.join(OUTPUT_FORMATS)}")
    if compression is not None and (FORMATS[chosen].folder or not FORMATS[chosen].compressible):
        raise ConfigError(
            f"{path}: {chosen} output is not compressed as a whole; drop the .{compression} suffix"
        )
    if chosen == "lines" and any(source.format == "text" for source in sources):
        stem = Path(path).name.split(".")[0] or "kept"
        raise ConfigError(
            f"{path}: a lines file holds one document per line, but the inputs are one document "
            f"per file, whose texts may hold line breaks; write them to a folder, one file each "
            f"(-o {stem}/ or --format text), or as JSONL, CSV or Parquet (-o {stem}.jsonl)"
        )
    if chosen == "text" and any(source.format != "text" for source in sources):
        raise ConfigError(
            "text output (a folder, one file per document) needs inputs that are "
            "one document per file; choose another --format"
        )
    return chosen, compression


class TableWriter:
    """Appends Arrow record batches to one file of ``format`` (not ``text``).

    The first batch fixes the columns; a later batch is cast to them (a missing column is
    null), so JSONL blocks whose types pyarrow inferred differently still make one table.
    """

    def __init__(
        self,
        path: Path,
        format: str,
        compression: str | None = None,
        text_field: str = "text",
        name: str | None = None,
    ) -> None:
        self.path = path
        self.name = name or path.name  # the output's own name, for messages: path may be temporary
        self.format = format
        self.compression = compression
        self.text_field = text_field
        self.schema: pa.Schema | None = None
        self._sink: Any = None
        self._writer: Any = None
        self.rows = 0

    def write(self, batch: pa.RecordBatch) -> None:
        if self.schema is None:
            self._open(batch.schema)
        else:
            batch = self._conform(batch)
        self.rows += batch.num_rows
        if self.format == "jsonl":
            self._sink.write(_json_lines(batch))
        elif self.format == "lines":
            texts = batch.column(self.text_field).to_pylist()
            if any("\n" in text for text in texts):
                raise FormatError(
                    f"a kept text holds a line break, which a lines file cannot; "
                    f"write {self.name} as JSONL, CSV or Parquet instead"
                )
            self._sink.write("".join(f"{text}\n" for text in texts).encode())
        else:
            self._writer.write_batch(batch)

    def write_bytes(self, data: Any) -> None:
        """Raw bytes (lines copied as they are) for a JSONL or lines output."""
        if self._sink is None:
            self._sink = pa.output_stream(str(self.path), compression=self.compression)
        self._sink.write(data)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        if self._sink is None and self.schema is None and self.format in ("jsonl", "lines"):
            self._sink = pa.output_stream(str(self.path), compression=self.compression)  # empty
        if self._sink is not None:
            self._sink.close()
        elif self.schema is None and self.format in ("parquet", "csv", "tsv"):
            raise FormatError(f"no document is kept, so {self.name} has no columns to write")

    def _open(self, schema: pa.Schema) -> None:
        self.schema = schema
        if self.format == "parquet":
            import pyarrow.parquet as pq  # here: 20 ms of every start otherwise

            self._writer = pq.ParquetWriter(str(self.path), schema)
            return
        if self._sink is None:  # raw lines may have come first
            self._sink = pa.output_stream(str(self.path), compression=self.compression)
        if self.format in ("csv", "tsv"):
            nested = [f for f in schema if pa.types.is_nested(f.type)]
            if nested:
                raise FormatError(
                    f"field {nested[0].name!r} holds {nested[0].type}, which "
                    f"{self.format.upper()} cannot; write JSONL or Parquet instead"
                )
            self._writer = pa_csv.CSVWriter(self._sink, schema, write_options=_csv_options(self.format))

    def _conform(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        schema = self.schema
        assert schema is not None, "write() fixes the schema before conforming a batch"
        if batch.schema == schema:
            return batch
        extra = [name for name in batch.schema.names if name not in schema.names]
        if extra:
            raise FormatError(
                f"field {extra[0]!r} first appears after the output's columns were "
                f"fixed ({', '.join(schema.names)}); write JSONL to keep every "
                f"record as it is"
            )
        columns = []
        for field in schema:
            if field.name not in batch.schema.names:
                columns.append(pa.nulls(batch.num_rows, field.type))
                continue
            try:
                columns.append(batch.column(field.name).cast(field.type))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise FormatError(
                    f"field {field.name!r} holds {batch.schema.field(field.name).type} "
                    f"in some records and {field.type} in others ({e}); write JSONL "
                    f"to keep every record as it is"
                ) from None
        return pa.RecordBatch.from_arrays(columns, schema=schema)


def copy_file(source: Source, folder: Path, written: set[str]) -> None:
    """Copy a kept one-document file into ``folder`` at its relative path."""
    if source.relative in written:
        raise FormatError(
            f"two kept inputs would both be {folder.name}/{source.relative}; "
            f"deduplicate them into separate outputs or write another --format"
        )
    written.add(source.relative)
    target = folder / source.relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source.path, target)


def table_format(path: str | os.PathLike) -> str:
    """The format a table (clusters, pairs, passages) is written in, named by its suffix: the
    one rule of every command, checked before a run."""
    fmt, compression = split_suffixes(Path(path).name)
    if fmt not in TABLE_FORMATS or compression is not None:
        raise ConfigError(
            f"{Path(path).name}: name the table's format by its suffix, uncompressed: "
            f"{', '.join(FORMATS[name].suffixes[0] for name in TABLE_FORMATS)}"
        )
    return fmt


def write_table(table: pa.Table, sink: str | os.PathLike | pa.NativeFile, format: str) -> None:
    """One whole table (clusters, pairs) as Parquet, CSV, TSV or JSONL (an object a row), to
    the file ``sink`` or into an open pyarrow output stream (left open: its opener closes it)."""
    if format not in TABLE_FORMATS:
        raise ConfigError(f"a table is written as {', '.join(TABLE_FORMATS)}, not {format}")
    where = sink if isinstance(sink, pa.NativeFile) else str(sink)
    if format == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, where)
    elif format in ("csv", "tsv"):
        pa_csv.write_csv(table, where, _csv_options(format))
    elif isinstance(where, pa.NativeFile):
        _write_json_lines(table, where)
    else:
        with pa.output_stream(where) as out:
            _write_json_lines(table, out)


def _write_json_lines(table: pa.Table, out: pa.NativeFile) -> None:
    for batch in table.to_batches(max_chunksize=65536):  # a bounded piece of text at a time
        out.write(_json_lines(batch))


def _json_lines(batch: pa.RecordBatch) -> bytes:
    """A JSON object a row, each on its own line; what JSON has no type for is written as text."""
    lines = [json.dumps(row, ensure_ascii=False, default=str) for row in batch.to_pylist()]
    return "".join(f"{line}\n" for line in lines).encode()


def _csv_options(format: str) -> pa_csv.WriteOptions:
    return pa_csv.WriteOptions(delimiter="\t" if format == "tsv" else ",", quoting_style="needed")
