"""Which candidate generator finds the pairs at a Jaccard threshold: the curves behind ``--jaccard``.

Corpus: ``_real_corpus.build_corpus`` (Python's standard library in several versions, man pages
in several languages, licences, changelogs, templated pages, tables, edited copies), built from
this machine's files. Ground truth: every pair at 3-shingle Jaccard >= 0.5, by an exact
set-similarity join (``_exact_join``, prefix filtering, checked against brute force).

For each threshold T in 0.5 ... 0.9 ("recall" is the share of the pairs at Jaccard >= T that
become candidates; verification then keeps exactly those >= T):

1. SimHash, three recipes (64-bit 3-shingles tf, the default; 128-bit words sublinear, the
   README's high-recall recipe; 128-bit 3-shingles): the Hamming distance of every true pair,
   so the radius that reaches 95% recall at T, and whether the index serves it (8 bits at
   64, 16 at 128); at the largest radius served, the recall reached and the candidate pairs
   per document (the index's self-join over all documents).
2. MinHash-LSH banded for T (``neardup.decision.lsh.banding_for``): recall, candidate pairs per
   document, the theory's chance at T, and seconds for the band keys.
3. ``neardup.dedup(texts, jaccard=T)`` end to end: seconds, documents/s, pairs checked.

    python benchmarks/bench_curves.py --quick      # 3,000 documents, about a minute
    python benchmarks/bench_curves.py              # 20,000 documents

Markdown tables on stdout (for docs/jaccard.md); ``benchmarks/results/curves[-quick].json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from _exact_join import exact_jaccard_pairs
from _real_corpus import cached_corpus

import neardup
from _common import finish, machine_info
from neardup import FingerprintConfig, HammingIndex
from neardup.decision.lsh import banding_for, candidate_pairs
from neardup.decision.verify import FeatureTable, check_verify

THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)
TARGET_RECALL = 0.95
SIMHASH_RECIPES: dict[str, dict[str, Any]] = {
    "64-bit 3-shingles tf (default)": dict(bits=64),
    "128-bit words sublinear": dict(bits=128, features="words", weighting="sublinear"),
    "128-bit 3-shingles tf": dict(bits=128),
}
SERVED = {64: 8, 128: 16}
"""The largest radius the index serves per width (multi-index hashing)."""


def _distances(fps: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    d = np.bitwise_count(fps[first] ^ fps[second]).astype(np.int64)
    return d if d.ndim == 1 else d.sum(axis=1)


def simhash_curves(texts: list[str], first, second, jaccard) -> list[dict[str, Any]]:
    rows = []
    for name, options in SIMHASH_RECIPES.items():
        config = FingerprintConfig(**options)
        started = time.perf_counter()
        fps = neardup.Fingerprinter(config).fingerprint_batch(texts)
        fingerprint_s = time.perf_counter() - started
        distance = _distances(fps, first, second)
        k = SERVED[config.bits]
        started = time.perf_counter()
        index = HammingIndex(bits=config.bits, max_distance=k)
        index.add(fps)
        index.compact()
        candidates = sum(len(chunk[0]) for chunk in index.iter_pairs())
        join_s = time.perf_counter() - started
        for t in THRESHOLDS:
            at = distance[jaccard >= t]
            needed = int(np.quantile(at, TARGET_RECALL, method="higher")) if at.size else 0
            rows.append(
                dict(
                    generator=name,
                    threshold=t,
                    pairs=int(at.size),
                    radius_for_95=needed,
                    served=needed <= k,
                    radius=k,
                    recall=float((at <= k).mean()) if at.size else 1.0,
                    candidates_per_doc=candidates / len(texts),
                    seconds=fingerprint_s + join_s,
                )
            )
    return rows


def minhash_curves(texts: list[str], table: FeatureTable, first, second, jaccard) -> list[dict[str, Any]]:
    rows = []
    verification = check_verify(("jaccard", 0.5), FingerprintConfig(), "word-shingles", 3)
    assert verification is not None
    for t in THRESHOLDS:
        banding = banding_for(t)
        started = time.perf_counter()
        keys = banding.keys(texts, verification)
        keys_s = time.perf_counter() - started
        candidates = sum(len(a) for a, _ in candidate_pairs(keys, 1 << 22))
        found = (keys[first] == keys[second]).any(axis=1)
        at = jaccard >= t
        rows.append(
            dict(
                generator=banding.describe(),
                threshold=t,
                pairs=int(at.sum()),
                recall=float(found[at].mean()) if at.any() else 1.0,
                recall_in_band=float(found[at & (jaccard < t + 0.1)].mean())
                if (at & (jaccard < t + 0.1)).any()
                else 1.0,
                theory_at_t=banding.probability(t),
                candidates_per_doc=candidates / len(texts),
                seconds=keys_s,
            )
        )
    return rows


def end_to_end(texts: list[str]) -> list[dict[str, Any]]:
    rows = []
    neardup.dedup(texts[:50], jaccard=0.8)  # compile outside the timings
    for t in THRESHOLDS:
        started = time.perf_counter()
        result = neardup.dedup(texts, jaccard=t)
        seconds = time.perf_counter() - started
        rows.append(
            dict(
                threshold=t,
                seconds=seconds,
                docs_per_s=len(texts) / seconds,
                checked=result.stats.checked_pairs,
                similar=result.stats.similar_pairs,
                removed=result.stats.duplicates,
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3,000 documents")
    parser.add_argument("--docs", type=int, help="corpus size (default 20,000; 3,000 with --quick)")
    parser.add_argument("--cache", default="/tmp/neardup-real-corpus-{docs}.jsonl")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    docs = args.docs or (3000 if args.quick else 20000)
    corpus = cached_corpus(args.cache.format(docs=docs), max_docs=docs)
    texts = [d["text"] for d in corpus]
    kinds = [d["kind"] for d in corpus]
    print(f"corpus: {len(texts):,} documents, {sum(map(len, texts)) / 1e6:.1f} M characters", file=sys.stderr)

    table = FeatureTable.of(texts, FingerprintConfig(features="word-shingles", shingle_size=3))
    t0 = time.perf_counter()
    first, second, jaccard = exact_jaccard_pairs(table.doc_offsets, table.hashes, min(THRESHOLDS))
    truth_s = time.perf_counter() - t0
    print(
        f"ground truth: {len(first):,} pairs at Jaccard >= {min(THRESHOLDS)} in {truth_s:.1f} s",
        file=sys.stderr,
    )

    results: dict[str, Any] = {
        "machine": machine_info(("datasketch",)),
        "documents": len(texts),
        "characters": sum(map(len, texts)),
        "kinds": {k: kinds.count(k) for k in sorted(set(kinds))},
        "truth_pairs": {f">={t}": int((jaccard >= t).sum()) for t in THRESHOLDS},
        "truth_seconds": truth_s,
        "simhash": simhash_curves(texts, first, second, jaccard),
        "minhash": minhash_curves(texts, table, first, second, jaccard),
        "end_to_end": end_to_end(texts),
    }
    json_path = args.json or str(
        Path(__file__).parent / "results" / f"curves{'-quick' if args.quick else ''}.json"
    )
    return 0 if finish(results, started, json_path, _tables) else 1


def _row(*cells: object) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _tables(results: dict[str, Any]) -> None:
    print(f"\n{results['documents']:,} documents ({results['kinds']})")
    print(f"pairs at 3-shingle Jaccard >= T: {results['truth_pairs']}\n")
    print(
        "SimHash: the radius that finds 95% of the pairs at >= T; the recall at the largest radius served\n"
    )
    print(
        _row(
            "recipe",
            "T",
            "pairs",
            "radius for 95%",
            "served",
            "recall at served radius",
            "candidates/doc",
            "s",
        )
    )
    print(_row(*["---"] * 8))
    for r in results["simhash"]:
        print(
            _row(
                r["generator"], r["threshold"], f"{r['pairs']:,}", r["radius_for_95"],
                "yes" if r["served"] else "no", f"{r['recall']:.3f} (k={r['radius']})",
                f"{r['candidates_per_doc']:.1f}", f"{r['seconds']:.2f}",
            )
        )  # fmt: skip
    print("\nMinHash-LSH banded for T (neardup.decision.lsh.banding_for)\n")
    print(
        _row(
            "T",
            "banding",
            "pairs",
            "recall",
            "recall in [T, T+0.1)",
            "theory at T",
            "candidates/doc",
            "keys s",
        )
    )
    print(_row(*["---"] * 8))
    for r in results["minhash"]:
        print(
            _row(
                r["threshold"], r["generator"], f"{r['pairs']:,}", f"{r['recall']:.3f}",
                f"{r['recall_in_band']:.3f}", f"{r['theory_at_t']:.3f}", f"{r['candidates_per_doc']:.1f}",
                f"{r['seconds']:.2f}",
            )
        )  # fmt: skip
    print("\nneardup.dedup(texts, jaccard=T), end to end\n")
    print(_row("T", "s", "docs/s", "pairs checked", "passed", "removed"))
    print(_row(*["---"] * 6))
    for r in results["end_to_end"]:
        print(
            _row(
                r["threshold"], f"{r['seconds']:.2f}", f"{r['docs_per_s']:,.0f}", f"{r['checked']:,}",
                f"{r['similar']:,}", f"{r['removed']:,}",
            )
        )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
