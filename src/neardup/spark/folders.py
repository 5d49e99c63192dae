"""Folders of part files written through pyarrow's file systems, by the tasks (the kept lines
of ``splits.py``) or by the driver (a table it holds: clusters, pairs), with no Spark query.

A part file is written beside its name, synced to disk when local, and renamed into place.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs

from .._atomic import fsync_file
from .._errors import ConfigError
from ..io import writers


def file_system(path: str) -> tuple[pafs.FileSystem, str] | None:
    """(the file system, the path on it) of a local path or a URI pyarrow opens (``s3://``,
    ``gs://``, ``hdfs://``, ``abfs://``); None for a glob, or a scheme pyarrow does not know
    (``s3a://``), which only Spark reaches."""
    if any(c in path for c in "*?[{"):
        return None
    try:
        return pafs.FileSystem.from_uri(path if "://" in path else os.path.abspath(path))
    except (pa.ArrowException, OSError, ValueError):
        return None


def empty_folder(path: str) -> tuple[pafs.FileSystem, str]:
    """The folder ``path``, made if need be and emptied (it must be one pyarrow opens)."""
    found = file_system(path)
    if found is None:
        raise ConfigError(f"{path}: not a path pyarrow's file systems open")
    filesystem, root = found
    filesystem.create_dir(root, recursive=True)
    filesystem.delete_dir_contents(root)
    return filesystem, root


def write_part(filesystem: pafs.FileSystem, path: str, pieces: Iterable[Any]) -> int:
    """Writes ``pieces`` (bytes-like) to ``path``, not at all when there are none; the lines
    (``\\n``) written."""
    pieces = iter(pieces)
    first = next(pieces, None)
    if first is None:
        return 0
    lines = 0
    with _part_file(filesystem, path) as out:
        for piece in itertools.chain([first], pieces):
            out.write(piece)
            lines += int(np.count_nonzero(np.frombuffer(piece, dtype=np.uint8) == 10))
    return lines


def write_table(table: pa.Table, folder: str, fmt: str) -> None:
    """``table`` as the folder ``folder`` of one part file of ``fmt`` (``parquet``, ``csv``,
    ``tsv`` or ``jsonl``), written by :func:`neardup.io.writers.write_table`."""
    filesystem, root = empty_folder(folder)
    with _part_file(filesystem, f"{root}/part-00000.{fmt}") as out:
        writers.write_table(table, out, fmt)


@contextlib.contextmanager
def _part_file(filesystem: pafs.FileSystem, path: str) -> Iterator[pa.NativeFile]:
    """An output stream to a temporary file beside ``path``, moved to ``path`` once the block
    ends without error (synced to disk first when local), else deleted."""
    folder, name = path.rsplit("/", 1)
    tmp = f"{folder}/.{name}.{uuid.uuid4().hex[:8]}.tmp"
    out = filesystem.open_output_stream(tmp)
    try:
        yield out
        out.close()
        if isinstance(filesystem, pafs.LocalFileSystem):
            fsync_file(tmp)
        filesystem.move(tmp, path)
    except BaseException:
        with contextlib.suppress(Exception):
            out.close()
            filesystem.delete_file(tmp)
        raise
