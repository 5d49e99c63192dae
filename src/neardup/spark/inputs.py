"""The inputs of a Spark dedup job (:func:`neardup.spark.run`) as its decision takes them, and
the writing of its outputs as folders of part files.

Formats are named by the files' suffixes as the local engine names them
(:func:`neardup.io.sources.split_suffixes`): JSONL, Parquet, CSV or TSV, all inputs of one.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from .._atomic import atomic_dir
from .._errors import ConfigError
from ..io.batch import ReadOptions
from ..io.formats import FORMATS, SPARK_FORMATS
from ..io.rejects import Rejects
from ..io.sources import regular_files, split_suffixes
from .dedup import Decision, numbered, rows_with
from .facts import POSITION, Facts, Texts, json_line_facts, text_facts, texts_by_position
from .folders import file_system, write_table
from .session import Cluster
from .splits import SplitFacts, SplitTexts, first_record, plan_splits, write_kept_lines

"""What the Spark job reads and writes."""
LINE = "_line"
"""The column of an input line, on the JSONL-to-JSONL path."""


class Inputs:
    """The inputs as the decision takes them (``facts``, ``texts``), and how their kept rows
    are written: JSONL to JSONL copies the kept lines as read, as the local engine does, so no
    schema is needed and only the text and id fields are parsed. Files pyarrow opens are read
    (and the kept lines written) by the tasks themselves, a split each; other paths by Spark.
    Files give the same rows in the same order when read again: the texts are read once for
    the fingerprints and once for the kept rows, never held or shuffled."""

    def __init__(
        self,
        paths: list[str],
        read: ReadOptions,
        recorded: Facts,
        cluster: Cluster,
        output: str | None,
        output_format: str | None,
    ) -> None:
        errors, lines = read.errors, read.lines
        self.cluster, self.paths, self.options, self.errors = cluster, paths, read, errors
        sc = cluster.sc
        text = read.text_field
        fields = [text, *([read.id_field] if read.id_field else [])]
        fmt = input_format(paths, lines)
        if fmt == "lines":
            if read.id_field:
                raise ConfigError("--id-field names a field of a record; lines of text have none")
            if output and folder_format(output, output_format, lines=True) != "lines":
                raise ConfigError(
                    f"{output}: --engine spark writes the kept lines of text files as text lines; "
                    f"name the output with .txt (or run the local engine for another format)"
                )
        lines_out = fmt in ("jsonl", "lines") and (
            not output or folder_format(output, output_format, lines=fmt == "lines") == fmt
        )
        # Over Spark Connect (no RDDs) Spark's text source reads the lines.
        self.splits = (
            plan_splits(paths, sc.defaultParallelism, lines=lines) if lines_out and sc is not None else None
        )
        self.facts: Any
        self.texts: Texts
        if errors == "skip" and self.splits is None:
            raise ConfigError(
                "--on-error skip on --engine spark reads JSONL files written as JSONL, at paths "
                "pyarrow opens (local, s3://, gs://, hdfs://, abfs://) and not over Spark Connect; "
                "fix the bad records, or run these inputs with the local engine"
            )
        if self.splits is not None:
            assert sc is not None
            if errors == "raise" and fmt == "jsonl":  # a clear error before every task meets it
                _check_first_line(first_record(self.splits), paths, fields)
            self.facts = SplitFacts(sc, self.splits, read, recorded, errors)
            self.texts = SplitTexts(sc, self.splits, read)
        elif lines_out:  # at a path only Spark reaches, or over Spark Connect: its text source
            read_lines = cluster.session.read.text(paths).select(F.col("value").alias(LINE))
            self.positioned = numbered(read_lines.where(F.col(LINE).rlike(r"\S")))
            if fmt == "lines":
                self.facts = text_facts(self.positioned, LINE, recorded)
                self.texts = texts_by_position(self.positioned, LINE)
            else:
                first = self.positioned.select(LINE).head()
                _check_first_line(first[0].encode() if first else None, paths, fields)
                self.facts = json_line_facts(self.positioned, LINE, text, recorded)
                self.texts = texts_by_position(self.positioned, LINE, json_field=text)
        else:
            df = _read(cluster.session, paths, fmt)
            if text not in df.columns:
                raise ConfigError(
                    f"the inputs have no field {text!r}; their fields: {', '.join(df.columns)} "
                    f"(name the text with --text-field)"
                )
            self.positioned = numbered(df)
            self.facts = text_facts(self.positioned, text, recorded)
            self.texts = texts_by_position(self.positioned, text)

    @property
    def rejects(self) -> Rejects | None:
        """With ``errors="skip"``: the records left out, once the facts are computed."""
        return self.facts.rejects if isinstance(self.facts, SplitFacts) else None

    def write_kept(self, decision: Decision, output: str, given: str | None) -> None:
        """The kept rows, to ``output``: picked by whichever of the removed and the kept
        positions are fewer (the kept ones where lines were skipped: leaving out the removed
        would write the skipped lines)."""
        total, kept = decision.documents, decision.kept
        leave_out = total - kept <= kept and self.errors == "raise"
        chosen = decision.positions(kept=not leave_out)
        if self.splits is not None:
            assert self.cluster.sc is not None
            with output_folder(output) as target:
                written = write_kept_lines(
                    self.cluster.sc, self.splits, self.options, chosen, leave_out, target
                )
            if written != kept:
                raise ConfigError(
                    f"{', '.join(self.paths)}: {written:,} lines were written where {kept:,} "
                    f"documents were kept; did the inputs change during the run?"
                )
            return
        if isinstance(chosen, np.ndarray):
            chosen = self.cluster.session.createDataFrame(pa.table({POSITION: chosen}))
        how = "left_anti" if leave_out else "left_semi"
        write_frame(
            rows_with(self.positioned, chosen, min(total - kept, kept), how).drop(POSITION), output, given
        )


def folder_format(path: str, given: str | None = None, lines: bool = False) -> str:
    """The format of the files of ``path`` (a file or an output folder named like one):
    ``given``, else named by its suffix; with ``lines`` a name that names no format is
    ``"lines"``, text of one document a line."""
    if given:
        if given not in SPARK_FORMATS and not (lines and given == "lines"):
            raise ConfigError(f"--engine spark writes {', '.join(SPARK_FORMATS)}, not {given}")
        return given
    fmt, _ = split_suffixes(path.rstrip("/"))
    if lines and fmt is None:
        return "lines"
    if fmt not in SPARK_FORMATS:
        raise ConfigError(
            f"{path}: --engine spark reads and writes {_shown(SPARK_FORMATS)}, named by suffix; "
            f"name the files so, or give --input-format/--format"
        )
    return fmt


def input_format(paths: list[str], lines: bool = False) -> str:
    """The one format of every input (a folder's by the files it holds): a text file named is
    ``"lines"``, as are a folder's text files with ``lines``, as the local engine reads them."""
    formats = {
        folder_format(p, lines=True) if not os.path.isdir(p) else _format_inside(p, lines) for p in paths
    }
    if len(formats) != 1:
        raise ConfigError(
            f"--engine spark reads inputs of one format; these are {', '.join(sorted(formats))}"
        )
    return formats.pop()


def _format_inside(folder: str, lines: bool) -> str:
    names = regular_files(Path(folder))  # the files the local engine finds there
    found = [fmt or ("lines" if lines else "text") for fmt, _ in map(split_suffixes, names)]
    formats = {fmt for fmt in found if fmt in SPARK_FORMATS or fmt == "lines"}
    if len(formats) != 1:
        text = " (text files: --lines reads one document a line; one a file does not run on Spark)"
        raise ConfigError(
            f"{folder}: --engine spark needs a folder of JSONL, Parquet, CSV or TSV files, or "
            f"with --lines text files, of one format{text if 'text' in found else ''}"
        )
    return formats.pop()


def _read(spark: Any, paths: list[str], fmt: str) -> DataFrame:
    name, options = _spark_source(fmt)
    return spark.read.format(name).options(**options).load(paths)


def _spark_source(fmt: str) -> tuple[str, dict[str, str]]:
    """The Spark data source that reads and writes ``fmt`` (``io/formats.py``), and its options."""
    source = FORMATS[fmt]
    assert source.spark is not None, f"{fmt} has no Spark source: folder_format refuses it first"
    return source.spark, dict(source.spark_options)


def _shown(names: tuple[str, ...]) -> str:
    """``names`` as messages show them: ``JSONL (.jsonl, ...), Parquet (...) or TSV (...)``."""
    shown = [FORMATS[name].shown for name in names]
    return f"{', '.join(shown[:-1])} or {shown[-1]}"


def write_frame(df: DataFrame, path: str, given: str | None = None) -> None:
    """``df`` as a folder of part files at ``path``, written by Spark (the input's lines, a
    column ``LINE``, as text, JSON lines or not)."""
    fmt = folder_format(path, given, lines=df.columns == [LINE])
    with output_folder(path) as target:
        writer = df.write.mode("overwrite")
        if df.columns == [LINE]:  # the input's lines, as read
            writer.text(target)
        else:
            name, options = _spark_source(fmt)
            writer.format(name).options(**options).save(target)


def write_held(table: pa.Table, path: str) -> bool:
    """``table`` (held by the driver) as a folder of one part file at ``path``, written
    through pyarrow; False where pyarrow does not reach ``path`` (then Spark writes it)."""
    if file_system(path) is None:
        return False
    with output_folder(path) as target:
        write_table(table, target, folder_format(path))
    return True


@contextlib.contextmanager
def output_folder(path: str) -> Iterator[str]:
    """Where to write the folder ``path``: a local one atomically (``_atomic.atomic_dir``,
    replacing an old output once the new one is complete); another in place."""
    if "://" in path:
        yield path
        return
    with atomic_dir(path.rstrip("/"), replace=True) as target:
        yield str(target)


def _check_first_line(first: bytes | None, paths: list[str], fields: list[str]) -> None:
    """A clear error for inputs that are not JSON objects with these fields (their ``first``
    line that is not blank says), before Spark meets them in every task."""
    if first is None:
        return
    try:
        record = json.loads(first)
    except ValueError:
        raise ConfigError(f"{', '.join(paths)}: the first line is not valid JSON") from None
    if not isinstance(record, dict):
        raise ConfigError(f"{', '.join(paths)}: the first line is not a JSON object")
    for field in fields:
        if field not in record:
            raise ConfigError(
                f"{', '.join(paths)}: the first line has no field {field!r}; its fields: "
                f"{', '.join(record)} (name the text with --text-field, the id with --id-field)"
            )
