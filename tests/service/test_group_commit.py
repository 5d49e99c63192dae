"""Group commit: concurrent writers share one transaction and one fsync, and each is answered as
if the batches had come one at a time. The service's state on a real SQLite store, driven from
threads; the first commit is held open so that the others queue behind it."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from neardup.io.fingerprint_files import format_hex
from neardup.service import state
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

    def counted_commit(documents, sketches=None):
        documents = list(documents)
        commits.append([d[0] for d in documents])
        if len(commits) == 1:  # the first commit's fsync, held open while the others queue
            entered.set()
            release.wait(30)
        return commit(documents, sketches)

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
    service.store.close()
    restarted = Service(Store(tmp_path))
    assert _found(restarted, far) == ["x"] and _found(restarted, 0xF0F0) == []


def test_a_failed_commit_fails_every_batch_of_its_group_and_stores_none(tmp_path, monkeypatch):
    service = Service(Store(tmp_path))
    entered, release = threading.Event(), threading.Event()
    commit = service.store.add
    calls = [0]

    def failing_commit(documents, sketches=None):
        calls[0] += 1
        if calls[0] == 1:
            entered.set()
            release.wait(30)
            return commit(documents, sketches)
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


def _one_group(service: Service, batches: list[tuple[Batch, np.ndarray, int]]) -> list[tuple]:
    """The answers to ``batches`` queued in order behind a held commit: one group."""
    entered, release = threading.Event(), threading.Event()
    commit = service.store.add
    held = [True]

    def held_commit(documents, sketches=None):
        if held[0]:
            held[0] = False
            entered.set()
            release.wait(30)
        return commit(documents, sketches)

    service.store.add = held_commit  # type: ignore[method-assign]
    first, fps = _batch([("held", 0xFFFF_FFFF_0000_0000)])
    holder = threading.Thread(target=service.add, args=(first, fps, 3))
    holder.start()
    assert entered.wait(30)
    answers: list = [None] * len(batches)
    threads = []
    for n, (batch, fps, k) in enumerate(batches):
        queued = len(service._queued)
        threads.append(
            threading.Thread(
                target=lambda n=n, b=batch, f=fps, k=k: answers.__setitem__(n, service.add(b, f, k))
            )
        )
        threads[-1].start()
        _wait_for(lambda queued=queued: len(service._queued) > queued)
    release.set()
    for thread in [holder, *threads]:
        thread.join(30)
    return answers


@pytest.mark.parametrize("group_documents", [4096, 5])
def test_a_group_answers_as_its_batches_would_one_at_a_time(tmp_path, monkeypatch, group_documents):
    """Random batches near each other, with ids stored again (before the group and within it),
    each radius, ``store`` and ``skip_if_duplicate``: the group's answers, ties in order
    included, are those of the same batches added one at a time; also when the queue is cut
    into groups of a few documents."""
    monkeypatch.setattr(state, "_GROUP_DOCUMENTS", group_documents)
    rng = np.random.default_rng(7)
    centres = rng.integers(0, 2**64, size=3, dtype=np.uint64)

    def near() -> int:
        flips = rng.integers(64, size=int(rng.integers(0, 3)))
        return int(
            np.bitwise_xor.reduce(np.uint64(1) << flips.astype(np.uint64), initial=rng.choice(centres))
        )

    def random_batch() -> tuple[Batch, np.ndarray, int]:
        ids = rng.choice([f"i{n}" for n in range(12)], size=int(rng.integers(1, 4)), replace=False)
        options = {"store": bool(rng.random() < 0.8), "skip_if_duplicate": bool(rng.random() < 0.4)}
        batch, fps = _batch([(str(i), near()) for i in ids], **options)
        return batch, fps, int(rng.integers(0, 4))

    before = [random_batch() for _ in range(6)]
    batches = [random_batch() for _ in range(40)]
    grouped, one_at_a_time = Service(Store(tmp_path / "grouped")), Service(Store(tmp_path / "alone"))
    for batch, fps, k in before:
        grouped.add(batch, fps, k)
        one_at_a_time.add(batch, fps, k)
    held, fps = _batch([("held", 0xFFFF_FFFF_0000_0000)])
    one_at_a_time.add(held, fps, 3)
    expected = [one_at_a_time.add(batch, fps, k) for batch, fps, k in batches]
    groups: list[list[int]] = []
    commit_group = grouped._commit_group

    def counted(group):
        groups.append([len(write.fps) for write in group])
        commit_group(group)

    grouped._commit_group = counted  # type: ignore[method-assign]
    assert _one_group(grouped, batches) == expected
    # The held write, then the queue in order: one group, or groups of at most 5 documents
    # (or of one batch).
    assert [n for g in groups for n in g] == [1] + [len(fps) for _, fps, _ in batches]
    if group_documents == 4096:
        assert len(groups) == 2
    else:
        assert len(groups) > 10 and all(sum(g) <= 5 or len(g) == 1 for g in groups)
    assert any(any(found) for found, _ in expected) and not all(all(stored) for _, stored in expected)
    assert grouped.store.count() == len(grouped.index) == one_at_a_time.store.count()


def test_a_group_waits_briefly_for_as_many_writers_as_lately_and_a_lone_writer_never(tmp_path, monkeypatch):
    service = Service(Store(tmp_path), commit_delay=10.0)  # long enough to see, never reached
    groups: list[list[str]] = []
    commit_group = service._commit_group

    def counted(group):
        groups.append([d.id for write in group for d in write.batch.documents])
        commit_group(group)

    service._commit_group = counted  # type: ignore[method-assign]

    def write(doc_id: str, fp: int) -> threading.Thread:
        batch, fps = _batch([(doc_id, fp)])
        thread = threading.Thread(target=service.add, args=(batch, fps, 3))
        thread.start()
        return thread

    started = time.monotonic()
    write("alone", 0x1111).join(30)  # no group before: committed at once
    write("alone again", 0x2222).join(30)  # the last groups held one batch: no wait
    assert time.monotonic() - started < 5
    service._recent_groups = (0, 2)  # two writers wrote together lately
    first = write("a", 0x3333)
    time.sleep(0.3)  # the group waits for a second batch
    second = write("b", 0x4444)
    first.join(30), second.join(30)
    assert groups == [["alone"], ["alone again"], ["a", "b"]]
    assert time.monotonic() - started < 5  # the second writer ended the wait
