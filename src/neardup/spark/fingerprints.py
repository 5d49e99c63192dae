"""Fingerprints of a Spark DataFrame's texts, by the local engine's kernels in ``mapInArrow``:
each task hands its Arrow batches to :meth:`Fingerprinter.fingerprint_batch` as they are (no
Python object per row), so the bits equal the local ones on every executor.

Spark has no unsigned integers: a 64-bit fingerprint is the ``fingerprint`` column, a long
holding the same 64 bits (``numpy.uint64(x)`` gives the local value back); a 128-bit one adds
``fingerprint_hi``, bits 64-127.

Kernels compile once per machine, not once per task: numba caches them on disk
(``NUMBA_CACHE_DIR``, by default beside the installed package; point it at a local folder
that the executors may write), Spark reuses its Python workers between tasks
(``spark.python.worker.reuse``, on by default), and each worker keeps its
:class:`Fingerprinter` for the configs it has seen.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.types import BooleanType, LongType, StructField, StructType

from .._config import FingerprintConfig
from .._errors import ConfigError
from ..decision.verify import featureless_texts
from ..fingerprint.fingerprinter import Fingerprinter


def fingerprint_columns(config: FingerprintConfig | None = None, name: str = "fingerprint") -> list[str]:
    """The columns :func:`fingerprint` adds: ``[name]``, and ``name + "_hi"`` at 128 bits."""
    bits = (config or FingerprintConfig()).bits
    return [name] if bits == 64 else [name, f"{name}_hi"]


def fingerprints_of(table: pa.Table, columns: list[str]) -> np.ndarray:
    """The fingerprints held in these long ``columns`` of ``table`` (:func:`fingerprint_columns`),
    as the local engine holds them: uint64, shape (n,) at 64 bits, (n, 2) at 128."""
    words = [table.column(c).to_numpy().view(np.uint64) for c in columns]
    return words[0] if len(words) == 1 else np.ascontiguousarray(np.stack(words, axis=1))


def fingerprint(
    df: DataFrame,
    text_col: str = "text",
    config: FingerprintConfig | None = None,
    *,
    name: str = "fingerprint",
    featureless: str | None = None,
) -> DataFrame:
    """``df`` with its texts' fingerprints added (:func:`fingerprint_columns`), equal to
    ``neardup.Fingerprinter(config).fingerprint_batch(texts)`` bit for bit.

    Args:
        df: any DataFrame with a string (or binary) column ``text_col``; a null text is an
            error naming the column (filter or fill them first).
        config: the fingerprint settings (default :class:`FingerprintConfig`).
        name: the name of the fingerprint column.
        featureless: also add a boolean column of this name, true for the texts with no
            features (empty, blank or punctuation only: fingerprint 0).
    """
    config = config or FingerprintConfig()
    if text_col not in df.columns:
        raise ConfigError(f"the DataFrame has no column {text_col!r}; its columns: {', '.join(df.columns)}")
    added = fingerprint_columns(config, name)
    flags = [featureless] if featureless else []
    if clash := set(added + flags) & set(df.columns):
        raise ConfigError(f"the DataFrame already has a column {sorted(clash)[0]!r}; choose another name=")
    schema = StructType(
        [
            *df.schema.fields,
            *(StructField(c, LongType(), False) for c in added),
            *(StructField(c, BooleanType(), False) for c in flags),
        ]
    )
    arrow_schema = pa.schema(
        [
            *(pa.field(c, pa.int64(), nullable=False) for c in added),
            *(pa.field(c, pa.bool_(), nullable=False) for c in flags),
        ]
    )

    def add_fingerprints(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        fingerprinter = _fingerprinter(config)
        for batch in batches:
            texts = non_null(batch.column(text_col), text_col)
            fps = fingerprinter.fingerprint_batch(texts, n_jobs=1)
            words = fps.reshape(len(texts), -1).view(np.int64)
            columns = [*batch.columns, *(pa.array(words[:, w]) for w in range(words.shape[1]))]
            if flags:
                columns.append(pa.array(featureless_texts(texts, fps, config)))
            yield pa.RecordBatch.from_arrays(columns, schema=pa.schema([*batch.schema, *arrow_schema]))

    return df.mapInArrow(add_fingerprints, schema)


def non_null(texts: pa.Array, text_col: str) -> pa.Array:
    """``texts`` (of the column ``text_col``), checked to hold no null."""
    if texts.null_count:
        raise ConfigError(
            f"column {text_col!r} holds {texts.null_count} null texts; filter them out or "
            f"fill them before fingerprinting"
        )
    return texts


_FINGERPRINTERS: dict[str, Fingerprinter] = {}


def _fingerprinter(config: FingerprintConfig) -> Fingerprinter:
    """One Fingerprinter per config for the life of a Python worker, shared by its tasks (a
    tfidf config is keyed by its model's digest, as files record it)."""
    key = json.dumps(config.to_dict(), sort_keys=True)
    if key not in _FINGERPRINTERS:
        _FINGERPRINTERS[key] = Fingerprinter(config)
    return _FINGERPRINTERS[key]
