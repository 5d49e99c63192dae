"""Pairs checked on their texts in Spark's tasks, for a decision past the driver under
``verify``, ``cosine`` or ``jaccard``: nothing is collected.

- :func:`feature_frame` extracts the features of just the documents some check reads, once
  each, as the local engine extracts them (``pipeline.verify.FeatureTable``): the sorted
  distinct feature hashes of a document as one binary value, and for cosine their weights;
- :func:`with_similarity` joins them to each end of a table of pairs and computes each pair's
  similarity by the local engine's kernel (a merge of two sorted lists), a batch at a time.

A document's features are shuffled once (:func:`held_features`) and met by every pair it is
in, so a check's shuffle is that of the features of the documents in pairs, and of the pairs
carrying one end's features to the other's, not of every text.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, DoubleType, LongType, StructField, StructType

from .._kernels.similarity import pair_similarity
from ..pipeline.verify import FeatureTable, Verification
from .facts import POSITION, TEXT, Texts
from .session import cores

FEATURES = "_features"
WEIGHTS = "_weights"
SIMILARITY = "similarity"
FEATURE_ROWS = 20_000
"""Documents' features a partition holds while the checks join them: ~50 MB at 2.5 KB each."""


def feature_frame(texts: Texts, needed: DataFrame, count: int, verification: Verification) -> DataFrame:
    """``POSITION``, ``_features`` (and for cosine ``_weights``): the features of the documents
    at the positions of ``needed`` (a DataFrame of ``count`` distinct ``POSITION``), each a
    binary value of little-endian uint64 hashes, ascending (float64 weights, in the same
    order)."""
    config, cosine = verification.features, verification.metric == "cosine"
    fields = [StructField(POSITION, LongType(), False), StructField(FEATURES, BinaryType(), False)]
    if cosine:
        fields.append(StructField(WEIGHTS, BinaryType(), False))

    def of(batch: pa.RecordBatch) -> pa.RecordBatch:
        table = FeatureTable.of(batch.column(TEXT), config)
        columns = [batch.column(POSITION), _binary(table.hashes, table.doc_offsets)]
        if cosine:
            columns.append(_binary(table.weights(config), table.doc_offsets))
        return pa.RecordBatch.from_arrays(columns, names=[f.name for f in fields])

    return texts.rows(needed, count, (of, StructType(fields)))  # made where the texts are read


def held_features(texts: Texts, needed: DataFrame, count: int, verification: Verification) -> DataFrame:
    """:func:`feature_frame`, shuffled once by position into partitions of about
    :data:`FEATURE_ROWS` documents and cached (memory, then disk): each check's join meets the
    features where they lie, only its pairs crossing to them. A checkpoint would forget the
    partitioning, and every join would shuffle the features, a check's bulk, again. The
    caller unpersists it."""
    frame = feature_frame(texts, needed, count, verification)
    partitions = max(cores(frame.sparkSession), -(-count // FEATURE_ROWS))
    held = frame.repartition(partitions, POSITION).cache()
    held.count()
    return held


def with_similarity(
    pairs: DataFrame, features: DataFrame, first: str, second: str, verification: Verification
) -> DataFrame:
    """``pairs`` with a ``similarity`` column: ``verification``'s metric of the documents at
    positions ``first`` and ``second`` (columns of ``pairs``), whose features ``features``
    holds (:func:`feature_frame`). A Jaccard pair proved below the threshold gets -1, unmerged
    (as the local engine's check gives it: only its comparison with the threshold is read)."""
    cosine, threshold = verification.metric == "cosine", verification.threshold
    kinds = [FEATURES, WEIGHTS] if cosine else [FEATURES]
    joined = pairs
    for end in (first, second):
        joined = joined.join(
            features.select(
                F.col(POSITION).alias(end), *(F.col(kind).alias(f"{end}{kind}") for kind in kinds)
            ),
            end,
        )
    carried = pairs.columns
    schema = StructType([*(joined.schema[c] for c in carried), StructField(SIMILARITY, DoubleType(), False)])

    def check(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            n = batch.num_rows
            offsets, hashes = _csr(batch.column(f"{first}{FEATURES}"), batch.column(f"{second}{FEATURES}"))
            weights = np.zeros(0)
            if cosine:
                _, weights = _csr(batch.column(f"{first}{WEIGHTS}"), batch.column(f"{second}{WEIGHTS}"))
                weights = weights.view(np.float64)
            rows = np.arange(n, dtype=np.int64)
            similarity = pair_similarity(offsets, hashes, weights, rows, rows + n, cosine, threshold)
            yield pa.RecordBatch.from_arrays(
                [*(batch.column(c) for c in carried), pa.array(similarity, pa.float64())],
                names=[*carried, SIMILARITY],
            )

    return joined.mapInArrow(check, schema)


def _binary(values: np.ndarray, doc_offsets: np.ndarray) -> pa.Array:
    """One binary value a document: its slice of ``values`` (8-byte items) by ``doc_offsets``."""
    offsets = pa.py_buffer((doc_offsets * 8).astype(np.int32))
    return pa.Array.from_buffers(pa.binary(), len(doc_offsets) - 1, [None, offsets, pa.py_buffer(values)])


def _csr(first: pa.Array, second: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(document offsets, uint64 items) of the binary values of ``first``, then ``second``:
    document ``p`` of ``first`` is row ``p``, of ``second`` row ``len(first) + p``."""
    both = pa.concat_arrays([_plain(first), _plain(second)])
    n = len(both)
    offsets = np.frombuffer(both.buffers()[1], dtype=np.int64)[both.offset : both.offset + n + 1]
    data = both.buffers()[2]
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    items = raw[offsets[0] : offsets[-1]].copy().view(np.uint64)  # a copy: aligned for the kernel
    return ((offsets - offsets[0]) // 8).astype(np.int64), items


def _plain(column: pa.Array) -> pa.Array:
    """``column`` as one array of 64-bit offsets, whichever binary type Spark gave."""
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return column.cast(pa.large_binary())
