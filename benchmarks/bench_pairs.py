"""Pairs and clusters of skewed data in bounded memory: ``HammingIndex.iter_pairs`` and
``HammingIndex.clusters`` beside the held pair list (``pairs()`` then ``neardup.clusters``).

Shapes (64-bit fingerprints, beside as many random ones):

* ``copies``: N copies of one fingerprint, k = 3: N (N - 1) / 2 pairs;
* ``family``: N distinct fingerprints within 4 bits of one base, k = 8: all within k of each
  other, as many pairs, none identical (at k = 3 no large set of distinct 64-bit fingerprints
  lies within k of each other).

Each measurement runs in a child process of its own, so its peak RSS (VmHWM) is its own:

* ``held``: ``pairs()`` then ``neardup.clusters(i, j, ids)``, the way a caller clustered before;
  past memory it raises ``TooManyPairsError`` (recorded with the time it took to say so);
* ``clusters``: ``index.clusters()``, which collapses copies and streams the rest into a
  union-find;
* ``stream``: ``for chunk in index.iter_pairs()``, counting every pair (pairs per second).

    python benchmarks/bench_pairs.py                       # N = 10k, 30k, 100k
    python benchmarks/bench_pairs.py --sizes 1000,3000 --json out.json

The last stdout line is ``RESULT {json}``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from _common import finish, machine_info

K = {"copies": 3, "family": 8}
SHAPES = ("copies", "family")
MODES = ("held", "clusters", "stream")


def fingerprints(shape: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    base = np.uint64(0x0123_4567_89AB_CDEF)
    if shape == "copies":
        skewed = np.full(n, base, dtype=np.uint64)
    else:  # distinct fingerprints within 4 bits of the base: within 8 of each other
        skewed = np.zeros(0, dtype=np.uint64)
        while skewed.size < n:
            flips = np.zeros(n, dtype=np.uint64)
            for _ in range(4):  # up to 4 bits (a bit drawn twice cancels)
                flips ^= np.uint64(1) << rng.integers(0, 64, size=n).astype(np.uint64)
            flips[np.bitwise_count(flips) > 4] = 0
            skewed = np.unique(np.concatenate([skewed, base ^ flips]))
        skewed = rng.permutation(skewed)[:n]
    random = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    return np.concatenate([skewed, random])


def _peak_rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(shape: str, n: int, mode: str) -> dict[str, Any]:
    """One measurement, in this process."""
    import neardup
    from neardup import HammingIndex, TooManyPairsError

    fps = fingerprints(shape, n)
    index = HammingIndex(bits=64, max_distance=K[shape])
    index.add(fps)
    index.compact()
    warm = HammingIndex(bits=64, max_distance=K[shape])  # compile outside the clock
    warm.add(np.concatenate([fps[:200], fps[-200:]]))
    warm.compact()
    neardup.clusters(*warm.pairs()[:2], warm.ids)
    warm.clusters()
    sum(len(c[0]) for c in warm.iter_pairs())
    base_rss = _peak_rss_mib()
    out: dict[str, Any] = {"shape": shape, "n": n, "mode": mode, "items": len(index)}
    t = time.perf_counter()
    try:
        if mode == "held":
            i, j, _ = index.pairs()
            labels = neardup.clusters(i, j, index.ids)
            out["pairs"] = len(i)
        elif mode == "clusters":
            _, labels = index.clusters()
        else:
            out["pairs"] = sum(len(chunk[0]) for chunk in index.iter_pairs())
            labels = None
        out["seconds"] = time.perf_counter() - t
        if labels is not None:
            out["largest_cluster"] = int(np.unique(labels, return_counts=True)[1].max())
    except TooManyPairsError as error:
        out["seconds"] = time.perf_counter() - t
        out["refused"] = str(error).split(";")[0]
    out["peak_rss_mib"] = _peak_rss_mib()
    out["rss_before_mib"] = base_rss
    return out


def run_child(shape: str, n: int, mode: str, timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", shape, str(n), mode]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"shape": shape, "n": n, "mode": mode, "timeout_s": timeout}
    if done.returncode != 0:
        return {"shape": shape, "n": n, "mode": mode, "error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,30000,100000", help="N per shape, comma-separated")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--timeout", type=float, default=900, help="seconds per measurement")
    parser.add_argument("--json", metavar="FILE", help="also write the results here")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        shape, n, mode = args.child
        print(json.dumps(child(shape, int(n), mode)))
        return {}
    started = time.perf_counter()
    results: dict[str, Any] = {"benchmark": "pairs", "k": K, "machine": machine_info(), "runs": []}
    print(f"{'shape':8} {'N':>8} {'mode':9} {'pairs':>14} {'seconds':>9} {'peak MiB':>9}  note")
    for shape in args.shapes.split(","):
        for n in (int(s) for s in args.sizes.split(",")):
            for mode in MODES:
                r = run_child(shape, n, mode, args.timeout)
                results["runs"].append(r)
                note = r.get("refused") or ("timeout" if "timeout_s" in r else "") or str(r.get("error", ""))
                pairs = f"{r['pairs']:,}" if "pairs" in r else ""
                seconds, rss = r.get("seconds", float("nan")), r.get("peak_rss_mib", float("nan"))
                print(f"{shape:8} {n:>8,} {mode:9} {pairs:>14} {seconds:9.2f} {rss:9.0f}  {note}", flush=True)
    return finish(results, started, args.json, _print_ratios)


def _print_ratios(results: dict[str, Any]) -> None:
    by = {(r["shape"], r["n"], r["mode"]): r for r in results["runs"]}
    print("\nratios, clusters() over the held pair list (same shape and N, same run):")
    for (shape, n, mode), r in by.items():
        held = by.get((shape, n, "held"), {})
        if mode == "clusters" and "seconds" in r and "seconds" in held and "refused" not in held:
            print(
                f"  {shape} N={n:,}: time {r['seconds'] / held['seconds']:.3f}x, "
                f"peak RSS {r['peak_rss_mib'] / held['peak_rss_mib']:.3f}x"
            )


if __name__ == "__main__":
    main()
