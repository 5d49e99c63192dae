"""Readers never wait for writers, and compaction runs beside both: the service's state, on a
real SQLite store in a temporary folder, driven from threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from neardup.index import hamming_index
from neardup.index.hamming_index import HammingIndex
from neardup.io.fingerprint_files import format_hex
from neardup.service.models import Batch, DocumentIn
from neardup.service.state import Service
from neardup.service.store import Store


def _batch(ids: list[str], fps: np.ndarray) -> Batch:
    hexes = format_hex(fps[:, 0] if fps.shape[1] == 1 else fps)
    return Batch(documents=[DocumentIn(id=i, fingerprint=h) for i, h in zip(ids, hexes)])


def _naive(live: dict[str, int], query: int, k: int) -> list[str]:
    return sorted(i for i, fp in live.items() if bin(fp ^ query).count("1") <= k)


def _found(service: Service, query: int, k: int = 3) -> list[str]:
    return sorted(d["id"] for d in service.lookup(np.array([[query]], dtype=np.uint64), k)[0])


def test_a_reader_does_not_wait_for_a_commit(tmp_path, monkeypatch):
    service = Service(Store(tmp_path))
    first = np.array([[0x0F0F]], dtype=np.uint64)
    service.add(_batch(["a"], first), first, 3)
    entered, release = threading.Event(), threading.Event()
    commit = service.store.add

    def slow_commit(documents, sketches=None):  # the fsync of a large batch, held open by the test
        entered.set()
        release.wait(30)
        return commit(documents, sketches)

    monkeypatch.setattr(service.store, "add", slow_commit)
    second = np.array([[0x0F0E]], dtype=np.uint64)
    writer = threading.Thread(target=service.add, args=(_batch(["b"], second), second, 3))
    writer.start()
    assert entered.wait(30)
    reader_saw: list[list[str]] = []
    reader = threading.Thread(target=lambda: reader_saw.append(_found(service, 0x0F0F)))
    reader.start()
    reader.join(10)  # a reader that waited for the commit would still be blocked here
    assert not reader.is_alive() and writer.is_alive()
    assert reader_saw == [["a"]]  # the batch in progress is not visible, not even half
    assert service.store.get("a") is not None and service.store.get("b") is None
    release.set()
    writer.join(30)
    assert _found(service, 0x0F0F) == ["a", "b"]


def test_background_compaction_replays_the_writes_made_meanwhile(tmp_path, monkeypatch):
    monkeypatch.setattr(hamming_index, "DELTA_MIN", 64)
    monkeypatch.setattr(hamming_index, "DELTA_MAX", 64)
    rng = np.random.default_rng(4)
    service = Service(Store(tmp_path))
    live: dict[str, int] = {}
    started, release = threading.Event(), threading.Event()
    compact = HammingIndex.compact

    def held_compact(index):  # hold the background compaction until the test lets it go
        if threading.current_thread().name == "neardup-compact":
            started.set()
            release.wait(30)
        compact(index)

    monkeypatch.setattr(HammingIndex, "compact", held_compact)

    def add(count: int) -> None:
        fps = rng.integers(0, 2**64, size=(count, 1), dtype=np.uint64)
        fps[::3] = fps[0] ^ np.uint64(1 << int(rng.integers(64)))  # some near-duplicates
        ids = [f"d{len(live) + p}" for p in range(count)]
        service.add(_batch(ids, fps), fps, 3)
        live.update(zip(ids, fps[:, 0].tolist()))

    add(40)
    service.index.compact()  # a main of 40: compaction is due once 64 more are pending
    while not started.is_set():
        add(10)
    assert service.compactions == 0
    # While the copy compacts: more adds, deletes, and an id stored again; reads stay right.
    add(30)
    for doc_id in ("d1", "d45", "d50"):
        assert service.delete(doc_id)
        del live[doc_id]
    again = np.array([[123456789]], dtype=np.uint64)
    service.add(_batch(["d2"], again), again, 3)
    live["d2"] = 123456789
    probes = [*list(live.values())[::7], 123456789]
    for query in probes:
        assert _found(service, query) == _naive(live, query, 3)
    release.set()
    service.wait_for_compaction(30)
    assert service.compactions == 1 and not service.index.compaction_due
    assert len(service.index) == len(live) == service.store.count()
    for query in probes:
        assert _found(service, query) == _naive(live, query, 3)
    # The compacted copy was saved as the snapshot, with the store's marks when it was taken:
    # a restart now (as after a crash) reads it plus the rows since, and answers the same.
    service.store.close()  # as a crash would: the folder's lock goes with the process
    restarted = Service(Store(tmp_path))
    assert restarted.started_from == "snapshot"
    assert sorted(restarted.index.ids.tolist()) == sorted(service.index.ids.tolist())
    for query in probes:
        assert _found(restarted, query) == _naive(live, query, 3)


def test_a_snapshot_newer_than_its_marks_still_restarts_right(tmp_path):
    # A crash between writing the snapshot file and recording its marks: the file holds
    # changes the marks say came after it. Keys are never reused, so the start copes.
    service = Service(Store(tmp_path))
    rng = np.random.default_rng(9)
    fps = rng.integers(0, 2**64, size=(50, 1), dtype=np.uint64)
    service.add(_batch([f"a{i}" for i in range(50)], fps), fps, 3)
    service.snapshot()
    later = rng.integers(0, 2**64, size=(20, 1), dtype=np.uint64)
    service.add(_batch([f"b{i}" for i in range(20)], later), later, 3)
    for doc_id in ("a3", "b4"):
        assert service.delete(doc_id)
    service.index.save(service.snapshot_path)  # the file, then the crash: the marks stay old
    service.store.close()
    restarted = Service(Store(tmp_path))
    assert restarted.started_from == "snapshot"
    assert sorted(restarted.index.ids.tolist()) == sorted(service.index.ids.tolist())
    assert len(restarted.index) == restarted.store.count() == 68


@pytest.mark.parametrize("bits", [64, 128])
def test_a_copy_and_its_index_change_apart(bits):
    rng = np.random.default_rng(bits)
    shape = (300,) if bits == 64 else (300, 2)
    index = HammingIndex(bits=bits, max_distance=3)
    index.add(rng.integers(0, 2**64, size=shape, dtype=np.uint64))
    index.compact()
    index.add(rng.integers(0, 2**64, size=shape, dtype=np.uint64))  # a delta too
    before = sorted(index.ids.tolist())
    copy = index.copy()
    copy.remove(np.arange(0, 600, 2))
    copy.add(rng.integers(0, 2**64, size=shape, dtype=np.uint64), ids=np.arange(1000, 1300))
    copy.compact()
    assert sorted(index.ids.tolist()) == before  # the original saw none of it
    index.remove(np.arange(1, 600, 2))
    assert sorted(copy.ids.tolist()) == sorted([*range(1, 600, 2), *range(1000, 1300)])
    assert sorted(index.ids.tolist()) == list(range(0, 600, 2))
