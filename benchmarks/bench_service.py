"""``neardup serve`` under load, on loopback: lookups and writes per second, latency, restart.

A server process (``python -m neardup serve``) on 127.0.0.1 is filled with N random 64-bit
fingerprints (``POST /documents`` in batches of 1,000, given as hex), then, each for a fixed
time and a bounded number of requests:

* ``POST /query`` of one fingerprint per request at concurrency 1, 8 and 64 (threads, one
  HTTP client each): queries/s, latency p50 and p99;
* ``POST /documents`` of 100 new fingerprints per request at concurrency 8: documents/s;
* restart: a clean stop (the index snapshot is saved) and a start until ``/healthz`` answers,
  then SIGKILL and a start from the store's rows alone.

    python benchmarks/bench_service.py                   # N = 1M
    python benchmarks/bench_service.py --docs 100000 --seconds 3

The last stdout line is ``RESULT {json}``.
"""

from __future__ import annotations

import argparse
import os
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


def start(data: Path, port: int) -> tuple[subprocess.Popen, float]:
    """A server process and the seconds until it answered /healthz."""
    t = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k != "NEARDUP_TOKEN"}  # no token: loopback only
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "neardup",
            "serve",
            "--data",
            str(data),
            "--port",
            str(port),
            "--max-batch",
            "1000",
        ],
        stderr=subprocess.DEVNULL,
        env=env,
    )
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
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


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=1_000_000, help="fingerprints stored first")
    parser.add_argument("--seconds", type=float, default=5, help="per measurement")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    results: dict[str, Any] = {
        "benchmark": "service",
        "docs": args.docs,
        "machine": machine_info(("fastapi", "uvicorn")),
    }
    rng = np.random.default_rng(0)
    stored = rng.integers(0, 2**64, size=args.docs, dtype=np.uint64)
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "data"
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        process, results["first_start_s"] = start(data, port)
        try:
            results["load_s"] = load(url, stored, 0)
            results["load_docs_per_s"] = args.docs / results["load_s"]
            print(f"stored {args.docs:,} fingerprints in {results['load_s']:.1f} s", flush=True)

            def one_query(r: np.random.Generator) -> dict:
                near = stored[r.integers(stored.size)] ^ (np.uint64(1) << np.uint64(r.integers(64)))
                return {"documents": [{"fingerprint": f"{int(near):016x}"}]}

            results["query"] = [
                hammer(url, "/query", one_query, c, args.seconds, 200_000) for c in (1, 8, 64)
            ]
            for r in results["query"]:
                print(
                    f"query, concurrency {r['concurrency']}: {r['requests_per_s']:,.0f}/s, "
                    f"p50 {r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms",
                    flush=True,
                )
            counter = iter(range(10**9))

            def hundred_new(r: np.random.Generator) -> dict:
                base = 10**9 + 100 * next(counter)
                values = r.integers(0, 2**64, size=100, dtype=np.uint64)
                documents = [{"id": str(base + i), "fingerprint": h} for i, h in enumerate(hexes(values))]
                return {"documents": documents}

            add = hammer(url, "/documents", hundred_new, 8, args.seconds, 2_000)
            add["documents_per_s"] = add["requests_per_s"] * 100
            results["add"] = add
            print(f"add, concurrency 8, 100 a request: {add['documents_per_s']:,.0f} documents/s", flush=True)
        finally:
            process.send_signal(signal.SIGTERM)  # a clean stop saves the snapshot
            process.wait(timeout=300)
        process, results["restart_from_snapshot_s"] = start(data, port)
        process.send_signal(signal.SIGKILL)
        process.wait()
        (data / "index.idx").unlink()  # no snapshot: every row from the store
        process, results["restart_from_store_s"] = start(data, port)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=300)
        print(
            f"restart: {results['restart_from_snapshot_s']:.1f} s from the snapshot, "
            f"{results['restart_from_store_s']:.1f} s from the store's rows",
            flush=True,
        )
    return finish(results, started, args.json, lambda _: None)


if __name__ == "__main__":
    main()
