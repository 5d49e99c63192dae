"""What every reader yields, and what every reader is told."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

MiB = 1 << 20


@dataclass(frozen=True)
class ReadOptions:
    """How to find documents in records.

    Attributes:
        text_field: the field (JSONL), column (CSV, Parquet) holding the text.
        id_field: the field holding the id, or None for ``file:line`` / ``file:row`` ids.
        max_document_bytes: a longer text is bad input (a crawler's runaway page or a
            concatenated dump), rejected like a malformed record.
        block_bytes: how much of a file is read at a time; bounds memory.
    """

    text_field: str = "text"
    id_field: str | None = None
    max_document_bytes: int = 32 * MiB
    block_bytes: int = 16 * MiB


@dataclass
class Batch:
    """Documents read from one source, in file order.

    Attributes:
        texts: pyarrow string or binary array (or chunked array), one text per document.
        rows: int64, shape (n,): each document's 1-based line (JSONL, lines) or row (CSV,
            Parquet) in its file; 0 for a file that is one document.
        ids: pyarrow string array of the id field's values, or None without an id field.
        consumed: bytes of the file on disk read so far, for progress.
        spans: for line-based files, int64 shape (n, 2): each document's line, its line
            break included, as [start, end) in the decompressed file; else None.
    """

    texts: Any
    rows: np.ndarray
    ids: Any
    consumed: int
    spans: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.rows)
