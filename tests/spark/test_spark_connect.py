"""The Spark job through Spark Connect (``--master sc://host:port``): a real Spark Connect
server started by pyspark's own launcher on 127.0.0.1, the CLI and the library run against
it as clients in processes of their own (a Connect client changes pyspark's state in its
process), each giving the local engine's answer."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from spark_helpers import free_port, spark_process

import neardup
from neardup.planted.generator import planted_corpus

SERVER = "org.apache.spark.sql.connect.service.SparkConnectServer"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``sc://127.0.0.1:PORT``: a Spark Connect server on ``local[2]``, stopped at the end."""
    port = free_port()
    log = tmp_path_factory.mktemp("connect") / "server.log"
    with spark_process(
        log, port, "--class", SERVER, "--name", "neardup tests", "--master", "local[2]",
        "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1", "--conf", "spark.ui.enabled=false",
        "--conf", "spark.sql.shuffle.partitions=4", "--driver-memory", "1g", "spark-internal",
    ):  # fmt: skip
        yield f"sc://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("connect_corpus")
    docs = planted_corpus(20, variants_per_original=2, edit_rates=(0.0, 0.02), scripts=("en",), seed=6)
    texts = [d.text for d in docs] + [docs[0].text] * 10 + [f"{docs[1].text} v{i}" for i in range(10)]
    rows = [{"url": f"u{i}", "body": t} for i, t in enumerate(texts)]
    (folder / "pages.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pq.write_table(pa.Table.from_pylist(rows), folder / "pages.parquet")
    seen = neardup.HammingIndex(
        bits=64, max_distance=5, fingerprint_config=neardup.FingerprintConfig().to_dict()
    )
    seen.add(neardup.Fingerprinter().fingerprint_batch(texts[:12]))  # pages seen before, for --against
    seen.save(folder / "seen.idx")
    return folder


def _neardup(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "neardup", *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )


def _kept(folder: Path) -> list[str]:
    """The ``url`` of each kept row of a folder of JSON-line or Parquet part files."""
    if any(folder.glob("*.parquet")):
        return pq.read_table(folder).column("url").to_pylist()
    return [
        json.loads(line)["url"] for part in folder.glob("part-*") for line in part.read_text().splitlines()
    ]


@pytest.mark.parametrize(
    "source, output, options",
    [
        ("pages.jsonl", "kept.jsonl", ["--jaccard", "0.7", "--driver-limit", "0"]),
        ("pages.parquet", "kept.parquet", ["-k", "5", "--driver-limit", "0"]),
        ("pages.parquet", "kept.parquet", ["-k", "5", "--against", "seen.idx", "--driver-limit", "0"]),
    ],
    ids=["jsonl-jaccard-on-the-cluster", "parquet-on-the-cluster", "parquet-against-on-the-cluster"],
)
def test_the_cli_through_spark_connect(server, corpus, tmp_path, source, output, options):
    common = ["--text-field", "body", "--id-field", "url", *options]
    (tmp_path / "local").mkdir()
    for folder in (tmp_path, tmp_path / "local"):  # the index as an artifact, and to the local job
        shutil.copy(corpus / "seen.idx", folder)
    done = _neardup(
        "dedup", str(corpus / source), "-o", output, "--clusters", "clusters.parquet", "--engine", "spark",
        "--master", server, *common, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"on Spark Connect ({server})" in done.stderr
    local_dir = tmp_path / "local"
    at = options.index("--driver-limit") if "--driver-limit" in options else len(options)
    local_options = ["--text-field", "body", "--id-field", "url", *options[:at], *options[at + 2 :]]
    local = _neardup("dedup", str(corpus / source), "-o", "kept.jsonl", *local_options, cwd=local_dir)
    assert local.returncode == 0, local.stderr[-3000:]
    want = [json.loads(line)["url"] for line in (local_dir / "kept.jsonl").read_text().splitlines()]
    assert sorted(_kept(tmp_path / output)) == sorted(want) and len(want) < 70
    if "--against" in options:  # the pages seen before (and their near-duplicates) are not kept
        assert not {f"u{i}" for i in range(12)} & set(want)
    clusters = pq.read_table(tmp_path / "clusters.parquet")
    assert clusters.num_rows > 0 and set(clusters.column_names) == {"url", "cluster", "kept"}


_LIBRARY = """
import json, sys
from pyspark.sql import SparkSession
from neardup.spark import dedup
spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
rows = json.loads(sys.argv[2])
df = spark.createDataFrame([(i, t) for i, t in enumerate(rows)], "id long, text string")
for options in json.loads(sys.argv[3]):
    out = dedup(df, id_col="id", **options).where("kept").select("id").toArrow()
    print(json.dumps(sorted(out.column("id").to_pylist())))
spark.stop()
"""
_RUNS = [
    {"max_distance": 5, "driver_limit": 0},
    {"jaccard": 0.7, "driver_limit": 0},
    {"max_distance": 5, "keep": "longest", "driver_limit": 1000},
]
"""The library's runs: each decided on the cluster, or on the driver."""


def test_the_library_through_spark_connect(server, corpus, tmp_path):
    texts = [json.loads(line)["body"] for line in (corpus / "pages.jsonl").read_text().splitlines()]
    done = subprocess.run(
        [sys.executable, "-c", _LIBRARY, server, json.dumps(texts), json.dumps(_RUNS)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = [json.loads(line) for line in done.stdout.splitlines()]
    table = pa.table({"id": list(range(len(texts))), "text": texts})
    for kept, options in zip(got, _RUNS, strict=True):
        same = {name: value for name, value in options.items() if name != "driver_limit"}
        local = neardup.dedup(table, id_field="id", **same)
        assert kept == np.flatnonzero(local.kept).tolist() and len(kept) < len(texts)
