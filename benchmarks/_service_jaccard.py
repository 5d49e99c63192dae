"""``bench_service.py --jaccard``: a ``neardup serve --jaccard 0.8`` measured on planted texts
against the exact answer.

Corpus: N stored texts of 200-400 words drawn from 50,000 (about 2 KB; unrelated texts share
almost no 3-shingle), a tenth of them copies of others with 0-4 words changed (so the index
holds clusters); queries are copies of stored texts with 0-20 words changed (Jaccard about 1.0
down to 0.75 against their source, around the threshold) and a fifth unrelated texts. Ground
truth: every (query, stored) pair at Jaccard >= T, by the exact AllPairs join of
``_exact_join.py`` over the same features the service extracts (word 3-shingles).

Measured: ``POST /documents`` of 1,000 texts a request at concurrency 2 (documents/s), the
server's resident memory and its data folder's size a stored document, ``POST /query`` of one
text a request at concurrency 1 and 8 (p50, p99), and the recall and precision of the answers
against the exact pairs, each answer's similarity checked equal to the exact one.
"""

from __future__ import annotations

import json
import signal
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from _exact_join import exact_jaccard_pairs

from neardup._config import FingerprintConfig
from neardup.decision.verify import FeatureTable, check_verify

THRESHOLD = 0.8
QUERIES = 2000


def planted_texts(n: int, rng: np.random.Generator) -> tuple[list[str], list[str]]:
    """(n stored texts, the queries), as the module docstring says."""
    vocabulary = np.array([f"w{i}" for i in range(50_000)])
    originals = n - n // 10
    lengths = rng.integers(200, 401, size=originals)
    stored = [" ".join(vocabulary[rng.integers(vocabulary.size, size=m)]) for m in lengths]

    def edited(text: str, changes: int) -> str:
        words = text.split()
        at = rng.choice(len(words), size=min(changes, len(words)), replace=False)
        for p in at:
            words[p] = vocabulary[rng.integers(vocabulary.size)]
        return " ".join(words)

    stored += [edited(stored[rng.integers(originals)], int(rng.integers(5))) for _ in range(n // 10)]
    near = QUERIES - QUERIES // 5
    queries = [edited(stored[rng.integers(n)], int(rng.integers(21))) for _ in range(near)]
    queries += [" ".join(vocabulary[rng.integers(vocabulary.size, size=300)]) for _ in range(QUERIES - near)]
    return stored, queries


def exact_answers(stored: list[str], queries: list[str]) -> list[dict[int, float]]:
    """Each query's stored positions at Jaccard >= THRESHOLD, with the value.

    Exact and lean: only (stored, query) pairs are wanted, so the queries' features are held and
    the stored texts streamed past them a chunk at a time; every stored text sharing a feature
    with a query has its intersection counted exactly. Memory is the queries' features and one
    chunk's, whatever N (the all-pairs join of ``_exact_join.py`` holds every stored text's
    features and ran out of memory at 1M); :func:`run` holds the two equal on a sample first.
    """
    config = _features_config()
    asked = FeatureTable.of(queries, config)
    query_sizes = np.diff(asked.doc_offsets)
    owner = np.repeat(np.arange(len(queries)), query_sizes)
    order = np.argsort(asked.hashes, kind="stable")
    query_hashes, query_owner = asked.hashes[order], owner[order]
    out: list[dict[int, float]] = [{} for _ in queries]
    for start in range(0, len(stored), _CHUNK):
        table = FeatureTable.of(stored[start : start + _CHUNK], config)
        sizes = np.diff(table.doc_offsets)
        doc = np.repeat(np.arange(sizes.size), sizes)
        first = np.searchsorted(query_hashes, table.hashes, "left")
        last = np.searchsorted(query_hashes, table.hashes, "right")
        hits = np.flatnonzero(last > first)
        # Each stored feature found in the queries, once for each query holding it.
        repeats = (last - first)[hits]
        at = np.repeat(first[hits] - np.cumsum(repeats) + repeats, repeats) + np.arange(repeats.sum())
        pair = np.repeat(doc[hits], repeats) * len(queries) + query_owner[at]
        pairs, shared = np.unique(pair, return_counts=True)
        stored_doc, query = np.divmod(pairs, len(queries))
        jaccard = shared / (sizes[stored_doc] + query_sizes[query] - shared)
        for s, q, j in zip(stored_doc.tolist(), query.tolist(), jaccard.tolist()):
            if j >= THRESHOLD:
                out[q][start + s] = j
    return out


def all_pairs_answers(stored: list[str], queries: list[str]) -> list[dict[int, float]]:
    """:func:`exact_answers` by the all-pairs join of every text: the check of the lean one."""
    table = FeatureTable.of(stored + queries, _features_config())
    first, second, jaccard = exact_jaccard_pairs(table.doc_offsets, table.hashes, THRESHOLD)
    n = len(stored)
    out: list[dict[int, float]] = [{} for _ in queries]
    for a, b, j in zip(first.tolist(), second.tolist(), jaccard.tolist()):
        if a < n <= b:  # first < second: a stored text and a query
            out[b - n][a] = j
    return out


_CHECKED = 20_000
"""Stored texts on which :func:`run` checks the lean reference against the all-pairs join."""

_CHUNK = 50_000
"""Stored texts whose features are held at once by :func:`exact_answers`."""


def _features_config() -> FingerprintConfig:
    """The features the service's Jaccard mode extracts (word 3-shingles)."""
    verification = check_verify(("jaccard", THRESHOLD), FingerprintConfig(), "word-shingles", None)
    assert verification is not None
    return verification.features


def ingest(url: str, stored: list[str], concurrency: int = 2) -> float:
    """Seconds to store ``stored`` (ids "0", "1", ...) in requests of 1,000, bodies built first."""
    bodies = [
        json.dumps({"documents": [{"id": str(s + i), "text": t} for i, t in enumerate(stored[s : s + 1000])]})
        for s in range(0, len(stored), 1000)
    ]

    def send(part: list[str]) -> None:
        with httpx.Client(base_url=url, timeout=600) as client:
            for body in part:
                response = client.post(
                    "/documents", content=body, headers={"content-type": "application/json"}
                )
                response.raise_for_status()

    t = time.perf_counter()
    threads = [threading.Thread(target=send, args=(bodies[i::concurrency],)) for i in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - t


def quality(url: str, queries: list[str], exact: list[dict[int, float]]) -> dict[str, Any]:
    """Recall and precision of the service's answers against ``exact``; every answer's
    similarity must equal the exact one."""
    with httpx.Client(base_url=url, timeout=600) as client:
        answers = []
        for s in range(0, len(queries), 100):
            body = {"documents": [{"text": q} for q in queries[s : s + 100]]}
            answers += client.post("/query", json=body).raise_for_status().json()["results"]
    found = correct = wrong_value = 0
    for answer, want in zip(answers, exact):
        for duplicate in answer["duplicates"]:
            found += 1
            position = int(duplicate["id"])
            if position in want:
                correct += 1
                wrong_value += duplicate["similarity"] != want[position]
    truth = sum(map(len, exact))
    return {
        "pairs_exact": truth,
        "pairs_found": found,
        "recall": correct / truth if truth else 1.0,
        "precision": correct / found if found else 1.0,
        "similarity_mismatches": wrong_value,
    }


def run(args: Any, results: dict[str, Any], start: Any, hammer: Any, rss_mib: Any, free_port: Any) -> None:
    """The Jaccard-mode measurements into ``results`` (``bench_service.py``'s helpers passed in)."""
    rng = np.random.default_rng(0)
    t = time.perf_counter()
    stored, queries = planted_texts(args.docs, rng)
    results["corpus_s"] = time.perf_counter() - t
    results["text_mib"] = sum(map(len, stored)) / 2**20
    sample = stored[:_CHECKED]
    assert exact_answers(sample, queries) == all_pairs_answers(sample, queries), "the lean reference is wrong"
    t = time.perf_counter()
    exact = exact_answers(stored, queries)
    results["exact_join_s"] = time.perf_counter() - t
    print(
        f"{args.docs:,} stored texts ({results['text_mib']:,.0f} MiB), {len(queries):,} queries; the "
        f"exact join: {sum(map(len, exact)):,} pairs at >= {THRESHOLD} in {results['exact_join_s']:.1f} s",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "data"
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        process, results["first_start_s"] = start(
            data, port, "--jaccard", str(THRESHOLD), "--max-batch", "1000"
        )
        try:
            results["rss_mib_empty"] = rss_mib(process)
            results["ingest_s"] = ingest(url, stored)
            results["ingest_docs_per_s"] = args.docs / results["ingest_s"]
            results["rss_mib_loaded"] = rss_mib(process)
            print(
                f"ingest: {results['ingest_docs_per_s']:,.0f} documents/s (1,000 a request, concurrency 2); "
                f"RSS {results['rss_mib_empty']:,.0f} MiB empty, {results['rss_mib_loaded']:,.0f} MiB loaded",
                flush=True,
            )
            results["quality"] = quality(url, queries, exact)
            print(f"T = {THRESHOLD}: {results['quality']}", flush=True)

            def one_query(r: np.random.Generator) -> dict:
                return {"documents": [{"text": queries[r.integers(len(queries))]}]}

            results["query"] = [hammer(url, "/query", one_query, c, args.seconds, 100_000) for c in (1, 8)]
            for r in results["query"]:
                print(
                    f"query of one ~2 KB text, concurrency {r['concurrency']}: {r['requests_per_s']:,.0f}/s, "
                    f"p50 {r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms",
                    flush=True,
                )
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=600)
        process, results["restart_s"] = start(data, port)
        results["rss_mib_restarted"] = rss_mib(process)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=600)
        results["disk_bytes_per_doc"] = sum(f.stat().st_size for f in data.iterdir()) / args.docs
    grown = results["rss_mib_restarted"] - results["rss_mib_empty"]
    results["rss_bytes_per_doc"] = grown * 2**20 / args.docs
    print(
        f"restart {results['restart_s']:.1f} s, RSS {results['rss_mib_restarted']:,.0f} MiB: "
        f"{results['rss_bytes_per_doc']:,.0f} bytes a stored document above the empty server's; "
        f"{results['disk_bytes_per_doc']:,.0f} bytes a document on disk",
        flush=True,
    )
