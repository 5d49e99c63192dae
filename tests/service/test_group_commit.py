"""Group commit: concurrent writers share one transaction and one fsync, and each is answered as
if the batches had come one at a time. The service's state on a real SQLite store, driven from
threads; the first commit is held open so that the others queue behind it."""

from __future__ import annotations

import threading
import time

import numpy as np

from neardup.io.fingerprint_files import format_hex
from neardup.service.models import Batch, DocumentIn
from neardup.service.state import Service
from neardup.service.store import Store


def _batch(documents: list[tuple[str, int]], **options) -> tuple[Batch, np.ndarray]:
    fps = np.array([[fp] for _, fp in documents], dtype=np.uint64)
    hexes = format_hex(fps[:, 0])
    given = [DocumentIn(id=i, fingerprint=h) for (i, _), h in zip(documents, hexes)]
    return Batch(documents=given, **options), fps


def _found(service: Service, query: int) -> list[str]:
    return sorted(d["id"] for d in service.lookup(np.array([[query]], dtype=np.uint64), 3)[0])


def _wait_for(condition, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_queued_writers_share_one_commit_and_see_each_other_in_order(tmp_path, monkeypatch):
    service = Service(Store(tmp_path))
    far = 0xFFFF_0000_FFFF_0000
    commits: list[list[str]] = []
    entered, release = threading.Event(), threading.Event()
    commit = service.store.add

    def counted_commit(documents):
        documents = list(documents)
        commits.append([d[0] for d in documents])
        if len(commits) == 1:  # the first commit's fsync, held open while the others queue
            entered.set()
            release.wait(30)
        return commit(documents)

    monkeypatch.setattr(service.store, "add", counted_commit)
    answers: dict[str, tuple] = {}

    def write(name: str, documents: list[tuple[str, int]], **options) -> threading.Thread:
        batch, fps = _batch(documents, **options)
        queued = len(service._queued)
        thread = threading.Thread(target=lambda: answers.update({name: service.add(batch, fps, 3)}))
        thread.start()
        if name != "first":
            _wait_for(lambda: len(service._queued) > queued)  # queued in this order
        return thread

    threads = [write("first", [("a", 0x0F0F)])]
    assert entered.wait(30)
    threads += [
        write("x", [("x", 0xF0F0)]),
        write("near x", [("y", 0xF0F1)], skip_if_duplicate=True),  # sees x, queued before it
        write("x again", [("x", far)]),  # replaces x: later batches no longer see the old one
        write("looks for old x", [("z", 0xF0F0)], store=False),
        write("two", [("b", 0x0F0E), ("c", 0x1234_5678)]),
    ]
    assert all(thread.is_alive() for thread in threads)
    assert answers == {}  # nothing answered before its commit
    release.set()
    for thread in threads:
        thread.join(30)
    assert commits == [["a"], ["x", "x", "b", "c"]]  # the five queued batches: one commit
    found = {name: [[d["id"] for d in dups] for dups in answer[0]] for name, answer in answers.items()}
    stored = {name: answer[1] for name, answer in answers.items()}
    assert found == {
        "first": [[]],
        "x": [[]],
        "near x": [["x"]],
        "x again": [[]],
        "looks for old x": [[]],
        "two": [["a"], []],
    }
    assert stored == {
        "first": [True],
        "x": [True],
        "near x": [False],
        "x again": [True],
        "looks for old x": [False],
        "two": [True, True],
    }
    assert service.store.count() == len(service.index) == 4
    assert _found(service, far) == ["x"] and _found(service, 0xF0F0) == []
    assert _found(service, 0x0F0F) == ["a", "b"]
    # A restart comes after the first service's work: its background compaction may still be
    # saving a snapshot, whose temporary file the new store would sweep away as stale.
    service.wait_for_compaction()
    restarted = Service(Store(tmp_path))
    assert _found(restarted, far) == ["x"] and _found(restarted, 0xF0F0) == []


def test_a_failed_commit_fails_every_batch_of_its_group_and_stores_none(tmp_path, monkeypatch):
    service = Service(Store(tmp_path))
    entered, release = threading.Event(), threading.Event()
    commit = service.store.add
    calls = [0]

    def failing_commit(documents):
        calls[0] += 1
        if calls[0] == 1:
            entered.set()
            release.wait(30)
            return commit(documents)
        raise OSError("disk full")  # the group's one transaction fails

    monkeypatch.setattr(service.store, "add", failing_commit)
    outcomes: dict[str, object] = {}

    def write(doc_id: str, fp: int) -> threading.Thread:
        batch, fps = _batch([(doc_id, fp)])

        def run() -> None:
            try:
                outcomes[doc_id] = service.add(batch, fps, 3)
            except OSError as error:
                outcomes[doc_id] = error

        thread = threading.Thread(target=run)
        thread.start()
        return thread

    threads = [write("a", 1)]
    assert entered.wait(30)
    threads += [write(f"q{i}", 2**40 * (i + 1)) for i in range(4)]
    _wait_for(lambda: len(service._queued) == 5)  # the held one and four behind it
    release.set()
    for thread in threads:
        thread.join(30)
    assert isinstance(outcomes["a"], tuple)
    assert all(isinstance(outcomes[f"q{i}"], OSError) for i in range(4)), outcomes
    assert service.store.count() == len(service.index) == 1 and calls[0] == 2
