"""JSONL files read and written by the tasks themselves, a byte range (a *split*) each.

Spark's text source hands every line from the JVM to Python (decoded, then encoded again as
Arrow), and writing the kept lines reads the whole input again. Where pyarrow's file systems
open the inputs (local paths, ``s3://``, ``gs://``, ``hdfs://``, ``abfs://``), the tasks do
both themselves, so the texts never pass through the JVM:

- :func:`plan_splits` (on the driver) lists the files and cuts each into byte ranges of at
  most ``SPLIT_BYTES``, as many as a multiple of the cores; a compressed file is one split (a
  compressed stream cannot be entered in the middle).
- A split owns the lines that *start* in its range: its task seeks there, passes over the
  line it lands in, and reads on past the range's end to finish its last line, as Hadoop's
  line reader does.
- :func:`split_facts` reads each split with the local engine's own reader (blocks of whole
  lines, pyarrow's JSON parser, the same rules and messages) and fingerprints it. A document's
  position is ``split << LINE_BITS | line`` (its line in the split, from 1): positions increase
  in input order.
- :func:`write_kept_lines` copies each split's kept lines to a part file of its own, byte for
  byte, as the local engine copies them; :class:`SplitTexts` fetches the texts at given
  positions to the driver, or reads them all in the tasks (for the checks).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
from pyspark import RDD, AccumulatorParam, SparkContext, StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import BinaryType, StructField, StructType

from .._errors import ConfigError
from .._kernels.lines import gather, split_lines
from ..io.batch import Batch, ReadOptions
from ..io.lines import documents_of_blocks, numbered_lines, stream_blocks
from ..io.rejects import Rejects
from ..io.sources import Source, is_hidden, split_suffixes
from .driver import DRIVER_ROWS
from .facts import POSITION, Facts, Make, fields_of_lines
from .folders import empty_folder, file_system, write_part

LINE_BITS = 36
"""A position is ``split << LINE_BITS | line``: room for 2**36 lines in a split, 2**27 splits."""
SPLIT_BYTES = 128 << 20
"""The most bytes of a file one task reads (Spark's own ``spark.sql.files.maxPartitionBytes``)."""
OPEN_COST = 4 << 20
"""What opening a file costs a task, in bytes read (Spark's ``spark.sql.files.openCostInBytes``)."""
_LINE_MASK = (1 << LINE_BITS) - 1
_NO_BYTES = np.zeros(0, dtype=np.uint8)
_SKIP_READ = 1 << 16


@dataclass(frozen=True)
class Split:
    """Bytes ``start`` to ``end`` of one input file: ``path`` on ``filesystem``, ``name`` in
    messages, read through ``compression`` (then the whole file)."""

    number: int
    filesystem: pafs.FileSystem
    path: str
    name: str
    start: int
    end: int
    compression: str | None
    task: int = 0
    """The task that reads it: small files share one, as Spark packs them."""
    kind: str = "jsonl"
    """How its lines are read: ``"jsonl"`` (a JSON object a line) or ``"lines"`` (a text a line)."""


def plan_splits(
    inputs: list[str], cores: int, split_bytes: int = SPLIT_BYTES, lines: bool = False
) -> list[Split] | None:
    """The splits of the JSONL files named by ``inputs`` (files, or folders walked for files
    named ``.jsonl``, ``.json``, ``.ndjson``, compressed or not, hidden ones and ``_*`` left
    out), in input order, and of text files of one document a line: those named, and with
    ``lines`` those of the folders, as the local engine reads them
    (:func:`neardup.io.sources.find_sources`); None when one is a glob or at a scheme
    pyarrow's file systems do not open (then Spark's own reader reads them)."""
    files: list[tuple[pafs.FileSystem, str, str, int]] = []
    for given in inputs:
        found = _files(given, lines)
        if found is None:
            return None
        files.extend(found)
    compressed = [split_suffixes(path)[1] for _, path, _, _ in files]
    total = sum(size for (*_, size), c in zip(files, compressed) if c is None)
    pieces = -(-total // split_bytes)
    pieces = -(-pieces // cores) * cores  # every core busy until the end
    size = max(1, -(-total // pieces)) if pieces else 1
    # A task takes splits up to this many bytes, each counted with OPEN_COST, so the small
    # files of a folder spread over the cores but never one task each (Spark's own rule).
    costs = sum(file_size + OPEN_COST for *_, file_size in files)
    target = min(split_bytes, max(size, -(-costs // cores)))
    splits: list[Split] = []
    task, packed = 0, 0
    for (filesystem, path, name, file_size), compression in zip(files, compressed):
        starts = [0] if compression else range(0, file_size, size)
        for start in starts:
            end = file_size if compression else min(start + size, file_size)
            cost = end - start + OPEN_COST
            if packed and packed + cost > target:
                task, packed = task + 1, 0
            packed += cost
            kind = "jsonl" if split_suffixes(path)[0] == "jsonl" else "lines"
            splits.append(Split(len(splits), filesystem, path, name, start, end, compression, task, kind))
    return splits


def _files(given: str, lines: bool) -> list[tuple[pafs.FileSystem, str, str, int]] | None:
    """(file system, path, name, size) of each non-empty JSONL file of ``given`` (with
    ``lines``, text file too), sorted; None for a glob (Spark's reader expands them) or a
    scheme pyarrow does not know."""
    opened = file_system(given)
    if opened is None:
        return None
    filesystem, root = opened
    try:
        info = filesystem.get_file_info(root)
    except (pa.ArrowException, OSError):  # e.g. hdfs:// where this machine has no libhdfs
        return None
    if info.type == pafs.FileType.NotFound:
        raise ConfigError(f"{given}: no such file or folder")
    if info.type == pafs.FileType.File:
        return [(filesystem, root, given, info.size)] if info.size else []
    found: list[tuple[pafs.FileSystem, str, str, int]] = []
    for entry in sorted(
        filesystem.get_file_info(pafs.FileSelector(root, recursive=True)), key=lambda e: e.path
    ):
        relative = entry.path[len(root) :].lstrip("/")
        hidden = any(is_hidden(part) for part in relative.split("/"))
        fmt = split_suffixes(entry.base_name)[0]
        read = fmt == "jsonl" or (lines and fmt is None)
        if entry.type == pafs.FileType.File and entry.size and read and not hidden:
            found.append((filesystem, entry.path, f"{given.rstrip('/')}/{relative}", entry.size))
    return found


class SplitFacts:
    """The ``facts`` (``facts.py``) of the documents of ``splits`` (``facts.id_field`` read
    as ``options`` reads ids), a task a split, as
    :func:`neardup.spark.dedup.decide` takes a facts DataFrame (``persist``, ``count``,
    ``toArrow``, ``sparkSession``). They are computed by an RDD job, not a query: Spark's SQL
    engine takes seconds to warm up, which a decision on the driver never needs. The
    distributed decision asks for them as a DataFrame (:meth:`frame`)."""

    def __init__(
        self, sc: SparkContext, splits: list[Split], options: ReadOptions, facts: Facts, errors: str = "raise"
    ) -> None:
        self.schema = facts.schema()
        self.rows: int | None = None
        tally = sc.accumulator(Rejects(errors), _Tally()) if errors == "skip" else None
        self.tally = tally

        def of(chosen: Iterator[Split]) -> Iterator[pa.RecordBatch]:
            for split in chosen:
                rejects = Rejects(errors)
                for batch in _documents(split, options, rejects):
                    yield facts.batch((split.number << LINE_BITS) | batch.rows, batch.texts, batch.ids)
                if tally is not None:
                    tally.add(rejects)

        self.batches = _each_split(sc, splits, of)

    @property
    def sparkSession(self) -> SparkSession:
        """The SQL session of the facts' context, made when first asked for."""
        return SparkSession.builder.getOrCreate()

    @property
    def rejects(self) -> Rejects | None:
        """With ``errors="skip"``: the lines left out, once the facts are computed (they are
        persisted, so computed once: a task run again would count its lines again)."""
        return self.tally.value if self.tally is not None else None

    def persist(self, level: StorageLevel) -> SplitFacts:
        self.batches.persist(level)
        return self

    def count(self) -> int:
        self.rows = int(sum(self.batches.map(lambda batch: batch.num_rows).collect()))
        return self.rows

    def toArrow(self) -> pa.Table:
        """The facts, collected: past ``DRIVER_ROWS`` a partition at a time, so that the
        JVM's driver (whose memory is Spark's to set) never holds them all."""
        many = self.rows is None or self.rows > DRIVER_ROWS
        batches = self.batches.toLocalIterator(prefetchPartitions=True) if many else self.batches.collect()
        schema = pa.schema([field.with_nullable(True) for field in to_arrow_schema(self.schema)])
        return pa.Table.from_batches(batches, schema=schema)

    def frame(self) -> DataFrame:
        """The facts as a DataFrame."""
        return _frame(self.sparkSession, self.batches, self.schema)


class _Tally(AccumulatorParam):
    """The tasks' records of lines left out, merged on the driver."""

    def zero(self, value: Rejects) -> Rejects:
        return Rejects(value.errors)

    def addInPlace(self, value1: Rejects, value2: Rejects) -> Rejects:
        value1.merge(value2)
        return value1


def _frame(session: SparkSession, batches: RDD, schema: StructType) -> DataFrame:
    """The Arrow ``batches`` (of ``schema``) as a DataFrame: each crosses to the JVM as one
    binary value."""

    def unpacked(packed: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in packed:
            for value in batch.column(0).to_pylist():
                yield from pa.ipc.open_stream(value)

    packed = batches.map(lambda batch: (_packed(batch),))
    binary = StructType([StructField("_batch", BinaryType(), False)])
    return session.createDataFrame(packed, binary).mapInArrow(unpacked, schema)


def _packed(batch: pa.RecordBatch) -> bytes:
    """``batch`` as an Arrow IPC stream: its schema, then its data."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


class SplitTexts:
    """The :class:`~neardup.spark.facts.Texts` of the documents of ``splits``."""

    def __init__(self, sc: SparkContext, splits: list[Split], options: ReadOptions) -> None:
        self.sc, self.splits, self.options = sc, splits, options

    def __call__(self, positions: np.ndarray) -> pa.Array:
        """Only the splits that hold the positions asked for are read, only those lines
        parsed, and only those texts come to the driver."""
        wanted = np.unique(positions)
        options = self.options

        def fetch(chosen: Iterator[Split]) -> Iterator[tuple[np.ndarray, pa.Array]]:
            for split in chosen:
                lo, hi = np.searchsorted(wanted, [split.number << LINE_BITS, (split.number + 1) << LINE_BITS])
                with _LinesOfSplit(split, options) as lines:
                    yield wanted[lo:hi], lines.texts(wanted[lo:hi] & _LINE_MASK).cast(pa.large_string())

        got = _each_split(self.sc, self._holding(wanted), fetch).collect()
        found = np.concatenate([at for at, _ in got]) if got else np.zeros(0, dtype=np.int64)
        held = pa.concat_arrays([t for _, t in got]) if got else pa.array([], pa.large_string())
        order = np.argsort(found)
        return held.take(order[np.searchsorted(found[order], positions)])

    def alongside(self, frame: DataFrame, at: str, make: Make, schema: StructType) -> DataFrame:
        """Each row goes to the task of the split that holds its position (a shuffle of the
        rows on the split, sorted there by position), and the split is read once, front to
        back: the texts never cross the shuffle, and only the lines asked for are parsed."""
        splits, options = self.splits, self.options
        placed = frame.repartition(max(len(splits), 1), F.shiftright(at, LINE_BITS)).sortWithinPartitions(at)

        def each(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            lines: _LinesOfSplit | None = None
            try:
                for batch in batches:
                    positions = batch.column(at).to_numpy()
                    numbers = positions >> LINE_BITS
                    cuts = [0, *(np.flatnonzero(np.diff(numbers)) + 1).tolist(), len(positions)]
                    for lo, hi in itertools.pairwise(cuts):  # a run of rows of one split
                        if lines is None or lines.split.number != numbers[lo]:
                            if lines is not None:
                                lines.close()
                            lines = _LinesOfSplit(splits[int(numbers[lo])], options)
                        distinct, each_row = np.unique(positions[lo:hi], return_inverse=True)
                        texts = lines.texts(distinct & _LINE_MASK).take(pa.array(each_row))
                        yield make(batch.slice(lo, hi - lo), texts)
            finally:
                if lines is not None:
                    lines.close()

        return placed.mapInArrow(each, schema)

    def _holding(self, positions: np.ndarray) -> list[Split]:
        """The splits that hold these positions."""
        return [self.splits[n] for n in np.unique(positions >> LINE_BITS).tolist()]


class _LinesOfSplit:
    """The texts of a split's documents, asked for by line number in increasing order: its
    blocks are read once, front to back, and only the lines asked for are parsed (they were
    read whole once, for the facts, so each is a document and needs no second look)."""

    def __init__(self, split: Split, options: ReadOptions) -> None:
        self.split, self.options = split, options
        self.stream, source = _open(split)
        self.blocks = stream_blocks(self.stream, source, options, Rejects("skip"))
        self.buf, self.first = _NO_BYTES, 1
        self.starts = self.ends = np.zeros(0, dtype=np.int64)

    def texts(self, rows: np.ndarray) -> pa.Array:
        """The texts at lines ``rows`` (ascending, distinct, none before a line asked for
        earlier's block)."""
        pieces, done = [], 0
        while done < rows.size:
            end = self.first + self.starts.size
            if rows[done] >= end:  # past this block: on to the next
                block = next(self.blocks, None)
                if block is None:
                    raise ValueError(f"{self.split.name} has no line {rows[done]} (of a position asked for)")
                self.buf = np.frombuffer(block.data, dtype=np.uint8)
                self.starts, self.ends, _ = split_lines(self.buf)
                self.first = block.first_line
                continue
            upto = done + int(np.searchsorted(rows[done:], end))
            data, offsets = gather(self.buf, self.starts, self.ends, rows[done:upto] - self.first, _NO_BYTES)
            buffers = [None, pa.py_buffer(offsets), pa.py_buffer(data)]
            pieces.append(pa.Array.from_buffers(pa.large_string(), upto - done, buffers))
            done = upto
        lines = pa.concat_arrays(pieces) if pieces else pa.array([], pa.large_string())
        return (
            lines if self.split.kind == "lines" else fields_of_lines(lines, self.options.text_field, None)[0]
        )

    def close(self) -> None:
        self.stream.close()

    def __enter__(self) -> _LinesOfSplit:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_kept_lines(
    sc: SparkContext,
    splits: list[Split],
    options: ReadOptions,
    chosen: np.ndarray | DataFrame,
    leave_out: bool,
    folder: str,
) -> int:
    """Copies the lines at the positions ``chosen`` (with ``leave_out``, every document's line
    but those) to part files in ``folder``, one a split (``part-NNNNN.jsonl``, none for a
    split with no such line), byte for byte, and gives the number of lines written. What the
    folder held is removed first; each part file is written beside and renamed into place.

    ``chosen`` is an array held by the driver (each task is sent its split's), or a
    ``POSITION`` column of a DataFrame (sent to the tasks by a shuffle on the split)."""
    filesystem, root = empty_folder(folder)

    def write(split: Split, rows: np.ndarray) -> int:
        stream, source = _open(split)
        with stream:
            blocks = stream_blocks(stream, source, options, Rejects("skip"))
            pieces = numbered_lines(blocks, rows, leave_out=leave_out)
            suffix = "jsonl" if split.kind == "jsonl" else "txt"
            return write_part(filesystem, f"{root}/part-{split.number:05d}.{suffix}", pieces)

    if isinstance(chosen, np.ndarray):  # each task is sent its split's, by an RDD job
        held = np.sort(chosen)
        bounds = np.searchsorted(held, np.arange(len(splits) + 1, dtype=np.int64) << LINE_BITS)

        def write_held(chosen: Iterator[Split]) -> Iterator[int]:
            for split in chosen:
                lo, hi = bounds[split.number], bounds[split.number + 1]
                yield write(split, held[lo:hi] & _LINE_MASK)

        return int(sum(_each_split(sc, splits, write_held).collect()))
    else:
        numbers = chosen.sparkSession.range(len(splits))
        marks = numbers.select(F.shiftleft("id", LINE_BITS).alias(POSITION))  # line 0: in no split
        positions = chosen.select(POSITION).unionByName(marks)
        by_split = positions.repartition(max(len(splits), 1), F.shiftright(POSITION, LINE_BITS))

        def write_shuffled(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            parts = [b.column(0).to_numpy() for b in batches]
            held = np.sort(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
            numbers, firsts = np.unique(held >> LINE_BITS, return_index=True)
            for number, lo, hi in zip(numbers.tolist(), firsts, [*firsts[1:], held.size]):
                lines = write(splits[number], held[lo + 1 : hi] & _LINE_MASK)  # after the mark
                yield pa.RecordBatch.from_arrays([pa.array([lines], pa.int64())], names=["lines"])

        written = by_split.mapInArrow(write_shuffled, "lines long").toArrow()
        return int(sum(written.column("lines").to_pylist()))


def first_record(splits: list[Split]) -> bytes | None:
    """The first line that is not blank of the inputs (None if there is none): to check its
    fields on the driver before any task runs."""
    for split in splits:
        if split.start:
            continue
        stream, source = _open(split)
        with stream:
            for block in stream_blocks(stream, source, ReadOptions(), Rejects("raise")):
                buf = np.frombuffer(block.data, dtype=np.uint8)
                starts, ends, blank = split_lines(buf)
                if (~blank).any():
                    line = int(np.flatnonzero(~blank)[0])
                    return block.data[starts[line] : ends[line]]
    return None


def _each_split(
    sc: SparkContext, splits: list[Split], work: Callable[[Iterator[Split]], Iterator[Any]]
) -> RDD:
    """An RDD of what ``work`` gives for ``splits``, each task given its own (``Split.task``)."""
    tasks: dict[int, list[Split]] = {}
    for split in splits:
        tasks.setdefault(split.task, []).append(split)
    grouped = list(tasks.values())
    numbers = sc.parallelize(range(len(grouped)), max(len(grouped), 1))
    return numbers.mapPartitions(lambda chosen: work(split for k in chosen for split in grouped[k]))


def _documents(split: Split, options: ReadOptions, rejects: Rejects | None = None) -> Iterator[Batch]:
    """The documents of ``split``, read as the local engine reads a JSONL file; a bad line
    raises, named by its file and its line counted from the split's first (or with
    ``rejects`` that skip, is left out and recorded there)."""
    stream, source = _open(split)
    rejects = rejects or Rejects("raise")
    with stream:
        yield from documents_of_blocks(
            stream_blocks(stream, source, options, rejects), source, options, rejects
        )


def _open(split: Split) -> tuple[Any, Source]:
    """(a stream of the lines ``split`` owns, the split as the local reader names a file):
    named from its first line's byte when that is not the file's first (``pages.jsonl from
    byte 134217788:12`` is line 12 from there)."""
    stream: Any
    if split.compression is not None:
        stream, first = split.filesystem.open_input_stream(split.path, compression=split.compression), 0
    else:
        stream = _SplitLines(split.filesystem.open_input_file(split.path), split.start, split.end)
        first = stream.position
    name = split.name if first == 0 else f"{split.name} from byte {first}"
    source = Source(
        Path(split.path), name, split.kind, split.compression, split.end - split.start, split.name
    )
    return stream, source


class _SplitLines:
    """Reads, like a file, the lines of ``file`` that start in bytes [``start``, ``end``)."""

    def __init__(self, file: Any, start: int, end: int) -> None:
        self.file, self.end = file, end
        self.position = start
        if start > 0:  # the line holding byte start - 1 is the previous split's
            file.seek(start - 1)
            while chunk := file.read(_SKIP_READ):
                cut = chunk.find(b"\n")
                if cut >= 0:
                    self.position += cut
                    break
                self.position += len(chunk)
            else:
                self.position = end
            file.seek(self.position)
        self.done = self.position >= end

    def read(self, size: int) -> bytes:
        if self.done:
            return b""
        if self.position < self.end:
            data = self.file.read(min(size, self.end - self.position))
            self.done = not data or (self.position + len(data) == self.end and data.endswith(b"\n"))
        else:  # past the range: only the rest of the line it ended in
            data = self.file.read(min(size, _SKIP_READ))
            cut = data.find(b"\n")
            if cut >= 0:
                data = data[: cut + 1]
            self.done = not data or cut >= 0
        self.position += len(data)
        return data

    def __enter__(self) -> _SplitLines:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.file.close()
