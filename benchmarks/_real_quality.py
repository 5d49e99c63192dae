"""Part 4 of bench_quality: ``--jaccard T`` on a corpus of real-world shape, against exact ground
truth and datasketch's MinHash-LSH, in one run.

Corpus: ``_real_corpus.build_corpus`` (several versions of the same long documents, templated
pages, lists and tables, code, man pages in several languages, licences, edited copies).
Ground truth: every pair at 3-shingle Jaccard >= T, by an exact set-similarity join
(``_exact_join``). Scored: the pairs each tool reports, as document pairs:

- neardup: ``dedup(texts, jaccard=T)`` and its pairs, ``result.iter_pairs(every=True)``
  (every pair sharing a band key and verified >= T), end to end from the texts;
- datasketch ``MinHashLSH(threshold=T, num_perm=128)`` over the same 3-shingle hashes
  (neardup's tokeniser; its extraction time is charged to datasketch too): its candidates as
  they come (what a verify-free pipeline reports), and the same candidates verified exactly.

recall = reported pairs at >= T / pairs at >= T; precision = reported pairs at >= T / reported.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

THRESHOLDS = (0.5, 0.7, 0.8, 0.9)
NUM_PERM = 128
TARGET_RECALL, TARGET_PRECISION, TARGET_SPEEDUP = 0.95, 0.99, 10.0


def _keys(first: np.ndarray, second: np.ndarray, n: int) -> np.ndarray:
    first, second = np.asarray(first, np.int64), np.asarray(second, np.int64)
    return np.unique(np.minimum(first, second) * n + np.maximum(first, second))


def _score(reported: np.ndarray, truth: np.ndarray) -> dict[str, Any]:
    hits = int(np.isin(reported, truth).sum())
    return {
        "reported": int(reported.size),
        "recall": hits / truth.size if truth.size else 1.0,
        "precision": hits / reported.size if reported.size else 1.0,
    }


def _jaccard_of(table: Any, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    from neardup._kernels.similarity import pair_similarity

    return pair_similarity(
        table.doc_offsets, table.hashes, np.ones(table.hashes.size), first, second, False, 0.0
    )


def real_shape_rows(texts: list[str], peers: bool = True) -> dict[str, Any]:
    """The rows of table 4 (module docstring)."""
    from _exact_join import exact_jaccard_pairs

    import neardup
    from neardup.decision.verify import FeatureTable

    n = len(texts)
    config = neardup.FingerprintConfig(features="word-shingles", shingle_size=3)
    table = FeatureTable.of(texts, config)
    started = time.perf_counter()
    first, second, jaccard = exact_jaccard_pairs(table.doc_offsets, table.hashes, min(THRESHOLDS))
    out: dict[str, Any] = {"truth_s": time.perf_counter() - started, "rows": []}
    truth = {t: _keys(first[jaccard >= t], second[jaccard >= t], n) for t in THRESHOLDS}
    out["truth_pairs"] = {str(t): int(truth[t].size) for t in THRESHOLDS}

    neardup.dedup(texts[:50], jaccard=0.8)  # compile outside the timings
    for t in THRESHOLDS:
        started = time.perf_counter()
        result = neardup.dedup(texts, jaccard=t)
        dedup_s = time.perf_counter() - started
        chunks = list(result.iter_pairs(every=True))
        seconds = time.perf_counter() - started
        reported = _keys(
            np.concatenate([c.first for c in chunks]), np.concatenate([c.second for c in chunks]), n
        )
        out["rows"].append(
            {
                "tool": "neardup --jaccard (verified)",
                "threshold": t,
                "plan": result.plan.describe() if result.plan else None,
                "dedup_s": dedup_s,
                "seconds": seconds,
                "docs_s": n / seconds,
                "removed": result.stats.duplicates,
                **_score(reported, truth[t]),
            }
        )
    if peers:
        out["rows"] += datasketch_rows(texts, truth)
    for row in out["rows"]:
        ours = next(
            r for r in out["rows"] if r["threshold"] == row["threshold"] and r["tool"].startswith("neardup")
        )
        row["neardup_speedup"] = ours["docs_s"] / row["docs_s"]
    return out


def datasketch_rows(texts: list[str], truth: dict[float, np.ndarray]) -> list[dict[str, Any]]:
    try:
        import datasketch
        from datasketch import MinHash
    except ImportError:
        return []
    import neardup
    from neardup.decision.verify import FeatureTable

    n = len(texts)
    config = neardup.FingerprintConfig(features="word-shingles", shingle_size=3)
    started = time.perf_counter()
    table = FeatureTable.of(texts, config)
    sets = [
        [h.tobytes() for h in table.hashes[table.doc_offsets[d] : table.doc_offsets[d + 1]].astype("<u8")]
        for d in range(n)
    ]
    signatures = MinHash.bulk(sets, num_perm=NUM_PERM)
    shared_s = time.perf_counter() - started
    rows = []
    for t in THRESHOLDS:
        started = time.perf_counter()
        a, b = datasketch_pairs(signatures, t, NUM_PERM)
        raw_s = shared_s + time.perf_counter() - started
        candidates = _keys(a, b, n)
        row = {"threshold": t, "version": datasketch.__version__, "num_perm": NUM_PERM}
        rows.append(
            {**row, "tool": "datasketch MinHashLSH (its own output)", "seconds": raw_s, "docs_s": n / raw_s}
            | _score(candidates, truth[t])
        )
        started = time.perf_counter()
        a, b = candidates // n, candidates % n
        good = _jaccard_of(table, a, b) >= t
        verified_s = raw_s + time.perf_counter() - started
        rows.append(
            {
                **row,
                "tool": "datasketch MinHashLSH, verified",
                "seconds": verified_s,
                "docs_s": n / verified_s,
            }
            | _score(candidates[good], truth[t])
        )
    return rows


def datasketch_pairs(signatures: list[Any], threshold: float, num_perm: int) -> tuple[np.ndarray, np.ndarray]:
    """datasketch's candidate pairs as it reports them: every signature inserted into a
    ``MinHashLSH(threshold, num_perm)``, then each queried; int64 (first, second), first < second."""
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    with lsh.insertion_session() as session:
        for d, signature in enumerate(signatures):
            session.insert(d, signature, check_duplication=False)
    firsts, seconds = [], []
    for d, signature in enumerate(signatures):
        found = [j for j in lsh.query(signature) if j > d]
        firsts += [d] * len(found)
        seconds += found
    return np.array(firsts, np.int64), np.array(seconds, np.int64)


def table4(result: dict[str, Any]) -> str:
    lines = [
        f"pairs at 3-shingle Jaccard >= T (exact join, {result['truth_s']:.1f} s): {result['truth_pairs']}",
        "",
        "| T | tool | reported pairs | recall | precision | docs/s | neardup's speed-up |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in sorted(result["rows"], key=lambda r: (r["threshold"], not r["tool"].startswith("neardup"))):
        cells = (
            r["threshold"],
            r["tool"],
            f"{r['reported']:,}",
            f"{r['recall']:.3f}",
            f"{r['precision']:.3f}",
        )
        lines.append(
            "| " + " | ".join(map(str, cells)) + f" | {r['docs_s']:,.0f} | {r['neardup_speedup']:.1f}x |"
        )
    return "\n".join(lines)


def meets_targets(result: dict[str, Any]) -> bool:
    """Recall and precision targets at every T, and the speed-up over each datasketch row."""
    ours = [r for r in result["rows"] if r["tool"].startswith("neardup")]
    peers = [r for r in result["rows"] if not r["tool"].startswith("neardup")]
    return all(r["recall"] >= TARGET_RECALL and r["precision"] >= TARGET_PRECISION for r in ours) and all(
        r["neardup_speedup"] >= TARGET_SPEEDUP for r in peers
    )
