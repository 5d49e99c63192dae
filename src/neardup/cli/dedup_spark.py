"""``neardup dedup --engine spark``: the same job on Apache Spark (:func:`neardup.spark.dedup`),
reading and writing at any path Spark reaches.

Inputs are JSONL (``.jsonl``, ``.json``, ``.ndjson``; ``.gz`` and ``.bz2`` too), Parquet or
CSV files or folders of them, all of one format. Spark writes each output as a folder of part
files: ``-o kept.parquet`` (or ``.jsonl``) the kept rows with their columns as read,
``--clusters`` one row per document in a cluster of several (id, cluster, kept), ``--pairs``
(with ``--id-field``) the pairs that rebuild the clusters, or with ``--all-pairs`` every pair
(id_a, id_b, distance, and similarity where checked). A local output
goes to a temporary folder beside it and is renamed into place once complete.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

from .._errors import ConfigError

_LINE = "_line"
"""The column of an input line, on the JSONL-to-JSONL path."""
_UNSUPPORTED = (
    ("example", "--example"),
    ("lines", "--lines"),
)


def run_on_spark(args: argparse.Namespace, verify: tuple[str, float] | None = None) -> int:
    for attribute, option in _UNSUPPORTED:
        if getattr(args, attribute, None):
            raise ConfigError(f"{option} does not run on --engine spark yet; run it with the local engine")
    if args.pairs and not args.id_field:
        raise ConfigError("--pairs on --engine spark names the documents by --id-field; give it")
    started = time.perf_counter()
    from py4j.protocol import Py4JJavaError
    from pyspark import SparkConf, SparkContext
    from pyspark.errors import PythonException

    from ..pipeline.job import open_against
    from ..spark.dedup import decide
    from ..spark.facts import Facts
    from .options import config_from_args

    config = config_from_args(args)
    k, checked, keyed, plan = _matching(args, config, verify)
    against = open_against(args.against, config, k)
    conf = SparkConf().setAppName("neardup dedup")
    if args.master:
        conf.setMaster(args.master)
    elif "SPARK_HOME" not in os.environ and "spark.master" not in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        conf.setMaster("local[*]")  # plain `python -m neardup`, not spark-submit
    # The SQL session is made only when first needed: the JVM takes a second or two to make
    # one, and JSONL decided on the driver never needs it (the tasks run as RDD jobs).
    sc = SparkContext.getOrCreate(conf)
    try:
        inputs = _Inputs(args, sc, Facts(config, args.id_field, jaccard=keyed))
        timings: dict[str, float] = {}
        decision = decide(
            inputs.facts,
            config=config,
            max_distance=k,
            keep=args.keep,
            id_col=args.id_field,
            cluster=args.cluster,
            featureless=args.featureless,
            with_pairs=bool(args.pairs),
            every_pair=args.all_pairs,
            verify=checked,
            texts=inputs.texts if checked else None,
            against=against,
            banding=keyed[0] if keyed else None,
            hold="--save-index" if args.save_index else None,
            driver_limit=args.driver_limit,
            timings=timings,
        )
        if args.output:
            write_started = time.perf_counter()
            inputs.write_kept(decision, args.output, args.format)
            timings[f"write {os.path.basename(args.output.rstrip('/'))}"] = (
                time.perf_counter() - write_started
            )
        _write_clusters_and_pairs(decision, args)
        if args.save_index:
            _save_index(decision, args.save_index, against, config, k)
        if not args.quiet:
            print(_summary(decision, sc.master, plan, timings, started), file=sys.stderr)
    except (PythonException, Py4JJavaError) as e:  # raised in a task: its message, not the JVM's trace
        found = re.search(r"neardup\._errors\.\w+Error: (.*)", str(e))
        if found is None:
            raise
        raise ConfigError(f"{', '.join(args.inputs)}: {found.group(1).strip()}") from None
    finally:
        sc.stop()
    return 0


def _matching(
    args: argparse.Namespace, config: Any, verify: tuple[str, float] | None
) -> tuple[int, Any, Any, str]:
    """(the radius, the check of each pair or None, the MinHash banding and its check under
    ``--jaccard`` or None, the summary's plan line) that the options ask for."""
    from ..pipeline.cosine import checked_cosine_radius, describe_cosine
    from ..pipeline.job import check_threshold, radius
    from ..pipeline.lsh import jaccard_plan
    from ..pipeline.verify import check_verify

    for name in ("cosine", "jaccard"):
        if getattr(args, name) is not None:
            check_threshold(name, getattr(args, name), args.max_distance, args.similarity, verify)
    k, plan = radius(args.max_distance, args.similarity, config.bits), ""
    if args.cosine is not None:  # the radius that holds 95% of the pairs at T, each pair checked
        k, verify = checked_cosine_radius(args.cosine, config.bits), ("cosine", args.cosine)
        plan = f"neardup: {describe_cosine(args.cosine, config.bits)}\n"
    if args.jaccard is None:
        return k, check_verify(verify, config, args.verify_features, args.verify_size), None, plan
    if args.against:  # MinHash-LSH candidates, each pair checked
        raise ConfigError("--against finds documents within a radius; it does not combine with --jaccard yet")
    checked, banding, line = jaccard_plan(args.jaccard, config, args.verify_features, args.verify_size)
    return k, checked, (banding, checked), f"neardup: {line}\n"


class _Inputs:
    """The inputs as the decision takes them (``facts``, ``texts``), and how their kept rows
    are written: JSONL to JSONL copies the kept lines as read, as the local engine does, so no
    schema is needed and only the text and id fields are parsed. Files pyarrow opens are read
    (and the kept lines written) by the tasks themselves, a split each; other paths by Spark.
    Files give the same rows in the same order when read again: the texts are read once for
    the fingerprints and once for the kept rows, never held or shuffled."""

    def __init__(self, args: argparse.Namespace, sc: Any, recorded: Any) -> None:
        from pyspark.sql import functions as F

        from ..spark.dedup import numbered
        from ..spark.facts import json_line_facts, text_facts, texts_by_position
        from ..spark.splits import SplitFacts, first_record, plan_splits, split_texts
        from .options import read_options

        self.sc, self.inputs, self.spark = sc, args.inputs, _LazySession()
        text = args.text_field or "text"
        fields = [text, *([args.id_field] if args.id_field else [])]
        fmt = _input_format(args.inputs)
        lines_out = fmt == "jsonl" and (not args.output or _format(args.output, args.format) == "jsonl")
        self.splits = plan_splits(args.inputs, sc.defaultParallelism) if lines_out else None
        self.options = read_options(args)
        self.facts: Any
        if self.splits is not None:
            _check_first_line(first_record(self.splits), args.inputs, fields)
            self.facts = SplitFacts(sc, self.splits, self.options, recorded)
            self.texts = split_texts(sc, self.splits, self.options)
        elif lines_out:  # at a path only Spark reaches: its text source reads the lines
            lines = self.spark.read.text(args.inputs).select(F.col("value").alias(_LINE))
            self.positioned = numbered(lines.where(F.col(_LINE).rlike(r"\S")))
            first = self.positioned.select(_LINE).head()
            _check_first_line(first[0].encode() if first else None, args.inputs, fields)
            self.facts = json_line_facts(self.positioned, _LINE, text, recorded)
            self.texts = texts_by_position(self.positioned, _LINE, json_field=text)
        else:
            df = _read(self.spark, args.inputs, fmt)
            if text not in df.columns:
                raise ConfigError(f"the inputs have no field {text!r}; their fields: {', '.join(df.columns)}")
            self.positioned = numbered(df)
            self.facts = text_facts(self.positioned, text, recorded)
            self.texts = texts_by_position(self.positioned, text)

    def write_kept(self, decision: Any, output: str, given: str | None) -> None:
        """The kept rows, to ``output``: picked by whichever of the removed and the kept
        positions are fewer."""
        import numpy as np
        import pyarrow as pa

        from ..spark.dedup import rows_with
        from ..spark.facts import POSITION
        from ..spark.splits import write_kept_lines

        total, kept = decision.documents, decision.kept
        leave_out = total - kept <= kept
        chosen = decision.positions(kept=not leave_out)
        if self.splits is not None:
            with _output_folder(output) as target:
                written = write_kept_lines(self.sc, self.splits, self.options, chosen, leave_out, target)
            if written != kept:
                raise ConfigError(
                    f"{', '.join(self.inputs)}: {written:,} lines were written where {kept:,} "
                    f"documents were kept; did the inputs change during the run?"
                )
            return
        if isinstance(chosen, np.ndarray):
            chosen = self.spark.createDataFrame(pa.table({POSITION: chosen}))
        how = "left_anti" if leave_out else "left_semi"
        _write(rows_with(self.positioned, chosen, min(total - kept, kept), how).drop(POSITION), output, given)


def _write_clusters_and_pairs(decision: Any, args: argparse.Namespace) -> None:
    """``--clusters`` and ``--pairs``: what the driver holds it writes itself where pyarrow
    reaches (no query, no session); the rest Spark writes."""
    ids = [args.id_field] if args.id_field else []
    held = decision.held
    if args.clusters and not (held and _write_held(_members(held.outcome, ids), args.clusters)):
        outcome = decision.outcome
        sizes = outcome.groupBy("cluster").count().where("count > 1").select("cluster")
        members = outcome.join(sizes, "cluster").select(*ids, "cluster", "kept")
        _write(members, args.clusters, None)
    if args.pairs and not (held and held.pairs and _write_held(_named(held.pairs), args.pairs)):
        assert decision.pairs is not None
        named = decision.pairs.withColumnRenamed("a", "id_a").withColumnRenamed("b", "id_b")
        _write(named, args.pairs, None)


def _summary(decision: Any, master: str | None, plan: str, timings: dict[str, float], started: float) -> str:
    """The lines ``neardup dedup`` prints at the end, as the local engine prints them."""
    total, kept = decision.documents, decision.kept
    removal = f"removed {total - kept - decision.against_matches:,} near-duplicates"
    if decision.against_matches:
        removal += f" and {decision.against_matches:,} near-duplicates of the index"
    steps = [f"{step} {t:.2f} s" for step, t in timings.items()]
    steps.append(f"total {time.perf_counter() - started:.2f} s")
    return (
        f"neardup: read {total:,} documents on Spark ({master})\n{plan}"
        f"neardup: {decision.clusters:,} clusters of near-duplicates{_checked(decision)}\n"
        f"neardup: {removal}, kept {kept:,} documents\n"
        f"neardup: time: {', '.join(steps)}"
    )


def _members(outcome: Any, ids: list[str]) -> Any:
    """The rows of ``outcome`` (an Arrow table) in clusters of several: ids, cluster, kept."""
    import numpy as np
    import pyarrow as pa

    _, cluster, sizes = np.unique(
        outcome.column("cluster").to_numpy(), return_inverse=True, return_counts=True
    )
    return outcome.select([*ids, "cluster", "kept"]).filter(pa.array(sizes[cluster] > 1))


def _named(pairs: Any) -> Any:
    """``pairs`` (an Arrow table) with their ends named as ``--pairs`` names them."""
    return pairs.rename_columns(["id_a", "id_b", *pairs.column_names[2:]])


def _write_held(table: Any, path: str) -> bool:
    """``table`` (held by the driver) as a folder of one part file at ``path``, written
    through pyarrow; False where pyarrow does not reach ``path`` (then Spark writes it)."""
    from ..spark.folders import file_system, write_table

    if file_system(path) is None:
        return False
    with _output_folder(path) as target:
        write_table(table, target, _format(path))
    return True


class _LazySession:
    """The SQL session, made when an attribute of it is first asked for."""

    def __getattr__(self, name: str) -> Any:
        from pyspark.sql import SparkSession

        return getattr(SparkSession.builder.getOrCreate(), name)


def _save_index(decision: Any, path: str, against: Any, config: Any, k: int) -> None:
    """An index of every document's fingerprint, ids in input order (after the ``against``
    index's, added to it), as the local engine saves it; built on the driver."""
    from .._atomic import atomic_path
    from ..pipeline.job import index_to_save
    from ..spark.facts import POSITION
    from ..spark.fingerprints import fingerprint_columns, fingerprints_of

    assert decision.held is not None  # decide was told to hold it
    fp = fingerprint_columns(config)
    table = decision.held.outcome.sort_by(POSITION)  # input order
    with atomic_path(path) as target:
        index_to_save(fingerprints_of(table, fp), against, config, k).save(target)


def _checked(decision: Any) -> str:
    if decision.checked_pairs is None:
        return ""
    return f"; {decision.similar_pairs:,} of {decision.checked_pairs:,} pairs checked passed verification"


def _check_first_line(first: bytes | None, inputs: list[str], fields: list[str]) -> None:
    """A clear error for inputs that are not JSON objects with these fields (their ``first``
    line that is not blank says), before Spark meets them in every task."""
    if first is None:
        return
    try:
        record = json.loads(first)
    except ValueError:
        raise ConfigError(f"{', '.join(inputs)}: the first line is not valid JSON") from None
    if not isinstance(record, dict):
        raise ConfigError(f"{', '.join(inputs)}: the first line is not a JSON object")
    for field in fields:
        if field not in record:
            raise ConfigError(
                f"{', '.join(inputs)}: the first line has no field {field!r}; its fields: "
                f"{', '.join(record)} (name the text with --text-field, the id with --id-field)"
            )


def _format(path: str, given: str | None = None) -> str:
    name = path.rstrip("/").lower()
    for suffix in (".gz", ".bz2"):
        name = name.removesuffix(suffix)
    if given:
        return given
    for fmt, suffixes in (
        ("jsonl", (".jsonl", ".json", ".ndjson")),
        ("parquet", (".parquet",)),
        ("csv", (".csv",)),
    ):
        if name.endswith(suffixes):
            return fmt
    raise ConfigError(
        f"{path}: --engine spark reads and writes JSONL (.jsonl, .json, .ndjson), Parquet (.parquet) or "
        f"CSV (.csv), named by suffix; name the files so, or give --input-format/--format"
    )


def _input_format(inputs: list[str]) -> str:
    formats = {_format(p) if not os.path.isdir(p) else _folder_format(p) for p in inputs}
    if len(formats) != 1:
        raise ConfigError(
            f"--engine spark reads inputs of one format; these are {', '.join(sorted(formats))}"
        )
    return formats.pop()


def _read(spark: Any, inputs: list[str], fmt: str) -> Any:
    if fmt == "jsonl":
        return spark.read.json(inputs)
    if fmt == "parquet":
        return spark.read.parquet(*inputs)
    return spark.read.option("header", True).csv(inputs)


def _folder_format(folder: str) -> str:
    names = [n for _, _, files in os.walk(folder) for n in files if not n.startswith((".", "_"))]
    formats = set()
    for name in names:
        try:
            formats.add(_format(name))
        except ConfigError:
            continue
    if len(formats) != 1:
        raise ConfigError(
            f"{folder}: --engine spark needs a folder of JSONL, Parquet or CSV files, one format"
        )
    return formats.pop()


def _write(df: Any, path: str, given: str | None) -> None:
    """``df`` as a folder of part files at ``path``."""
    fmt = _format(path, given)
    with _output_folder(path) as target:
        writer = df.write.mode("overwrite")
        if df.columns == [_LINE]:  # the input's lines, as read
            writer.text(target)
        elif fmt == "jsonl":
            writer.json(target)
        elif fmt == "parquet":
            writer.parquet(target)
        else:
            writer.option("header", True).csv(target)


@contextlib.contextmanager
def _output_folder(path: str) -> Iterator[str]:
    """Where to write the folder ``path``: a local one is written beside it and swapped in
    once complete (the old output, if any, goes only then); another is written in place."""
    if "://" in path:
        yield path
        return
    target = f"{path.rstrip('/')}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        yield target
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    else:
        old = f"{target}.old"
        if os.path.lexists(path):
            os.replace(path, old)
        os.replace(target, path)
        if os.path.isdir(old):
            shutil.rmtree(old)
        elif os.path.lexists(old):
            os.remove(old)
