"""HammingIndex build, query and self-join speed, memory and exactness, with peers on the same data.

Data: N random 64-bit fingerprints (seeded numpy Generator) with planted near-duplicates: for
``--planted`` of the items (1%) another item is overwritten by a copy with d random bits flipped,
d uniform in 0..k for 90% of the pairs and k + 1 for the rest (those must *not* be found), so the
expected pairs are known exactly; k = 3 unless ``--max-distance`` (64 or ``--bits 128``
fingerprints; beyond k = 7 only ``auto`` and ``mih`` serve). For each N and plan, in the same run:

* build time (``add`` of all N), bytes per fingerprint (``nbytes / N``);
* ``query()`` latency, median and p99 over 2,000 single calls (half planted, half random),
  measured in steady state: after 2,000 *other* queries (so no measured query finds its cache
  lines warm), since for a few seconds after a large build the machine is still settling (page
  reclaim, huge-page collapse); the same figures for calls made right after the build are kept
  as ``query_*_after_build_us``;
* ``query_batch`` throughput on 100,000 queries (half stored fingerprints with 0..k bits flipped,
  half random), with every returned distance checked by brute force and the recall of the
  stored fingerprint each hit query came from;
* the self-join ``pairs()``: time, pairs found, recall of the planted pairs within k (must be
  1.0), planted pairs at k + 1 returned (must be 0), and every other pair checked by brute force
  (random pairs within k: expected C(N, 2) * sum_{d<=k} C(64, d) / 2**64, ~12 at N = 100M);
* peak RSS over build, queries and join (VmHWM, reset before each plan);
* ``save`` / ``HammingIndex.open`` time and file size, when the index has them.

A plan whose estimated peak memory does not fit in 80% of the available memory is skipped; in its
place ``auto`` falls back to the densest preset that fits, and the table says so. Compile time is
measured apart, in child processes with an empty and a warm ``NUMBA_CACHE_DIR``. Peers: simhash-py
(C++ ``find_all``, run in its own venv, see README.md) on the 1M self-join, and the pure-Python
``simhash`` package's ``SimhashIndex`` on single queries at 200k fingerprints.

    python benchmarks/bench_index.py --quick                 # N = 100k and 1M; well under a minute
    python benchmarks/bench_index.py --sizes 1000000,10000000
    python benchmarks/bench_index.py --json out.json         # N = 1M, 10M, 100M
    python benchmarks/bench_index.py --sizes 1000000 --max-distance 8 --repeats 1 --no-peers
    python benchmarks/bench_index.py --calibrate             # plan.py's PROBE_NS, CANDIDATE_NS
    python benchmarks/bench_index.py --compact-tables        # N = 100M: tables of 4-byte entries

``--compact-tables`` measures the index's tables as stored (each entry without the key bits its
directory gives, 4 bytes where the rest fits) against the same index with whole 8-byte entries
(what releases before index format 3 stored, and still open), in one run on the same
fingerprints: bytes per fingerprint of the queryable index (``nbytes / N``; with unordered ids
it also holds their sorted copy, 8 more), the process's peak RSS over the build, and ``query()``
latency p50 and p99 of each, in alternating rounds of 1,000 single calls (half planted, half
random) so that the machine's drift falls on both, and ``query_batch`` throughput (best of 3).

The last stdout line is ``RESULT {json}`` with every figure.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from _common import finish, machine_info, meminfo_bytes, reset_peak, status_kb

K = 3  # --max-distance
BITS = 64  # --bits
PLANS_ALL = ("auto", "compact", "balanced", "fast")
"""The plans at k <= 7; beyond, only ``auto`` (multi-index hashing) serves."""
SIZES = {
    "quick": dict(sizes=[100_000, 1_000_000], simhash_index_n=20_000, repeats=3),
    "full": dict(sizes=[1_000_000, 10_000_000, 100_000_000], simhash_index_n=200_000, repeats=3),
}
SINGLE_QUERIES = 2_000
BATCH_QUERIES = 100_000
PEER_N = 1_000_000  # the simhash-py figure: find_all on 1M fingerprints at k = 3
SIMHASHPY_PYTHON = os.environ.get("NEARDUP_BENCH_SIMHASHPY", "/tmp/simhashpy/bin/python")
SIMHASHPY_BLOCKS = (4, 6)

# The targets, on 2 cores.
TARGET_JOIN_1M_S = 0.3
TARGET_JOIN_100M_S = 180.0
TARGET_P99_100M_US = 100.0
TARGET_MEMORY_FRACTION = 0.75  # "fits with room to spare": peak RSS under 75% of RAM


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------


def popcount(x: np.ndarray) -> np.ndarray:
    """Set bits of each fingerprint: uint64 (n,) or rows (n, 2)."""
    counts = np.bitwise_count(np.asarray(x, dtype=np.uint64)).astype(np.int64)
    return counts.sum(axis=1) if counts.ndim == 2 else counts


def random_fps(rng: np.random.Generator, n: int, bits: int | None = None) -> np.ndarray:
    """n uniform fingerprints of ``bits`` (default BITS): uint64 (n,), or (n, 2) at 128 bits."""
    bits = bits or BITS
    shape = (n,) if bits == 64 else (n, bits // 64)
    return rng.integers(0, np.iinfo(np.uint64).max, size=shape, dtype=np.uint64, endpoint=True)


def flip_masks(rng: np.random.Generator, d: np.ndarray) -> np.ndarray:
    """Masks (as ``random_fps``) with exactly ``d[i]`` distinct random bits set."""
    masks = np.zeros((len(d), BITS // 64), dtype=np.uint64)
    todo = np.flatnonzero(d > 0)
    while todo.size:
        bit = rng.integers(0, BITS, size=todo.size, dtype=np.uint64)
        masks[todo, (bit // np.uint64(64)).astype(np.int64)] |= np.left_shift(
            np.uint64(1), bit % np.uint64(64)
        )
        todo = todo[popcount(masks[todo]) < d[todo]]
    return masks[:, 0] if BITS == 64 else masks


def make_data(n: int, planted_fraction: float, seed: int) -> dict[str, Any]:
    """Fingerprints (uint64, shape (n,)) and the planted pairs (int64 rows a < b, distances)."""
    rng = np.random.default_rng([seed, n])
    fps = random_fps(rng, n)
    p = max(1, int(n * planted_fraction))
    chosen = rng.choice(n, size=2 * p, replace=False).astype(np.int64)
    src, dst = chosen[:p], chosen[p:]
    d = np.where(rng.random(p) < 0.9, rng.integers(0, K + 1, size=p), K + 1).astype(np.int64)
    fps[dst] = fps[src] ^ flip_masks(rng, d)
    a, b = np.minimum(src, dst), np.maximum(src, dst)
    return {"fps": fps, "a": a, "b": b, "d": d}


def expected_random_pairs(n: int) -> float:
    """Pairs of independent uniform fingerprints within K bits among n."""
    return n * (n - 1) / 2 * sum(math.comb(BITS, d) for d in range(K + 1)) / 2.0**BITS


# ---------------------------------------------------------------------------------------------
# Memory: VmHWM, reset through /proc/self/clear_refs (_common.py; bench_fingerprint.py on ru_maxrss)
# ---------------------------------------------------------------------------------------------


def estimated_peak_bytes(n: int, num_tables: int) -> int:
    """The benchmark's fingerprints, add()'s copies of fingerprints and ids plus the sorted ids,
    the tables, and query/join outputs (small): ~8 B * n * (tables + 5)."""
    return 8 * n * (num_tables + 5) + 200 * 2**20


def resolve_plans(n: int, requested: list[str], budget: int) -> list[tuple[str, str, str]]:
    """(label, plan given to HammingIndex, note) for each requested plan that fits ``budget``."""
    from neardup import IndexPlan

    out: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for name in requested:
        plan = IndexPlan.choose(BITS, K, name, n)
        need = estimated_peak_bytes(n, plan.num_tables)
        label, note = (f"auto={plan.name}" if name == "auto" else name), ""
        if need > budget:
            if name != "auto":
                print(
                    f"   plan {name!r} at N={n:,} skipped: needs ~{need / 2**30:.1f} GiB, budget "
                    f"{budget / 2**30:.1f} GiB"
                )
                continue
            fallback = next(
                (
                    p
                    for p in (("fast", "balanced", "compact") if K <= 7 else ())
                    if estimated_peak_bytes(n, IndexPlan.choose(BITS, K, p, n).num_tables) <= budget
                ),
                None,
            )
            if fallback is None:
                print(f"   no plan fits at N={n:,}")
                continue
            note = (
                f"auto would pick {plan.name!r} ({plan.num_tables} tables, ~{need / 2**30:.1f} GiB "
                f"peak), over the {budget / 2**30:.1f} GiB budget: {fallback!r} instead"
            )
            print(f"   {note}")
            name, label = fallback, f"auto->{fallback}"
            plan = IndexPlan.choose(BITS, K, name, n)
        if plan.name in seen:  # "balanced" when auto already chose it
            continue
        seen.add(plan.name)
        out.append((label, name, note))
    return out


# ---------------------------------------------------------------------------------------------
# One size, one plan
# ---------------------------------------------------------------------------------------------


def best_of(fn, repeats: int) -> tuple[float, list[float], Any]:
    times, result = [], None
    for _ in range(max(1, repeats)):
        result = None
        gc.collect()
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), times, result


def pair_keys(i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    return np.minimum(i, j) * np.int64(n) + np.maximum(i, j)


def bench_plan(
    n: int,
    data: dict[str, Any],
    label: str,
    plan_spec: str,
    note: str,
    queries: dict[str, np.ndarray],
    repeats: int,
    threads: int,
    workdir: str,
    no_storage: bool = False,
) -> dict[str, Any]:
    import neardup

    fps = data["fps"]
    gc.collect()
    memory_ok = reset_peak()
    baseline_kb = status_kb("VmRSS")
    index = neardup.HammingIndex(bits=BITS, max_distance=K, plan=plan_spec)
    t = time.perf_counter()
    index.add(fps)
    build_s = time.perf_counter() - t
    r: dict[str, Any] = {
        "n": n,
        "label": label,
        "plan": index.plan.name,
        "num_tables": index.plan.num_tables,
        "describe": index.plan.describe(n),
        "note": note,
        "build_s": build_s,
        "nbytes": index.nbytes,
        "bytes_per_fp": index.nbytes / n,
        "build_fps_per_s": n / build_s,
        "build_fps_per_s_per_core": n / build_s / threads,
    }

    # Single queries: planted fingerprints (they have a partner) and random ones, interleaved;
    # first a set right after the build, then (steady state) another set.
    after_build, singles = queries["settle"], queries["single"]
    lat_after_build, _ = time_calls(index.query, after_build)
    lat, found = time_calls(index.query, singles)
    hits = sum(len(ids) > 0 for ids, _ in found)
    r.update(
        query_p50_us=float(np.median(lat)) / 1e3,
        query_p99_us=float(np.percentile(lat, 99)) / 1e3,
        query_mean_us=float(lat.mean()) / 1e3,
        query_max_us=float(lat.max()) / 1e3,
        query_p50_after_build_us=float(np.median(lat_after_build)) / 1e3,
        query_p99_after_build_us=float(np.percentile(lat_after_build, 99)) / 1e3,
        single_queries=len(singles),
        single_queries_with_matches=int(hits),
    )

    # Batch queries, then check every returned distance and the recall of each hit query's origin.
    batch, origin = queries["batch"], queries["origin"]
    batch_s, batch_times, (offsets, ids, dist) = best_of(partial(index.query_batch, batch), repeats)
    qidx = np.repeat(np.arange(len(batch)), np.diff(offsets))
    true_d = popcount(batch[qidx] ^ fps[ids])
    found_origin = np.zeros(len(batch), dtype=bool)
    found_origin[qidx[ids == origin[qidx]]] = True
    has_origin = origin >= 0
    r.update(
        batch_queries=len(batch),
        batch_s=batch_s,
        batch_times_s=batch_times,
        batch_qps=len(batch) / batch_s,
        batch_qps_per_core=len(batch) / batch_s / threads,
        batch_results=len(ids),
        batch_distances_exact=bool(np.array_equal(true_d, dist) and (dist <= K).all()),
        batch_origin_recall=float(found_origin[has_origin].mean()),
    )

    # Self-join against the planted pairs.
    join_s, join_times, (pi, pj, pd) = best_of(index.pairs, repeats)
    true_pd = popcount(fps[pi] ^ fps[pj])
    found = pair_keys(pi, pj, n)
    a, b, d = data["a"], data["b"], data["d"]
    planted = pair_keys(a, b, n)
    in_found = np.isin(planted, found)
    within = d <= K
    extra = ~np.isin(found, planted[within])
    r.update(
        join_s=join_s,
        join_times_s=join_times,
        pairs=len(pi),
        join_items_per_s_per_core=n / join_s / threads,
        pairs_distances_exact=bool(np.array_equal(true_pd, pd) and (pd <= K).all() and (pi < pj).all()),
        planted_within_k=int(within.sum()),
        planted_recall=float(in_found[within].mean()),
        planted_k_plus_1=int((~within).sum()),
        planted_k_plus_1_returned=int(in_found[~within].sum()),
        other_pairs=int(extra.sum()),
        other_pairs_verified=bool((true_pd[extra] <= K).all()),
        other_pairs_expected=expected_random_pairs(n),
    )
    if memory_ok and baseline_kb is not None:
        peak_kb = status_kb("VmHWM")
        r.update(
            baseline_rss_mib=baseline_kb / 1024,
            peak_rss_mib=peak_kb / 1024,
            peak_extra_mib=(peak_kb - baseline_kb) / 1024,
        )
    del pi, pj, pd, true_pd, found, offsets, ids, dist, qidx, true_d

    if hasattr(neardup.HammingIndex, "open") and not no_storage:
        free = shutil.disk_usage(workdir).free
        if index.nbytes * 1.2 < free:
            r["storage"] = bench_storage(index, singles[:200], workdir)
        else:
            r["storage"] = {
                "error": f"skipped: ~{index.nbytes / 2**30:.1f} GiB file, "
                f"{free / 2**30:.1f} GiB free in {workdir}"
            }
    del index
    gc.collect()
    return r


def bench_storage(index: Any, probes: np.ndarray, workdir: str) -> dict[str, Any]:
    import neardup

    path = os.path.join(workdir, "index.bin")
    try:
        t = time.perf_counter()
        index.save(path)
        save_s = time.perf_counter() - t
        size = (
            sum(f.stat().st_size for f in Path(path).rglob("*"))
            if os.path.isdir(path)
            else os.path.getsize(path)
        )
        t = time.perf_counter()
        opened = neardup.HammingIndex.open(path)
        open_s = time.perf_counter() - t
        same = all(np.array_equal(index.query(q)[0], opened.query(q)[0]) for q in probes)
        del opened
        return {
            "save_s": save_s,
            "file_bytes": size,
            "file_bytes_per_fp": size / len(index),
            "open_s": open_s,
            "queries_match_after_open": same,
        }
    except Exception as e:  # another helper is writing save/open: report, do not fail the run
        return {"error": f"{type(e).__name__}: {e}"}
    finally:
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.exists(path):
            os.unlink(path)


def time_calls(fn: Any, items: Any) -> tuple[np.ndarray, list[Any]]:
    """Nanoseconds of each call ``fn(item)``, and what each returned."""
    lat = np.empty(len(items), dtype=np.int64)
    results = []
    for i, item in enumerate(items):
        t0 = time.perf_counter_ns()
        results.append(fn(item))
        lat[i] = time.perf_counter_ns() - t0
    return lat, results


def make_queries(data: dict[str, Any], seed: int) -> dict[str, np.ndarray]:
    fps, n = data["fps"], len(data["fps"])
    rng = np.random.default_rng([seed, n, 1])
    half = SINGLE_QUERIES // 2
    within = data["d"] <= K

    def singles() -> np.ndarray:
        out = random_fps(rng, SINGLE_QUERIES)
        out[0::2] = fps[rng.choice(data["a"][within], size=half)]
        return out

    settle, single = singles(), singles()
    hb = BATCH_QUERIES // 2
    origin = np.full(BATCH_QUERIES, -1, dtype=np.int64)
    origin[:hb] = rng.integers(0, n, size=hb)
    batch = random_fps(rng, BATCH_QUERIES)
    batch[:hb] = fps[origin[:hb]] ^ flip_masks(rng, rng.integers(0, K + 1, size=hb))
    perm = rng.permutation(BATCH_QUERIES)
    return {"settle": settle, "single": single, "batch": batch[perm], "origin": origin[perm]}


# ---------------------------------------------------------------------------------------------
# Compile time (child processes)
# ---------------------------------------------------------------------------------------------

_COMPILE_CHILD = """
import json, time
t0 = time.perf_counter()
import numpy as np
import neardup
t1 = time.perf_counter()
fps = np.random.default_rng(0).integers(0, 2**63, size=1000, dtype=np.uint64)
index = neardup.HammingIndex(bits=64, max_distance=3)
index.add(fps)
index.query(int(fps[0]))
index.query_batch(fps[:10])
index.pairs()
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "first_calls_s": t2 - t1}))
"""


def measure_compile(workdir: str) -> dict[str, Any]:
    """Tiny build + query + query_batch + pairs in a new process: empty cache, then warm."""
    env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(workdir, "numba-cache"))
    out: dict[str, Any] = {}
    for tag in ("empty_cache", "warm_cache"):
        t = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", _COMPILE_CHILD], env=env, capture_output=True, text=True, timeout=900
        )
        wall = time.perf_counter() - t
        if done.returncode != 0:
            return {"error": done.stderr[-2000:]}
        out[tag] = {**json.loads(done.stdout.strip().splitlines()[-1]), "process_s": wall}
    out["compile_s"] = out["empty_cache"]["first_calls_s"] - out["warm_cache"]["first_calls_s"]
    return out


# ---------------------------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------------------------

_SIMHASHPY_CHILD = """
import json, sys, time
import numpy as np
import simhash
fps = np.load(sys.argv[1])
t = time.perf_counter()
hashes = [int(x) for x in fps]
convert_s = time.perf_counter() - t
out = {"convert_to_list_s": convert_s, "runs": {}}
for blocks in [int(b) for b in sys.argv[3].split(",")]:
    t = time.perf_counter()
    pairs = simhash.find_all(hashes, blocks, int(sys.argv[4]))
    s = time.perf_counter() - t
    arr = np.array(pairs, dtype=np.uint64).reshape(-1, 2)
    np.save(sys.argv[2] + f".{blocks}.npy", arr)
    out["runs"][str(blocks)] = {"find_all_s": s, "pairs": len(pairs)}
print(json.dumps(out))
"""


def bench_simhashpy(
    data: dict[str, Any], neardup_pairs: tuple[np.ndarray, np.ndarray], neardup_join_s: float, workdir: str
) -> dict[str, Any]:
    """simhash-py's C++ find_all on the same fingerprints, in its own interpreter (its module is
    also called ``simhash``, which the pure-Python peer in this venv already owns)."""
    if not os.path.exists(SIMHASHPY_PYTHON):
        return {"skipped": f"no {SIMHASHPY_PYTHON} (see benchmarks/README.md to build simhash-py)"}
    fps = data["fps"]
    path = os.path.join(workdir, "peer_fps.npy")
    np.save(path, fps)
    out_prefix = os.path.join(workdir, "peer_pairs")
    done = subprocess.run(
        [
            SIMHASHPY_PYTHON,
            "-c",
            _SIMHASHPY_CHILD,
            path,
            out_prefix,
            ",".join(map(str, SIMHASHPY_BLOCKS)),
            str(K),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode != 0:
        return {"skipped": f"simhash-py failed: {done.stderr[-1000:]}"}
    res = json.loads(done.stdout.strip().splitlines()[-1])
    # find_all takes a set of hash values and returns value pairs: neardup's pairs as distinct
    # value pairs (identical fingerprints, d = 0, cannot appear in find_all's output).
    pi, pj = neardup_pairs
    va, vb = fps[pi], fps[pj]
    keep = va != vb
    mine = {(min(x, y), max(x, y)) for x, y in zip(va[keep].tolist(), vb[keep].tolist())}
    res["neardup_value_pairs_d_gt_0"] = len(mine)
    res["neardup_pairs_d_0"] = int((~keep).sum())
    for blocks, run in res["runs"].items():
        arr = np.load(f"{out_prefix}.{blocks}.npy")
        theirs = {(min(x, y), max(x, y)) for x, y in arr.tolist()}
        run["same_pairs_as_neardup"] = theirs == mine
        run["only_simhashpy"] = len(theirs - mine)
        run["only_neardup"] = len(mine - theirs)
        run["find_all_over_neardup_join"] = run["find_all_s"] / neardup_join_s
    os.unlink(path)
    return res


def bench_simhash_index(n: int, seed: int, threads: int) -> dict[str, Any]:
    """The pure-Python simhash package's SimhashIndex (k + 1 string-keyed dict buckets), per-query
    latency beside neardup's on the same fingerprints."""
    try:
        from simhash import Simhash, SimhashIndex
    except ImportError as e:
        return {"skipped": f"simhash not installed ({e}); pip install 'neardup[bench]'"}
    import logging

    import neardup

    data = make_data(n, 0.01, seed)
    queries = make_queries(data, seed)["single"]
    fps = data["fps"]
    t = time.perf_counter()
    objs = [(str(i), Simhash(v)) for i, v in enumerate(fps.tolist())]
    index = SimhashIndex(objs, f=64, k=K, log=logging.getLogger("bench_index.simhash"))
    build_s = time.perf_counter() - t
    lat, theirs = time_calls(index.get_near_dups, [Simhash(v) for v in queries.tolist()])
    mine_index = neardup.HammingIndex(bits=BITS, max_distance=K)
    mine_index.add(fps)
    mine_lat, mine = time_calls(mine_index.query, queries)
    agree = sum(sorted(int(x) for x in t) == sorted(found.tolist()) for t, (found, _) in zip(theirs, mine))
    out = {
        "n": n,
        "build_s": build_s,
        "query_p50_us": float(np.median(lat)) / 1e3,
        "query_p99_us": float(np.percentile(lat, 99)) / 1e3,
        "neardup_query_p50_us": float(np.median(mine_lat)) / 1e3,
        "neardup_query_p99_us": float(np.percentile(mine_lat, 99)) / 1e3,
        "neardup_plan": mine_index.plan.name,
        "queries": len(queries),
        "same_results": agree,
        "note": "Simhash(int) objects built beforehand, not timed in queries",
    }
    out["p50_ratio"] = out["query_p50_us"] / out["neardup_query_p50_us"]
    return out


# ---------------------------------------------------------------------------------------------
# Calibration of plan.py's cost model
# ---------------------------------------------------------------------------------------------

_CALIBRATION_PLANS = (
    [(64, 3, p) for p in ("compact", "balanced", "fast")]
    + [(64, 8, m) for m in (3, 4, 5, 9)]
    + [(128, 16, m) for m in (5, 6, 7, 9, 17)]
)
"""(bits, k, plan): presets are permuted tables, numbers multi-index layouts of that many blocks."""


def calibrate(n: int, seed: int, queries: int = 20_000, repeats: int = 3) -> dict[str, Any]:
    """Nanoseconds per probe and per candidate of each fingerprint width of one query
    (``plan.PROBE_NS``, ``plan.CANDIDATE_NS``): query_batch of random queries on one thread
    (``NUMBA_NUM_THREADS=1`` gives the process one), best of ``repeats``, against the plans'
    expected probes and candidates, fitted by least squares on the relative error."""
    import numba

    from neardup import HammingIndex, IndexPlan

    numba.set_num_threads(1)
    rng = np.random.default_rng([seed, n, 2])
    rows = []
    for bits, k, spec in _CALIBRATION_PLANS:
        plan = IndexPlan(bits, k, spec, "calibration", "mih") if isinstance(spec, int) else spec
        index = HammingIndex(bits=bits, max_distance=k, plan=plan)
        index.add(random_fps(rng, n, bits))
        batch = random_fps(rng, queries, bits)
        index.query_batch(batch[:100])
        best, _, _ = best_of(partial(index.query_batch, batch), repeats)
        p = index.plan
        rows.append(
            (p.probes_per_query(n), p.expected_candidates(n), best / queries * 1e9, p.describe(n), bits)
        )
        probes, candidates, ns, _, _ = rows[-1]
        print(f"{probes:>7} probes {candidates:>10.1f} candidates {ns:>11.0f} ns  {p.describe(n)}")
        del index
    # One price per probe, one per candidate of each width (columns: probes, 64-bit candidates,
    # 128-bit candidates).
    a = np.array([[r[0], r[1] * (r[4] == 64), r[1] * (r[4] == 128)] for r in rows], dtype=float)
    y = np.array([r[2] for r in rows])
    (probe_ns, candidate_64_ns, candidate_128_ns), *_ = np.linalg.lstsq(
        a / y[:, None], np.ones(len(y)), rcond=None
    )
    fit = a @ np.array([probe_ns, candidate_64_ns, candidate_128_ns])
    print(
        f"PROBE_NS = {probe_ns:.1f}, "
        f"CANDIDATE_NS = {{64: {candidate_64_ns:.1f}, 128: {candidate_128_ns:.1f}}}; "
        "fit / measured per plan: " + ", ".join(f"{f / m:.2f}" for f, m in zip(fit, y))
    )
    return {
        "n": n,
        "probe_ns": probe_ns,
        "candidate_ns": {64: candidate_64_ns, 128: candidate_128_ns},
        "rows": rows,
    }


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------

_HEADER = (
    f"{'N':>11} {'plan':<20} {'tab':>3} {'build s':>8} {'B/fp':>6} {'q p50 us':>8} "
    f"{'q p99 us':>8} {'batch q/s':>10} {'q/s/core':>9} {'join s':>8} {'pairs':>9} "
    f"{'recall':>6} {'k+1':>3} {'other':>5} {'exact':>5} {'peak MiB':>8}"
)


def print_row(r: dict[str, Any]) -> None:
    exact = r["pairs_distances_exact"] and r["batch_distances_exact"] and r["other_pairs_verified"]
    print(
        f"{r['n']:>11,} {r['label']:<20} {r['num_tables']:>3} {r['build_s']:>8.3f} "
        f"{r['bytes_per_fp']:>6.0f} {r['query_p50_us']:>8.1f} {r['query_p99_us']:>8.1f} "
        f"{r['batch_qps']:>10,.0f} {r['batch_qps_per_core']:>9,.0f} {r['join_s']:>8.3f} "
        f"{r['pairs']:>9,} {r['planted_recall']:>6.3f} {r['planted_k_plus_1_returned']:>3} "
        f"{r['other_pairs']:>5} {'yes' if exact else 'NO':>5} {r.get('peak_rss_mib', float('nan')):>8,.0f}",
        flush=True,
    )
    print(
        f"{'':>11} single queries right after the build: p50 {r['query_p50_after_build_us']:.1f} us, "
        f"p99 {r['query_p99_after_build_us']:.1f} us",
        flush=True,
    )
    if "storage" in r:
        s = r["storage"]
        if "error" in s:
            print(f"{'':>11} save/open: {s['error']}")
        else:
            print(
                f"{'':>11} save {s['save_s']:.3f} s, file {s['file_bytes'] / 2**20:,.1f} MiB "
                f"({s['file_bytes_per_fp']:.1f} B/fp), open {s['open_s']:.3f} s, queries match: "
                f"{s['queries_match_after_open']}",
                flush=True,
            )


def targets(results: dict[str, Any]) -> dict[str, Any]:
    rows = results["rows"]
    total = meminfo_bytes("MemTotal")

    def at(n: int) -> list[dict[str, Any]]:
        return [r for r in rows if r["n"] == n]

    out: dict[str, Any] = {}
    one = [r for r in at(1_000_000) if r["label"].startswith("auto")]
    out[f"join_1M_s<={TARGET_JOIN_1M_S:g}"] = (
        {"value": one[0]["join_s"], "met": one[0]["join_s"] <= TARGET_JOIN_1M_S, "plan": one[0]["plan"]}
        if one
        else None
    )
    big = at(100_000_000)
    if big:
        best_join = min(big, key=lambda r: r["join_s"])
        best_p99 = min(big, key=lambda r: r["query_p99_us"])
        out[f"join_100M_s<={TARGET_JOIN_100M_S:g}"] = {
            "value": best_join["join_s"],
            "met": best_join["join_s"] <= TARGET_JOIN_100M_S,
            "plan": best_join["plan"],
        }
        out[f"query_p99_100M_us<={TARGET_P99_100M_US:g}"] = {
            "value": best_p99["query_p99_us"],
            "met": best_p99["query_p99_us"] <= TARGET_P99_100M_US,
            "plan": best_p99["plan"],
        }
        fits = [r for r in big if "peak_rss_mib" in r]
        if fits and total:
            r = min(fits, key=lambda r: r["peak_rss_mib"])
            frac = r["peak_rss_mib"] * 2**20 / total
            out[f"memory_100M_peak<={TARGET_MEMORY_FRACTION:.0%}_of_RAM"] = {
                "value": frac,
                "met": frac <= TARGET_MEMORY_FRACTION,
                "plan": r["plan"],
                "peak_rss_mib": r["peak_rss_mib"],
                "index_mib": r["nbytes"] / 2**20,
            }
    else:
        for key in (
            f"join_100M_s<={TARGET_JOIN_100M_S:g}",
            f"query_p99_100M_us<={TARGET_P99_100M_US:g}",
            f"memory_100M_peak<={TARGET_MEMORY_FRACTION:.0%}_of_RAM",
        ):
            out[key] = None
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="CI size: N = 100k and 1M")
    parser.add_argument("--json", metavar="FILE", help="also write the results JSON to FILE")
    parser.add_argument("--sizes", help="comma-separated N, e.g. 1000000,10000000")
    parser.add_argument(
        "--plans",
        help="comma-separated plans (default: all four for N <= 10M, "
        "auto and compact with --quick, auto alone above 10M: compact's self-join "
        "there scans ~6,000 candidates per item)",
    )
    parser.add_argument("--planted", type=float, default=0.01, help="fraction of items planted (0.01)")
    parser.add_argument(
        "--repeats", type=int, help="timed calls of query_batch and pairs (best kept; 1 above 1M)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--memory-fraction", type=float, default=0.8, help="share of MemAvailable a plan may use (0.8)"
    )
    parser.add_argument("--no-peers", action="store_true", help="skip simhash-py and simhash")
    parser.add_argument("--no-storage", action="store_true", help="skip save/open")
    parser.add_argument("--no-compile", action="store_true", help="skip the compile-time children")
    parser.add_argument(
        "--max-distance", type=int, default=3, metavar="K", help="k, the radius searched (3; 8 at 64 bits)"
    )
    parser.add_argument("--bits", type=int, default=64, choices=(64, 128), help="fingerprint width (64)")
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="only fit plan.py's PROBE_NS and CANDIDATE_NS: query_batch on one thread over N "
        "(first of --sizes, default 1M) random fingerprints for plans from few to many probes",
    )
    parser.add_argument(
        "--compact-tables",
        action="store_true",
        help="only the tables as stored against whole 8-byte entries (N from --sizes, default "
        "100M; plan from --plans, default balanced)",
    )
    args = parser.parse_args(argv)
    global K, BITS
    K, BITS = args.max_distance, args.bits
    if args.compact_tables:
        started = time.perf_counter()
        n = int(float(args.sizes.split(",")[0])) if args.sizes else 100_000_000
        results = {"benchmark": "index-compact-tables", "machine": machine_info(())}
        results.update(compact_tables(n, args.plans or "balanced", args.seed, 10))
        return finish(results, started, args.json, print_compact)
    if args.calibrate:
        return calibrate(int(float(args.sizes.split(",")[0])) if args.sizes else 1_000_000, args.seed)
    plans_all = PLANS_ALL if K <= 7 else ("auto",)
    no_peers = args.no_peers or (BITS, K) != (64, 3)
    size = dict(SIZES["quick" if args.quick else "full"])
    if args.sizes:
        size["sizes"] = [int(float(s)) for s in args.sizes.split(",")]
    if args.repeats:
        size["repeats"] = args.repeats

    started = time.perf_counter()
    results: dict[str, Any] = {
        "benchmark": "index",
        "quick": args.quick,
        "seed": args.seed,
        "k": K,
        "bits": BITS,
        "planted_fraction": args.planted,
        "sizes": size["sizes"],
        "single_queries": SINGLE_QUERIES,
        "batch_queries": BATCH_QUERIES,
    }
    with tempfile.TemporaryDirectory(prefix="neardup-bench-index-") as workdir:
        if not args.no_compile:
            print("measuring compile time in child processes ...", flush=True)
            results["compile"] = measure_compile(workdir)
        import neardup

        # Load this process's kernels (cache) before anything is timed.
        warm = np.random.default_rng(1).integers(0, 2**63, size=5000, dtype=np.uint64)
        warm = random_fps(np.random.default_rng(1), 5000)
        for p in plans_all:
            ix = neardup.HammingIndex(bits=BITS, max_distance=K, plan=p)
            ix.add(warm)
            ix.query(warm[0])
            ix.query_batch(warm[:100])
            ix.pairs()
        import numba

        results["machine"] = machine_info(())
        results["machine"]["threading_layer"] = numba.threading_layer()
        threads = numba.config.NUMBA_NUM_THREADS
        results["has_save_open"] = hasattr(neardup.HammingIndex, "open")
        rows: list[dict[str, Any]] = []
        peers: dict[str, Any] = {}
        print(
            f"\n== HammingIndex, {BITS}-bit, k={K}, {threads} threads; planted pairs "
            f"{args.planted:.0%} of N (90% at d<=k, 10% at d=k+1) =="
        )
        for n in size["sizes"]:
            t = time.perf_counter()
            data = make_data(n, args.planted, args.seed)
            queries = make_queries(data, args.seed)
            gen_s = time.perf_counter() - t
            budget = int((meminfo_bytes("MemAvailable") or 2**40) * args.memory_fraction)
            requested = (
                args.plans.split(",")
                if args.plans
                else (
                    list(plans_all)
                    if n <= 10_000_000 and not args.quick
                    else ["auto", "compact"]
                    if n <= 10_000_000
                    else ["auto"]
                )
            )
            print(
                f"\n-- N={n:,}: data in {gen_s:.1f} s; auto: "
                f"{neardup.IndexPlan.choose(BITS, K, 'auto', n).describe(n)}",
                flush=True,
            )
            plans = resolve_plans(n, requested, budget)
            print(_HEADER, flush=True)
            repeats = size["repeats"] if n <= 1_000_000 else 1
            for label, spec, note in plans:
                r = bench_plan(
                    n, data, label, spec, note, queries, repeats, threads, workdir, args.no_storage
                )
                rows.append(r)
                print_row(r)
                if n == PEER_N and label.startswith("auto") and not no_peers:
                    ix = neardup.HammingIndex(bits=BITS, max_distance=K, plan=spec)
                    ix.add(data["fps"])
                    pi, pj, _ = ix.pairs()
                    del ix
                    print("   simhash-py find_all on the same fingerprints ...", flush=True)
                    peers["simhash-py"] = bench_simhashpy(data, (pi, pj), r["join_s"], workdir)
            del data, queries
            gc.collect()
        if not no_peers:
            print(f"\n   simhash SimhashIndex at N={size['simhash_index_n']:,} ...", flush=True)
            peers["simhash"] = bench_simhash_index(size["simhash_index_n"], args.seed, threads)
            if PEER_N not in size["sizes"]:
                peers.setdefault("simhash-py", {"skipped": f"runs only when N={PEER_N:,} is in --sizes"})
    results["rows"] = rows
    results["peers"] = peers
    results["targets"] = targets(results)
    return finish(results, started, args.json, print_footer)


def whole_entries(index: Any) -> np.ndarray:
    """``index``'s tables with whole 8-byte entries, ``(key << rowbits) | row``, sorted: the form
    of index format 2, which the kernels read the same way."""
    from neardup._kernels import index as kernels

    lay = index._layout
    n = len(index._ids)
    tables = np.empty((index.plan.num_tables, n), dtype=np.uint64)
    for t in range(index.plan.num_tables):
        kept, widths = lay.kept[t : t + 1], lay.widths[t : t + 1]
        kernels.build_entries(index._fps, lay.starts, lay.sizes, kept, widths, lay.rowbits, tables[t : t + 1])
        tables[t].sort()
    return tables


def compact_tables(n: int, plan: str, seed: int, rounds: int) -> dict[str, Any]:
    """The index of ``n`` fingerprints with its tables as stored and with whole entries."""
    import copy

    import neardup

    data = make_data(n, 0.01, seed)
    queries = make_queries(data, seed)
    fps = data["fps"]
    gc.collect()
    reset_peak()
    before_kb = status_kb("VmRSS") or 0
    index = neardup.HammingIndex(bits=BITS, max_distance=K, plan=plan)
    t = time.perf_counter()
    index.add(fps)
    build_s = time.perf_counter() - t
    build_peak_mib = ((status_kb("VmHWM") or 0) - before_kb) / 1024
    stored = {
        "entry_bytes": index._tables.dtype.itemsize,
        "nbytes": index.nbytes,
        "bytes_per_fp": index.nbytes / n,
        "bytes_per_fp_unordered_ids": (index.nbytes + 8 * n) / n,
        "build_s": build_s,
        "build_peak_extra_mib": build_peak_mib,
    }
    t = time.perf_counter()
    whole = copy.copy(index)  # the same fingerprints, ids and directory; whole entries
    whole._tables = whole_entries(index)
    whole_s = time.perf_counter() - t
    tables_delta = whole._tables.nbytes - index._tables.nbytes
    before = {
        "entry_bytes": 8,
        "nbytes": index.nbytes + tables_delta,
        "bytes_per_fp": (index.nbytes + tables_delta) / n,
        "bytes_per_fp_unordered_ids": (index.nbytes + tables_delta + 8 * n) / n,
        "build_s": whole_s,
    }
    singles = np.concatenate([queries["settle"], queries["single"]])
    time_calls(index.query, singles[:1000])  # warm both, untimed
    time_calls(whole.query, singles[:1000])
    lat: dict[str, list[np.ndarray]] = {"stored": [], "whole": []}
    same = True
    for r in range(rounds):
        part = singles[(r % 2) * 1000 : (r % 2 + 1) * 1000]
        order = (("stored", index), ("whole", whole)) if r % 2 == 0 else (("whole", whole), ("stored", index))
        got = {}
        for name, ix in order:
            ns, found = time_calls(ix.query, part)
            lat[name].append(ns)
            got[name] = found
        same &= all(
            np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
            for a, b in zip(got["stored"], got["whole"])
        )
    batch = queries["batch"]
    for name, ix, out in (("stored", index, stored), ("whole", whole, before)):
        ns = np.concatenate(lat[name])
        out["query_p50_us"] = float(np.median(ns)) / 1e3
        out["query_p99_us"] = float(np.percentile(ns, 99)) / 1e3
        seconds, _, _ = best_of(partial(ix.query_batch, batch), 3)
        out["batch_qps"] = len(batch) / seconds
    a = index.query_batch(batch)
    b = whole.query_batch(batch)
    same &= all(np.array_equal(x, y) for x, y in zip(a, b))
    return {
        "n": n,
        "plan": index.plan.describe(n),
        "rounds": rounds,
        "single_queries": rounds * 1000,
        "stored": stored,
        "whole_entries": before,
        "p99_ratio": stored["query_p99_us"] / before["query_p99_us"],
        "p50_ratio": stored["query_p50_us"] / before["query_p50_us"],
        "batch_ratio": stored["batch_qps"] / before["batch_qps"],
        "same_answers": bool(same),
    }


def print_compact(r: dict[str, Any]) -> None:
    print(f"\n== index tables at N={r['n']:,}: {r['plan']} ==")
    print(f"{'entries':>22} {'B/fp':>7} {'B/fp*':>7} {'p50 us':>8} {'p99 us':>8} {'batch q/s':>11}")
    for label, key in (("as stored (4 or 8 B)", "stored"), ("whole 8-byte entries", "whole_entries")):
        e = r[key]
        print(
            f"{label:>22} {e['bytes_per_fp']:>7.1f} {e['bytes_per_fp_unordered_ids']:>7.1f} "
            f"{e['query_p50_us']:>8.1f} {e['query_p99_us']:>8.1f} {e['batch_qps']:>11,.0f}"
        )
    s = r["stored"]
    print(
        f"   (* with unordered ids, whose sorted copy the index also holds) entries of "
        f"{s['entry_bytes']} bytes; build {s['build_s']:.1f} s, "
        f"peak {s['build_peak_extra_mib']:,.0f} MiB beyond the data"
    )
    print(
        f"   stored / whole: p50 {r['p50_ratio']:.2f}x, p99 {r['p99_ratio']:.2f}x, batch throughput "
        f"{r['batch_ratio']:.2f}x over {r['single_queries']:,} single queries in {r['rounds']} alternating "
        f"rounds; the same answers: {r['same_answers']}"
    )
    ok_bytes = s["bytes_per_fp"] <= 60
    ok_p99 = r["p99_ratio"] <= 1.5
    print(
        f"   targets: <= 60 bytes a fingerprint {'PASS' if ok_bytes else 'MISS'} ({s['bytes_per_fp']:.1f}); "
        f"p99 <= 1.5x {'PASS' if ok_p99 else 'MISS'} ({r['p99_ratio']:.2f}x)"
    )


def print_footer(results: dict[str, Any]) -> None:
    print(
        "\ncolumns: tab = tables; B/fp = nbytes / N; q = single query(); batch = query_batch of "
        f"{BATCH_QUERIES:,}; recall = planted pairs within k found by pairs(); k+1 = planted "
        "pairs at k+1 returned (must be 0); other = further pairs, each verified by brute force; "
        "exact = every returned distance equals popcount(a ^ b) <= k; peak = VmHWM over the plan"
    )
    for r in results["rows"]:
        if r["note"]:
            print(f"note N={r['n']:,}: {r['note']}")
        print(
            f"   N={r['n']:,} {r['label']}: other pairs {r['other_pairs']} (random expectation "
            f"{r['other_pairs_expected']:.3g}); batch origin recall {r['batch_origin_recall']:.4f}; "
            f"{r['describe']}"
        )
    c = results.get("compile")
    if c and "error" not in c:
        print(
            f"\n== compile (child, tiny build+query+query_batch+pairs) == empty cache "
            f"{c['empty_cache']['first_calls_s']:.2f} s, warm cache {c['warm_cache']['first_calls_s']:.2f} s "
            f"=> compile {c['compile_s']:.2f} s; import {c['warm_cache']['import_s']:.2f} s"
        )
    elif c:
        print(f"\n== compile == failed: {c['error']}")
    print("\n== peers ==")
    sp = results["peers"].get("simhash-py")
    if sp:
        if "skipped" in sp:
            print(f"simhash-py: skipped: {sp['skipped']}")
        else:
            for blocks, run in sp["runs"].items():
                print(
                    f"simhash-py find_all(1M, blocks={blocks}, k={K}): {run['find_all_s']:.2f} s, "
                    f"{run['pairs']:,} pairs; same pairs as neardup (d>0): {run['same_pairs_as_neardup']} "
                    f"(only theirs {run['only_simhashpy']}, only ours {run['only_neardup']}); "
                    f"{run['find_all_over_neardup_join']:.1f}x neardup's join time"
                )
            print(
                f"   (list conversion {sp['convert_to_list_s']:.2f} s not counted; neardup's "
                f"{sp['neardup_pairs_d_0']} identical-fingerprint pairs cannot appear in find_all)"
            )
    sh = results["peers"].get("simhash")
    if sh:
        if "skipped" in sh:
            print(f"simhash SimhashIndex: skipped: {sh['skipped']}")
        else:
            print(
                f"simhash SimhashIndex(N={sh['n']:,}, k={K}): build {sh['build_s']:.1f} s, query p50 "
                f"{sh['query_p50_us']:.1f} us, p99 {sh['query_p99_us']:.1f} us; neardup "
                f"({sh['neardup_plan']}) p50 {sh['neardup_query_p50_us']:.1f} us, p99 "
                f"{sh['neardup_query_p99_us']:.1f} us => {sh['p50_ratio']:.0f}x; same results "
                f"{sh['same_results']}/{sh['queries']}"
            )
    print("\n== targets (issue, 2 cores) ==")
    for key, v in results["targets"].items():
        if v is None:
            print(f"{key:<36} not measured (needs that N in --sizes)")
        else:
            print(f"{key:<36} {v['value']:.4g} ({v['plan']}) {'MET' if v['met'] else 'NOT met'}")
    m = results["machine"]
    print(
        f"\n== machine == {m.get('cpu_model')}; {m['cpus_available']} CPUs; numba {m['numba']} "
        f"with {m['numba_threads']} threads ({m['threading_layer']}); RAM "
        f"{(m['mem_total_bytes'] or 0) / 2**30:.1f} GiB; peak RSS {results['parent_peak_rss_mib']:,.0f} MiB; "
        f"wall {results['wall_s']:.1f} s"
    )


if __name__ == "__main__":
    main()
