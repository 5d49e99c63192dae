"""The data folder: private (0700, its database files and snapshot 0600), held by one service
at a time, cleared at start of the temporary files a crash left, and a full disk answered 507
naming the cause. A full disk is SQLite's own
SQLITE_FULL, reached through a real store whose write connection has a page limit
(``PRAGMA max_page_count``)."""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from server_process import free_port

from neardup import ConfigError
from neardup.service.app import create_app
from neardup.service.state import SNAPSHOT
from neardup.service.store import DATABASE, LOCK, Store, StoreFullError


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)  # the usual umask: new files 0644, folders 0755
    yield
    os.umask(old)


@pytest.mark.slow
def test_the_folder_and_its_files_are_private(server_factory, tmp_path, umask_022):
    data = tmp_path / "data"
    server = server_factory(data=data)
    with server.client() as client:
        body = {"documents": [{"id": "a", "text": "a private page", "metadata": {"user": "x"}}]}
        assert client.post("/documents", json=body).status_code == 200
        assert mode(data) == 0o700
        files = sorted(p.name for p in data.iterdir())
        assert {DATABASE, f"{DATABASE}-wal", f"{DATABASE}-shm", LOCK} <= set(files)
        for name in (DATABASE, f"{DATABASE}-wal", f"{DATABASE}-shm", LOCK):
            assert mode(data / name) == 0o600, name
    server.stop()  # saves the index snapshot
    assert mode(data / SNAPSHOT) == 0o600


@pytest.mark.slow
def test_one_store_a_folder_and_one_service(server_factory, tmp_path):
    """Two services on one folder would each serve an index without the other's writes, and
    the second would sweep away the first's temporary files: the second is refused."""
    first = Store(tmp_path / "alone")
    with pytest.raises(ConfigError, match=r"alone is in use by neardup serve, pid \d+ on "):
        Store(tmp_path / "alone")
    first.close()
    Store(tmp_path / "alone").close()  # free again once closed

    data = tmp_path / "data"
    server = server_factory(data=data)
    second = subprocess.run(
        [sys.executable, "-m", "neardup", "serve", "--data", str(data), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert second.returncode == 1
    assert f"is in use by neardup serve, pid {server.process.pid} on " in second.stderr
    assert "give another --data folder" in second.stderr
    with server.client() as client:  # the first goes on
        assert client.post("/documents", json={"documents": [{"id": "a", "text": "x"}]}).is_success


@pytest.mark.slow
def test_temporary_files_a_crash_left_are_removed_at_start(server_factory, tmp_path):
    data = tmp_path / "data"
    server = server_factory(data=data)
    with server.client() as client:
        client.post("/documents", json={"documents": [{"id": "a", "text": "a page about trains"}]})
    server.stop()  # saves the snapshot, index.idx
    stale = data / ".index.idx.1a2b3c4d.tmp"  # as a SIGKILL in the middle of a save leaves it
    stale.write_bytes(b"\0" * 4096)
    kept = [data / "notes.tmp", data / ".index.idx.not-hex.tmp"]  # not _atomic's: left alone
    for path in kept:
        path.write_text("mine")
    server = server_factory(data=data)
    assert not stale.exists()
    assert all(path.exists() for path in kept)
    with server.client() as client:
        assert client.get("/stats").json() == client.get("/stats").json() | {"documents": 1}
        assert client.get("/documents/a").status_code == 200


def fill(store: Store, spare_pages: int = 2) -> None:
    """Leave the store's write connection ``spare_pages`` pages of room, as a full disk would."""
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    store._db.execute(f"PRAGMA max_page_count = {pages + spare_pages}")


def test_a_full_disk_fails_the_write_whole_and_names_the_cause(tmp_path):
    store = Store(tmp_path / "data")
    try:
        store.add([("before", (1,), None)])
        fill(store)
        big = [(f"d{i}", (i,), {"pad": "x" * 4000}) for i in range(10)]
        with pytest.raises(StoreFullError, match=r"is full \(database or disk is full\): nothing of this"):
            store.add(big)
        assert not store._db.in_transaction and store.count() == 1
        store._db.execute("PRAGMA max_page_count = 1073741823")  # room again: the store goes on
        store.add(big)
        assert store.count() == 11
    finally:
        store.close()


@contextlib.contextmanager
def serving(store: Store) -> Iterator[httpx.Client]:
    """The app over ``store`` on uvicorn, in this process, on a free loopback port: the test
    holds the store, to fill it."""
    port = free_port()
    config = uvicorn.Config(
        create_app(store), host="127.0.0.1", port=port, lifespan="off", log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            assert thread.is_alive(), "uvicorn stopped"
            time.sleep(0.01)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            yield client
    finally:
        server.should_exit = True
        thread.join(30)


def test_a_full_disk_is_a_507_and_the_service_goes_on(tmp_path):
    store = Store(tmp_path / "data")
    pad = {"pad": "x" * 4000}
    body = {"documents": [{"id": f"d{i}", "text": f"page {i}", "metadata": pad} for i in range(10)]}
    try:
        with serving(store) as http:
            fill(store)
            refused = http.post("/documents", json=body)
            assert refused.status_code == 507, refused.text
            assert "database or disk is full" in refused.json()["detail"]
            assert http.get("/documents/d0").status_code == 404
            assert http.get("/stats").json()["documents"] == 0
            store._db.execute("PRAGMA max_page_count = 1073741823")  # room again
            assert http.post("/documents", json=body).status_code == 200
            assert http.get("/stats").json()["documents"] == 10
    finally:
        store.close()
