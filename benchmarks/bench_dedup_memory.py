"""``neardup dedup --memory``: the job's peak memory and time with the near-duplicate join in a
budget (out of core past it) against the default (the join in memory), in the same run, on a
corpus of many short documents, where the join's share of memory is largest.

Corpus: a text file of N lines (one document each) of 12 random 5-letter words, made with
numpy (no Python loop per line) and cached under ``--workdir``; 2% of the lines are exact
copies of an earlier one and 2% copies with their last word changed (near-duplicates).

Each mode runs ``neardup dedup corpus.txt -o kept.txt -q`` in a child process of its own
(``--memory SIZE --work-dir DIR`` for the budget): wall time, peak RSS (the child's
ru_maxrss), bytes a document at the peak, and whether the kept lines are the same.

    python benchmarks/bench_dedup_memory.py --docs 2000000             # ~1 min
    python benchmarks/bench_dedup_memory.py --json benchmarks/results/dedup_memory.json  # 20M

The last stdout line is ``RESULT {json}`` with every figure.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import finish, machine_info

WORDS, LETTERS = 12, 5
LINE_BYTES = WORDS * (LETTERS + 1)  # words, each followed by a space or the newline
COPIES = NEAR = 0.02
CHUNK = 1_000_000


def make_corpus(path: Path, docs: int, seed: int) -> None:
    """``docs`` lines of random words, 2% copies and 2% near-copies of earlier lines."""
    rng = np.random.default_rng(seed)
    with open(path, "wb") as out:
        for start in range(0, docs, CHUNK):
            n = min(CHUNK, docs - start)
            lines = rng.integers(ord("a"), ord("z") + 1, size=(n, WORDS, LETTERS + 1), dtype=np.uint8)
            lines[:, :, LETTERS] = ord(" ")
            lines[:, -1, LETTERS] = ord("\n")
            copied = rng.random(n) < COPIES + NEAR
            copied[0] = False
            source = (rng.random(n) * np.arange(n)).astype(np.int64)  # an earlier line of the chunk
            lines[copied] = lines[source[copied]]
            near = copied & (rng.random(n) < NEAR / (COPIES + NEAR))
            lines[near, -1, :LETTERS] = rng.integers(ord("a"), ord("z") + 1, size=(int(near.sum()), LETTERS))
            lines.tofile(out)


def run_dedup(corpus: Path, out: Path, extra: list[str]) -> dict:
    command = [sys.executable, "-m", "neardup", "dedup", str(corpus), "-o", str(out), "-q", *extra]
    start = time.perf_counter()
    child = subprocess.Popen(command)
    _, status, usage = os.wait4(child.pid, 0)  # this child's own peak
    child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    if child.returncode:
        raise SystemExit(f"{shlex.join(command)} failed with status {child.returncode}")
    written = out.read_bytes()
    digest, kept = hashlib.sha256(written).hexdigest(), written.count(b"\n")
    out.unlink()
    return {"seconds": seconds, "peak_kib": usage.ru_maxrss, "kept": kept, "sha256": digest}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=20_000_000, help="N, lines of the corpus")
    parser.add_argument("--memory", default="256M", help="the budget run's --memory")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", default=tempfile.gettempdir(), help="where the corpus is cached")
    parser.add_argument("--json", metavar="FILE", help="also write the results JSON to FILE")
    args = parser.parse_args()
    started = time.perf_counter()
    work = Path(args.workdir)
    corpus = work / f"neardup-bench-lines-{args.docs}-{args.seed}.txt"
    if not corpus.exists():
        print(f"making {corpus} ...", flush=True)
        make_corpus(corpus, args.docs, args.seed)
    with tempfile.TemporaryDirectory(dir=work) as spill:
        budget = run_dedup(corpus, work / "kept-budget.txt", ["--memory", args.memory, "--work-dir", spill])
    default = run_dedup(corpus, work / "kept-default.txt", [])
    results = {
        "machine": machine_info(),
        "docs": args.docs,
        "corpus_bytes": corpus.stat().st_size,
        "memory": args.memory,
        "budget": budget,
        "default": default,
        "same_kept": budget["sha256"] == default["sha256"],
        "time_ratio": budget["seconds"] / default["seconds"],
        "peak_ratio": budget["peak_kib"] / default["peak_kib"],
    }

    def footer(r: dict) -> None:
        for mode in ("default", "budget"):
            m = r[mode]
            per_doc = m["peak_kib"] * 1024 / r["docs"]
            print(
                f"{mode:8s} {m['seconds']:7.1f} s  peak {m['peak_kib'] / 2**20:6.2f} GiB "
                f"({per_doc:5.1f} B/doc)"
            )
        print(f"--memory {r['memory']}: time x{r['time_ratio']:.2f}, peak x{r['peak_ratio']:.2f}")
        print(f"same kept lines: {r['same_kept']} ({r['default']['kept']:,} of {r['docs']:,})")

    finish(results, started, args.json, footer)


if __name__ == "__main__":
    main()
