"""What every reader yields, and what every reader is told."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import ConfigError
from .formats import check_format_names
from .rejects import check_errors

MiB = 1 << 20


@dataclass(frozen=True)
class ReadOptions:
    """How to read a corpus: every reading setting an engine takes, checked once, here.

    Attributes:
        text_field: the field (JSONL), column (CSV, Parquet) holding the text.
        id_field: the field holding the id, or None for ``file:line`` / ``file:row`` ids.
        max_document_bytes: a longer text is bad input (a crawler's runaway page or a
            concatenated dump), rejected like a malformed record.
        block_bytes: how much of a file is read at a time; bounds memory, changes no result.
        errors: ``"raise"`` at the first bad record, naming its file and line; ``"skip"`` to
            leave bad records out, counted (``Rejects``).
        max_skipped: with ``"skip"``, fail when more than this share (in [0, 1]) of the
            records is left out; None: only when every record is.
        input_format: a name of ``INPUT_FORMATS`` for every file, or None: by its suffix.
        compression: a name of ``COMPRESSIONS`` for every file, or None: by its suffix.
        lines: a folder's text files hold one document a line, not one a file.
    """

    text_field: str = "text"
    id_field: str | None = None
    max_document_bytes: int = 32 * MiB
    block_bytes: int = 16 * MiB
    errors: str = "raise"
    max_skipped: float | None = None
    input_format: str | None = None
    compression: str | None = None
    lines: bool = False

    def __post_init__(self) -> None:
        check_errors(self.errors)
        if self.max_skipped is not None and not 0 <= self.max_skipped <= 1:  # NaN too
            raise ConfigError(f"max_skipped={self.max_skipped!r} is not a fraction in [0, 1] (0.01 is 1%)")
        check_format_names(self.input_format, self.compression)

    @classmethod
    def from_keywords(
        cls,
        *,
        text_field: str = "text",
        id_field: str | None = None,
        errors: str = "raise",
        max_skipped: float | None = None,
        input_format: str | None = None,
        compression: str | None = None,
        lines: bool = False,
        max_document_mb: float = 32,
        block_mb: float = 16,
    ) -> ReadOptions:
        """The reading keywords of the library's jobs (``neardup.dedup``, ``neardup.passages``,
        ``neardup.spark.run``), sizes in MB, as one value."""
        return cls(
            text_field=text_field,
            id_field=id_field,
            max_document_bytes=int(max_document_mb * MiB),
            block_bytes=int(block_mb * MiB),
            errors=errors,
            max_skipped=max_skipped,
            input_format=input_format,
            compression=compression,
            lines=lines,
        )


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
