"""What :func:`neardup.spark.dedup.decide` needs of each row, and nothing more: the *facts*.

A facts table has a row per input row: ``_position`` (its place in the input), ``_length``
(its text's bytes), the id (when there is one), the fingerprint column(s) and ``_featureless``.
The texts go to Python once and never come back, so what Spark keeps, sorts and joins is a few
longs a row, whatever the documents.

- :class:`Facts` says what is recorded and makes a batch of facts from texts;
- :func:`text_facts` takes them from a DataFrame's text column;
- :func:`json_line_facts` from JSONL lines read as text: the task parses each Arrow batch of
  lines with pyarrow's JSON reader (as the local engine does), so Spark infers no schema and
  parses nothing; a batch pyarrow cannot take whole (mixed id types, a bad line) is read line
  by line, and a bad line is an error that shows it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, DataType, LongType, StringType, StructField, StructType

from .._config import FingerprintConfig
from .._errors import ConfigError
from .._kernels.lines import gather
from ..decision.lsh import Banding, CorpusKeys
from ..decision.verify import Verification, featureless_texts
from .fingerprints import _fingerprinter, fingerprint_columns, non_null

POSITION = "_position"
"""The column numbering the input's rows."""
BROADCAST_ROWS = 20_000_000
"""Rows of positions (or of an outcome) sent whole to every task rather than joined by a
shuffle of the rows: a few hundred MB at most on each executor."""
TEXT = "_text"
_TEXT_AT = "_text_at"

Make = Callable[[pa.RecordBatch, pa.Array], pa.RecordBatch]
"""What :meth:`Texts.alongside` makes of a batch of rows and the texts at their positions."""


def broadcast_while_few(frame: DataFrame, rows: int) -> DataFrame:
    """``frame`` (of ``rows`` rows), marked for a join to send it whole to every task while
    it has at most :data:`BROADCAST_ROWS` rows; past that the join shuffles both sides."""
    return F.broadcast(frame) if rows <= BROADCAST_ROWS else frame


class Texts(Protocol):
    """Where a decision reads the texts it checks: on the driver, or in the tasks."""

    def __call__(self, positions: np.ndarray) -> pa.Array:
        """The texts of the rows at these positions (``POSITION`` values), in that order,
        brought to the driver."""

    def alongside(self, frame: DataFrame, at: str, make: Make, schema: StructType) -> DataFrame:
        """What ``make`` gives (columns ``schema``) of each batch of the rows of ``frame``
        and the texts at their positions, the column ``at`` (an Arrow array of strings or of
        bytes, a text a row), in the tasks: nothing is collected."""


_NEWLINE = np.frombuffer(b"\n", dtype=np.uint8)


@dataclass(frozen=True)
class Facts:
    """What is recorded of each document, and how: the fingerprints of ``config``, the id in
    the column ``id_field`` (of ``id_type``), and with ``jaccard`` (a banding and the
    verification whose features it keys) the document's MinHash band keys, ``_band_0`` ...,
    for ``--jaccard``'s candidates."""

    config: FingerprintConfig
    id_field: str | None = None
    id_type: DataType = field(default_factory=StringType)
    jaccard: tuple[Banding, Verification] | None = None

    def schema(self) -> StructType:
        """The columns of a facts table, as :meth:`batch` makes them."""
        return StructType(
            [
                StructField(POSITION, LongType(), False),
                StructField("_length", LongType(), False),
                *([StructField(self.id_field, self.id_type, False)] if self.id_field else []),
                *(StructField(c, LongType(), False) for c in fingerprint_columns(self.config)),
                StructField("_featureless", BooleanType(), False),
                *(StructField(c, LongType(), False) for c in band_columns(self.jaccard)),
            ]
        )

    def batch(self, positions: Any, texts: Any, ids: Any) -> pa.RecordBatch:
        """The facts of documents at ``positions`` with these ``texts`` (and ``ids``)."""
        if isinstance(texts, pa.ChunkedArray):
            texts = texts.combine_chunks()
        if isinstance(ids, pa.ChunkedArray):
            ids = ids.combine_chunks()
        fingerprinter = _fingerprinter(self.config)
        fps, keys = None, np.zeros((len(texts), 0), dtype=np.int64)
        if self.jaccard is not None:  # code's keys come with its fingerprints, from one lexing
            keyed = CorpusKeys(*self.jaccard, fingerprinter, budget=0)
            fps = keyed.add(texts, n_jobs=1)
            keys = keyed.keys().view(np.int64)
        if fps is None:
            fps = fingerprinter.fingerprint_batch(texts, n_jobs=1)
        words = fps.reshape(len(texts), -1).view(np.int64)
        columns = [
            pa.array(positions) if isinstance(positions, np.ndarray) else positions,
            pc.binary_length(texts).cast(pa.int64()),
            *([ids] if self.id_field else []),
            *(pa.array(words[:, w]) for w in range(words.shape[1])),
            pa.array(featureless_texts(texts, fps, self.config)),
            *(pa.array(keys[:, b]) for b in range(keys.shape[1])),
        ]
        return pa.RecordBatch.from_arrays(columns, names=self.schema().fieldNames())


def band_columns(jaccard: tuple[Banding, Verification] | None) -> list[str]:
    """The band key columns of facts made with ``jaccard`` (none without)."""
    return [f"_band_{b}" for b in range(jaccard[0].bands)] if jaccard else []


def text_facts(positioned: DataFrame, text_col: str, facts: Facts) -> DataFrame:
    """The ``facts`` of ``positioned`` (rows numbered in ``POSITION``), texts in ``text_col``
    (string or binary; a null is an error naming the column)."""
    if text_col not in positioned.columns:
        raise ConfigError(
            f"the DataFrame has no column {text_col!r}; its columns: {', '.join(positioned.columns)}"
        )
    ids = [facts.id_field] if facts.id_field else []
    facts = replace(facts, id_type=positioned.schema[facts.id_field].dataType) if facts.id_field else facts

    def of(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            texts = non_null(batch.column(text_col), text_col)
            found = batch.column(facts.id_field) if facts.id_field else None
            yield facts.batch(batch.column(POSITION), texts, found)

    return positioned.select(POSITION, text_col, *ids).mapInArrow(of, facts.schema())


def json_line_facts(positioned: DataFrame, line_col: str, text_field: str, facts: Facts) -> DataFrame:
    """The ``facts`` of JSON lines (``line_col`` of ``positioned``), each an object with a
    string field ``text_field`` (and ``facts.id_field``, a string or an integer: given as a
    string, as the local engine gives ids)."""

    def of(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            texts, found = fields_of_lines(batch.column(line_col), text_field, facts.id_field)
            yield facts.batch(batch.column(POSITION), texts, found)

    return positioned.select(POSITION, line_col).mapInArrow(of, facts.schema())


def fields_of_lines(
    lines: pa.Array, text_field: str, id_field: str | None
) -> tuple[pa.Array, pa.Array | None]:
    """(texts, ids as strings or None) of a batch of JSON lines (a bad line raises, shown)."""
    n = len(lines)
    offsets = np.frombuffer(
        lines.buffers()[1], dtype=np.int64 if pa.types.is_large_string(lines.type) else np.int32
    )
    offsets = offsets[lines.offset : lines.offset + n + 1].astype(np.int64)
    data = lines.buffers()[2]
    buf = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    joined, _ = gather(buf, offsets[:-1], offsets[1:], np.arange(n, dtype=np.int64), _NEWLINE)
    for id_type in (pa.string(), pa.int64()) if id_field else (None,):
        fields = [(text_field, pa.string())] + ([(id_field, id_type)] if id_field else [])
        try:
            table = pa_json.read_json(
                pa.BufferReader(joined.tobytes()),
                read_options=pa_json.ReadOptions(use_threads=False, block_size=len(joined) + 1),
                parse_options=pa_json.ParseOptions(
                    explicit_schema=pa.schema(fields), unexpected_field_behavior="ignore"
                ),
            )
        except pa.ArrowInvalid:
            continue
        texts = table.column(0).combine_chunks()
        if table.num_rows != n or any(column.null_count for column in table.columns):
            break
        try:
            texts.validate(full=True)  # pyarrow's JSON reader does not check UTF-8
        except pa.ArrowInvalid:
            break
        found = table.column(1).combine_chunks().cast(pa.string()) if id_field else None
        return texts, found
    return _fields_line_by_line(lines, text_field, id_field)


def _fields_line_by_line(
    lines: pa.Array, text_field: str, id_field: str | None
) -> tuple[pa.Array, pa.Array | None]:
    """:func:`fields_of_lines` for a batch pyarrow could not take whole: each line by ``json.loads``,
    and the first bad one raised, shown."""
    texts, ids = [], []
    for k in range(len(lines)):
        raw = lines[k].as_buffer().to_pybytes()
        shown = raw[:200].decode("utf-8", "replace")
        try:
            record = json.loads(raw)
        except ValueError as e:
            raise ConfigError(f"a line is not valid JSON ({e}): {shown}") from None
        text = record.get(text_field) if isinstance(record, dict) else None
        if not isinstance(text, str):
            raise ConfigError(f"a line is not a JSON object with a string field {text_field!r}: {shown}")
        texts.append(text)
        if id_field:
            value = record.get(id_field)
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                raise ConfigError(f"a line's field {id_field!r} is not a string or an integer: {shown}")
            ids.append(str(value))
    return pa.array(texts, pa.string()), pa.array(ids, pa.string()) if id_field else None


def texts_by_position(positioned: DataFrame, column: str, json_field: str | None = None) -> Texts:
    """The :class:`Texts` of ``column`` of the rows of ``positioned`` (the text, or with
    ``json_field`` a JSON line holding it)."""
    return _ColumnTexts(positioned, column, json_field)


@dataclass(frozen=True)
class _ColumnTexts:
    positioned: DataFrame
    column: str
    json_field: str | None

    def __call__(self, positions: np.ndarray) -> pa.Array:
        """The positions asked for are broadcast to the tasks, and only those rows come to
        the driver."""
        spark = self.positioned.sparkSession
        wanted = spark.createDataFrame(
            pa.table({POSITION: positions, "_at": np.arange(len(positions), dtype=np.int64)})
        )
        got = self.positioned.join(F.broadcast(wanted), POSITION).select("_at", self.column).toArrow()
        ordered = got.column(self.column).take(pc.sort_indices(got.column("_at"))).combine_chunks()
        return ordered if self.json_field is None else fields_of_lines(ordered, self.json_field, None)[0]

    def alongside(self, frame: DataFrame, at: str, make: Make, schema: StructType) -> DataFrame:
        """The rows of ``positioned`` at the positions asked for are chosen where they lie
        (those positions broadcast while they are few), and their texts joined to ``frame``'s
        rows (``frame`` is checkpointed first: it is read twice)."""
        frame = frame.localCheckpoint()
        needed = frame.select(F.col(at).alias(POSITION)).distinct()
        chosen = self.positioned.join(broadcast_while_few(needed, needed.count()), POSITION, "left_semi")
        texts = chosen.select(F.col(POSITION).alias(_TEXT_AT), F.col(self.column).alias(TEXT))
        columns, field = frame.columns, self.json_field
        joined = frame.join(texts, frame[at] == texts[_TEXT_AT]).select(*columns, TEXT)

        def each(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for batch in batches:
                found = batch.column(TEXT)
                if field is not None:
                    found = fields_of_lines(found, field, None)[0]
                rows = pa.RecordBatch.from_arrays([batch.column(c) for c in columns], names=columns)
                yield make(rows, found)

        return joined.mapInArrow(each, schema)
