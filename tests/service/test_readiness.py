"""A service that is ready when it says so: its kernels loaded (or compiled) before it listens,
its address, requests and shutdown logged, and its store closed on SIGTERM."""

from __future__ import annotations

import importlib
import pkgutil
import re
import threading
import time

import httpx
import numpy as np
import pytest
from numba.core.registry import CPUDispatcher

import neardup._kernels
from neardup._config import FingerprintConfig
from neardup.io.fingerprint_files import format_hex
from neardup.service.models import Batch, DocumentIn, Limits
from neardup.service.state import Service
from neardup.service.store import Settings, Store


def _specialisations() -> dict[str, int]:
    """How many type signatures each kernel has (compiled or loaded from the cache) so far."""
    counts = {}
    for module in pkgutil.iter_modules(neardup._kernels.__path__):
        loaded = importlib.import_module(f"neardup._kernels.{module.name}")
        for name, value in vars(loaded).items():
            if isinstance(value, CPUDispatcher):
                counts[f"{module.name}.{name}"] = len(value.signatures)
    return counts


@pytest.mark.parametrize("bits", [64, 128])
def test_warm_loads_every_kernel_that_requests_run(tmp_path, bits):
    settings = Settings(FingerprintConfig(bits=bits), 3 * bits // 64)
    service = Service(Store(tmp_path / "data", settings))
    service.warm()
    before = _specialisations()
    limits = Limits()
    rng = np.random.default_rng(bits)

    def add(ids: list[str], texts: list[str]) -> None:
        documents = [DocumentIn(id=i, text=t) for i, t in zip(ids, texts)]
        service.add(Batch(documents=documents), service.fingerprints(documents, limits), 3)

    # What requests do: single and batched adds into an empty index and then a delta, queries of
    # one and of many at every radius, a replaced id, a delete, a compaction and a restart from
    # its snapshot (memory-mapped tables).
    add(["first"], ["the first page, alone in an empty index"])
    add(["second"], ["\u0421\u0442\u0440\u0430\u043d\u0438\u0446\u0430 caf\u00e9 Stra\u00dfe"])
    add([f"p{i}" for i in range(40)], [f"page {i} of a crawl, with words" for i in range(40)])
    add(["first"], ["the first page, stored again"])
    assert service.delete("p3")
    words = bits // 64
    fps = rng.integers(0, 2**64, size=(30, words), dtype=np.uint64)
    for k in range(3 * words + 1):
        service.lookup(fps[:1], k)
        service.lookup(fps, k)
    service.compact_soon()
    service.wait_for_compaction(60)
    service.lookup(fps, 3)
    hexes = format_hex(fps if words == 2 else fps[:, 0])
    documents = [DocumentIn(id=f"h{i}", fingerprint=h) for i, h in enumerate(hexes)]
    service.add(Batch(documents=documents), service.fingerprints(documents, limits), 3)
    service.close()  # waits for a compaction the adds started, then saves the snapshot
    assert _new_since(before) == {}
    restarted = Service(Store(tmp_path / "data"))
    assert restarted.started_from == "snapshot"
    restarted.warm()
    before = _specialisations()
    new = [DocumentIn(id="after", text="a page after the restart")]
    restarted.add(Batch(documents=new), restarted.fingerprints(new, limits), 3)
    restarted.lookup(fps[:1], 3)
    restarted.lookup(fps, 3)
    restarted.store.close()
    assert _new_since(before) == {}


def _new_since(before: dict[str, int]) -> dict[str, int]:
    """The kernels that gained a specialisation (a compile, or a load from the cache) since."""
    return {name: n for name, n in _specialisations().items() if n != before.get(name)}


def _line(log: str, pattern: str) -> bool:
    return re.search(pattern, log, re.MULTILINE) is not None


@pytest.mark.slow
def test_it_logs_its_address_requests_and_shutdown_and_closes_the_store(server_factory, tmp_path):
    server = server_factory()
    with server.client() as client:
        assert client.post("/documents", json={"documents": [{"id": "a", "text": "x y z"}]}).is_success
        assert client.get("/documents/a").is_success
        assert client.get("/documents/a%0AINFO: forged?x=1").status_code == 404
    server.stop()  # SIGTERM: the lines written since the last flush are there too
    log = server.log()
    assert _line(log, rf"Uvicorn running on http://127\.0\.0\.1:{server.port}\b")
    assert _line(log, r'"POST /documents HTTP/1\.1" 200 OK$') and _line(
        log, r'"GET /documents/a HTTP/1\.1" 200 OK$'
    )
    # An id's line break is logged quoted: a client cannot write a line of its own.
    assert _line(log, r'"GET /documents/a%0AINFO%3A%20forged\?x=1 HTTP/1\.1" 404 Not Found$')
    assert not _line(log, r"^INFO: forged")
    assert _line(log, r"Shutting down") and _line(log, r"closed the store")
    # SQLite checkpoints the write-ahead log into the database and deletes it when the last
    # connection closes: a store left open by a signal leaves it behind.
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["index.idx", "lock", "neardup.sqlite3"]
    quiet = server_factory("--no-access-log", data=tmp_path / "data")
    with quiet.client() as client:
        assert client.get("/documents/a").is_success
    quiet.stop()
    log = quiet.log()
    assert _line(log, r"Uvicorn running on") and not _line(log, r'"GET /documents/a HTTP')


@pytest.mark.slow
def test_the_first_query_on_an_empty_kernel_cache_does_not_stall(server_factory, tmp_path):
    # numba compiles a kernel on its first call: a server that listened before compiling would
    # answer /healthz at once and then hold its event loop for the first /query (27 s and more).
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    started = time.monotonic()
    server = server_factory(env={"NUMBA_CACHE_DIR": str(cache)}, timeout=900)
    ready_after = time.monotonic() - started
    gaps: list[float] = []
    done = threading.Event()

    def probe() -> None:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            while True:  # once at least, however soon the requests below are answered
                t = time.monotonic()
                assert client.get("/healthz").status_code == 200
                gaps.append(time.monotonic() - t)
                if done.wait(0.02):
                    break

    prober = threading.Thread(target=probe)
    prober.start()
    try:
        with server.client() as client:
            t = time.monotonic()
            answer = client.post("/query", json={"documents": [{"text": "a first small query"}]})
            first_query = time.monotonic() - t
            t = time.monotonic()
            added = client.post("/documents", json={"documents": [{"id": "a", "text": "the first write"}]})
            first_write = time.monotonic() - t
    finally:
        done.set()
        prober.join(60)
    assert answer.status_code == 200 and added.status_code == 200
    assert first_query < 2 and first_write < 2, (ready_after, first_query, first_write)
    assert gaps and max(gaps) < 2, (ready_after, max(gaps))
    assert _line(server.log(), r"Ready in [\d.]+ s")
