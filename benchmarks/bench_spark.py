"""The near-duplicate join on Spark (``local[2]``) beside the local engine, same data, same run.

Data: N random 64-bit fingerprints with 1% planted near-duplicates (a copy with 0..k bits
flipped) and 1% exact copies, k = 3. For each N:

* local: ``HammingIndex`` build + ``pairs()`` of the distinct fingerprints (the local job's
  join);
* Spark: ``near_duplicate_pairs`` on a DataFrame of the same fingerprints, counted; its time,
  the shuffle bytes its stages wrote (from the Spark UI's REST API on 127.0.0.1), the tables of
  the plan, the largest key group;
* the ratio Spark / local, and whether both found the same pairs.

End to end (``--corpus-docs N``, default 500,000 documents, ~1.07 GB of JSONL; 0 skips it):
``bench_dedup.py``'s corpus (cached under benchmarks/results), deduplicated by the whole
command in a child process per engine, one after the other, in the same run:

* local: ``neardup dedup corpus.jsonl -o kept.jsonl --id-field id``;
* Spark: ``neardup dedup corpus.jsonl -o kept.jsonl --id-field id --engine spark --master
  local[2]`` (a folder of part files; JVM start-up included, as a user would pay it);

for each: wall time, time per stage (from the summary's ``neardup: time:`` line), documents/s
and MB/s of input (MB = 10**6 bytes); then the ratio Spark / local and whether both kept the
same set of ids. The input file is read once beforehand so that neither run pays for the disk,
and a tiny corpus is deduplicated locally first so that neither compiles numba's kernels.

    python benchmarks/bench_spark.py                     # N = 1M, then the 500k-doc corpus
    python benchmarks/bench_spark.py --sizes 1000000,10000000 --corpus-docs 0 --json out.json
    python benchmarks/bench_spark.py --sizes 0 --corpus-docs 500000   # end to end only
    python benchmarks/bench_spark.py --sizes 0 --corpus-docs 200000 --jaccard 0.8 --driver-limit 0

``--jaccard T`` runs both engines with it; ``--driver-limit N`` is Spark's (0: every step
on the cluster, the pairs checked in the tasks). Spark's shuffle bytes and the most records
one task read come from its event log.

The last stdout line is ``RESULT {json}``. Spark's time per row scales with executors; the
local engine's does not (one machine): see the scaling paragraph in the note this prints.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import bench_dedup
import numpy as np
import pyarrow as pa

from _common import finish, machine_info

K = 3
MB = 1e6
RESULTS = Path(__file__).resolve().parent / "results"


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


def read_ids(path: Path) -> np.ndarray:
    """The ``id`` of every row of a JSONL file, or of every ``part-*`` file in a folder of them
    (Spark's output), as int64; other fields are ignored."""
    import pyarrow.json as pj

    files = sorted(path.glob("part-*")) if path.is_dir() else [path]
    schema = pa.schema([("id", pa.int64())])
    parse = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    ids = [
        pj.read_json(str(f), parse_options=parse).column("id").to_numpy()
        for f in files
        if f.stat().st_size > 0  # an empty partition writes an empty part file
    ]
    return np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)


def _engine_row(
    engine: str, r: dict[str, Any], docs: int, input_bytes: int, ids: np.ndarray
) -> dict[str, Any]:
    stages = dict(r["stages"])
    reported_total = stages.pop("total", None)  # the Spark summary's whole command, not a stage
    # Outside every stage: the child's start-up and imports, and on Spark the JVM's start-up and
    # the read of the inputs' schema (spark.read.json infers it from a pass over the files).
    unstaged = r["process_s"] - sum(stages.values())
    return {
        "engine": engine,
        "process_s": r["process_s"],
        "in_process_s": r.get("in_process_s"),
        "reported_total_s": reported_total,
        "stages": stages,
        "unstaged_s": unstaged,
        "user_s": r.get("user_s"),
        "sys_s": r.get("sys_s"),
        "peak_rss_mib": r["peak_rss_kib"] / 1024 if r.get("peak_rss_kib") else None,
        "documents": r.get("documents"),
        "duplicates": r.get("duplicates"),
        "kept_rows": int(ids.size),
        "kept_distinct_ids": int(np.unique(ids).size),
        "docs_s": docs / r["process_s"],
        "mb_s": input_bytes / MB / r["process_s"],
        "stderr_tail": r["stderr"].strip().splitlines()[-6:],
        **(
            {"rusage_note": "user_s, sys_s and peak_rss_mib are the Python driver's only, not the JVM's"}
            if engine == "spark"
            else {}
        ),
    }


def event_log_figures(folder: Path) -> dict[str, Any]:
    """From Spark's event log in ``folder``: the shuffle bytes every task wrote, the most
    records one task read (from a shuffle or an input), over the whole application, and the
    stages that wrote most and that ran longest (the seconds of their tasks, all cores)."""
    written, most, most_stage = 0, 0, -1
    by_stage: dict[int, int] = {}
    busy: dict[int, float] = {}
    names: dict[int, str] = {}
    for log in (path for path in folder.rglob("*") if path.is_file()):  # Spark 4 rolls its logs
        with open(log) as f:
            for line in f:
                if '"SparkListenerJobStart"' in line:
                    job = json.loads(line)
                    label = (job.get("Properties") or {}).get("spark.job.description")
                    for stage in job["Stage IDs"]:
                        names.setdefault(
                            stage, f"stage {stage} of job {job['Job ID']}" + (f" ({label})" if label else "")
                        )
                if '"SparkListenerTaskEnd"' not in line:
                    continue
                event = json.loads(line)
                metrics = event.get("Task Metrics") or {}
                bytes_written = metrics.get("Shuffle Write Metrics", {}).get("Shuffle Bytes Written", 0)
                written += bytes_written
                stage_id = event["Stage ID"]
                by_stage[stage_id] = by_stage.get(stage_id, 0) + bytes_written
                busy[stage_id] = busy.get(stage_id, 0.0) + metrics.get("Executor Run Time", 0) / 1e3
                read = metrics.get("Shuffle Read Metrics", {}).get("Total Records Read", 0)
                read += metrics.get("Input Metrics", {}).get("Records Read", 0)
                if read > most:
                    most, most_stage = read, event["Stage ID"]
    # where the shuffle goes: the stages that wrote most (by job, and its description if set)
    biggest = sorted(by_stage.items(), key=lambda item: -item[1])[:8]
    stages = [{"stage": names.get(stage, str(stage)), "shuffle_bytes": b} for stage, b in biggest if b]
    longest = [
        {"stage": names.get(stage, str(stage)), "seconds": seconds}
        for stage, seconds in sorted(busy.items(), key=lambda item: -item[1])[:8]
    ]
    return {
        "shuffle_bytes": written,
        "largest_task_records": most,
        "largest_task_stage": names.get(most_stage, str(most_stage)),
        "shuffle_by_stage": stages,
        "task_seconds_by_stage": longest,
    }


def end_to_end(docs: int, master: str, checks: list[str], driver_limit: int | None) -> dict[str, Any]:
    """``neardup dedup`` on bench_dedup's JSONL corpus of ``docs`` documents, the local engine and
    then Spark on ``master``, each in a child process, both with the options ``checks`` (Spark
    also with ``--driver-limit``); see the module's docstring."""
    print(f"corpus of {docs:,} docs (seed 0) in {RESULTS} ...", flush=True)
    folder, meta, cached = bench_dedup.corpus(docs, 0, RESULTS)
    tiny, _, _ = bench_dedup.corpus(bench_dedup.TINY_DOCS, 0, RESULTS)
    corpus_path = folder / "corpus.jsonl"
    input_bytes = meta["jsonl_bytes"]
    print(
        f"   {'cached' if cached else 'generated in {:.1f} s'.format(meta['generate_s'])}: JSONL "
        f"{input_bytes / MB:,.1f} MB",
        flush=True,
    )
    with open(corpus_path, "rb") as f:  # into the page cache: neither run pays for the disk
        while f.read(1 << 24):
            pass
    env = dict(os.environ)
    RESULTS.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="spark-e2e-", dir=RESULTS))
    events = work / "events"
    events.mkdir()
    spark_env = dict(
        env,
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_SUBMIT_ARGS=(
            f"--conf spark.ui.showConsoleProgress=false --conf spark.eventLog.enabled=true "
            f"--conf spark.eventLog.compress=false "
            f"--conf spark.eventLog.dir={events.as_uri()} pyspark-shell"
        ),
    )
    out: dict[str, Any] = {
        "docs": docs,
        "input_bytes": input_bytes,
        "corpus": str(corpus_path),
        "corpus_cached": cached,
        "master": master,
        "options": checks,
        "driver_limit": driver_limit,
        "mb_unit_bytes": int(MB),
    }
    try:
        # numba's kernels compiled (or loaded) once, so that neither timed run compiles them.
        bench_dedup.run_dedup(
            ["dedup", str(tiny / "corpus.jsonl"), "-o", str(work / "warm.jsonl"), "--id-field", "id"],
            env,
            work / "warm.json",
        )
        on_spark = ["--engine", "spark", "--master", master]
        if driver_limit is not None:
            on_spark += ["--driver-limit", str(driver_limit)]
        runs = {
            "local": ([], env, work / "kept_local.jsonl"),
            "spark": (on_spark, spark_env, work / "kept_spark.jsonl"),
        }
        ids: dict[str, np.ndarray] = {}
        for engine, (extra, child_env, kept) in runs.items():
            argv = ["dedup", str(corpus_path), "-o", str(kept), "--id-field", "id", *checks, *extra]
            print(f"   neardup {' '.join(argv)}", flush=True)
            r = bench_dedup.run_dedup(argv, child_env, work / f"report_{engine}.json")
            ids[engine] = read_ids(kept)
            out[engine] = _engine_row(engine, r, docs, input_bytes, ids[engine])
        figures = event_log_figures(events)
        out["spark"].update(figures, shuffle_bytes_per_doc=figures["shuffle_bytes"] / docs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    local, spark = (np.unique(ids[e]) for e in ("local", "spark"))
    only_local = np.setdiff1d(local, spark, assume_unique=True)
    only_spark = np.setdiff1d(spark, local, assume_unique=True)
    out["same_kept_ids"] = bool(
        only_local.size == 0 and only_spark.size == 0 and ids["local"].size == ids["spark"].size
    )
    out["kept_only_local"] = int(only_local.size)
    out["kept_only_spark"] = int(only_spark.size)
    out["kept_only_local_examples"] = only_local[:10].tolist()
    out["kept_only_spark_examples"] = only_spark[:10].tolist()
    out["ratio"] = out["spark"]["process_s"] / out["local"]["process_s"]
    return out


def _stages_text(stages: dict[str, float]) -> str:
    return ", ".join(f"{name} {seconds:.2f} s" for name, seconds in stages.items()) or "no stages"


def print_end_to_end(e: dict[str, Any]) -> None:
    for engine in ("local", "spark"):
        r = e[engine]
        label = "local" if engine == "local" else f"Spark {e['master']}"
        print(
            f"end to end, {label}: {r['process_s']:.2f} s, {r['docs_s']:,.0f} docs/s, "
            f"{r['mb_s']:.1f} MB/s, kept {r['kept_rows']:,} ({_stages_text(r['stages'])}; "
            f"outside the stages {r['unstaged_s']:.2f} s)",
            flush=True,
        )
    spark = e["spark"]
    print(
        f"end to end, Spark's shuffle: {spark['shuffle_bytes'] / 2**20:,.0f} MiB "
        f"({spark['shuffle_bytes_per_doc']:.0f} B a document); the largest task read "
        f"{spark['largest_task_records']:,} records ({spark.get('largest_task_stage', '?')})",
        flush=True,
    )
    for stage in spark.get("shuffle_by_stage", []):
        print(
            f"   shuffle {stage['shuffle_bytes'] / e['docs']:,.0f} B a document by {stage['stage']}",
            flush=True,
        )
    for stage in spark.get("task_seconds_by_stage", []):
        print(f"   tasks ran {stage['seconds']:,.1f} s in {stage['stage']}", flush=True)
    print(
        f"end to end, Spark / local: {e['ratio']:.2f}x on {e['docs']:,} docs "
        f"({e['input_bytes'] / MB:,.1f} MB); same kept ids: {e['same_kept_ids']}"
        + (
            ""
            if e["same_kept_ids"]
            else f" ({e['kept_only_local']:,} kept only locally, {e['kept_only_spark']:,} only on Spark)"
        ),
        flush=True,
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", default="1000000", help="N of the join part, comma-separated; '' or 0 skips it"
    )
    parser.add_argument(
        "--corpus-docs",
        type=int,
        default=500_000,
        metavar="N",
        help="documents of the end-to-end corpus (default 500,000, ~1.07 GB of JSONL); 0 skips it",
    )
    parser.add_argument("--master", default="local[2]")
    parser.add_argument(
        "--jaccard", type=float, metavar="T", help="end to end with --jaccard T on both engines"
    )
    parser.add_argument(
        "--driver-limit",
        type=int,
        metavar="N",
        help="end to end: Spark's --driver-limit (0: the whole decision on the cluster)",
    )
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip() and int(s) > 0]
    except ValueError:
        parser.error(f"--sizes: not a comma-separated list of integers: {args.sizes!r}")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    started = time.perf_counter()
    results: dict[str, Any] = {
        "benchmark": "spark",
        "k": K,
        "master": args.master,
        "machine": machine_info(("pyspark", "pyarrow")),
    }
    results["runs"] = []
    if sizes:
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
        try:
            bench(spark, 20_000)  # warm: the JVM's code and the kernels
            for n in sizes:
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
            spark.stop()  # before the end-to-end runs: its JVM would compete with them
    if args.corpus_docs > 0:
        checks = ["--jaccard", str(args.jaccard)] if args.jaccard is not None else []
        results["end_to_end"] = end_to_end(args.corpus_docs, args.master, checks, args.driver_limit)
        print_end_to_end(results["end_to_end"])
    return finish(results, started, args.json, lambda _: None)


if __name__ == "__main__":
    main()
