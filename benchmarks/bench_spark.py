"""The near-duplicate join on Spark (``local[2]``) beside the local engine, same data, same run.

Data: N random 64-bit fingerprints with 1% planted near-duplicates (a copy with 0..k bits
flipped) and 1% exact copies, k = 3. For each N:

* local: ``HammingIndex`` build + ``pairs()`` of the distinct fingerprints (the local job's
  join);
* Spark: ``near_duplicate_pairs`` on a DataFrame of the same fingerprints, counted; its time,
  the shuffle bytes its stages wrote (from the Spark UI's REST API on 127.0.0.1), the tables of
  the plan, the largest key group;
* the ratio Spark / local, and whether both found the same pairs.

    python benchmarks/bench_spark.py                     # N = 1M
    python benchmarks/bench_spark.py --sizes 1000000,10000000 --json out.json

The last stdout line is ``RESULT {json}``. Spark's time per row scales with executors; the
local engine's does not (one machine): see the scaling paragraph in the note this prints.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.request
from typing import Any

import numpy as np
import pyarrow as pa

from _common import finish, machine_info

K = 3


def fingerprints(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    planted = rng.choice(n, size=n // 50, replace=False)
    source, target = planted[: n // 100], planted[n // 100 :]
    flips = np.zeros(source.size, dtype=np.uint64)
    for _ in range(K):  # up to k bits (a bit drawn twice cancels)
        flips ^= np.where(
            rng.random(source.size) < 0.7,
            np.uint64(1) << rng.integers(0, 64, source.size).astype(np.uint64),
            0,
        ).astype(np.uint64)
    fps[target[: source.size]] = fps[source] ^ flips
    copies = rng.choice(n, size=n // 100, replace=False)
    fps[copies] = fps[rng.integers(0, n, size=copies.size)]
    return fps


def shuffle_bytes(spark: Any) -> int:
    """Shuffle bytes written by every stage so far, from the UI's REST API."""
    app = spark.sparkContext.applicationId
    url = spark.sparkContext.uiWebUrl
    if not url:
        return -1
    with urllib.request.urlopen(f"{url}/api/v1/applications/{app}/stages", timeout=30) as response:
        stages = json.load(response)
    return int(sum(stage.get("shuffleWriteBytes", 0) for stage in stages))


def largest_group(fps: np.ndarray, plan: Any) -> int:
    """The most distinct fingerprints sharing one table's key."""
    from neardup.spark.join import _kept_masks

    distinct = np.unique(fps)
    most = 0
    for (mask,) in _kept_masks(plan):
        _, counts = np.unique(distinct & np.uint64(mask % 2**64), return_counts=True)
        most = max(most, int(counts.max()))
    return most


def bench(spark: Any, n: int) -> dict[str, Any]:
    import neardup
    from neardup.spark import near_duplicate_pairs
    from neardup.spark.join import spark_plan

    fps = fingerprints(n)
    out: dict[str, Any] = {"n": n, "distinct": int(np.unique(fps).size)}
    t = time.perf_counter()
    index = neardup.HammingIndex(bits=64, max_distance=K)
    index.add(np.unique(fps))
    index.compact()
    i, _, _ = index.pairs()
    out["local_s"] = time.perf_counter() - t
    out["local_pairs"] = len(i)
    t = time.perf_counter()
    df = spark.createDataFrame(pa.table({"fingerprint": fps.view(np.int64)})).repartition(8)
    df = df.localCheckpoint()
    out["spark_load_s"] = time.perf_counter() - t
    before = shuffle_bytes(spark)
    t = time.perf_counter()
    out["spark_pairs"] = near_duplicate_pairs(df, K).count()
    out["spark_join_s"] = time.perf_counter() - t
    out["shuffle_bytes"] = shuffle_bytes(spark) - before
    plan = spark_plan(64, K, out["distinct"])
    out["tables"] = plan.num_tables
    out["largest_key_group"] = largest_group(fps, plan)
    out["ratio"] = out["spark_join_s"] / out["local_s"]
    out["equal"] = out["spark_pairs"] == out["local_pairs"]
    out["shuffle_bytes_per_fingerprint"] = out["shuffle_bytes"] / n
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000000", help="N, comma-separated")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(args.master)
        .config("spark.driver.memory", "8g")
        .config("spark.sql.shuffle.partitions", "16")
        .config("spark.ui.host", "127.0.0.1")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    started = time.perf_counter()
    results: dict[str, Any] = {
        "benchmark": "spark",
        "k": K,
        "master": args.master,
        "machine": machine_info(("pyspark",)),
    }
    results["runs"] = []
    try:
        bench(spark, 20_000)  # warm: the JVM's code and the kernels
        for n in (int(s) for s in args.sizes.split(",")):
            r = bench(spark, n)
            results["runs"].append(r)
            print(
                f"N={n:,}: local {r['local_s']:.2f} s, Spark join {r['spark_join_s']:.1f} s "
                f"({r['ratio']:.0f}x), {r['spark_pairs']:,} pairs (equal: {r['equal']}), shuffle "
                f"{r['shuffle_bytes'] / 2**20:.0f} MiB ({r['shuffle_bytes_per_fingerprint']:.0f} B per "
                f"fingerprint, {r['tables']} tables), largest key group {r['largest_key_group']}",
                flush=True,
            )
    finally:
        spark.stop()
    return finish(results, started, args.json, lambda _: None)


if __name__ == "__main__":
    main()
