"""``bench_service.py --passages``: a ``neardup serve --passages`` measured on planted passages.

Corpus: N stored texts of 200-400 words drawn from 50,000 (about 2 KB, unrelated to each
other). Queries: texts of about 10 KB (1,500 random words) with one to three passages of 50 to
150 words planted, each copied from a random stored text with up to one word in ten changed,
inserted or deleted; a fifth of the queries have none. Truth: the planted (query, stored text,
characters of the query).

Measured: ``POST /documents`` of 1,000 texts a request at concurrency 2 (documents/s), the
server's resident memory and its data folder's size a stored document, ``POST /passages`` of
one 10 KB text a request at concurrency 1 (p50, p99), recall (a planted passage is found when
a passage of its stored text is reported over at least half of its characters in the query)
and precision (a reported passage is right when it overlaps a planted one of its stored text).
"""

from __future__ import annotations

import signal
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from _service_jaccard import ingest

QUERIES = 300
QUERY_WORDS = 1500

Planted = tuple[int, int, int]
"""(the stored text's position, start and end of the copy in the query, in characters)."""


def planted_texts(n: int, rng: np.random.Generator) -> tuple[list[str], list[str], list[list[Planted]]]:
    """(n stored texts, the queries, each query's planted passages), as the docstring says."""
    vocabulary = np.array([f"w{i}" for i in range(50_000)])
    words_list = vocabulary.tolist()
    lengths = rng.integers(200, 401, size=n)
    # Word numbers, one array for all (a list of words a text held 24 GB at a million texts).
    numbers = rng.integers(vocabulary.size, size=int(lengths.sum())).astype(np.int32)
    ends = np.cumsum(lengths)

    def words_of(i: int) -> list[str]:
        return [words_list[w] for w in numbers[ends[i] - lengths[i] : ends[i]].tolist()]

    queries, truth = [], []
    for q in range(QUERIES):
        words = list(vocabulary[rng.integers(vocabulary.size, size=QUERY_WORDS)])
        pieces: list[tuple[int, list[str]]] = []  # (stored position, the copy), in query order
        if q % 5:
            for _ in range(int(rng.integers(1, 4))):
                source = int(rng.integers(n))
                length = int(rng.integers(50, 151))
                stored = words_of(source)
                at = int(rng.integers(0, max(len(stored) - length, 0) + 1))
                copy = list(stored[at : at + length])
                for _ in range(int(rng.integers(0, len(copy) // 10 + 1))):
                    p, edit = int(rng.integers(len(copy))), int(rng.integers(3))
                    if edit == 0:
                        copy[p] = vocabulary[rng.integers(vocabulary.size)]
                    elif edit == 1:
                        copy.insert(p, vocabulary[rng.integers(vocabulary.size)])
                    else:
                        del copy[p]
                pieces.append((source, copy))
        # Between runs of random words: 1,500 words split where the copies go.
        cuts = sorted(rng.integers(0, QUERY_WORDS, size=len(pieces)).tolist())
        text, planted, done = "", [], 0
        for cut, (source, copy) in zip(cuts, pieces):
            text += " ".join(words[done:cut]) + " "
            start = len(text)
            text += " ".join(copy)
            planted.append((source, start, len(text)))
            text += " "
            done = cut
        text += " ".join(words[done:])
        queries.append(text)
        truth.append(planted)
    return [" ".join(words_of(i)) for i in range(n)], queries, truth


def quality(url: str, queries: list[str], truth: list[list[Planted]]) -> dict[str, Any]:
    """Recall and precision of the passages the service reports against the planted ones."""
    with httpx.Client(base_url=url, timeout=600) as client:
        answers = []
        for s in range(0, len(queries), 20):
            body = {"documents": [{"text": q} for q in queries[s : s + 20]]}
            answers += client.post("/passages", json=body).raise_for_status().json()["results"]
    found = right = reported = truncated = 0
    for answer, planted in zip(answers, truth):
        rows = answer["passages"]
        truncated += answer["truncated"]
        reported += len(rows)
        for source, start, end in planted:
            found += any(
                int(r["id_b"]) == source and _overlap(r, start, end) >= (end - start) / 2 for r in rows
            )
        right += sum(
            any(int(r["id_b"]) == source and _overlap(r, start, end) > 0 for source, start, end in planted)
            for r in rows
        )
    planted_total = sum(map(len, truth))
    return {
        "planted": planted_total,
        "reported": reported,
        "recall": found / planted_total if planted_total else 1.0,
        "precision": right / reported if reported else 1.0,
        "truncated": truncated,
    }


def _overlap(row: dict[str, Any], start: int, end: int) -> int:
    return max(0, min(row["end_a"], end) - max(row["start_a"], start))


def run(args: Any, results: dict[str, Any], start: Any, hammer: Any, rss_mib: Any, free_port: Any) -> None:
    """The passages-mode measurements into ``results`` (``bench_service.py``'s helpers passed in)."""
    rng = np.random.default_rng(0)
    t = time.perf_counter()
    stored, queries, truth = planted_texts(args.docs, rng)
    results["corpus_s"] = time.perf_counter() - t
    results["text_mib"] = sum(map(len, stored)) / 2**20
    results["query_kib"] = sum(map(len, queries)) / len(queries) / 1024
    print(
        f"{args.docs:,} stored texts ({results['text_mib']:,.0f} MiB), {len(queries):,} queries of "
        f"{results['query_kib']:.1f} KiB with {sum(map(len, truth)):,} planted passages",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "data"
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        process, results["first_start_s"] = start(data, port, "--passages", "--max-batch", "1000")
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
            results["quality"] = quality(url, queries, truth)
            print(f"planted passages: {results['quality']}", flush=True)

            def one_query(r: np.random.Generator) -> dict:
                return {"documents": [{"text": queries[r.integers(len(queries))]}]}

            results["query"] = [hammer(url, "/passages", one_query, 1, args.seconds, 100_000)]
            for r in results["query"]:
                print(
                    f"/passages of one ~10 KB text, concurrency {r['concurrency']}: "
                    f"{r['requests_per_s']:,.0f}/s, p50 {r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms",
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
