"""JSONL and plain-text lines, read in blocks of whole lines.

A JSONL block is parsed by pyarrow (on all cores, only the text and id fields). When pyarrow
refuses a block, or its result is not one valid record per line, the block is parsed again
line by line in Python, which names the bad line and can leave it out: the fast path costs
nothing on good input and the slow path only ever sees the block that needs it.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.json as pa_json

from .._errors import FormatError
from .._kernels.lines import gather, split_lines
from .batch import Batch, ReadOptions
from .encoding import encode_text, rejected_as_not_utf8
from .rejects import Rejects, json_type
from .sources import Source

_NO_BYTES = np.zeros(0, dtype=np.uint8)
_NEWLINE = np.frombuffer(b"\n", dtype=np.uint8)
_LINE_SLACK = 1 << 20
_MAX_SLICES = 256
_PARSERS = 2  # room for a JSONL record's other fields beside a text at the size limit


def open_stream(source: Source) -> tuple[pa.NativeFile, pa.NativeFile]:
    """(raw file, decompressed stream) of ``source``; ``raw.tell()`` is the progress on disk."""
    raw = pa.OSFile(str(source.path), "rb")
    if source.compression is None:
        return raw, raw
    return raw, pa.CompressedInputStream(raw, source.compression)


class Block(NamedTuple):
    """Whole lines of a file: ``data``, the number of its first line, its offset in the
    (decompressed) file, and the bytes read on disk so far."""

    data: bytes
    first_line: int
    offset: int
    consumed: int


def line_blocks(source: Source, options: ReadOptions, rejects: Rejects) -> Iterator[Block]:
    """Consecutive blocks of whole lines of a file (see :func:`stream_blocks`)."""
    raw, stream = open_stream(source)
    with stream:
        yield from stream_blocks(stream, source, options, rejects, raw.tell)


def stream_blocks(
    stream: Any,
    source: Source,
    options: ReadOptions,
    rejects: Rejects,
    on_disk: Callable[[], int] | None = None,
) -> Iterator[Block]:
    """Consecutive blocks of whole lines of ``stream`` (a file's, or stdin), read
    ``options.block_bytes`` at a time. A line longer than the document limit allows is
    rejected and passed over without being held in memory; its number is still counted.
    ``on_disk()`` tells the bytes read on disk so far (default: those read from ``stream``)."""
    limit = options.max_document_bytes + _LINE_SLACK
    line = 1
    offset = 0  # of carry, in the decompressed file
    read = 0
    carry = b""
    skipping = False
    try:
        while chunk := stream.read(options.block_bytes):
            if read == 0 and rejected_as_not_utf8(source.name, chunk, rejects):
                return
            read += len(chunk)
            if skipping:
                end = chunk.find(b"\n")
                offset += len(chunk) if end < 0 else end + 1
                if end < 0:
                    continue
                chunk, skipping, line = chunk[end + 1 :], False, line + 1
            data = carry + chunk if carry else chunk
            cut = data.rfind(b"\n") + 1
            if cut == 0 and len(data) > limit:
                rejects.reject(
                    f"{source.name}:{line}",
                    f"a line of over {limit >> 20} MiB, over the document limit (--max-document-mb)",
                    "document too large",
                )
                offset += len(data)
                carry, skipping = b"", True
                continue
            carry = data[cut:]
            if cut:
                yield Block(data[:cut], line, offset, on_disk() if on_disk else read)
                # numpy counts at memory speed, bytes.count at a third of it
                line += int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8, count=cut) == 10))
                offset += cut
        if carry and not skipping:
            yield Block(carry, line, offset, on_disk() if on_disk else read)
    except (OSError, pa.ArrowInvalid) as e:  # a corrupt or cut compressed stream
        raise FormatError(
            f"{source.name}: cannot be read as {source.compression or 'plain'} data ({e})"
        ) from None


class JsonlParser:
    """Parses JSONL blocks of one source into :class:`Batch` es."""

    def __init__(self, source: Source, options: ReadOptions, rejects: Rejects) -> None:
        self.source = source
        self.options = options
        self.rejects = rejects
        self.id_type = pa.string()  # becomes int64 once a block's ids turn out to be numbers

    def parse(self, block: Block) -> Batch | None:
        buf = np.frombuffer(block.data, dtype=np.uint8)
        starts, ends, blank = split_lines(buf)
        records = np.flatnonzero(~blank)
        if records.size == 0:
            return None
        numbers = block.first_line + records
        spans = line_spans(block, starts, records)
        table = self._parse_fast(block.data, records.size)
        if table is None:
            return self._parse_slow(block, starts[records], ends[records], numbers, spans)
        ids = table.column(1).cast(pa.string()) if self.options.id_field else None
        return Batch(table.column(0), numbers, ids, block.consumed, spans)

    def _parse_fast(self, block: bytes, n_records: int) -> pa.Table | None:
        """pyarrow's table of the block, or None if any line needs a closer look."""
        text_field, id_field = self.options.text_field, self.options.id_field
        for id_type in (self.id_type, pa.int64()):
            fields = [(text_field, pa.string())] + ([(id_field, id_type)] if id_field else [])
            try:
                table = pa_json.read_json(
                    pa.BufferReader(block),
                    read_options=pa_json.ReadOptions(use_threads=False, block_size=len(block) + 1),
                    parse_options=pa_json.ParseOptions(
                        explicit_schema=pa.schema(fields), unexpected_field_behavior="ignore"
                    ),
                )
            except pa.ArrowInvalid as e:
                if id_field and f"Column(/{id_field}) changed from string to number" in str(e):
                    continue
                return None
            self.id_type = id_type
            break
        else:
            return None
        import pyarrow.compute as pc  # here: 40-50 ms of every start otherwise

        texts = table.column(0)
        if (
            table.num_rows != n_records
            or any(column.null_count for column in table.columns)
            or pc.max(pc.binary_length(texts)).as_py() > self.options.max_document_bytes
        ):
            return None
        try:
            texts.validate(full=True)  # pyarrow's JSON reader does not check UTF-8
        except pa.ArrowInvalid:
            return None
        return table

    def _parse_slow(
        self, block: Block, starts: np.ndarray, ends: np.ndarray, numbers: np.ndarray, spans: np.ndarray
    ) -> Batch | None:
        texts: list[str] = []
        ids: list[str] = []
        good: list[int] = []
        for k, (start, end, number) in enumerate(zip(starts.tolist(), ends.tolist(), numbers.tolist())):
            found = self._record(block.data[start:end], f"{self.source.name}:{number}")
            if found is not None:
                texts.append(found[0])
                ids.append(found[1])
                good.append(k)
        if not good:
            return None
        return Batch(
            _string_array(texts),
            numbers[good],
            pa.array(ids, pa.string()) if self.options.id_field else None,
            block.consumed,
            spans[good],
        )

    def _record(self, line: bytes, where: str) -> tuple[str, str] | None:
        reject = self.rejects.reject
        try:
            record = json.loads(line)
        except UnicodeDecodeError as e:
            return reject(
                where,
                f"not valid UTF-8 (byte 0x{line[e.start]:02x} at column {e.start + 1})",
                "invalid UTF-8",
            )
        except ValueError as e:
            detail = f"{e.msg} at column {e.colno}" if isinstance(e, json.JSONDecodeError) else str(e)
            return reject(where, f"not valid JSON ({detail})", "not valid JSON")
        if not isinstance(record, dict):
            return reject(where, f"a JSON {json_type(record)}, not an object", "not a JSON object")
        text = self._field(record, self.options.text_field, where, "--text-field")
        if text is None:
            return None
        if not isinstance(text, str):
            return reject(
                where,
                f"field {self.options.text_field!r} is a JSON {json_type(text)}, not a string",
                "text not a string",
            )
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > self.options.max_document_bytes:
            return reject(
                where,
                f"a text of {size / 2**20:.1f} MiB, over the limit of "
                f"{self.options.max_document_bytes / 2**20:.0f} MiB (--max-document-mb)",
                "document too large",
            )
        doc_id = ""
        if self.options.id_field is not None:
            value = self._field(record, self.options.id_field, where, "--id-field")
            if value is None:
                return None
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                return reject(
                    where,
                    f"field {self.options.id_field!r} is a JSON {json_type(value)}; "
                    f"ids must be strings or integers",
                    "id not a string or integer",
                )
            doc_id = str(value)
        return text, doc_id

    def _field(self, record: dict, field: str, where: str, flag: str) -> Any:
        if record.get(field) is not None:
            return record[field]
        if field in record:
            return self.rejects.reject(where, f"field {field!r} is null", f"{field!r} null")
        fields = ", ".join(repr(k) for k in list(record)[:10]) or "none"
        return self.rejects.reject(
            where, f"no field {field!r} (fields: {fields}); name another with {flag}", f"no {field!r} field"
        )


def read_jsonl(source: Source, options: ReadOptions, rejects: Rejects) -> Iterator[Batch]:
    """The documents of a JSONL file: one JSON object per line; blank lines are skipped.

    Blocks are parsed two at a time, each on one thread: the parts of a parse pyarrow does
    not spread over its threads (finding lines, checks) then overlap too."""
    parser = JsonlParser(source, options, rejects)
    pending: deque = deque()
    with ThreadPoolExecutor(_PARSERS, thread_name_prefix="neardup-jsonl") as pool:
        for block in line_blocks(source, options, rejects):
            pending.append(pool.submit(parser.parse, block))
            if len(pending) > _PARSERS and (batch := pending.popleft().result()) is not None:
                yield batch
        while pending:
            if (batch := pending.popleft().result()) is not None:
                yield batch


def documents_of_blocks(
    blocks: Iterable[Block], source: Source, options: ReadOptions, rejects: Rejects
) -> Iterator[Batch]:
    """The documents of the blocks of a line-based file: a text a line (``source.format``
    ``"lines"``) or a JSON object a line."""
    if source.format == "lines":
        yield from lines_of_blocks(blocks, source, options, rejects)
        return
    parser = JsonlParser(source, options, rejects)
    for block in blocks:
        if (batch := parser.parse(block)) is not None:
            yield batch


def read_lines(source: Source, options: ReadOptions, rejects: Rejects) -> Iterator[Batch]:
    """The documents of a text file with one per line (see :func:`lines_of_blocks`)."""
    return lines_of_blocks(line_blocks(source, options, rejects), source, options, rejects)


def lines_of_blocks(
    blocks: Iterable[Block], source: Source, options: ReadOptions, rejects: Rejects
) -> Iterator[Batch]:
    """The documents of the blocks of a text file (or stdin) with one per line: every line
    that is not blank, valid UTF-8 within the size limit (others are bad records)."""
    for block in blocks:
        buf = np.frombuffer(block.data, dtype=np.uint8)
        starts, ends, blank = split_lines(buf)
        records = np.flatnonzero(~blank)
        too_long = (ends[records] - starts[records]) > options.max_document_bytes
        try:
            if too_long.any():
                raise ValueError("a line over the size limit")
            data, offsets = gather(buf, starts, ends, records, _NO_BYTES)
            texts = pa.Array.from_buffers(
                pa.large_string(), records.size, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
            )
            texts.validate(full=True)  # checks UTF-8, as a cast would, without pyarrow.compute
        except (ValueError, pa.ArrowInvalid):
            records = _check_lines(
                block.data, starts, ends, records, block.first_line, source, options, rejects
            )
            data, offsets = gather(buf, starts, ends, records, _NO_BYTES)
            texts = pa.Array.from_buffers(
                pa.large_string(), records.size, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
            )
        if records.size:
            yield Batch(
                texts, block.first_line + records, None, block.consumed, line_spans(block, starts, records)
            )


def _check_lines(
    block: bytes,
    starts: np.ndarray,
    ends: np.ndarray,
    records: np.ndarray,
    first_line: int,
    source: Source,
    options: ReadOptions,
    rejects: Rejects,
) -> np.ndarray:
    """The records that are valid UTF-8 within the size limit; the others are rejected."""
    good = []
    for r in records.tolist():
        where = f"{source.name}:{first_line + r}"
        size = int(ends[r] - starts[r])
        if size > options.max_document_bytes:
            rejects.reject(
                where,
                f"a line of {size / 2**20:.1f} MiB, over the limit of "
                f"{options.max_document_bytes / 2**20:.0f} MiB (--max-document-mb)",
                "document too large",
            )
            continue
        try:
            block[starts[r] : ends[r]].decode("utf-8")
        except UnicodeDecodeError as e:
            rejects.reject(
                where,
                f"not valid UTF-8 (byte 0x{block[starts[r] + e.start]:02x} at column {e.start + 1})",
                "invalid UTF-8",
            )
            continue
        good.append(r)
    return np.array(good, dtype=np.int64)


def kept_lines(source: Source, options: ReadOptions, rows: np.ndarray) -> Iterator[memoryview]:
    """The lines numbered ``rows`` (sorted, 1-based) of a line-based file (see
    :func:`numbered_lines`)."""
    return numbered_lines(line_blocks(source, options, Rejects("skip")), rows)


def numbered_lines(
    blocks: Iterable[Block], rows: np.ndarray, *, leave_out: bool = False
) -> Iterator[memoryview]:
    """The lines numbered ``rows`` (sorted, 1-based) of these consecutive blocks, exactly as
    they are, line breaks included (a last line without one gets ``\\n``); with ``leave_out``,
    every line that is not blank except those."""
    last = b"\n"
    for block in blocks:
        buf = np.frombuffer(block.data, dtype=np.uint8)
        starts, _, blank = split_lines(buf)
        lo, hi = np.searchsorted(rows, [block.first_line, block.first_line + starts.size])
        chosen = rows[lo:hi] - block.first_line
        if leave_out:
            chosen = np.setdiff1d(np.flatnonzero(~blank), chosen, assume_unique=True)
        if chosen.size:
            after = np.append(starts[1:], buf.size)  # each line runs to the next one's start
            breaks = np.flatnonzero(np.diff(chosen) != 1) + 1  # runs of consecutive lines
            firsts = starts[chosen[np.append(0, breaks)]]
            lasts = after[chosen[np.append(breaks - 1, chosen.size - 1)]]
            yield from _runs(block.data, firsts, lasts)
            last = block.data[int(lasts[-1]) - 1 : int(lasts[-1])]
    if last != b"\n":
        yield memoryview(b"\n")


def line_spans(block: Block, starts: np.ndarray, records: np.ndarray) -> np.ndarray:
    """int64, shape (len(records), 2): where each record's line, its line break included,
    starts and ends in the decompressed file."""
    next_starts = np.append(starts[1:], len(block.data))
    return np.stack([block.offset + starts[records], block.offset + next_starts[records]], axis=1)


def copy_spans(source: Source, spans: np.ndarray, options: ReadOptions) -> Iterator[Any]:
    """The bytes of ``spans`` (sorted, disjoint [start, end) ranges of the decompressed file),
    read a block at a time; adjacent spans are copied as one run, and a last line without
    a line break gets one. This is the kept-JSONL writer: no line is parsed or split again."""
    if not len(spans):
        return
    breaks = np.flatnonzero(spans[1:, 0] != spans[:-1, 1]) + 1
    run_starts = spans[np.append(0, breaks), 0]
    run_ends = spans[np.append(breaks - 1, len(spans) - 1), 1]
    _raw, stream = open_stream(source)
    seekable = source.compression is None
    run, offset, last = 0, 0, b"\n"
    with stream:
        while run < len(run_starts):
            if seekable and run_starts[run] > offset:
                stream.seek(int(run_starts[run]))  # pass over removed documents unread
                offset = int(run_starts[run])
            block = stream.read(options.block_bytes)
            if not block:  # shorter than when it was read: never a silently cut output
                raise FormatError(
                    f"{source.name}: the file ends at byte {offset:,}, but the read pass found "
                    f"kept lines up to byte {int(run_ends[-1]):,}: it changed while neardup was "
                    f"reading it; run again on inputs that nothing writes meanwhile"
                )
            end = offset + len(block)
            stop = int(np.searchsorted(run_starts, end))  # runs that begin in this block or before
            if stop > run:
                firsts = np.maximum(run_starts[run:stop], offset) - offset
                lasts = np.minimum(run_ends[run:stop], end) - offset
                yield from _runs(block, firsts, lasts)
                last = block[int(lasts[-1]) - 1 : int(lasts[-1])] if lasts[-1] > 0 else last
            run += int(np.searchsorted(run_ends[run:stop], end, side="right"))
            offset = end
    if last != b"\n":
        yield b"\n"


def _runs(block: bytes, firsts: np.ndarray, lasts: np.ndarray) -> Iterator[memoryview]:
    """The bytes ``block[firsts[i]:lasts[i]]`` of each run, in order, to be written."""
    if firsts.size > _MAX_SLICES:  # many short runs: one copy beats many writes
        buf = np.frombuffer(block, dtype=np.uint8)
        data, _ = gather(buf, firsts, lasts, np.arange(firsts.size), _NO_BYTES)
        yield memoryview(data)
    else:  # a few long runs: written straight from the block read
        view = memoryview(block)
        for first, end in zip(firsts.tolist(), lasts.tolist()):
            yield view[first:end]


def kept_records(source: Source, options: ReadOptions, rows: np.ndarray) -> Iterator[pa.RecordBatch]:
    """The records numbered ``rows`` of a JSONL file as Arrow record batches (types inferred
    by pyarrow, block by block), or of a lines file as a ``text`` column."""
    for piece in kept_lines(source, options, rows):
        if source.format == "jsonl":
            yield from pa_json.read_json(pa.BufferReader(piece)).to_batches()
        else:
            lines = bytes(piece).decode("utf-8").split("\n")[:-1]
            text = pa.array([line.removesuffix("\r") for line in lines], pa.string())
            yield pa.RecordBatch.from_arrays([text], names=[options.text_field])


def _string_array(texts: list[str]) -> pa.Array:
    try:
        return pa.array(texts, pa.string())
    except (UnicodeEncodeError, pa.ArrowInvalid):
        # A JSON escape of a lone surrogate; the spec reads those as U+FFFD.
        return pa.array([encode_text(t) for t in texts], pa.string())
