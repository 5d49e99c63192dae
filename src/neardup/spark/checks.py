"""Pairs checked on their texts in Spark's tasks, for a decision past the driver under
``verify``, ``cosine`` or ``jaccard``: nothing is collected.

:func:`with_similarity` takes each pair to its texts, never the texts to a join: the pairs
go to the tasks that read the texts of their first ends and take those texts along, then to
those that read the texts of their second ends, where both ends' features are extracted, as
the local engine extracts them (``pipeline.verify.FeatureTable``), and compared by its
kernel (a merge of two sorted lists), a batch at a time. A check's shuffle is the pairs and
the first ends' texts, which compress (feature hashes do not), and no feature set is held
for the length of the check.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.types import BinaryType, DoubleType, StructField, StructType

from .._kernels.similarity import pair_similarity
from ..decision.verify import FeatureTable, Verification
from .facts import Texts

SIMILARITY = "similarity"
_FIRST_TEXT = "_first_text"


def with_similarity(
    pairs: DataFrame, texts: Texts, first: str, second: str, verification: Verification
) -> DataFrame:
    """``pairs`` with a ``similarity`` column: ``verification``'s metric of the documents at
    positions ``first`` and ``second`` (columns of ``pairs``), whose texts ``texts`` reads. A
    Jaccard pair proved below the threshold gets -1, unmerged (as the local engine's check
    gives it: only its comparison with the threshold is read)."""
    config, cosine, threshold = verification.features, verification.metric == "cosine", verification.threshold
    carried = pairs.columns

    def take_first(batch: pa.RecordBatch, found: pa.Array) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays([*batch.columns, found.cast(pa.binary())], [*carried, _FIRST_TEXT])

    def check(batch: pa.RecordBatch, found: pa.Array) -> pa.RecordBatch:
        # Each distinct document of the batch once: a leader may be in many of its pairs.
        firsts, at_first = _distinct(batch.column(first))
        seconds, at_second = _distinct(batch.column(second))
        both = [batch.column(_FIRST_TEXT).take(pa.array(firsts)), found.take(pa.array(seconds))]
        table = FeatureTable.of(pa.concat_arrays([t.cast(pa.large_binary()) for t in both]), config)
        weights = table.weights(config) if cosine else np.zeros(0)
        similarity = pair_similarity(
            table.doc_offsets,
            table.hashes,
            weights,
            at_first,
            at_second + firsts.size,
            cosine,
            threshold,
        )
        return pa.RecordBatch.from_arrays(
            [*(batch.column(c) for c in carried), pa.array(similarity, pa.float64())], [*carried, SIMILARITY]
        )

    fields = pairs.schema.fields
    carrying = StructType([*fields, StructField(_FIRST_TEXT, BinaryType(), False)])
    checked = StructType([*fields, StructField(SIMILARITY, DoubleType(), False)])
    return texts.alongside(texts.alongside(pairs, first, take_first, carrying), second, check, checked)


def _distinct(positions: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(the row of each distinct position's first occurrence, each row's distinct position's
    number), int64."""
    _, first_rows, of_rows = np.unique(positions.to_numpy(), return_index=True, return_inverse=True)
    return first_rows.astype(np.int64), of_rows.astype(np.int64)
