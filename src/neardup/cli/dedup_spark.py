"""``neardup dedup --engine spark``: the same job on Apache Spark (:func:`neardup.spark.dedup`),
reading and writing at any path Spark reaches.

Inputs are JSONL (``.jsonl``, ``.json``, ``.ndjson``; ``.gz`` and ``.bz2`` too), Parquet or
CSV files or folders of them, all of one format. Spark writes each output as a folder of part
files: ``-o kept.parquet`` (or ``.jsonl``) the kept rows with their columns as read,
``--clusters`` one row per document in a cluster of several (id, cluster, kept), ``--pairs``
(with ``--id-field``) the pairs that rebuild the clusters (id_a, id_b, distance). A local output
goes to a temporary folder beside it and is renamed into place once complete.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
import uuid
from typing import Any

from .._errors import ConfigError

_UNSUPPORTED = (
    ("verify", "--verify"),
    ("jaccard", "--jaccard"),
    ("cosine", "--cosine"),
    ("against", "--against"),
    ("save_index", "--save-index"),
    ("all_pairs", "--all-pairs"),
    ("example", "--example"),
    ("lines", "--lines"),
)


def run_on_spark(args: argparse.Namespace) -> int:
    for attribute, option in _UNSUPPORTED:
        if getattr(args, attribute, None):
            raise ConfigError(f"{option} does not run on --engine spark yet; run it with the local engine")
    if args.pairs and not args.id_field:
        raise ConfigError("--pairs on --engine spark names the documents by --id-field; give it")
    started = time.perf_counter()
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from ..index.hamming import distance_for_cosine
    from ..spark.dedup import POSITION, decide, numbered, rows_with
    from .options import config_from_args

    config = config_from_args(args)
    builder = SparkSession.builder.appName("neardup dedup")
    if args.master:
        builder = builder.master(args.master)
    elif "SPARK_HOME" not in os.environ and "spark.master" not in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        builder = builder.master("local[*]")  # plain `python -m neardup`, not spark-submit
    spark = builder.getOrCreate()
    try:
        df = _read(spark, args.inputs)
        text = args.text_field or "text"
        if text not in df.columns:
            raise ConfigError(f"the inputs have no field {text!r}; their fields: {', '.join(df.columns)}")
        k = args.max_distance
        if args.similarity is not None:
            k = distance_for_cosine(args.similarity, config.bits)
        # Files give the same rows in the same order when read again: the texts are read once
        # for the fingerprints and once for the kept rows, never held or shuffled.
        positioned = numbered(df)
        outcome, pairs = decide(
            positioned,
            text,
            config=config,
            max_distance=k,
            keep=args.keep,
            id_col=args.id_field,
            cluster=args.cluster,
            featureless=args.featureless,
        )
        total, kept_count = outcome.agg(F.count(F.lit(1)), F.sum(F.col("kept").cast("long"))).collect()[0]
        kept_count = kept_count or 0
        sizes = outcome.groupBy("cluster").count().where("count > 1").select("cluster").localCheckpoint()
        clusters = sizes.count()
        if args.output:
            # Whichever of the removed and the kept positions are fewer picks the rows.
            removed = total - kept_count
            if removed <= kept_count:
                chosen, how = outcome.where(~F.col("kept")).select(POSITION), "left_anti"
            else:
                chosen, how = outcome.where("kept").select(POSITION), "left_semi"
            kept = rows_with(positioned, chosen, min(removed, kept_count), how).drop(POSITION)
            _write(kept, args.output, args.format)
        if args.clusters:
            ids = [args.id_field] if args.id_field else []
            members = outcome.join(sizes, "cluster").select(*ids, "cluster", "kept")
            _write(members, args.clusters, None)
        if args.pairs:
            _write(pairs.toDF("id_a", "id_b", "distance"), args.pairs, None)
        if not args.quiet:
            print(
                f"neardup: read {total:,} documents on Spark ({spark.sparkContext.master})\n"
                f"neardup: {clusters:,} clusters of near-duplicates\n"
                f"neardup: removed {total - kept_count:,} near-duplicates, kept {kept_count:,} documents\n"
                f"neardup: time: {time.perf_counter() - started:.2f} s",
                file=sys.stderr,
            )
    finally:
        spark.stop()
    return 0


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


def _read(spark: Any, inputs: list[str]) -> Any:
    formats = {_format(p) if not os.path.isdir(p) else _folder_format(p) for p in inputs}
    if len(formats) != 1:
        raise ConfigError(
            f"--engine spark reads inputs of one format; these are {', '.join(sorted(formats))}"
        )
    fmt = formats.pop()
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
    """``df`` as a folder of part files at ``path``; a local path is written beside and renamed."""
    fmt = _format(path, given)
    local = "://" not in path
    target = f"{path.rstrip('/')}.{uuid.uuid4().hex[:8]}.tmp" if local else path
    writer = df.write.mode("overwrite")
    if fmt == "jsonl":
        writer.json(target)
    elif fmt == "parquet":
        writer.parquet(target)
    else:
        writer.option("header", True).csv(target)
    if local:  # swap the finished folder in; the old output, if any, goes only then
        old = f"{target}.old"
        if os.path.lexists(path):
            os.replace(path, old)
        os.replace(target, path)
        if os.path.isdir(old):
            shutil.rmtree(old)
        elif os.path.lexists(old):
            os.remove(old)
