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
    import numpy as np
    import pyarrow as pa
    from py4j.protocol import Py4JJavaError
    from pyspark import SparkConf, SparkContext
    from pyspark.errors import PythonException
    from pyspark.sql import functions as F

    from ..index.hamming import distance_for_cosine
    from ..pipeline.cosine import checked_cosine_radius, describe_cosine
    from ..pipeline.job import check_threshold, open_against
    from ..pipeline.lsh import jaccard_plan
    from ..pipeline.verify import Verification, check_verify
    from ..spark.dedup import decide, numbered, rows_with
    from ..spark.facts import POSITION, Facts, json_line_facts, text_facts, texts_by_position
    from ..spark.splits import SplitFacts, first_record, plan_splits, split_texts, write_kept_lines
    from .options import config_from_args, read_options

    config = config_from_args(args)
    k = args.max_distance
    if args.similarity is not None:
        k = distance_for_cosine(args.similarity, config.bits)
    plan, keyed = "", None
    checked: Verification | None
    for name in ("cosine", "jaccard"):
        if getattr(args, name) is not None:
            check_threshold(name, getattr(args, name), args.max_distance, args.similarity, verify)
    if args.cosine is not None:  # the radius that holds 95% of the pairs at T, each pair checked
        k, verify = checked_cosine_radius(args.cosine, config.bits), ("cosine", args.cosine)
        plan = f"neardup: {describe_cosine(args.cosine, config.bits)}\n"
    if args.jaccard is not None:  # MinHash-LSH candidates, each pair checked
        if args.against:
            raise ConfigError(
                "--against finds documents within a radius; it does not combine with --jaccard yet"
            )
        checked, banding, line = jaccard_plan(args.jaccard, config, args.verify_features, args.verify_size)
        keyed, plan = (banding, checked), f"neardup: {line}\n"
    else:
        checked = check_verify(verify, config, args.verify_features, args.verify_size)
    against = open_against(args.against, config, k)
    recorded = Facts(config, args.id_field, jaccard=keyed)
    conf = SparkConf().setAppName("neardup dedup")
    if args.master:
        conf.setMaster(args.master)
    elif "SPARK_HOME" not in os.environ and "spark.master" not in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        conf.setMaster("local[*]")  # plain `python -m neardup`, not spark-submit
    # The SQL session is made only when first needed: the JVM takes a second or two to make
    # one, and JSONL decided on the driver never needs it (the tasks run as RDD jobs).
    sc = SparkContext.getOrCreate(conf)
    spark: Any = _LazySession()
    try:
        text = args.text_field or "text"
        fields = [text, *([args.id_field] if args.id_field else [])]
        fmt = _input_format(args.inputs)
        lines_out = fmt == "jsonl" and (not args.output or _format(args.output, args.format) == "jsonl")
        # JSONL to JSONL: the kept lines are copied as read, as the local engine copies them,
        # so no schema is needed and only the text and id fields are parsed. Files pyarrow
        # opens are read (and the kept lines written) by the tasks themselves, a split each.
        splits = plan_splits(args.inputs, sc.defaultParallelism) if lines_out else None
        options = read_options(args)
        facts: Any
        if splits is not None:
            _check_first_line(first_record(splits), args.inputs, fields)
            facts = SplitFacts(sc, splits, options, recorded)
            texts = split_texts(sc, splits, options)
        elif lines_out:  # at a path only Spark reaches: its text source reads the lines
            lines = spark.read.text(args.inputs).select(F.col("value").alias(_LINE))
            positioned = numbered(lines.where(F.col(_LINE).rlike(r"\S")))
            first = positioned.select(_LINE).head()
            _check_first_line(first[0].encode() if first else None, args.inputs, fields)
            facts = json_line_facts(positioned, _LINE, text, recorded)
            texts = texts_by_position(positioned, _LINE, json_field=text)
        else:
            df = _read(spark, args.inputs, fmt)
            if text not in df.columns:
                raise ConfigError(f"the inputs have no field {text!r}; their fields: {', '.join(df.columns)}")
            positioned = numbered(df)
            facts = text_facts(positioned, text, recorded)
            texts = texts_by_position(positioned, text)
        # Files give the same rows in the same order when read again: the texts are read once
        # for the fingerprints and once for the kept rows, never held or shuffled.
        timings: dict[str, float] = {}
        decision = decide(
            facts,
            config=config,
            max_distance=k,
            keep=args.keep,
            id_col=args.id_field,
            cluster=args.cluster,
            featureless=args.featureless,
            with_pairs=bool(args.pairs),
            every_pair=args.all_pairs,
            verify=checked,
            texts=texts if checked else None,
            against=against,
            banding=keyed[0] if keyed else None,
            hold="--save-index" if args.save_index else None,
            driver_limit=args.driver_limit,
            timings=timings,
        )
        total, kept_count = decision.documents, decision.kept
        if args.output:
            # Whichever of the removed and the kept positions are fewer picks the rows.
            leave_out = total - kept_count <= kept_count
            chosen = decision.positions(kept=not leave_out)
            write_started = time.perf_counter()
            if splits is not None:
                with _output_folder(args.output) as target:
                    written = write_kept_lines(sc, splits, options, chosen, leave_out, target)
                if written != kept_count:
                    raise ConfigError(
                        f"{', '.join(args.inputs)}: {written:,} lines were written where {kept_count:,} "
                        f"documents were kept; did the inputs change during the run?"
                    )
            else:
                if isinstance(chosen, np.ndarray):
                    chosen = spark.createDataFrame(pa.table({POSITION: chosen}))
                fewer = min(total - kept_count, kept_count)
                how = "left_anti" if leave_out else "left_semi"
                _write(rows_with(positioned, chosen, fewer, how).drop(POSITION), args.output, args.format)
            timings[f"write {os.path.basename(args.output.rstrip('/'))}"] = (
                time.perf_counter() - write_started
            )
        ids = [args.id_field] if args.id_field else []
        held = decision.held
        # What the driver holds it writes itself, where pyarrow reaches: no query, no session.
        if args.clusters and not (held and _write_held(_members(held.outcome, ids), args.clusters)):
            outcome = decision.outcome
            sizes = outcome.groupBy("cluster").count().where("count > 1").select("cluster")
            members = outcome.join(sizes, "cluster").select(*ids, "cluster", "kept")
            _write(members, args.clusters, None)
        if args.pairs and not (held and held.pairs and _write_held(_named(held.pairs), args.pairs)):
            assert decision.pairs is not None
            named = decision.pairs.withColumnRenamed("a", "id_a").withColumnRenamed("b", "id_b")
            _write(named, args.pairs, None)
        if args.save_index:
            _save_index(decision, args.save_index, against, config, k)
        removal = f"removed {total - kept_count - decision.against_matches:,} near-duplicates"
        if decision.against_matches:
            removal += f" and {decision.against_matches:,} near-duplicates of the index"
        steps = [f"{step} {t:.2f} s" for step, t in timings.items()]
        steps.append(f"total {time.perf_counter() - started:.2f} s")
        if not args.quiet:
            print(
                f"neardup: read {total:,} documents on Spark ({sc.master})\n{plan}"
                f"neardup: {decision.clusters:,} clusters of near-duplicates{_checked(decision)}\n"
                f"neardup: {removal}, kept {kept_count:,} documents\n"
                f"neardup: time: {', '.join(steps)}",
                file=sys.stderr,
            )
    except (PythonException, Py4JJavaError) as e:  # raised in a task: its message, not the JVM's trace
        found = re.search(r"neardup\._errors\.\w+Error: (.*)", str(e))
        if found is None:
            raise
        raise ConfigError(f"{', '.join(args.inputs)}: {found.group(1).strip()}") from None
    finally:
        sc.stop()
    return 0


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
