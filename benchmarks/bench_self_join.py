"""The self-join of N fingerprints, one table at a time (``neardup.self_join``, what ``neardup
pairs`` runs) against a HammingIndex holding all its tables (``add``, then ``iter_pairs``),
side by side in one run.

Data: ``bench_index.py``'s, made from the seed in each child alike: N random 64-bit
fingerprints, 1% of them overwritten by a copy of another with d bits flipped (d in 0..k for
90%, k + 1 for the rest, which must not be found). Both joins use the plan ``auto`` chooses for
N. Each runs in a child process of its own, so that its peak memory is its own:

* ``peak_bytes_per_fp``: the peak RSS (VmHWM, reset once the data is made) less the RSS before
  the data, over N: the fingerprints themselves (8 bytes each) included;
* ``seconds``: the join (for the index, ``add`` and its table build included);
* ``pairs``, ``recall`` of the planted pairs within k (must be 1.0), ``planted_beyond_k``
  returned (must be 0), and ``wrong`` pairs (not planted and farther than k by brute force;
  must be 0).

    python benchmarks/bench_self_join.py --quick                      # N = 1M, seconds
    python benchmarks/bench_self_join.py --sizes 10000000,100000000   # minutes; ~11 GB at 100M
    python benchmarks/bench_self_join.py --out-of-core --memory 1G --sizes 10000000,100000000

``--out-of-core`` sets the out-of-core join (``memory=``, the fingerprints in a memory-mapped
``.npy``) beside the in-memory one; it also reports the peak of the process's own memory
(RssAnon, sampled), without the mapped file's pages, and each table's time and bytes written.

``--resumable DIR`` runs the out-of-core join alone at a size past memory (a billion), in a
run that may stop and start again: the fingerprints are made in chunks of 10M straight into
``DIR/fps.npy`` (the same data as ``bench_index.py``'s, by rule: uniform random, then 1% of
the rows overwritten by a copy of another with d bits flipped, d in 0..k for 90% and k + 1 for
the rest; the planted pairs in ``DIR/planted.npz``), each table's pairs are saved to
``DIR/table-T.npy`` with its time, bytes written and peak memory in ``DIR/progress.json`` as it
ends, and the same command again resumes from the first table not done
(``self_join(first_table=)``). The join's work folder is ``--work-dir`` (default ``DIR``).
Peak memory: the process's own (RssAnon, sampled) and VmHWM with the mapped file's pages.

    python benchmarks/bench_self_join.py --resumable /data/b1 --sizes 1000000000 --memory 6G --plan balanced

``--cli DIR`` runs ``neardup pairs DIR/fps.npy -k K --memory M --work-dir DIR/work`` as a user
runs it, in a child process, on the same data as ``--resumable`` (made once into ``DIR``; the
first of ``--sizes``), then the same command without ``--memory`` (in memory): each one's wall
time, peak resident memory (VmHWM at exit: the fingerprint file's mapped pages included, as
``/usr/bin/time -v`` reports it), and the sampled peaks of its own memory (RssAnon) and of
the mapped file's pages (RssFile). The pairs written are read back: every planted pair within
k found, none at k + 1, none beyond k, and the same pairs from both runs. ``--no-in-memory``
skips the second run.

    python benchmarks/bench_self_join.py --cli /tmp/pairs100m --sizes 100000000 --memory 1G

``--calibrate`` fits what ``self_join``'s "auto" weighs (``index/self_join.py``: ``ROW_NS`` per
fingerprint and table, ``CHECK_NS`` per candidate pair of a key group) by least squares over
in-memory joins of N (``--sizes``, default 10M) random fingerprints with 4 to 7 blocks at k = 3
(4 to 35 tables; the fewer the blocks, the larger the key groups), each candidate pair counted.

The last stdout line is ``RESULT {json}``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import bench_index
import numpy as np

from _common import finish, machine_info, reset_peak, status_kb
from neardup.cli.options import byte_size

ENGINES = ("self_join", "index", "out_of_core")


def child(engine: str, n: int, k: int, seed: int, memory: int, work_dir: str | None) -> dict[str, Any]:
    """One join in this process: its time, memory and pairs, checked."""
    import tempfile

    import neardup
    from neardup.index.plan import IndexPlan

    bench_index.K = k
    list(neardup.self_join(np.arange(4, dtype=np.uint64), k))  # kernels loaded before measuring
    before = status_kb("VmRSS") or 0
    before_anon = status_kb("RssAnon") or 0
    data = bench_index.make_data(n, 0.01, seed)
    fps = data["fps"]
    plan = IndexPlan.choose(64, k, "auto", n)
    tables: list[tuple[int, int, float, int]] = []
    with tempfile.TemporaryDirectory(dir=work_dir) as folder:
        if engine == "out_of_core":  # the fingerprints as a file, read as the join goes
            np.save(f"{folder}/fps.npy", fps)
            del fps, data["fps"]
            fps = np.load(f"{folder}/fps.npy", mmap_mode="r")
        reset_peak()
        anon = _PeakAnon()
        started = time.perf_counter()
        if engine == "self_join":
            chunks = neardup.self_join(fps, k, plan=plan)
        elif engine == "out_of_core":
            chunks = neardup.self_join(
                fps, k, plan=plan, memory=memory, work_dir=folder, on_table=lambda *t: tables.append(t)
            )
        else:
            index = neardup.HammingIndex(max_distance=k, plan=plan)
            index.add(fps)
            chunks = index.iter_pairs()
        found = [bench_index.pair_keys(i, j, n) for i, j, _ in chunks]
        seconds = time.perf_counter() - started
        peak = status_kb("VmHWM") or 0
        peak_anon = anon.stop()
    keys = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
    planted = bench_index.pair_keys(data["a"], data["b"], n)
    within = data["d"] <= k
    others = keys[~np.isin(keys, planted)]
    a, b = others // n, others % n
    return {
        "engine": engine,
        "n": n,
        "k": k,
        "plan": plan.describe(n),
        "seconds": round(seconds, 3),
        "peak_bytes_per_fp": round((peak - before) * 1024 / n, 1),
        "pairs": len(keys),
        "distinct_pairs": len(np.unique(keys)),
        "recall": float(np.isin(planted[within], keys).mean()),
        "planted_beyond_k": int(np.isin(planted[~within], keys).sum()),
        "wrong": int((bench_index.popcount(np.asarray(fps[a]) ^ np.asarray(fps[b])) > k).sum()),
        "peak_anonymous_bytes_per_fp": round((peak_anon - before_anon) * 1024 / n, 1),
        "memory_given": memory if engine == "out_of_core" else None,
        "tables": [{"seconds": round(s, 2), "bytes_written": w} for _, _, s, w in tables],
    }


class _PeakAnon:
    """The peak of RssAnon (the process's own memory, without the pages of the files it maps,
    which VmHWM counts and the kernel may drop), sampled every 20 ms on a thread."""

    def __init__(self) -> None:
        import threading

        self.peak = status_kb("RssAnon") or 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.wait(0.02):
            self.peak = max(self.peak, status_kb("RssAnon") or 0)

    def stop(self) -> int:
        self._done.set()
        self._thread.join()
        return self.peak


def make_resumable_data(folder: Path, n: int, k: int, seed: int, chunk: int = 10_000_000) -> None:
    """``folder/fps.npy`` (uint64, n) and ``folder/planted.npz`` (rows a < b, distances d), made
    in chunks; skipped when both are there (written last, so a half-made set is made again)."""
    from numpy.lib.format import open_memmap

    if (folder / "planted.npz").exists():
        return
    bench_index.K = k
    rng = np.random.default_rng([seed, n])
    fps = open_memmap(folder / "fps.npy", mode="w+", dtype=np.uint64, shape=(n,))
    for lo in range(0, n, chunk):
        fps[lo : lo + chunk] = bench_index.random_fps(rng, min(chunk, n - lo), 64)
    p = max(1, n // 100)
    chosen = rng.choice(n, size=2 * p, replace=False).astype(np.int64)
    src, dst = chosen[:p], chosen[p:]
    d = np.where(rng.random(p) < 0.9, rng.integers(0, k + 1, size=p), k + 1).astype(np.int64)
    order = np.argsort(dst)  # write the copies in file order
    fps[dst[order]] = fps[src[order]] ^ bench_index.flip_masks(rng, d[order]).reshape(-1)
    fps.flush()
    del fps
    np.savez(folder / "planted.npz.tmp.npz", a=np.minimum(src, dst), b=np.maximum(src, dst), d=d)
    (folder / "planted.npz.tmp.npz").rename(folder / "planted.npz")


def resumable(args: argparse.Namespace) -> dict[str, Any]:
    """The out-of-core join of ``--sizes``' first N, table by table, resumable (see above)."""
    import neardup
    from neardup.index.plan import IndexPlan

    started = time.perf_counter()
    folder = Path(args.resumable)
    folder.mkdir(parents=True, exist_ok=True)
    n, k = int(args.sizes.split(",")[0]), args.max_distance
    progress_path = folder / "progress.json"
    progress = json.loads(progress_path.read_text()) if progress_path.exists() else {"tables": []}
    spec = {"n": n, "k": k, "seed": args.seed, "plan": args.plan}
    if progress.get("spec", spec) != spec:
        raise SystemExit(f"{folder} holds a run of {progress['spec']}, not {spec}: give another folder")
    t = time.perf_counter()
    make_resumable_data(folder, n, k, args.seed)
    data_s = time.perf_counter() - t
    fps = np.load(folder / "fps.npy", mmap_mode="r")
    plan = IndexPlan.choose(64, k, args.plan, n)
    done = len(progress["tables"])
    print(
        f"N = {n:,}, k = {k}, {plan.describe(n)}; memory {args.memory / 2**30:.1f} GiB; "
        f"data {data_s:.1f} s; tables done before: {done} of {plan.num_tables}",
        flush=True,
    )
    list(neardup.self_join(np.arange(4, dtype=np.uint64), k))  # kernels loaded before measuring
    found: list[np.ndarray] = []
    anon = _PeakAnon()
    reset_peak()
    table_started = time.perf_counter()

    def on_table(table: int, tables: int, seconds: float, written: int) -> None:
        nonlocal table_started
        keys = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
        np.save(folder / f"table-{table}.npy", keys)
        found.clear()
        progress["spec"] = spec
        progress["tables"].append(
            {
                "table": table,
                "seconds": round(time.perf_counter() - table_started, 2),
                "join_seconds": round(seconds, 2),
                "bytes_written": written,
                "pairs": len(keys),
                "peak_anonymous_mib": round(anon.peak / 1024, 1),
                "peak_vmhwm_mib": round((status_kb("VmHWM") or 0) / 1024, 1),
            }
        )
        tmp = progress_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(progress, indent=1))
        os.replace(tmp, progress_path)
        print(f"   table {table + 1} of {tables}: {progress['tables'][-1]}", flush=True)
        table_started = time.perf_counter()

    chunks = neardup.self_join(
        fps, k, plan=args.plan, memory=args.memory, work_dir=args.work_dir or folder,
        on_table=on_table, first_table=done,
    )  # fmt: skip
    for i, j, _ in chunks:
        found.append(i * n + j)
    anon.stop()
    keys = np.concatenate([np.load(folder / f"table-{t}.npy") for t in range(plan.num_tables)])
    planted = np.load(folder / "planted.npz")
    planted_keys = planted["a"] * n + planted["b"]
    within = planted["d"] <= k
    others = keys[~np.isin(keys, planted_keys)]
    a, b = others // n, others % n
    tables = progress["tables"]
    results = {
        "benchmark": "self_join-resumable",
        "machine": machine_info(),
        **spec,
        "describe": plan.describe(n),
        "memory_given": args.memory,
        "data_seconds_this_run": round(data_s, 1),
        "join_seconds": round(sum(t["seconds"] for t in tables), 1),
        "tables": tables,
        "bytes_written": sum(t["bytes_written"] for t in tables),
        "peak_anonymous_mib": max(t["peak_anonymous_mib"] for t in tables),
        "peak_vmhwm_mib": max(t["peak_vmhwm_mib"] for t in tables),
        "pairs": len(keys),
        "distinct_pairs": len(np.unique(keys)),
        "planted_within_k": int(within.sum()),
        "recall": float(np.isin(planted_keys[within], keys).mean()),
        "planted_beyond_k": int(np.isin(planted_keys[~within], keys).sum()),
        "other_pairs": len(others),
        "wrong": int((bench_index.popcount(np.asarray(fps[a]) ^ np.asarray(fps[b])) > k).sum()),
        "expected_random_pairs": bench_index.expected_random_pairs(n),
    }
    return finish(results, started, args.json, _resumable_footer)


def _resumable_footer(r: dict[str, Any]) -> None:
    times = [t["seconds"] for t in r["tables"]]
    print(
        f"\nN = {r['n']:,}, k = {r['k']}: {len(times)} tables in {r['join_seconds'] / 60:.1f} min "
        f"({min(times):.0f}-{max(times):.0f} s each), {r['bytes_written'] / 2**30:,.1f} GiB written; "
        f"peak memory {r['peak_anonymous_mib'] / 1024:.2f} GiB of its own "
        f"({r['peak_vmhwm_mib'] / 1024:.2f} GiB with the mapped file's pages) in a budget of "
        f"{r['memory_given'] / 2**30:.1f} GiB"
    )
    print(
        f"pairs {r['pairs']:,} ({r['distinct_pairs']:,} distinct); planted within k found: "
        f"{r['recall']:.6f} of {r['planted_within_k']:,}; planted at k + 1 returned: "
        f"{r['planted_beyond_k']}; other pairs {r['other_pairs']:,} (random pairs expected "
        f"{r['expected_random_pairs']:,.0f}), beyond k: {r['wrong']}"
    )


# VmHWM, not ru_maxrss: Linux carries the parent's RSS across exec into the child's ru_maxrss
# (see bench_fingerprint.py); both are reported. The sampler adds the split of the peak into the
# process's own pages (RssAnon) and the mapped files' (RssFile), each its own peak.
_CLI_CHILD = r"""
import json, resource, sys, threading, time
started = time.perf_counter()
def status():
    with open("/proc/self/status") as f:
        fields = [line.split() for line in f if line.startswith(("VmHWM", "RssAnon", "RssFile"))]
    return {name.rstrip(":"): int(kib) for name, kib, _ in fields}
peaks, done = {"RssAnon": 0, "RssFile": 0}, threading.Event()
def sample():
    while not done.wait(0.02):
        now = status()
        for field in peaks:
            peaks[field] = max(peaks[field], now[field])
threading.Thread(target=sample, daemon=True).start()
from neardup.cli import main
code = main(sys.argv[2:])
done.set()
usage = resource.getrusage(resource.RUSAGE_SELF)
with open(sys.argv[1], "w") as f:
    json.dump({"status": code, "in_process_s": time.perf_counter() - started,
               "peak_rss_kib": status()["VmHWM"], "peak_anon_kib": peaks["RssAnon"],
               "peak_file_kib": peaks["RssFile"], "user_s": usage.ru_utime, "sys_s": usage.ru_stime}, f)
sys.exit(code)
"""


def run_pairs(argv: list[str], report: Path) -> dict[str, Any]:
    """``neardup pairs ARGV`` in a child process: its figures (see ``_CLI_CHILD``)."""
    import shlex

    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", _CLI_CHILD, str(report), "pairs", *argv])
    _, status, usage = os.wait4(child.pid, 0)  # /usr/bin/time -v's figure
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"neardup pairs {shlex.join(argv)} failed with status {child.returncode}")
    out = json.loads(report.read_text())
    report.unlink()
    out.update(seconds=round(time.perf_counter() - started, 2), ru_maxrss_kib=usage.ru_maxrss)
    return out


def read_pair_keys(path: Path, n: int) -> np.ndarray:
    """The pairs of a ``neardup pairs`` output (rows named by their numbers) as keys i * n + j,
    sorted."""
    from pyarrow import csv

    table = csv.read_csv(
        path,
        read_options=csv.ReadOptions(skip_rows=1, column_names=["i", "j", "d"]),
        parse_options=csv.ParseOptions(delimiter="\t"),
        convert_options=csv.ConvertOptions(column_types={"i": "int64", "j": "int64", "d": "int64"}),
    )
    i, j = table["i"].to_numpy(), table["j"].to_numpy()
    assert (i < j).all(), "a pair not as (smaller row, larger row)"
    return np.sort(i * n + j)


def cli(args: argparse.Namespace) -> dict[str, Any]:
    """``neardup pairs`` of ``--sizes``' first N in ``--memory``, as a user runs it (see above)."""
    started = time.perf_counter()
    folder = Path(args.cli)
    folder.mkdir(parents=True, exist_ok=True)
    n, k = int(float(args.sizes.split(",")[0])), args.max_distance
    spec = {"n": n, "k": k, "seed": args.seed}
    spec_path = folder / "data.json"
    if spec_path.exists() and json.loads(spec_path.read_text()) != spec:
        raise SystemExit(
            f"{folder} holds the data of {spec_path.read_text()}, not {spec}: give another folder"
        )
    spec_path.write_text(json.dumps(spec))
    t = time.perf_counter()
    make_resumable_data(folder, n, k, args.seed)
    data_s = time.perf_counter() - t
    warm = folder / "warm.npy"  # the kernels compiled (or loaded) before any run is timed
    np.save(warm, np.random.default_rng(0).integers(0, 2**64, size=20_000, dtype=np.uint64))
    for extra in (["--memory", "200K", "--work-dir", str(folder)], []):
        run_pairs([str(warm), "-k", str(k), "-o", str(folder / "warm.tsv"), *extra], folder / "run.json")
    warm.unlink()
    (folder / "warm.tsv").unlink()
    work = Path(args.work_dir) if args.work_dir else folder / "work"
    work.mkdir(exist_ok=True)
    memory = next(
        f"{args.memory // f}{u}"
        for u, f in (("G", 2**30), ("M", 2**20), ("K", 1024), ("", 1))
        if args.memory % f == 0
    )  # as a user writes it
    runs = {"memory": ["--memory", memory, "--work-dir", str(work)]}
    if not args.no_in_memory:
        runs["in_memory"] = []
    print(f"N = {n:,}, k = {k}; data {data_s:.1f} s", flush=True)
    results: dict[str, Any] = {
        "benchmark": "self_join-cli", "machine": machine_info(), **spec,
        "memory_given": args.memory, "data_seconds": round(data_s, 1), "runs": {},
    }  # fmt: skip
    planted = np.load(folder / "planted.npz")
    planted_keys = planted["a"] * n + planted["b"]
    within = planted["d"] <= k
    fps = np.load(folder / "fps.npy", mmap_mode="r")
    keys: dict[str, np.ndarray] = {}
    for label, extra in runs.items():
        output = folder / f"pairs-{label}.tsv"
        argv = [str(folder / "fps.npy"), "-k", str(k), *extra, "-o", str(output)]
        r = run_pairs(argv, folder / "run.json")
        r["command"] = "neardup pairs " + " ".join(argv)
        keys[label] = found = read_pair_keys(output, n)
        output.unlink()
        others = found[~np.isin(found, planted_keys)]
        a, b = others // n, others % n
        r.update(
            pairs=len(found),
            distinct_pairs=len(np.unique(found)),
            recall=float(np.isin(planted_keys[within], found).mean()),
            planted_beyond_k=int(np.isin(planted_keys[~within], found).sum()),
            other_pairs=len(others),
            wrong=int((bench_index.popcount(np.asarray(fps[a]) ^ np.asarray(fps[b])) > k).sum()),
        )
        results["runs"][label] = r
        print(
            f"   {r['command']}\n   {r['seconds']:.1f} s, peak RSS {r['peak_rss_kib'] / 2**20:.2f} GiB "
            f"(ru_maxrss {r['ru_maxrss_kib'] / 2**20:.2f}; own {r['peak_anon_kib'] / 2**20:.2f}, mapped "
            f"files {r['peak_file_kib'] / 2**20:.2f}), {r['pairs']:,} pairs",
            flush=True,
        )
    if "in_memory" in keys:
        results["same_pairs"] = bool(np.array_equal(keys["memory"], keys["in_memory"]))
    results["planted_within_k"] = int(within.sum())
    return finish(results, started, args.json, _cli_footer)


def _cli_footer(r: dict[str, Any]) -> None:
    run = r["runs"]["memory"]
    peak = run["peak_rss_kib"] * 1024
    print(
        f"\nN = {r['n']:,}, k = {r['k']}, --memory {r['memory_given'] / 2**30:.2f} GiB: "
        f"{run['seconds']:.1f} s, "
        f"peak RSS {peak / 2**30:.2f} GiB = the budget + {(peak - r['memory_given']) / 2**30:.2f} GiB; "
        f"planted within k found {run['recall']:.6f} of {r['planted_within_k']:,}, at k + 1 returned "
        f"{run['planted_beyond_k']}, beyond k {run['wrong']}, other pairs {run['other_pairs']:,}"
    )
    if "in_memory" in r["runs"]:
        one = r["runs"]["in_memory"]
        print(
            f"in memory: {one['seconds']:.1f} s, peak RSS {one['peak_rss_kib'] / 2**20:.2f} GiB; "
            f"same pairs: {r['same_pairs']}"
        )


def calibrate(n: int, seed: int) -> dict[str, Any]:
    """Least-squares ``ROW_NS`` and ``CHECK_NS`` from in-memory self-joins of ``n`` random
    fingerprints with 4 to 7 blocks (k = 3), best of 2 each."""
    import neardup
    from neardup.index.plan import IndexPlan

    started = time.perf_counter()
    fps = np.random.default_rng(seed).integers(0, 2**64, size=n, dtype=np.uint64)
    list(neardup.self_join(fps[:1000], 3))
    rows = []
    for blocks in (4, 5, 6, 7):
        plan = IndexPlan(64, 3, blocks)
        index = neardup.HammingIndex(max_distance=3, plan=plan)
        index.add(fps)
        candidates = index.join_candidates()  # the candidate pairs of every table's key groups
        del index
        times = []
        for _ in range(2):
            t0 = time.perf_counter()
            for _chunk in neardup.self_join(fps, 3, plan=plan):
                pass
            times.append(time.perf_counter() - t0)
        rows.append(
            {"blocks": blocks, "tables": plan.num_tables, "candidates": candidates, "seconds": min(times)}
        )
        print(
            f"   {blocks} blocks, {plan.num_tables} tables: {candidates:,} candidates, {min(times):.2f} s",
            flush=True,
        )
    a = np.array([[r["tables"] * n, r["candidates"]] for r in rows], dtype=float)
    y = np.array([r["seconds"] * 1e9 for r in rows])
    (row_ns, check_ns), *_ = np.linalg.lstsq(a, y, rcond=None)
    results = {"benchmark": "self_join-calibrate", "machine": machine_info(), "n": n, "rows": rows}
    results.update(row_ns=float(row_ns), check_ns=float(check_ns))
    for r in rows:
        r["fitted_seconds"] = (r["tables"] * n * row_ns + r["candidates"] * check_ns) / 1e9
    return finish(
        results, started, None, lambda r: print(f"ROW_NS = {r['row_ns']:.1f}, CHECK_NS = {r['check_ns']:.2f}")
    )


def run_child(engine: str, n: int, args: argparse.Namespace) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--child", engine, "--n", str(n), "-k", str(args.max_distance)]
    argv += ["--seed", str(args.seed), "--memory", str(args.memory)]
    argv += ["--work-dir", args.work_dir] if args.work_dir else []
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{engine} at N = {n:,} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="N = 1M")
    parser.add_argument("--sizes", default="10000000", help="comma-separated N (default 10M)")
    parser.add_argument("-k", "--max-distance", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="FILE", help="also write the results JSON to FILE")
    parser.add_argument(
        "--out-of-core",
        action="store_true",
        help="self_join in memory against self_join out of core in --memory (not the index)",
    )
    parser.add_argument(
        "--memory", type=byte_size, default=2**30, help="the out-of-core join's budget (default 1G)"
    )
    parser.add_argument("--work-dir", help="its work folder (default: the system's temporary folder)")
    parser.add_argument(
        "--resumable", metavar="DIR", help="the out-of-core join alone, resumable, its data in DIR"
    )
    parser.add_argument("--plan", default="auto", help="the plan of --resumable (default auto)")
    parser.add_argument(
        "--cli", metavar="DIR", help="`neardup pairs` in --memory as a user runs it, its data in DIR"
    )
    parser.add_argument("--no-in-memory", action="store_true", help="--cli without the in-memory run")
    parser.add_argument("--calibrate", action="store_true", help="fit self_join's ROW_NS and CHECK_NS")
    parser.add_argument("--child", choices=ENGINES, help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.resumable:
        return resumable(args)
    if args.cli:
        return cli(args)
    if args.calibrate:
        return calibrate(int(float(args.sizes.split(",")[0])), args.seed)
    if args.child:
        print(json.dumps(child(args.child, args.n, args.max_distance, args.seed, args.memory, args.work_dir)))
        return {}
    started = time.perf_counter()
    sizes = [1_000_000] if args.quick else [int(s) for s in args.sizes.split(",")]
    results: dict[str, Any] = {"machine": machine_info(), "runs": []}
    engines = ("self_join", "out_of_core") if args.out_of_core else ("self_join", "index")
    print(
        f"{'N':>12} {'engine':>11} {'seconds':>8} {'B/fp':>6} {'anon B/fp':>9} {'pairs':>10} "
        f"{'recall':>7} {'wrong':>5}"
    )
    for n in sizes:
        for engine in engines:
            r = run_child(engine, n, args)
            results["runs"].append(r)
            print(
                f"{n:>12,} {engine:>11} {r['seconds']:>8.2f} {r['peak_bytes_per_fp']:>6.1f} "
                f"{r['peak_anonymous_bytes_per_fp']:>9.1f} {r['pairs']:>10,} {r['recall']:>7.4f} "
                f"{r['wrong'] + r['planted_beyond_k']:>5}"
            )
            if r["tables"]:
                times = [t["seconds"] for t in r["tables"]]
                written = sum(t["bytes_written"] for t in r["tables"])
                print(
                    f"{'':>12} {len(times)} tables of {min(times):.1f}-{max(times):.1f} s, "
                    f"{written / 2**30:.2f} GiB written in all"
                )
    return finish(results, started, args.json, _footer)


def _footer(results: dict[str, Any]) -> None:
    by = {(r["n"], r["engine"]): r for r in results["runs"]}
    for n in sorted({r["n"] for r in results["runs"]}):
        one = by[(n, "self_join")]
        if (n, "out_of_core") in by:
            disk = by[(n, "out_of_core")]
            same = disk["pairs"] == one["pairs"] == disk["distinct_pairs"]
            print(
                f"N = {n:,} ({one['plan']}): out of core in {disk['memory_given'] / 2**30:.2f} GiB "
                f"takes {disk['seconds'] / one['seconds']:.2f}x the in-memory join's time; "
                f"{disk['peak_anonymous_bytes_per_fp']:.1f} bytes a fingerprint of its own memory "
                f"({disk['peak_bytes_per_fp']:.1f} with the mapped file's pages) against "
                f"{one['peak_bytes_per_fp']:.1f}; same pairs: {same}"
            )
            continue
        index = by[(n, "index")]
        same = one["pairs"] == index["pairs"] == one["distinct_pairs"]
        print(
            f"N = {n:,} ({one['plan']}): self_join takes {one['seconds'] / index['seconds']:.2f}x "
            f"the index's time in {one['peak_bytes_per_fp'] / index['peak_bytes_per_fp']:.2f}x its "
            f"memory ({one['peak_bytes_per_fp']:.1f} against {index['peak_bytes_per_fp']:.1f} bytes "
            f"a fingerprint); same pairs: {same}"
        )


if __name__ == "__main__":
    main()
