"""The state behind ``neardup serve``: the store (the record of truth) and the in-memory index
of what it holds, rebuilt from it (or from the last snapshot) at start."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
from fastapi import HTTPException

from .._errors import FormatError
from ..fingerprint.fingerprinter import Fingerprinter
from ..index.hamming_index import HammingIndex
from .batch_duplicates import keep_first_of_near_copies
from .models import Batch, DocumentIn, Limits, parse_fingerprint
from .store import Store

SNAPSHOT = "index.idx"
"""The index snapshot beside the store, saved at every clean stop."""


class Service:
    """The state behind the app: the store (the record of truth) and the index of what it holds.

    Readers never wait for writers. Writers take turns (``write_lock``), a group at a time:
    the batches that arrive while one commit is on its way to disk wait for it, and then the
    next writer to take the lock looks each of them up in turn and commits them all in one
    transaction, one fsync (group commit: one fsync per batch held 8 concurrent writers of
    single documents to 350 acknowledged adds a second). Only then are they made visible, by
    swapping in a changed :meth:`HammingIndex.copy` of the index: one reference assignment, so
    a reader sees the index before the group or after it, never half of it, and never waits
    for a commit; and only then is any of them answered. Lookups read ids through the store's
    per-thread read connections (SQLite WAL: readers proceed during a commit). When the
    index's delta grows past its compaction size, a copy is compacted on a background thread
    while reads and writes go on, saved as the snapshot (so a restart after a crash reads only
    the rows since), and swapped in once the writes made meanwhile are replayed onto it.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.settings = store.settings
        self.fingerprinter = Fingerprinter(self.settings.config)
        self.snapshot_path = store.folder / SNAPSHOT
        restored = self._restored()
        self.started_from = "snapshot" if restored is not None else "store"
        self.index = restored if restored is not None else self._loaded()
        self.index.auto_compact = False  # compaction runs in the background (compact_soon)
        self.write_lock = threading.RLock()
        # The batches waiting to be committed, in order; the first one's writer commits them.
        self._queued: list[_Write] = []
        self._queue_changed = threading.Condition()
        self._snapshot_lock = threading.Lock()
        # The changes made while a copy is compacted, to replay onto it; None when none is.
        self._replay: list[tuple[str, np.ndarray, np.ndarray | None]] | None = None
        self._compactor: threading.Thread | None = None
        self.compactions = 0

    def warm(self) -> None:
        """Load (or compile) every kernel a request runs, before the service listens: numba
        compiles on a function's first call, and a first request would otherwise wait for it
        (measured on an empty cache: 27 s, the event loop stalled for all of it) and after every
        restart for the cache to load (about 2 s). Texts of each kind the kernels tell apart
        (ASCII, other scripts, text to normalise), through the route's own fingerprinter, and
        the index's add, remove, search and compaction on a small index of this folder's bits
        and radius, then a search of the live index itself (a snapshot's tables are
        memory-mapped, read-only arrays: a kernel specialisation of their own)."""
        texts = [
            "warm up",
            "",
            "Stra\u00dfe caf\u00e9 \u01c5 \ufb01 \u212b",
            "\u041f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440 \u4f60\u597d\u4e16\u754c \U0001f600",
            "a\u0301e\u0301 \uff21\uff22 " * 50,
            *(f"document {i} of the warm-up, with a few words" for i in range(64)),
        ]
        for n in (1, len(texts)):
            fps = self.fingerprinter.fingerprint_batch(texts[:n], n_jobs=1)
        fps = fps.reshape(len(texts), -1)
        query = np.ascontiguousarray(fps if fps.shape[1] == 2 else fps[:, 0])
        k = self.settings.max_distance
        index = HammingIndex(bits=self.settings.config.bits, max_distance=k)
        ids = np.arange(len(query), dtype=np.int64)

        def search() -> None:  # one query on this thread, many in parallel; both radii
            for searched in (index, self.index):
                for radius in sorted({0, k}):
                    for queries in (query[:1], query):
                        searched.query_batch(queries, max_distance=radius)

        index.add(query[:32], ids=ids[:32])
        search()  # a delta alone
        index.compact()
        search()  # tables alone
        index = index.copy()
        index.add(query[32:], ids=ids[32:])
        index.remove(ids[[0, 40]])
        search()  # tables, tombstones and a delta
        index.compact()
        search()

    def change(
        self,
        removed: np.ndarray | None = None,
        added: np.ndarray | None = None,
        keys: np.ndarray | None = None,
    ) -> None:
        """Make a committed change visible: ``added`` fingerprints with ``keys`` join the
        index, then ``removed`` keys leave it (in that order: a group that stores one id twice
        removes a key it added). Call with ``write_lock`` held."""
        index = self.index.copy()
        if added is not None and added.shape[0]:
            index.add(added, ids=keys)
        if removed is not None and removed.size:
            index.remove(removed)
        self.index = index  # the swap: readers see the change whole
        if self._replay is not None:
            if added is not None and added.shape[0]:
                self._replay.append(("add", added, keys))
            if removed is not None and removed.size:
                self._replay.append(("remove", removed, None))
        elif index.compaction_due:
            self.compact_soon()

    def compact_soon(self) -> None:
        """Compact a copy of the index on a background thread (unless one is running)."""
        with self.write_lock:
            if self._replay is not None:
                return
            self._replay = []
            base, marks = self.index.copy(), self.store.marks()
            self._compactor = threading.Thread(
                target=self._compact, args=(base, marks), name="neardup-compact", daemon=True
            )
            self._compactor.start()

    def _compact(self, base: HammingIndex, marks: tuple[int, int]) -> None:
        try:
            base.compact()  # seconds at 10M: reads and writes go on meanwhile
            # Also the snapshot a crash restarts from: it then reads only the rows since.
            self._save(base, marks)
        except BaseException:
            with self.write_lock:
                self._replay = None  # the live index still holds everything; a later change retries
            raise
        with self.write_lock:
            assert self._replay is not None
            for operation, values, keys in self._replay:
                if operation == "remove":
                    base.remove(values)
                else:
                    base.add(values, ids=keys)
            self.index = base
            self._replay = None
            self.compactions += 1

    def wait_for_compaction(self, timeout: float | None = None) -> None:
        """Block until a background compaction, if one is running, has been swapped in."""
        thread = self._compactor
        if thread is not None:
            thread.join(timeout)

    def _loaded(self) -> HammingIndex:
        """The index of every stored row."""
        index = HammingIndex(
            bits=self.settings.config.bits,
            max_distance=self.settings.max_distance,
            fingerprint_config=self.settings.config.to_dict(),  # recorded in the snapshot
        )
        keys, fps = self.store.load()
        if keys.size:
            index.add(fps, ids=keys)
            index.compact()
        return index

    def _restored(self) -> HammingIndex | None:
        """The last snapshot (memory-mapped) plus the rows added and removed since; None when
        there is no usable snapshot."""
        marks = self.store.snapshot()
        if marks is None or not self.snapshot_path.exists():
            return None
        try:
            index = HammingIndex.open(self.snapshot_path, fingerprint_config=self.settings.config.to_dict())
        except (FormatError, OSError) as error:
            # A damaged or foreign snapshot: the store holds everything.
            logging.getLogger("neardup.serve").warning(
                "not using %s (%s); loading every row", self.snapshot_path, error
            )
            return None
        # The snapshot file is written before its marks, so it may be newer than they say (a
        # crash between the two): keys are never reused, so remove the removed keys it still
        # holds and add the later rows it lacks.
        gone = np.unique(self.store.removed_after(marks["seq"]))
        keys, fps = self.store.load(after=marks["key"])
        held = index.ids if gone.size or keys.size else np.zeros(0, np.int64)
        gone = gone[np.isin(gone, held)]
        if gone.size:
            index.remove(gone)
        new = ~np.isin(keys, held)
        if new.any():
            index.add(fps[new], ids=keys[new])
        return index

    def snapshot(self) -> None:
        """Save the index beside the store (atomically) and record where it stands, so the next
        start reads only what came after (a clean stop)."""
        with self.write_lock:
            self._save(self.index, self.store.marks())

    def _save(self, index: HammingIndex, marks: tuple[int, int]) -> None:
        """Write ``index`` (the store's state at ``marks``) as the snapshot: the file first,
        then its marks, one save at a time."""
        with self._snapshot_lock:
            index.save(self.snapshot_path)
            self.store.set_snapshot(*marks)

    def fingerprints(self, documents: list[DocumentIn], limits: Limits) -> np.ndarray:
        bits = self.settings.config.bits
        words = bits // 64
        out = np.zeros((len(documents), words), dtype=np.uint64)
        texts = [(p, d.text) for p, d in enumerate(documents) if d.text is not None]
        for p, text in texts:
            if len(text.encode("utf-8", "surrogatepass")) > limits.max_text_bytes:
                raise HTTPException(
                    413, f"documents[{p}].text is over the limit of {limits.max_text_bytes:,} bytes"
                )
        if texts:
            fps = self.fingerprinter.fingerprint_batch([t for _, t in texts], n_jobs=1)
            out[[p for p, _ in texts]] = fps.reshape(len(texts), words)
        for p, d in enumerate(documents):
            if d.fingerprint is not None:
                out[p] = parse_fingerprint(d.fingerprint, bits, f"documents[{p}].fingerprint")
        return out

    def add(self, batch: Batch, fps: np.ndarray, k: int) -> tuple[list[list[dict[str, Any]]], list[bool]]:
        """Look each fingerprint up, then store the documents the batch asks to store: (each
        one's near-duplicates, whether it was stored), returned once they are on disk.

        Concurrent calls share one commit (group commit): each answer is what it would be had
        the batches of a group come one at a time, in the order they queued."""
        write = _Write(batch, fps, k)
        with self._queue_changed:
            self._queued.append(write)
            # Wait until a writer ahead has committed this batch, or this one is first in line
            # and leads the next group: every batch queued now.
            while not write.done and self._queued[0] is not write:
                self._queue_changed.wait()
            group = [] if write.done else list(self._queued)
        if group:
            try:
                with self.write_lock:
                    self._commit(group)
            finally:
                with self._queue_changed:
                    del self._queued[: len(group)]
                    self._queue_changed.notify_all()  # the group's writers, and the next leader
        if write.error is not None:
            raise write.error
        assert write.result is not None
        return write.result

    def _commit(self, group: list[_Write]) -> None:
        """Decide each batch of ``group`` in turn, each seeing those before it, then commit
        them all in one transaction and make them visible. Call with ``write_lock`` held."""
        index = self.index  # what the next batch's lookups see: copied at the first change
        names: dict[int, str] = {}  # provisional (negative) key -> id, of this group's rows
        pending: dict[str, int] = {}  # id -> provisional key
        rows: list[tuple[str, tuple[int, ...], Any]] = []
        added: list[np.ndarray] = []
        decided: list[_Write] = []
        try:
            for position, write in enumerate(group):
                try:
                    write.result, chosen = self._decide(write, index, names)
                except Exception as error:  # this batch alone is refused
                    write.error = error
                    continue
                decided.append(write)
                if not chosen:
                    continue
                documents = write.batch.documents
                ids = [str(documents[p].id) for p in chosen]
                rows += [(i, _words(write.fps[p]), documents[p].metadata) for i, p in zip(ids, chosen)]
                added.append(write.fps[chosen])
                if position == len(group) - 1:
                    continue  # no later batch looks: the index need not learn these rows
                if index is self.index:
                    index = index.copy()
                provisional = -1 - len(names) - np.arange(len(ids), dtype=np.int64)
                replaced = [pending.get(i) for i in ids]
                for p, doc_id in enumerate(ids):
                    if replaced[p] is None and (row := self.store.get(doc_id)) is not None:
                        replaced[p] = row.key  # stored before this group: a later batch no longer sees it
                new = added[-1]
                index.add(new if new.shape[1] == 2 else new[:, 0], ids=provisional)
                gone = [key for key in replaced if key is not None]
                if gone:
                    index.remove(np.array(gone, dtype=np.int64))
                names.update(zip(provisional.tolist(), ids))
                pending.update(zip(ids, provisional.tolist()))
            if rows:
                try:
                    keys, replaced_keys = self.store.add(rows)  # one transaction: on disk from here
                except BaseException as error:
                    for write in decided:
                        write.error, write.result = error, None
                    raise
                fps = np.concatenate(added)
                self.change(
                    np.array(replaced_keys, dtype=np.int64),
                    fps if fps.shape[1] == 2 else fps[:, 0],
                    np.array(keys, dtype=np.int64),
                )
        finally:
            for write in group:
                write.done = True

    def _decide(
        self, write: _Write, index: HammingIndex, names: dict[int, str]
    ) -> tuple[tuple[list[list[dict[str, Any]]], list[bool]], list[int]]:
        """((each document's near-duplicates in ``index``, whether to store it), the positions
        to store) for one batch of a group."""
        batch, fps, k = write.batch, write.fps, write.k
        found = self.lookup(fps, k, index, names)
        if batch.store and batch.skip_if_duplicate:  # also of copies within the batch
            ids = [d.id for d in batch.documents]
            config = self.settings
            keep = keep_first_of_near_copies(found, ids, fps, k, config.config.bits, config.max_distance)
        else:
            keep = [batch.store] * len(found)
        return (found, keep), [p for p, ok in enumerate(keep) if ok]

    def delete(self, doc_id: str) -> bool:
        """Remove a document from the store, then from the index; False when there was none."""
        with self.write_lock:
            key = self.store.delete(doc_id)
            if key is None:
                return False
            self.change(removed=np.array([key], dtype=np.int64))
        return True

    def lookup(
        self,
        fps: np.ndarray,
        k: int,
        index: HammingIndex | None = None,
        pending: dict[int, str] | None = None,
    ) -> list[list[dict[str, Any]]]:
        """Each fingerprint's stored near-duplicates (id, distance), nearest first, in ``index``
        (default the one visible now; a reader takes no lock); ``pending`` names the keys of
        rows not committed yet (a group commit's)."""
        index = self.index if index is None else index
        pending = pending or {}
        query = fps if fps.shape[1] == 2 else fps[:, 0]
        offsets, found, distance = index.query_batch(np.ascontiguousarray(query), max_distance=k)
        keys = set(found.tolist())
        names = self.store.by_keys(sorted(keys.difference(pending)))
        names.update({key: pending[key] for key in keys.intersection(pending)})
        found_ids, found_distances = found.tolist(), distance.tolist()
        return [
            [{"id": names[f], "distance": d} for f, d in zip(found_ids[a:b], found_distances[a:b])]
            for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())
        ]


@dataclass
class _Write:
    """One batch waiting for a group commit, and, once ``done``, its result or its error."""

    batch: Batch
    fps: np.ndarray
    k: int
    done: bool = False
    result: tuple[list[list[dict[str, Any]]], list[bool]] | None = None
    error: BaseException | None = None


def _words(fp: np.ndarray) -> tuple[int, ...]:
    return tuple(int(w) for w in fp.view(np.int64))
