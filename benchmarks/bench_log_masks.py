"""Masking log lines: the regular expressions beside the compiled kernel, in one run.

Data: the LogHub-2k samples in ../shared/data/loghub-2k/ (each line's ``Content``, as
bench_logs.py reads them; research licence: read from there, never copied here), repeated to
``--lines`` lines. Both make the same keys (the run checks it on the samples); the kernel also
hashes each key.

Measures, on one core (wall time, and the process's CPU time: on a shared machine the
fairer figure): lines per second of ``Masker().keys_by_regex`` (the regular
expressions over a block, as before the kernel) and of ``Masker().key_array`` (the kernel on
Arrow buffers, keys and hashes) with the default masks and with none, the ratio, and the
kernel's first call (compiling, or loading numba's cache) apart from its warm runs.

    python benchmarks/bench_log_masks.py            # ~1M lines
    python benchmarks/bench_log_masks.py --quick    # ~100k lines
"""

from __future__ import annotations

import argparse
import csv
import gzip
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from _common import finish, machine_info
from neardup.logs.masking import Masker

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "loghub-2k"


def loghub_lines() -> list[str]:
    lines: list[str] = []
    for path in sorted(SHARED.glob("*_2k.log_structured.csv.gz")):
        with gzip.open(path, "rt", encoding="utf-8", newline="") as f:
            lines += [row["Content"] for row in csv.DictReader(f)]
    return lines


def best_of(repeats: int, run: Any) -> tuple[float, float]:
    """The fastest of ``repeats`` runs: (wall seconds, CPU seconds of this process). On a
    shared machine the CPU time is the fairer figure: it leaves out time others had the core."""
    wall = cpu = float("inf")
    for _ in range(repeats):
        started, started_cpu = time.perf_counter(), time.process_time()
        run()
        wall = min(wall, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - started_cpu)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="~100k lines instead of ~1M")
    parser.add_argument("--lines", type=int, help="lines to mask (default: 1M, 100k with --quick)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each, the fastest counts")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    started = time.perf_counter()
    sample = loghub_lines()
    if not sample:
        raise SystemExit(f"no LogHub samples in {SHARED}")
    wanted = args.lines or (100_000 if args.quick else 1_000_000)
    lines = (sample * (wanted // len(sample) + 1))[:wanted]
    texts = pa.array(lines, pa.large_string())
    size = texts.buffers()[2].size
    results: dict[str, Any] = {"bench": "log_masks", "machine": machine_info(), "lines": len(lines)}
    results["mean_line_bytes"] = size / len(lines)

    masker = Masker()
    first = time.perf_counter()
    masker.key_array(texts.slice(0, 10))
    results["kernel_first_call_s"] = time.perf_counter() - first
    keys, _ = masker.key_array(pa.array(sample, pa.large_string()))
    results["keys_equal_on_samples"] = keys.to_pylist() == masker.keys_by_regex(sample)

    for name, chosen in [("default_masks", Masker()), ("no_masks", Masker(()))]:
        regex_s, regex_cpu = best_of(args.repeats, lambda chosen=chosen: chosen.keys_by_regex(lines))
        kernel_s, kernel_cpu = best_of(args.repeats, lambda chosen=chosen: chosen.key_array(texts))
        results[name] = {
            "regex_lines_per_s": len(lines) / regex_s,
            "kernel_lines_per_s": len(lines) / kernel_s,
            "kernel_mb_per_s": size / kernel_s / 1e6,
            "speedup": regex_s / kernel_s,
            "regex_lines_per_cpu_s": len(lines) / regex_cpu,
            "kernel_lines_per_cpu_s": len(lines) / kernel_cpu,
            "speedup_cpu": regex_cpu / kernel_cpu,
        }

    def footer(r: dict[str, Any]) -> None:
        print(f"{r['lines']:,} LogHub-2k lines, {r['mean_line_bytes']:.0f} bytes each on average; one core")
        print(f"kernel's first call {r['kernel_first_call_s']:.2f} s", end="; ")
        print(f"keys equal to the regular expressions' on the samples: {r['keys_equal_on_samples']}")
        print(f"{'masks, time':<20} {'regex lines/s':>14} {'kernel lines/s':>15} {'ratio':>7}")
        for name in ("default_masks", "no_masks"):
            m = r[name]
            for clock, suffix in (("wall", ""), ("cpu", "_cpu")):
                regex, kernel = m[f"regex_lines_per{suffix}_s"], m[f"kernel_lines_per{suffix}_s"]
                speedup = m[f"speedup{suffix}"]
                print(f"{name + ', ' + clock:<20} {regex:>14,.0f} {kernel:>15,.0f} {speedup:>6.1f}x")

    finish(results, started, args.json, footer)


if __name__ == "__main__":
    main()
