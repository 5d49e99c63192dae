"""Files that are one document each, read a group at a time: the one reader of them, for
``neardup dedup`` and the commands that fingerprint documents one by one alike.

The rule: a one-document file's text is its whole (decompressed) contents, less a UTF-8
byte-order mark opening it (the mark is not text, and JSONL's reader leaves it out too). The
file is a bad record when it is over the size limit, UTF-16 or UTF-32 (by its mark), empty,
or not valid UTF-8. Which files of a folder are read is :func:`.sources.find_sources`'s rule.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from .._errors import FormatError
from .batch import Batch, ReadOptions
from .encoding import UTF8_MARK, rejected_as_not_utf8
from .lines import open_stream
from .rejects import Rejects
from .sources import Source

_MAX_GROUP = 4096


def read_file_bytes(source: Source) -> bytes:
    """The whole (decompressed) contents of one file."""
    _raw, stream = open_stream(source)
    try:
        with stream:
            return stream.read()
    except (OSError, pa.ArrowInvalid) as e:
        raise FormatError(
            f"{source.name}: cannot be read as {source.compression or 'plain'} data ({e})"
        ) from None


def document_bytes(source: Source) -> bytes:
    """The text of the one-document file ``source`` as UTF-8 bytes, as the readers take it
    (unchecked: :func:`read_text_files` rejects what is not a document)."""
    return _without_mark(read_file_bytes(source))


def read_text_files(
    sources: list[tuple[int, Source]], options: ReadOptions, rejects: Rejects
) -> Iterator[tuple[Batch, np.ndarray]]:
    """(batch, int64 position in the input of each document's source) for groups of files,
    each file one document, a group at most ``options.block_bytes`` or 4096 files."""
    texts: list[bytes] = []
    owners: list[int] = []
    size = consumed = 0
    for position, source in sources:
        consumed += source.size
        data = _document(source, options, rejects)
        if data is None:
            continue
        texts.append(data)
        owners.append(position)
        size += len(data)
        if size >= options.block_bytes or len(texts) >= _MAX_GROUP:
            yield _batch(texts, owners, consumed)
            texts, owners, size = [], [], 0
    if texts:
        yield _batch(texts, owners, consumed)


def _document(source: Source, options: ReadOptions, rejects: Rejects) -> bytes | None:
    """The text of ``source``, or None when the rule makes it a bad record (told to ``rejects``)."""
    # An uncompressed file's size is known before it is read: a huge one is never held.
    huge = source.compression is None and source.size > options.max_document_bytes
    data = b"" if huge else read_file_bytes(source)
    source.check_unchanged()  # a later pass copies the file: it must still be what was read
    if huge or len(data) > options.max_document_bytes:
        rejects.reject(
            source.name,
            f"a document of {max(len(data), source.size) / 2**20:.1f} MiB, over the limit of "
            f"{options.max_document_bytes / 2**20:.0f} MiB (--max-document-mb)",
            "document too large",
        )
        return None
    if rejected_as_not_utf8(source.name, data, rejects):
        return None
    text = _without_mark(data)
    if not text:
        rejects.reject(source.name, "an empty file", "empty file")
        return None
    try:
        text.decode("utf-8")
    except UnicodeDecodeError as e:
        at = e.start + len(data) - len(text)  # in the file, its mark included
        message = f"not valid UTF-8 (byte 0x{data[at]:02x} at offset {at})"
        rejects.reject(source.name, message, "invalid UTF-8")
        return None
    return text


def _without_mark(data: bytes) -> bytes:
    return data[len(UTF8_MARK) :] if data.startswith(UTF8_MARK) else data


def _batch(texts: list[bytes], owners: list[int], consumed: int) -> tuple[Batch, np.ndarray]:
    array = pa.array(texts, pa.large_binary()).cast(pa.large_string())
    return Batch(array, np.zeros(len(texts), dtype=np.int64), None, consumed), np.array(
        owners, dtype=np.int64
    )
