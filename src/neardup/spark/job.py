"""The dedup job on Spark, end to end (:func:`run`): the inputs read, the session, the
decision, the outputs written and the summary, as ``neardup dedup --engine spark`` runs it.

Inputs are JSONL, Parquet, CSV or TSV files or folders of them, all of one format, at any path
Spark reaches. Each output is a folder of part files: ``output`` the kept rows with their
columns as read, ``clusters`` one row per document in a cluster of several (id, cluster,
kept), ``pairs`` (named by the id field) the pairs that rebuild the clusters, or with
``every_pair`` every pair (id_a, id_b, distance, and similarity where checked). A local output
goes to a temporary folder beside it and replaces its target once complete.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa
from py4j.protocol import Py4JJavaError
from pyspark.errors import PythonException

from .._atomic import atomic_path
from .._errors import ConfigError
from ..decision.options import DedupOptions
from ..decision.stats import DedupStats
from ..decision.steps import index_to_save
from ..io.batch import ReadOptions
from ..io.outputs import Outputs
from .dedup import Decision, decide
from .facts import POSITION, Facts
from .fingerprints import fingerprint_columns, fingerprints_of
from .inputs import Inputs, write_frame, write_held
from .session import connect


def run(
    paths: list[str],
    options: DedupOptions,
    *,
    read: ReadOptions | None = None,
    output: str | None = None,
    output_format: str | None = None,
    clusters: str | None = None,
    pairs: str | None = None,
    every_pair: bool = False,
    save_index: str | None = None,
    master: str | None = None,
    driver_limit: int | None = None,
    errors: str = "raise",
    max_skipped: float | None = None,
    lines: bool = False,
) -> DedupStats:
    """Deduplicate the files at ``paths`` on Spark as ``options`` say, write the outputs asked
    for, and return what was done (its :meth:`~DedupStats.format` is the summary).

    Args:
        paths: files or folders, local or at any path Spark reaches (``s3://``, ``hdfs://``).
        read: how to read (the text and id fields, how much at a time); ``errors``,
            ``max_skipped`` and ``lines``, given apart from it, take the place of its own.
        output, output_format: the kept rows' folder, and its format (default: its suffix).
        clusters, pairs, every_pair: the clusters' and pairs' folders (Parquet, CSV, TSV or
            JSONL by suffix); the pairs name the documents by the id field, which they need.
        save_index: an index of every document's fingerprint for later ``against`` runs.
        master: the Spark master (default: spark-submit's, else ``local[*]``), for the context
            made here and stopped at the end; a running one is used as it is. The SQL session
            is made only when first needed: JSONL decided on the driver runs as RDD jobs.
            ``sc://host:port`` runs the job through that Spark Connect server, DataFrames only.
        driver_limit: up to this many documents the decision is taken on the driver by the
            local engine's steps (:func:`neardup.spark.dedup.decide`).
        errors, max_skipped: a bad line stops the job (``"raise"``), or is left out, counted
            and named in the summary (``"skip"``; JSONL split by the tasks only), failing
            before anything is written when more than ``max_skipped`` of the lines (or all of
            them) are, as the local engine does.
        lines: a folder's text files hold one document a line (a text file named does
            anyway), written as text lines.
    """
    read = _merged(
        read or ReadOptions(),
        errors=errors,
        max_skipped=max_skipped,
        lines=lines,
    )
    outputs = Outputs(output, output_format, clusters, pairs, every_pair, save_index)
    return run_job(paths, options, read, outputs, SparkEngine(master, driver_limit))


def _merged(read: ReadOptions, **keywords: Any) -> ReadOptions:
    """``read`` with the keywords :func:`run` was given apart from it; a keyword at its
    default leaves ``read``'s own value."""
    defaults = ReadOptions()
    given = {name: value for name, value in keywords.items() if value != getattr(defaults, name)}
    return replace(read, **given)


@dataclass(frozen=True)
class SparkEngine:
    """What the Spark engine takes besides the reading, the decision's options and the outputs.

    Attributes:
        master: the Spark master (None: spark-submit's, else ``local[*]``), or
            ``sc://host:port`` for a Spark Connect server; see :func:`run`.
        driver_limit: up to this many documents the decision is taken on the driver by the
            local engine's steps; None: the default (:func:`neardup.spark.dedup.decide`).
    """

    master: str | None = None
    driver_limit: int | None = None

    def refuse_local_only(
        self,
        paths: list[str],
        read: ReadOptions | None = None,
        *,
        memory: int | None = None,
        work_dir: str | os.PathLike | None = None,
    ) -> None:
        """Refuse, as the command line names them, what only the local engine does: stdin
        (``-``), a join bounded by ``memory`` (and its ``work_dir``), and the input format
        or compression given for every file (Spark reads each by its name)."""
        local_only = (
            ("-" in paths, "'-' (stdin)"),
            (memory is not None, "--memory"),
            (work_dir is not None, "--work-dir"),
            (read is not None and read.input_format is not None, "--input-format"),
            (read is not None and read.compression is not None, "--compression"),
        )
        for given, option in local_only:
            if given:
                raise ConfigError(
                    f"{option} does not run on --engine spark yet; run it with the local engine"
                )


def run_job(
    paths: list[str],
    options: DedupOptions,
    read: ReadOptions,
    outputs: Outputs,
    engine: SparkEngine,
) -> DedupStats:
    """The Spark job, as :func:`run` and ``neardup dedup --engine spark`` run it: the files at
    ``paths`` read as ``read`` says, decided as ``options`` say, on the cluster ``engine``
    names, ``outputs`` written as folders of part files (each but the index)."""
    started = time.perf_counter()
    engine.refuse_local_only(paths, read)
    if outputs.pairs and not read.id_field:
        raise ConfigError("--pairs on --engine spark names the documents by --id-field; give it")
    # Before anything is read; each but the index is a folder of part files, replaced whole.
    outputs.check(paths, folders=("-o", "--clusters", "--pairs"), replace=True)
    output_format, every_pair, save_index = outputs.format, outputs.every_pair, outputs.save_index
    against = options.open_against()
    # Spark resolves a relative path in its own working directory: a Connect server's is not ours.
    paths = [_absolute(p) for p in paths]
    output, clusters, pairs = (
        _absolute(os.fspath(p)) if p else None for p in (outputs.output, outputs.clusters, outputs.pairs)
    )
    cluster = connect(engine.master, "neardup dedup")
    try:
        inputs = Inputs(
            paths,
            read,
            Facts(options.config, read.id_field, jaccard=options.bands),
            cluster,
            output,
            output_format,
        )
        timings: dict[str, float] = {}
        decision = decide(
            inputs.facts,
            options,
            id_col=read.id_field,
            with_pairs=bool(pairs),
            every_pair=every_pair,
            texts=inputs.texts if options.check else None,
            against=against,
            hold="--save-index" if save_index else None,
            driver_limit=engine.driver_limit,
            timings=timings,
        )
        rejects = inputs.rejects
        if rejects is not None:  # before anything is written
            rejects.check_share(decision.documents, read.max_skipped)
        if output:
            write_started = time.perf_counter()
            inputs.write_kept(decision, output, output_format)
            timings[f"write {os.path.basename(output.rstrip('/'))}"] = time.perf_counter() - write_started
        _write_clusters_and_pairs(decision, read.id_field, clusters, pairs)
        if save_index:
            _save_index(decision, os.fspath(save_index), against, options)
        timings["total"] = time.perf_counter() - started
        return DedupStats(
            documents=decision.documents,
            skipped=rejects.count if rejects else 0,
            skip_summary=rejects.summary() if rejects else "",
            text_bytes=None,
            checked_pairs=decision.checked_pairs,
            similar_pairs=decision.similar_pairs,
            clusters=decision.clusters,
            duplicates=decision.documents - decision.kept - decision.against_matches,
            against_matches=decision.against_matches,
            plan=options.plan,
            engine=f"on {cluster.name}",
            seconds=timings,
        )
    except (PythonException, Py4JJavaError) as e:  # raised in a task: its message, not the JVM's trace
        found = re.search(r"neardup\._errors\.\w+Error: (.*)", str(e))
        if found is None:
            raise
        raise ConfigError(f"{', '.join(paths)}: {found.group(1).strip()}") from None
    finally:
        cluster.stop()


def _absolute(path: str) -> str:
    """A local ``path`` made absolute; a URL as it is."""
    return path if "://" in path else os.path.abspath(path)


def _write_clusters_and_pairs(
    decision: Decision, id_field: str | None, clusters: str | None, pairs: str | None
) -> None:
    """The clusters and pairs: what the driver holds it writes itself where pyarrow reaches
    (no query, no session); the rest Spark writes."""
    ids = [id_field] if id_field else []
    held = decision.held
    if clusters and not (held and write_held(_members(held.outcome, ids), clusters)):
        outcome = decision.outcome
        sizes = outcome.groupBy("cluster").count().where("count > 1").select("cluster")
        write_frame(outcome.join(sizes, "cluster").select(*ids, "cluster", "kept"), clusters)
    if pairs and not (held and held.pairs and write_held(_named(held.pairs), pairs)):
        assert decision.pairs is not None
        write_frame(decision.pairs.withColumnRenamed("a", "id_a").withColumnRenamed("b", "id_b"), pairs)


def _members(outcome: pa.Table, ids: list[str]) -> pa.Table:
    """The rows of ``outcome`` in clusters of several: ids, cluster, kept."""
    _, cluster, sizes = np.unique(
        outcome.column("cluster").to_numpy(), return_inverse=True, return_counts=True
    )
    return outcome.select([*ids, "cluster", "kept"]).filter(pa.array(sizes[cluster] > 1))


def _named(pairs: pa.Table) -> pa.Table:
    """``pairs`` with their ends named as the local engine's pairs name them."""
    return pairs.rename_columns(["id_a", "id_b", *pairs.column_names[2:]])


def _save_index(decision: Decision, path: str, against: Any, options: DedupOptions) -> None:
    """An index of every document's fingerprint, ids in input order (after the ``against``
    index's, added to it), as the local engine saves it; built on the driver."""
    assert decision.held is not None  # decide was told to hold it
    table = decision.held.outcome.sort_by(POSITION)  # input order
    fingerprints = fingerprints_of(table, fingerprint_columns(options.config))
    with atomic_path(path) as target:
        index_to_save(fingerprints, against, options.config, options.radius).save(target)
