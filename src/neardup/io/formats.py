"""Every format neardup reads and writes, in one table: its name, the suffixes that name it,
and what it can hold. Readers, writers, the CLI's choices and Spark's refusals all read it.

A new format is a row here, then its reader in ``dispatch.py`` (``READERS``) and, for output,
its writer in ``writers.py``. Nothing here imports pyarrow: ``neardup --help`` stays light.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._errors import ConfigError


@dataclass(frozen=True)
class Format:
    """One format.

    Attributes:
        name: what ``--input-format`` and ``--format`` take.
        suffixes: the file names that say it (a ``.gz``, ``.zst`` or ``.bz2`` may follow);
            none for the text formats, which any other name is.
        shown: how messages name it, with its suffixes.
        compressible: a file of it may be compressed as a whole (Parquet compresses its own
            columns).
        folder: it is written as a folder of files, whose name is not compressed.
        spark: the Spark data source that reads and writes it on ``--engine spark``, with
            its options (None: not through Spark's readers).
    """

    name: str
    suffixes: tuple[str, ...]
    shown: str
    compressible: bool = True
    folder: bool = False
    spark: str | None = None
    spark_options: tuple[tuple[str, str], ...] = ()


FORMATS = {
    f.name: f
    for f in (
        Format(
            "jsonl",
            (".jsonl", ".json", ".ndjson"),
            "JSONL (.jsonl, .json, .ndjson)",
            spark="json",
        ),
        Format(
            "parquet",
            (".parquet", ".pq"),
            "Parquet (.parquet, .pq)",
            compressible=False,
            spark="parquet",
        ),
        Format(
            "csv",
            (".csv",),
            "CSV (.csv)",
            spark="csv",
            spark_options=(("header", "true"), ("sep", ",")),
        ),
        Format(
            "tsv",
            (".tsv", ".tab"),
            "TSV (.tsv, .tab)",
            spark="csv",
            spark_options=(("header", "true"), ("sep", "\t")),
        ),
        Format("lines", (), "text, one document a line"),
        Format("text", (), "text, one document a file", folder=True),
    )
}
"""``text`` is one document per file (a folder of them, written); ``lines`` one per line."""

INPUT_FORMATS = tuple(FORMATS)
OUTPUT_FORMATS = tuple(FORMATS)
TABLE_FORMATS = ("parquet", "csv", "tsv", "jsonl")
"""The formats clusters, pairs and passages tables are written in (a row of ``FORMATS``
named here), in the order messages show them."""
SPARK_FORMATS = tuple(name for name, f in FORMATS.items() if f.spark is not None)
"""The formats ``--engine spark`` reads and writes through Spark (``lines`` with ``--lines``)."""

COMPRESSION_SUFFIXES = {".gz": "gzip", ".gzip": "gzip", ".zst": "zstd", ".zstd": "zstd", ".bz2": "bz2"}
"""The whole-file compressions by suffix; pyarrow reads and writes each."""
COMPRESSIONS = (*dict.fromkeys(COMPRESSION_SUFFIXES.values()), "none")
"""What ``--compression`` takes."""


def check_format_names(format: str | None, compression: str | None) -> None:
    """Refuse an input format or a compression no reader knows, naming those it knows."""
    if format is not None and format not in INPUT_FORMATS:
        raise ConfigError(f"input format {format!r} is not known; choose one of {', '.join(INPUT_FORMATS)}")
    if compression is not None and compression not in COMPRESSIONS:
        raise ConfigError(
            f"compression {compression!r} is not known; choose one of {', '.join(COMPRESSIONS)}"
        )


SUFFIXES = {suffix: f.name for f in FORMATS.values() for suffix in f.suffixes}
