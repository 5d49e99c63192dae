"""``neardup serve`` under load, on loopback: lookups and writes per second, latency, restart.

A data folder is filled with N random 64-bit fingerprints, written straight into its store
(``--fill direct``: the same SQLite rows the server writes, 100,000 a transaction; ``--fill
http``: ``POST /documents`` in batches of 1,000), then a server process (``python -m neardup
serve``) on 127.0.0.1 starts from it (from the store's rows: the first start) and, each for a
fixed time and a bounded number of requests:

* ``POST /query`` of one fingerprint per request at concurrency 1, 8 and 64: requests/s and
  latency p50 and p99, by ``wrk`` (a compiled load generator; ``apt-get install wrk``) when it
  is on the PATH, else by Python threads (which then share the CPUs and measure less);
* ``POST /query`` of 100 fingerprints per request at concurrency 8: fingerprints/s;
* ``POST /documents`` of 1,000 new texts of about 2 KB per request (fingerprinted by the
  server) at concurrency 1 and 2, bodies built before the clock starts: documents/s;
* the server's memory (VmRSS), and restart: a clean stop (the index snapshot is saved) and a
  start until ``/healthz`` answers, then SIGKILL and a start from the store's rows alone.

    python benchmarks/bench_service.py                   # N = 1M
    python benchmarks/bench_service.py --docs 10000000   # the issue's 10M
    python benchmarks/bench_service.py --docs 100000 --seconds 3
    python benchmarks/bench_service.py --writes          # single-document writes only

``--writes`` measures instead what a crawler's "have I seen this page? if not, remember it"
costs: a server started on an empty data folder with an empty kernel cache (``NUMBA_CACHE_DIR``
a new temporary folder) and the seconds from its start to its first answered write; then
``POST /documents`` of one new ~2 KB text per request from 1 and from 8 clients, each
acknowledged only once on disk: documents/s, of a server with the default ``--commit-delay``
(2 ms) and of one with none, in turns in the same run, and the ratio of their medians.

``--jaccard`` measures a ``neardup serve --jaccard 0.8`` instead (``_service_jaccard.py``):
texts ingested over HTTP, memory and disk a stored document, one-text queries at concurrency 1
and 8, and recall and precision against the exact Jaccard join of the same texts.

    python benchmarks/bench_service.py --jaccard --docs 100000

``--passages`` measures a ``neardup serve --passages`` (``_service_passages.py``): texts
ingested over HTTP, memory and disk a stored document, one 10 KB text a ``POST /passages``,
and recall and precision of planted passages.

    python benchmarks/bench_service.py --passages --docs 100000

The last stdout line is ``RESULT {json}``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from _common import finish, machine_info


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(
    data: Path,
    port: int,
    *options: str,
    env: dict[str, str] | None = None,
    ready: Any = None,
) -> tuple[subprocess.Popen, float]:
    """A ``neardup serve`` process on ``data`` with ``options``, and the seconds until
    ``ready(url)`` (default: ``/healthz``) first answered 200. Its output (the access log)
    is dropped."""
    t = time.perf_counter()
    url = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in {**os.environ, **(env or {})}.items() if k != "NEARDUP_TOKEN"}  # loopback
    argv = [sys.executable, "-m", "neardup", "serve", "--data", str(data), "--port", str(port), *options]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    ready = ready or (lambda url: httpx.get(f"{url}/healthz", timeout=1))
    while True:
        try:
            if ready(url).status_code == 200:
                return process, time.perf_counter() - t
        except httpx.TransportError:
            if process.poll() is not None:
                raise RuntimeError("neardup serve exited") from None
            time.sleep(0.05)


def hexes(values: np.ndarray) -> list[str]:
    return [f"{v:016x}" for v in values.tolist()]


def load(url: str, fps: np.ndarray, first_id: int) -> float:
    t = time.perf_counter()
    with httpx.Client(base_url=url, timeout=120) as client:
        for start in range(0, fps.size, 1000):
            part = fps[start : start + 1000]
            documents = [
                {"id": str(first_id + start + i), "fingerprint": h} for i, h in enumerate(hexes(part))
            ]
            client.post("/documents", json={"documents": documents}).raise_for_status()
    return time.perf_counter() - t


def fill_store(data: Path, fps: np.ndarray) -> float:
    """Write ``fps`` (ids "0", "1", ...) into a new data folder's store, as the server would."""
    from neardup.service.store import Store

    t = time.perf_counter()
    store = Store(data)
    for start in range(0, fps.size, 100_000):
        part = fps[start : start + 100_000].view(np.int64).tolist()
        store.add((str(start + i), (v,), None) for i, v in enumerate(part))
    store.close()
    return time.perf_counter() - t


def rss_mib(process: subprocess.Popen) -> float:
    with open(f"/proc/{process.pid}/status") as status:
        return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmRSS:"))


def wrk_queries(
    url: str, stored: np.ndarray, concurrency: int, seconds: float, folder: Path
) -> dict[str, Any]:
    """``wrk`` posting one-fingerprint queries near stored ones (1,000 bodies, in turn)."""
    rng = np.random.default_rng(concurrency)
    near = stored[rng.integers(stored.size, size=1000)] ^ (
        np.uint64(1) << rng.integers(64, size=1000).astype(np.uint64)
    )
    bodies = [json.dumps({"documents": [{"fingerprint": f"{int(v):016x}"}]}) for v in near]
    script = folder / "query.lua"
    script.write_text(
        "bodies = {" + ",".join(json.dumps(b) for b in bodies) + "}\n"
        "i = 0\n"
        'wrk.method = "POST"\n'
        'wrk.headers["Content-Type"] = "application/json"\n'
        "request = function()\n"
        "  i = i % #bodies + 1\n"
        "  return wrk.format(nil, nil, nil, bodies[i])\n"
        "end\n"
    )
    out = subprocess.run(
        [
            "wrk",
            "-t1",
            f"-c{concurrency}",
            f"-d{max(1, int(seconds))}s",
            "--latency",
            "-s",
            str(script),
            f"{url}/query",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    units = {"us": 1e-3, "ms": 1.0, "s": 1e3}

    def percentile(name: str) -> float:
        value, unit = re.search(rf"{name}%\s+([\d.]+)(us|ms|s)\b", out).groups()  # type: ignore[union-attr]
        return float(value) * units[unit]

    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise RuntimeError(f"/query answered {errors.group(1)} errors under wrk")
    return {
        "concurrency": concurrency,
        "tool": "wrk",
        "requests": int(re.search(r"(\d+) requests in", out).group(1)),  # type: ignore[union-attr]
        "requests_per_s": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),  # type: ignore[union-attr]
        "p50_ms": percentile("50"),
        "p99_ms": percentile("99"),
    }


def ingest_texts(url: str, concurrency: int, batches: int, tag: str) -> dict[str, Any]:
    """``POST /documents`` of 1,000 new texts of about 2 KB each, bodies built beforehand."""
    rng = np.random.default_rng(len(tag))
    words = np.array([f"w{i}" for i in range(20_000)])
    bodies = []
    for b in range(batches):
        texts = [" ".join(words[rng.integers(words.size, size=330)]) for _ in range(1000)]
        documents = [{"id": f"{tag}-{b}-{i}", "text": t} for i, t in enumerate(texts)]
        bodies.append(json.dumps({"documents": documents}).encode())

    def send(part: list[bytes]) -> None:
        with httpx.Client(base_url=url, timeout=300) as client:
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
    wall = time.perf_counter() - t
    return {
        "concurrency": concurrency,
        "documents": 1000 * batches,
        "text_bytes": sum(map(len, bodies)),
        "documents_per_s": 1000 * batches / wall,
    }


def hammer(url: str, route: str, make: Any, concurrency: int, seconds: float, most: int) -> dict[str, Any]:
    """Requests from ``concurrency`` threads for ``seconds`` (at most ``most`` in all)."""
    latencies: list[float] = []
    counted = [0]
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def worker(seed: int) -> None:
        rng = np.random.default_rng(seed)
        with httpx.Client(base_url=url, timeout=60) as client:
            while time.perf_counter() < deadline:
                with lock:
                    if counted[0] >= most:
                        return
                    counted[0] += 1
                body = make(rng)
                t = time.perf_counter()
                response = client.post(route, json=body)
                if response.status_code != 200:
                    raise RuntimeError(f"{route}: {response.status_code} {response.text[:300]}")
                with lock:
                    latencies.append(time.perf_counter() - t)

    t = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - t
    ms = np.array(latencies) * 1000
    return {
        "concurrency": concurrency,
        "requests": len(latencies),
        "requests_per_s": len(latencies) / wall,
        "p50_ms": float(np.percentile(ms, 50)) if ms.size else None,
        "p99_ms": float(np.percentile(ms, 99)) if ms.size else None,
    }


def single_writes(url: str, concurrency: int, seconds: float, tag: str) -> dict[str, Any]:
    """``POST /documents`` of one new ~2 KB text per request from ``concurrency`` keep-alive
    connections for ``seconds``: acknowledged documents/s and latency. The requests are built
    before the clock starts and sent by one asyncio thread over raw sockets (httpx costs about
    a millisecond of CPU a request, which on a small machine measures the client, not the
    server)."""
    import asyncio

    port = int(url.rsplit(":", 1)[1])
    rng = np.random.default_rng(concurrency)
    words = np.array([f"w{i}" for i in range(20_000)])
    per_client = int(seconds * 4000 / concurrency) + 1
    requests = []
    for c in range(concurrency):
        mine = []
        for i in range(per_client):
            text = " ".join(words[rng.integers(words.size, size=330)])
            body = json.dumps({"documents": [{"id": f"{tag}-{c}-{i}", "text": text}]}).encode()
            head = "POST /documents HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\n"
            mine.append(f"{head}content-length: {len(body)}\r\n\r\n".encode() + body)
        requests.append(mine)
    latencies: list[float] = []

    async def client(mine: list[bytes], deadline: float) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for request in mine:
            if time.perf_counter() >= deadline:
                break
            t = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            if not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(f"/documents: {head[:200]!r}")
            length = int(re.search(rb"content-length: (\d+)", head, re.IGNORECASE).group(1))  # type: ignore[union-attr]
            await reader.readexactly(length)
            latencies.append(time.perf_counter() - t)
        writer.close()

    async def run() -> float:
        t = time.perf_counter()
        await asyncio.gather(*(client(mine, t + seconds) for mine in requests))
        return time.perf_counter() - t

    wall = asyncio.run(run())
    ms = np.array(latencies) * 1000
    return {
        "concurrency": concurrency,
        "requests": len(latencies),
        "documents_per_s": len(latencies) / wall,
        "p50_ms": float(np.percentile(ms, 50)),
        "p99_ms": float(np.percentile(ms, 99)),
        "client": "asyncio, raw sockets",
    }


def writes(args: argparse.Namespace, results: dict[str, Any]) -> None:
    """``--writes``: the first answered write on an empty kernel cache, then single-document
    write rates of a server with the default ``--commit-delay`` and of one with none (``0``),
    both running, each on a data folder of its own, measured in turns (three each): this
    machine's speed drifts by half from one minute to the next."""
    with tempfile.TemporaryDirectory() as folder:
        cache = Path(folder) / "numba-cache"
        cache.mkdir()
        env = {k: v for k, v in os.environ.items() if k != "NEARDUP_TOKEN"}
        env["NUMBA_CACHE_DIR"] = str(cache)
        servers: dict[str, tuple[subprocess.Popen, str]] = {}
        try:
            for delay in DELAYS:  # the first on the empty cache
                t = time.perf_counter()
                servers[delay] = _first_write(Path(folder) / f"data-{delay}", delay, env)
                if "first_write_on_empty_cache_s" not in results:
                    results["first_write_on_empty_cache_s"] = time.perf_counter() - t
                    print(
                        f"first answered write on an empty kernel cache: "
                        f"{results['first_write_on_empty_cache_s']:.1f} s after the start",
                        flush=True,
                    )
            runs: list[dict[str, Any]] = []
            for concurrency in (1, 8):
                for turn in range(3):
                    for delay, (_, url) in servers.items():
                        r = single_writes(url, concurrency, args.seconds, f"d{delay}-c{concurrency}-{turn}")
                        runs.append({**r, "commit_delay_ms": float(delay)})
            results["single_writes"] = runs
            for delay, (_, url) in servers.items():
                mine = [r for r in runs if r["commit_delay_ms"] == float(delay)]
                with httpx.Client(base_url=url) as client:
                    stored = client.get("/stats").json()["documents"]
                results[f"stored_check_delay_{delay}"] = stored == 1 + sum(r["requests"] for r in mine)
        finally:
            for process, _ in servers.values():
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=600)
    for concurrency in (1, 8):
        medians = {}
        for delay in DELAYS:
            key = (float(delay), concurrency)
            mine = [r for r in runs if (r["commit_delay_ms"], r["concurrency"]) == key]
            rates = [r["documents_per_s"] for r in mine]
            medians[delay] = float(np.median(rates))
            p99 = float(np.median([r["p99_ms"] for r in mine]))
            each = ", ".join(f"{rate:,.0f}" for rate in rates)
            print(
                f"--commit-delay {delay}: add 1 text of ~2 KB a request, concurrency {concurrency}: "
                f"{medians[delay]:,.0f} acknowledged documents/s (median of {each}), p99 {p99:.1f} ms",
                flush=True,
            )
        results[f"documents_per_s_c{concurrency}"] = medians
        ratio = medians[DELAYS[0]] / medians[DELAYS[1]]
        results[f"delay_ratio_c{concurrency}"] = ratio
        print(f"concurrency {concurrency}: the commit delay gives {ratio:.2f}x the writes of none")
    stored = all(results[f"stored_check_delay_{delay}"] for delay in DELAYS)
    print(f"every acknowledged write is stored: {stored}", flush=True)


BATCH = ("--max-batch", "1000")
"""The lookups' server takes batches of 1,000 fingerprints."""

DELAYS = ("2", "0")
"""``--commit-delay`` of the two servers: the default, and none."""


def _first_write(data: Path, delay: str, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """A server on ``data`` with ``--commit-delay delay``, once it has answered a first write."""
    port = free_port()
    body = {"documents": [{"id": "first", "text": "the first page a crawler remembers"}]}
    process, _ = start(
        data,
        port,
        "--commit-delay",
        delay,
        env=env,
        ready=lambda url: httpx.post(f"{url}/documents", json=body, timeout=600),
    )
    return process, f"http://127.0.0.1:{port}"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=1_000_000, help="fingerprints stored first")
    parser.add_argument("--fill", choices=("direct", "http"), default="direct", help="how they are stored")
    parser.add_argument("--seconds", type=float, default=5, help="per measurement")
    parser.add_argument(
        "--writes", action="store_true", help="single-document writes and the first write on a cold cache"
    )
    parser.add_argument(
        "--jaccard",
        action="store_true",
        help="a --jaccard 0.8 server on planted texts, against the exact join",
    )
    parser.add_argument(
        "--passages",
        action="store_true",
        help="a --passages server on planted passages: recall, precision, latency",
    )
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    results: dict[str, Any] = {
        "benchmark": "service",
        "docs": args.docs,
        "fill": args.fill,
        "machine": machine_info(("fastapi", "uvicorn", "uvloop", "httptools")),
    }
    if args.writes:
        results["mode"] = "writes"
        writes(args, results)
        return finish(results, started, args.json, lambda _: None)
    if args.jaccard:
        import _service_jaccard

        results["mode"] = "jaccard"
        _service_jaccard.run(args, results, start, hammer, rss_mib, free_port)
        return finish(results, started, args.json, lambda _: None)
    if args.passages:
        import _service_passages

        results["mode"] = "passages"
        _service_passages.run(args, results, start, hammer, rss_mib, free_port)
        return finish(results, started, args.json, lambda _: None)
    rng = np.random.default_rng(0)
    stored = rng.integers(0, 2**64, size=args.docs, dtype=np.uint64)
    use_wrk = shutil.which("wrk") is not None
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "data"
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        if args.fill == "direct":
            results["load_s"] = fill_store(data, stored)
        process, results["first_start_s"] = start(data, port, *BATCH)
        try:
            if args.fill == "http":
                results["load_s"] = load(url, stored, 0)
            results["load_docs_per_s"] = args.docs / results["load_s"]
            results["rss_mib_loaded"] = rss_mib(process)
            print(
                f"stored {args.docs:,} fingerprints ({args.fill}) in {results['load_s']:.1f} s; first start "
                f"{results['first_start_s']:.1f} s; server RSS {results['rss_mib_loaded']:,.0f} MiB",
                flush=True,
            )

            def one_query(r: np.random.Generator) -> dict:
                near = stored[r.integers(stored.size)] ^ (np.uint64(1) << np.uint64(r.integers(64)))
                return {"documents": [{"fingerprint": f"{int(near):016x}"}]}

            results["query"] = [
                wrk_queries(url, stored, c, args.seconds, Path(folder))
                if use_wrk
                else hammer(url, "/query", one_query, c, args.seconds, 200_000)
                for c in (1, 8, 64)
            ]
            for r in results["query"]:
                print(
                    f"query, concurrency {r['concurrency']} ({r.get('tool', 'python threads')}): "
                    f"{r['requests_per_s']:,.0f}/s, p50 {r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms",
                    flush=True,
                )

            def hundred_queries(r: np.random.Generator) -> dict:
                near = stored[r.integers(stored.size, size=100)] ^ np.uint64(1)
                return {"documents": [{"fingerprint": h} for h in hexes(near)]}

            batched = hammer(url, "/query", hundred_queries, 8, args.seconds, 20_000)
            batched["fingerprints_per_s"] = batched["requests_per_s"] * 100
            results["query_batches_of_100"] = batched
            print(f"query, 100 a request, concurrency 8: {batched['fingerprints_per_s']:,.0f} fingerprints/s")
            results["ingest_texts"] = [ingest_texts(url, c, 20, f"c{c}") for c in (1, 2)]
            for r in results["ingest_texts"]:
                print(
                    f"add 1,000 texts of ~2 KB a request, concurrency {r['concurrency']}: "
                    f"{r['documents_per_s']:,.0f} documents/s",
                    flush=True,
                )
            results["rss_mib_end"] = rss_mib(process)
        finally:
            process.send_signal(signal.SIGTERM)  # a clean stop saves the snapshot
            process.wait(timeout=600)
        process, results["restart_from_snapshot_s"] = start(data, port, *BATCH)
        process.send_signal(signal.SIGKILL)
        process.wait()
        (data / "index.idx").unlink()  # no snapshot: every row from the store
        process, results["restart_from_store_s"] = start(data, port, *BATCH)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=600)
        print(
            f"restart: {results['restart_from_snapshot_s']:.1f} s from the snapshot, "
            f"{results['restart_from_store_s']:.1f} s from the store's rows",
            flush=True,
        )
    return finish(results, started, args.json, lambda _: None)


if __name__ == "__main__":
    main()
