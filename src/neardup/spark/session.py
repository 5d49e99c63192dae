"""Where the Spark job runs: a classic Spark context (``local[*]``, ``yarn``, ``spark://``,
``k8s://``), or a Spark Connect server (``sc://host:port``: Spark 4's client, Databricks
serverless and shared clusters), which offers DataFrames only: no RDD, no SparkContext.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession

from .._system import available_memory

CONNECT_SCHEME = "sc://"


@dataclass
class Cluster:
    """What :func:`connect` opened: the classic context ``sc`` (None over Spark Connect), the
    SQL ``session`` (on a classic context made when first asked for: JSONL decided on the
    driver runs as RDD jobs, never warming up the SQL engine), and whether this job made them
    (then it stops them)."""

    sc: SparkContext | None
    owned: bool
    name: str
    _session: SparkSession | None = None

    @property
    def session(self) -> SparkSession:
        if self._session is None:
            self._session = SparkSession.builder.getOrCreate()
        return self._session

    def stop(self) -> None:
        if not self.owned:
            return
        if self.sc is not None:
            self.sc.stop()
        elif self._session is not None:
            self._session.stop()


def connect(master: str | None, app_name: str) -> Cluster:
    """The cluster at ``master``: a Spark Connect server for ``sc://...``; else a classic
    context (default: spark-submit's master, else ``local[*]``), the running one if any."""
    if master and master.startswith(CONNECT_SCHEME):
        session = SparkSession.builder.remote(master).appName(app_name).getOrCreate()
        return Cluster(None, True, f"Spark Connect ({master})", session)
    conf = SparkConf().setAppName(app_name)
    if master:
        conf.setMaster(master)
    elif "SPARK_HOME" not in os.environ and "spark.master" not in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        conf.setMaster("local[*]")  # plain `python -m neardup`, not spark-submit
    # A context the caller made is the caller's to stop (pyspark offers no public way to ask).
    owned = SparkContext._active_spark_context is None
    if owned and conf.get("spark.master", "").startswith("local"):
        # Local workers run this interpreter, which has neardup, not whichever `python3` is on
        # the PATH (pyspark's default): `.venv/bin/neardup` works without activating the venv.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        if not _driver_memory_given(conf):  # the one JVM does all the work: not Spark's 1 GiB
            conf.set("spark.driver.memory", f"{local_heap() >> 20}m")
    if owned:
        # The JVM starts (its heap fixed) and holds what spark-submit, PYSPARK_SUBMIT_ARGS and
        # spark-defaults.conf said; what this conf sets next would override them.
        SparkContext._ensure_initialized(conf=conf)
        jvm = SparkContext._jvm
        assert jvm is not None
        if jvm.java.lang.System.getProperty(_CODEC) is None:
            conf.set(_CODEC, SHUFFLE_CODEC)  # the checks' shuffle carries texts
    sc = SparkContext.getOrCreate(conf)
    return Cluster(sc, owned, f"Spark ({sc.master})")


SHUFFLE_CODEC = "zstd"
"""How a context the job makes compresses its shuffles, unless the user says: on the bench
corpus's texts zstd gives 2.05x, lz4 (Spark's default) 1.41x, in Spark's 32 KB blocks."""
_CODEC = "spark.io.compression.codec"
LOCAL_HEAP_SHARE = 4
"""A local master's JVM takes a quarter of the memory available (the Python workers, which
fingerprint, and the page cache need the rest), between 1 and 32 GiB: Spark's default 1 GiB
ran out of heap at 4M documents of ``--jaccard``."""


def local_heap() -> int:
    """Bytes of heap for a local master's JVM made by the job (:data:`LOCAL_HEAP_SHARE`)."""
    return min(max(available_memory() // LOCAL_HEAP_SHARE, 1 << 30), 32 << 30)


def _driver_memory_given(conf: SparkConf) -> bool:
    """Whether the user sized the driver: in its conf, spark-submit's arguments or the
    environment."""
    submitted = os.environ.get("PYSPARK_SUBMIT_ARGS", "")
    return (
        conf.contains("spark.driver.memory")
        or "--driver-memory" in submitted
        or "spark.driver.memory" in submitted
        or "SPARK_DRIVER_MEMORY" in os.environ
    )


def is_connect(session: Any) -> bool:
    """Whether ``session`` is a Spark Connect client's (DataFrames only)."""
    return type(session).__module__.startswith("pyspark.sql.connect")


def cores(session: SparkSession) -> int:
    """The cluster's default parallelism: the context's, or over Spark Connect (which does not
    tell it) ``spark.default.parallelism`` where set, else the SQL shuffle's partitions."""
    if not is_connect(session):
        return session.sparkContext.defaultParallelism
    given = session.conf.get("spark.default.parallelism", None) or session.conf.get(
        "spark.sql.shuffle.partitions", "200"
    )
    return int(given or 200)
