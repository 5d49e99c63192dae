"""Folders of part files written through pyarrow's file systems, by the tasks (the kept lines
of ``splits.py``) or by the driver (a table it holds: clusters, pairs), with no Spark query.

A part file is written beside its name, synced to disk when local, and renamed into place.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from .._atomic import fsync_file
from .._errors import ConfigError


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
    """Writes ``pieces`` (bytes-like) to ``path``, not at all when there are none, by way of a
    temporary file beside it; the lines (``\\n``) written."""
    folder, name = path.rsplit("/", 1)
    tmp = f"{folder}/.{name}.{uuid.uuid4().hex[:8]}.tmp"
    out, lines = None, 0
    try:
        for piece in pieces:
            if out is None:
                out = filesystem.open_output_stream(tmp)
            out.write(piece)
            lines += int(np.count_nonzero(np.frombuffer(piece, dtype=np.uint8) == 10))
        if out is None:
            return 0
        out.close()
        if isinstance(filesystem, pafs.LocalFileSystem):
            fsync_file(tmp)
        filesystem.move(tmp, path)
    except BaseException:
        if out is not None:
            with contextlib.suppress(Exception):
                out.close()
                filesystem.delete_file(tmp)
        raise
    return lines


def write_table(table: pa.Table, folder: str, fmt: str) -> None:
    """``table`` as the folder ``folder`` of one part file of ``fmt`` (``parquet``, ``csv``,
    or ``jsonl``: an object a row)."""
    filesystem, root = empty_folder(folder)
    suffix = {"parquet": "parquet", "csv": "csv", "jsonl": "jsonl"}[fmt]
    write_part(filesystem, f"{root}/part-00000.{suffix}", _encoded(table, fmt))


def _encoded(table: pa.Table, fmt: str) -> Iterator[Any]:
    if fmt == "jsonl":
        for batch in table.to_batches(max_chunksize=65536):
            rows = batch.to_pylist()
            yield "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()
        return
    sink = pa.BufferOutputStream()
    if fmt == "parquet":
        pq.write_table(table, sink)
    else:
        pa_csv.write_csv(table, sink)
    yield sink.getvalue()
