"""``neardup dedup --engine spark`` on a real Spark standalone cluster on this machine: a master
and two workers in JVMs of their own (pyspark's launcher), so that the driver and the executors
share no process; the local engine's answer."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys

import numpy as np
import pyarrow.parquet as pq
import pytest
from spark_helpers import free_port, spark_process

import neardup
from neardup.planted.generator import planted_corpus


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """``spark://127.0.0.1:PORT``: a master and two workers of one core each."""
    logs = tmp_path_factory.mktemp("standalone")
    port = free_port()
    master = f"spark://127.0.0.1:{port}"
    local = ["--host", "127.0.0.1", "--webui-port", str(free_port())]
    with contextlib.ExitStack() as stack:
        head = ["org.apache.spark.deploy.master.Master", *local, "--port", str(port)]
        stack.enter_context(spark_process(logs / "master.log", port, *head))
        for n in range(2):
            at = free_port()
            worker = ["org.apache.spark.deploy.worker.Worker", master, *local, "--port", str(at)]
            worker += ["--cores", "1", "--memory", "1g", "--work-dir", str(logs / f"work{n}")]
            stack.enter_context(spark_process(logs / f"worker{n}.log", at, *worker))
        yield master


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("standalone_corpus")
    docs = planted_corpus(20, variants_per_original=2, edit_rates=(0.0, 0.02), scripts=("en",), seed=8)
    texts = [d.text for d in docs] + [docs[0].text] * 10 + [f"{docs[1].text} v{i}" for i in range(10)]
    rows = [json.dumps({"url": f"u{i}", "body": t}) + "\n" for i, t in enumerate(texts)]
    (folder / "pages.jsonl").write_text("".join(rows))
    return folder


def test_a_standalone_cluster_keeps_what_the_local_engine_keeps(cluster, corpus, tmp_path):
    """The facts and band keys made in the executors, the texts the checks need fetched from
    them (the decision on the driver: on the cluster it is the local[2] tests' and takes a
    minute here)."""
    options = ["--jaccard", "0.7"]
    argv = ["dedup", str(corpus / "pages.jsonl"), "-o", "kept.jsonl", "--clusters", "clusters.parquet"]
    argv += ["--text-field", "body", "--id-field", "url", "--engine", "spark", "--master", cluster]
    # A cluster's executors run the Python its driver names (as a user's would be told to):
    # this one, which has neardup, whichever `python3` comes first on the PATH.
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run(
        [sys.executable, "-m", "neardup", *argv, *options],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"on Spark ({cluster})" in done.stderr
    local = neardup.dedup(corpus / "pages.jsonl", text_field="body", id_field="url", jaccard=0.7)
    parts = (tmp_path / "kept.jsonl").glob("part-*")
    kept = sorted(json.loads(line)["url"] for part in parts for line in part.read_text().splitlines())
    assert kept == sorted(np.array(local.ids)[local.kept].tolist()) and not all(local.kept)
    assert pq.read_table(tmp_path / "clusters.parquet").num_rows == len(local.clusters_table())
