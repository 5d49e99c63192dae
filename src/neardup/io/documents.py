"""Documents one at a time, as ``neardup fingerprint``, ``pairs`` and ``index build`` read
them: batches of (ids, texts) from files, folders or stdin, in bounded memory.

Files are read by :func:`.dispatch.read_documents`, with a dedup's rules, checks and messages
(a text file named as an input holds one document a line, blank lines left out; one found in
a folder is one document, unless ``lines``). Stdin is read as lines or JSONL by the same
parsers, from the stream.

Ids, without an id field, are those ``neardup dedup`` gives (``Source.document_id``):
``FILE:LINE``, ``FILE:ROW``, or ``FILE`` for a one-document file; stdin's lines are
``<stdin>:LINE``. One scheme, so that an id from ``fingerprint`` or ``pairs`` names the same
document in ``dedup``'s clusters and ``explain --corpus``. An id holding a tab or a line break
is a bad record: a fingerprint file cannot hold it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, NamedTuple

import numpy as np
import pyarrow as pa

from .._errors import ConfigError
from .._prefetch import prefetch
from .batch import Batch, ReadOptions
from .dispatch import read_documents
from .formats import COMPRESSIONS
from .lines import documents_of_blocks, stream_blocks
from .rejects import Rejects
from .sources import Source, find_sources

STDIN = "-"
"""The input that names standard input."""

STDIN_FORMATS = ("lines", "jsonl")

_STDIN_NAME = "<stdin>"

_OPEN_FILES = "/proc/self/fd"
"""Where a file open in this process can be opened again by its descriptor, as a new open
file (not a duplicate sharing its offset, as ``/dev/fd`` is on macOS and the BSDs)."""


class DocumentBatch(NamedTuple):
    """Documents in input order: ``ids`` (str) and ``texts``, a pyarrow string or binary
    array of the same length."""

    ids: list[str]
    texts: Any


class DocumentReader:
    """The documents of ``inputs`` (files, folders and at most one ``"-"`` for ``stdin``).

    Args:
        inputs: paths as given; folders are walked recursively, their files sorted.
        options: the text and id fields, the document size limit, the block size.
        input_format, compression: override what each file's name says (see
            :func:`.sources.find_sources`); stdin is ``lines`` unless ``input_format`` is
            ``jsonl``, and plain unless ``compression`` names a codec.
        lines: text files found in folders hold one document per line, not one per file.
        stdin: the binary stream ``"-"`` reads.

    Raises ``FileNotFoundError`` or ``ConfigError`` at once for an input that is not there or
    options that cannot apply; a bad record is the business of :meth:`batches`.
    """

    def __init__(
        self,
        inputs: list[str],
        options: ReadOptions,
        *,
        input_format: str | None = None,
        compression: str | None = None,
        lines: bool = False,
        stdin: IO[bytes] | None = None,
    ) -> None:
        if not inputs:
            raise ConfigError("no input given: name files or folders of documents, or '-' for stdin")
        check_stdin_once(inputs)
        self.options = options
        self.stdin = stdin
        self.sources: list[Source] = []
        self._stdin_at = -1
        for given in inputs:
            if given == STDIN:
                self._stdin_at = len(self.sources)
                self.sources.append(stdin_source(input_format, compression))
                continue
            self.sources += find_sources([given], format=input_format, compression=compression, lines=lines)

    @property
    def unit(self) -> str:
        """What a record is, for messages: ``line``, ``row``, ``file`` or ``record``."""
        kinds = {
            "line" if s.format in ("lines", "jsonl") else "file" if s.format == "text" else "row"
            for s in self.sources
        }
        return kinds.pop() if len(kinds) == 1 else "record"

    def batches(self, rejects: Rejects) -> Iterator[DocumentBatch]:
        """The documents of every input in order, read one block ahead in a thread. A bad
        record raises :class:`FormatError` naming its file and line, or is left out and
        counted in ``rejects``, as its policy says."""
        return prefetch(self._batches(rejects))

    def _batches(self, rejects: Rejects) -> Iterator[DocumentBatch]:
        position = 0
        while position < len(self.sources):
            end = position + 1
            owned: Iterator[tuple[Batch, list[Source]]]
            if position == self._stdin_at:
                source = self.sources[position]
                batches = _stdin_batches(source, self.stdin, self.options, rejects)
                owned = ((batch, [source] * len(batch)) for batch in batches)
            else:  # dedup's readers, over the files up to stdin
                while end < len(self.sources) and end != self._stdin_at:
                    end += 1
                owned = _owned(self.sources[position:end], self.options, rejects)
            for batch, owners in owned:
                if len(batch):
                    yield self._named(batch, owners, rejects)
            position = end

    def _named(self, batch: Batch, owners: list[Source], rejects: Rejects) -> DocumentBatch:
        """The batch with its ids; ids a fingerprint file cannot hold are rejected."""
        rows = batch.rows.tolist()
        if batch.ids is not None:
            ids = [str(i) for i in batch.ids.to_pylist()]
        else:
            ids = [s.document_id(r) for s, r in zip(owners, rows)]
        bad = [k for k, doc_id in enumerate(ids) if "\t" in doc_id or "\n" in doc_id or "\r" in doc_id]
        if not bad:
            return DocumentBatch(ids, batch.texts)
        for k in bad:
            rejects.reject(
                owners[k].document_id(rows[k]),
                f"the id {ids[k]!r} holds a tab or line break, which a fingerprint file cannot",
                "id with a tab or line break",
            )
        keep = np.ones(len(ids), dtype=bool)
        keep[bad] = False
        return DocumentBatch([i for i, k in zip(ids, keep.tolist()) if k], batch.texts.filter(pa.array(keep)))


def _owned(
    sources: list[Source], options: ReadOptions, rejects: Rejects
) -> Iterator[tuple[Batch, list[Source]]]:
    """The batches dedup reads from ``sources``, each with the source of each document."""
    for batch, where in read_documents(sources, options, rejects):
        if isinstance(where, np.ndarray):  # one-document files, read in groups
            yield batch, [sources[w] for w in where.tolist()]
        else:
            yield batch, [sources[where]] * len(batch)


def check_stdin_once(inputs: list[str]) -> None:
    """Refuse ``inputs`` that name stdin more than once."""
    if inputs.count(STDIN) > 1:
        raise ConfigError("'-' (stdin) can be read once; name it once among the inputs")


@contextlib.contextmanager
def saved_stdin(stdin: IO[bytes], input_format: str | None, compression: str | None) -> Iterator[Source]:
    """Stdin copied to a temporary file under ``$TMPDIR``, held while the block runs, as the
    source of a command that reads its input more than once (``dedup`` copies the kept lines
    in a second pass): read as ``-`` is read everywhere, its documents named ``<stdin>:LINE``.

    Where ``/proc/self/fd`` reopens a file (Linux) the file has no name from the start,
    read through its descriptor: a process killed by any signal leaves nothing behind.
    Elsewhere it is named in a folder of its own, removed when the block ends."""
    stream = stdin_source(input_format, compression)
    if not os.path.isdir(_OPEN_FILES):
        with tempfile.TemporaryDirectory(prefix="neardup-stdin-") as folder:
            with open(Path(folder, "stdin"), "wb") as f:
                shutil.copyfileobj(stdin, f, 2**20)
            yield _saved(Path(folder, "stdin"), stream)
        return
    with tempfile.TemporaryFile(prefix="neardup-stdin-") as spool:  # unlinked before a byte is read
        shutil.copyfileobj(stdin, spool, 2**20)
        spool.flush()
        yield _saved(Path(_OPEN_FILES, str(spool.fileno())), stream)


def _saved(path: Path, stream: Source) -> Source:
    """``stream`` (stdin) as saved at ``path``."""
    stat = path.stat()
    return Source(
        path, _STDIN_NAME, stream.format, stream.compression, stat.st_size, "stdin", stat.st_mtime_ns
    )


def stdin_source(input_format: str | None, compression: str | None) -> Source:
    """Stdin (``-``) as a source read as ``input_format`` (``lines`` by default) and
    ``compression`` say, not yet read: its path is ``-``."""
    fmt = input_format or "lines"
    if fmt not in STDIN_FORMATS:
        raise ConfigError(
            f"stdin ('-') is read as {' or '.join(STDIN_FORMATS)} (--input-format), not {fmt}; "
            f"save it to a file to read it as {fmt}"
        )
    if compression is not None and compression not in COMPRESSIONS:
        raise ConfigError(
            f"compression {compression!r} is not known; choose one of {', '.join(COMPRESSIONS)}"
        )
    codec = None if compression in (None, "none") else compression
    return Source(Path(STDIN), _STDIN_NAME, fmt, codec, 0, STDIN)


def _stdin_batches(
    source: Source, stdin: IO[bytes] | None, options: ReadOptions, rejects: Rejects
) -> Iterator[Batch]:
    if stdin is None:
        raise ConfigError("'-' names stdin, but no stdin stream was given to read")
    stream: Any = stdin
    if source.compression is not None:
        stream = pa.CompressedInputStream(pa.PythonFile(stdin, mode="r"), source.compression)
    yield from documents_of_blocks(stream_blocks(stream, source, options, rejects), source, options, rejects)
