"""Text files that are one document each, read a group at a time."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from .._errors import FormatError
from .batch import Batch, ReadOptions
from .encoding import rejected_as_not_utf8
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
        data = read_file_bytes(source)
        if not data:
            rejects.reject(source.name, "an empty file", "empty file")
            continue
        if rejected_as_not_utf8(source.name, data, rejects):
            continue
        if len(data) > options.max_document_bytes:
            rejects.reject(
                source.name,
                f"a document of {len(data) / 2**20:.1f} MiB, over the limit of "
                f"{options.max_document_bytes / 2**20:.0f} MiB (--max-document-mb)",
                "document too large",
            )
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            rejects.reject(
                source.name,
                f"not valid UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start})",
                "invalid UTF-8",
            )
            continue
        texts.append(data)
        owners.append(position)
        size += len(data)
        if size >= options.block_bytes or len(texts) >= _MAX_GROUP:
            yield _batch(texts, owners, consumed)
            texts, owners, size = [], [], 0
    if texts:
        yield _batch(texts, owners, consumed)


def _batch(texts: list[bytes], owners: list[int], consumed: int) -> tuple[Batch, np.ndarray]:
    array = pa.array(texts, pa.large_binary()).cast(pa.large_string())
    return Batch(array, np.zeros(len(texts), dtype=np.int64), None, consumed), np.array(
        owners, dtype=np.int64
    )
