"""Which fingerprints are near an ``against`` index, found in Spark's tasks past the driver.

The index file goes to every executor as Spark ships any job's files (``SparkContext.addFile``,
or a Spark Connect session's file artifacts), under a name of its own; each Python worker
opens it once, memory-mapped (nothing is read but what the queries touch), and each task asks
it about its rows' fingerprints. So the driver never holds the index beside the facts, and an
index of hundreds of millions of fingerprints costs each executor its pages, not a copy.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark import SparkFiles
from pyspark.sql import DataFrame
from pyspark.sql.types import BooleanType, StructField, StructType

from ..index.hamming_index import HammingIndex
from .fingerprints import fingerprints_of
from .session import is_connect

NEAR = "_near"
"""The boolean column :func:`with_near` adds: the row's fingerprint is near the index."""

_opened: dict[str, HammingIndex] = {}  # per Python worker: the shipped index it has open


def ship(session: Any, against: str | os.PathLike | HammingIndex) -> str:
    """The name under which the tasks find the index ``against`` (its file, or an index in
    memory saved for the run). A fresh name each time: a context refuses a second file under a
    name it has served.

    Over Spark Connect the file is uploaded, and its folder goes at once. A classic context
    serves files from the driver's disk for as long as it lives (an executor that joins later
    fetches every file the context was given, before any task), so the folder stays until the
    driver's process ends."""
    folder = Path(tempfile.mkdtemp(prefix="neardup-against-"))
    try:
        name = f"against-{uuid.uuid4().hex}.ndx"
        if isinstance(against, HammingIndex):
            against.save(folder / name)
        else:
            _link_or_copy(Path(against), folder / name)
        if is_connect(session):
            session.addArtifacts(str(folder / name), file=True)
            shutil.rmtree(folder, ignore_errors=True)
        else:
            session.sparkContext.addFile(str(folder / name))
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return name


def _link_or_copy(source: Path, target: Path) -> None:
    """``source`` under the name ``target``: a hard link where the filesystem allows one (an
    index of a billion fingerprints is not copied), a copy otherwise. Spark does not follow a
    symbolic link when it ships a file."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def with_near(frame: DataFrame, fp: list[str], name: str, radius: int) -> DataFrame:
    """``frame`` with :data:`NEAR`: whether its fingerprint (the long columns ``fp``) is within
    ``radius`` bits of one in the index shipped as ``name`` (:func:`ship`)."""
    schema = StructType([*frame.schema.fields, StructField(NEAR, BooleanType(), False)])

    def near(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        index = _opened.get(name)
        if index is None:  # the worker's first task of this run: the last run's index goes
            _opened.clear()
            index = _opened[name] = HammingIndex.open(SparkFiles.get(name))
        for batch in batches:
            fps = fingerprints_of(pa.Table.from_batches([batch]), fp)
            offsets, _, _ = index.query_batch(fps, max_distance=radius)
            found = pa.array(np.diff(offsets) > 0)
            yield pa.RecordBatch.from_arrays(
                [*batch.columns, found], schema=batch.schema.append(pa.field(NEAR, pa.bool_(), False))
            )

    return frame.mapInArrow(near, schema)
