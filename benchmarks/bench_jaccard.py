"""``neardup dedup --jaccard T`` against the default SimHash job, rensa and datasketch, in one run,
on a corpus of long documents of real-world shape.

Corpus: ``_real_corpus`` (several versions of the same long documents, man pages in several
languages, licences, changelogs, templated pages, tables, edited copies; documents of a few
bytes to 100 KB, about 11 KB on average), cached as JSONL under ``--workdir``.

neardup runs as a user runs it, ``neardup dedup corpus.jsonl -o kept.jsonl -q`` in a child
process (interpreter start and imports counted): the default job, ``--jaccard 0.8`` and
``--jaccard 0.5``, and each threshold again listing every verified pair (``--pairs
pairs.parquet --all-pairs``). The runs alternate, ``--repeats`` rounds, best of each. Reported:
seconds, MB/s of the input file, documents a second, and the ratio to the default job's MB/s.

Peers, in this process, on the texts read from the same file (untimed), with the issue's
thresholds of 0.8 and 0.5:

- rensa ``RMinHash(num_perm=128)`` and ``RMinHashLSH`` (a Rust MinHash; no check of its
  candidates): every document's MinHash made, queried, then inserted. Fed neardup's word
  3-shingles (the same feature hashes as text, made apart, untimed) and, as a user pairs it,
  shingles made in Python (``text.lower().split()``, three words joined): its documents a
  second with and without making them.
- datasketch ``MinHash(num_perm=128)`` + ``MinHashLSH``, pure Python, on the first
  ``--peer-docs`` documents: shingles made in Python, ``MinHash.bulk``, insert and query.

    python benchmarks/bench_jaccard.py --quick      # 2,000 documents; about a minute
    python benchmarks/bench_jaccard.py --json benchmarks/results/jaccard.json   # 20,000 (230 MB)
    python benchmarks/bench_jaccard.py --docs 60000 --repeats 2                  # 660 MB

The last stdout line is ``RESULT {json}`` with every figure.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _real_corpus import cached_corpus

from _common import finish, machine_info

THRESHOLDS = (0.8, 0.5)
NUM_PERM = 128
MODES: dict[str, list[str]] = {
    "simhash (default)": [],
    **{f"--jaccard {t}": ["--jaccard", str(t)] for t in THRESHOLDS},
    **{
        f"--jaccard {t}, every pair": ["--jaccard", str(t), "--pairs", "PAIRS", "--all-pairs"]
        for t in THRESHOLDS
    },
}


def run_neardup(corpus: Path, work: Path, extra: list[str]) -> float:
    pairs = work / "pairs.parquet"
    args = [pairs.as_posix() if a == "PAIRS" else a for a in extra]
    command = [
        sys.executable,
        "-m",
        "neardup",
        "dedup",
        str(corpus),
        "-o",
        str(work / "kept.jsonl"),
        "-q",
        *args,
    ]
    started = time.perf_counter()
    subprocess.run(command, check=True)
    seconds = time.perf_counter() - started
    (work / "kept.jsonl").unlink()
    pairs.unlink(missing_ok=True)
    return seconds


def python_shingles(text: str) -> list[str]:
    words = text.lower().split()
    return [" ".join(words[i : i + 3]) for i in range(max(len(words) - 2, 1))]


def rensa_rows(texts: list[str], hashes: list[list[str]]) -> list[dict[str, Any]]:
    """rensa's MinHash and LSH, fed ``hashes`` (made apart, untimed) or shingles it is timed
    making in Python."""
    try:
        from rensa import RMinHash, RMinHashLSH
    except ImportError:
        print("rensa is not installed: its rows are skipped (pip install rensa)")
        return []
    from importlib.metadata import version

    rows = []
    for t in THRESHOLDS:
        bands = {0.8: 16, 0.5: 32}[t]
        for shingled in ("neardup's shingles, made apart", "shingles made in Python"):
            started = time.perf_counter()
            lsh = RMinHashLSH(threshold=t, num_perm=NUM_PERM, num_bands=bands)
            making = 0.0
            for d, text in enumerate(texts):
                if shingled == "shingles made in Python":
                    at = time.perf_counter()
                    features = python_shingles(text)
                    making += time.perf_counter() - at
                else:
                    features = hashes[d]
                m = RMinHash(num_perm=NUM_PERM, seed=0)
                m.update(features)
                lsh.query(m)
                lsh.insert(d, m)
            seconds = time.perf_counter() - started
            rows.append(
                {
                    "tool": f"rensa {version('rensa')} ({shingled})",
                    "threshold": t,
                    "seconds": seconds,
                    "making_shingles_s": making,
                    "docs_s": len(texts) / seconds,
                }
            )
    return rows


def datasketch_rows(texts: list[str]) -> list[dict[str, Any]]:
    try:
        import datasketch
        from datasketch import MinHash, MinHashLSH
    except ImportError:
        print("datasketch is not installed: its rows are skipped (pip install -e '.[bench]')")
        return []
    rows = []
    for t in THRESHOLDS:
        started = time.perf_counter()
        sets = [[s.encode() for s in python_shingles(text)] for text in texts]
        signatures = MinHash.bulk(sets, num_perm=NUM_PERM)
        lsh = MinHashLSH(threshold=t, num_perm=NUM_PERM)
        for d, m in enumerate(signatures):
            lsh.query(m)
            lsh.insert(d, m)
        seconds = time.perf_counter() - started
        rows.append(
            {
                "tool": f"datasketch {datasketch.__version__}",
                "threshold": t,
                "docs": len(texts),
                "seconds": seconds,
                "docs_s": len(texts) / seconds,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=20000, help="documents of the corpus")
    parser.add_argument("--quick", action="store_true", help="2,000 documents, one round")
    parser.add_argument("--repeats", type=int, default=3, help="rounds of the neardup runs (best of)")
    parser.add_argument("--peer-docs", type=int, default=2000, help="datasketch's documents")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--workdir", default=tempfile.gettempdir(), help="where the corpus is cached")
    parser.add_argument("--json", metavar="FILE", help="also write the results JSON to FILE")
    args = parser.parse_args()
    docs, repeats = (2000, 1) if args.quick else (args.docs, args.repeats)
    started = time.perf_counter()
    work = Path(args.workdir)
    corpus = work / f"neardup-bench-real-{docs}.jsonl"
    records = cached_corpus(corpus, max_docs=docs)
    texts = [r["text"] for r in records]
    del records
    size = corpus.stat().st_size
    print(f"{corpus}: {len(texts):,} documents, {size / 1e6:.0f} MB", flush=True)

    with tempfile.TemporaryDirectory(dir=work) as scratch:
        run_neardup(corpus, Path(scratch), ["--jaccard", "0.8"])  # kernels loaded, file in cache
        times: dict[str, list[float]] = {mode: [] for mode in MODES}
        for _ in range(repeats):
            for mode, extra in MODES.items():
                times[mode].append(run_neardup(corpus, Path(scratch), extra))
    best = {mode: min(seconds) for mode, seconds in times.items()}
    rows = [
        {
            "tool": f"neardup {mode}",
            "seconds": best[mode],
            "all_seconds": times[mode],
            "mb_s": size / 1e6 / best[mode],
            "docs_s": len(texts) / best[mode],
            "vs_simhash": best["simhash (default)"] / best[mode],
        }
        for mode in MODES
    ]
    if not args.no_peers:
        from neardup import FingerprintConfig
        from neardup.decision.verify import FeatureTable

        table = FeatureTable.of(texts, FingerprintConfig())
        offsets = table.doc_offsets
        hashes = [
            [str(h) for h in table.hashes[offsets[d] : offsets[d + 1]].tolist()] for d in range(len(texts))
        ]
        rows += rensa_rows(texts, hashes)
        rows += datasketch_rows(texts[: args.peer_docs])
    results = {
        "machine": machine_info(("rensa", "datasketch")),
        "docs": len(texts),
        "corpus_bytes": size,
        "repeats": repeats,
        "rows": rows,
    }

    def footer(r: dict[str, Any]) -> None:
        print(f"\n{r['docs']:,} documents, {r['corpus_bytes'] / 1e6:.0f} MB of JSONL")
        print("| tool | seconds | MB/s | docs/s | vs the SimHash job's MB/s |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for row in r["rows"]:
            name = row["tool"] + (f", T = {row['threshold']}" if "threshold" in row else "")
            if "docs" in row:
                name += f" ({row['docs']:,} documents)"
            mb_s = f"{row['mb_s']:.0f}" if "mb_s" in row else ""
            ratio = f"{row['vs_simhash']:.2f}x" if "vs_simhash" in row else ""
            print(f"| {name} | {row['seconds']:.2f} | {mb_s} | {row['docs_s']:,.0f} | {ratio} |")
            if row.get("making_shingles_s"):
                bare = r["docs"] / (row["seconds"] - row["making_shingles_s"])
                print(f"| the same, without making the shingles | | | {bare:,.0f} | |")

    finish(results, started, args.json, footer)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
