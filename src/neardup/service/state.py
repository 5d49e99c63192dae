"""The state behind ``neardup serve``: the store (the record of truth) and the in-memory index
of what it holds, rebuilt from it (or from the last snapshot) at start."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from typing import Any

import numpy as np
from fastapi import HTTPException

from .._errors import FormatError
from ..fingerprint.fingerprinter import Fingerprinter
from ..index.hamming_index import HammingIndex
from .batch_duplicates import SCAN_MAX, keep_first_of_near_copies
from .group_commit import GroupView, Write, answer, search
from .models import Batch, DocumentIn, Limits, PassageDocument, parse_fingerprint
from .store import Store

SNAPSHOT = "index.idx"
"""The index snapshot beside the store, saved at every clean stop."""

_IDLE = 5.0
"""Seconds the committer thread waits for a write before it ends (the next write starts one)."""

COMMIT_DELAY = 0.002
"""Seconds a group waits, at most, for as many writes as the larger of the last two groups
held (PostgreSQL's commit_delay), by default: concurrent writers answered together write
again together, and one commit of them all costs less than two of half, each racing the
event loop's work for the interpreter. A lone writer never waits."""

_GROUP_DOCUMENTS = 4096
"""Documents in one group commit, at most (past its first batch): a batch is compared directly
with the rows that earlier batches of its group store, so a group's time grows with the
square of its size; bounded, it grows with the number of documents."""


class Service:
    """The state behind the app: the store (the record of truth) and the index of what it holds.

    Readers never wait for writers. Writes queue for one committer thread (started by the
    first, ending when idle), which takes them a group at a time: the batches that arrive
    while one commit is on its way to disk wait for it (and, when the last groups held
    several, up to ``commit_delay`` seconds for as many), and then the committer fingerprints
    the texts they left to it in one call, looks each batch up in turn (``GroupView``: each
    sees the batches before it) and commits them all in one transaction, one fsync (group
    commit: one fsync per batch held 8 concurrent writers of single documents to 350
    acknowledged adds a second). A writer waits on an event (:meth:`add`), or on a future
    that the committer resolves with one call into the event loop a group
    (:meth:`add_soon`: no thread waits per request). Only then are they made visible, by
    swapping in a changed :meth:`HammingIndex.copy` of the index: one reference assignment, so
    a reader sees the index before the group or after it, never half of it, and never waits
    for a commit; and only then is any of them answered. Lookups read ids through the store's
    per-thread read connections (SQLite WAL: readers proceed during a commit). When the
    index's delta grows past its compaction size, a copy is compacted on a background thread
    while reads and writes go on, saved as the snapshot (so a restart after a crash reads only
    the rows since), and swapped in once the writes made meanwhile are replayed onto it.
    """

    def __init__(self, store: Store, commit_delay: float = COMMIT_DELAY) -> None:
        self.store = store
        self.commit_delay = commit_delay
        self.settings = store.settings
        self.fingerprinter = Fingerprinter(self.settings.config)
        self.snapshot_path = store.folder / SNAPSHOT
        restored = self._restored()
        self.started_from = "snapshot" if restored is not None else "store"
        self.index = restored if restored is not None else self._loaded()
        self.index.auto_compact = False  # compaction runs in the background (compact_soon)
        self.write_lock = threading.RLock()
        # The batches waiting to be committed, in order, the group being committed first; the
        # committer thread (while there is anything to commit) commits them.
        self._queued: list[Write] = []
        self._queue_changed = threading.Condition()
        self._recent_groups = (0, 0)  # the batches of the last two groups
        self._committer: threading.Thread | None = None
        self._snapshot_lock = threading.Lock()
        # The changes made while a copy is compacted, to replay onto it; None when none is.
        self._replay: list[tuple[str, np.ndarray, np.ndarray | None]] | None = None
        self._compactor: threading.Thread | None = None
        self.compactions = 0

    def stats(self) -> dict[str, Any]:
        """What ``GET /stats`` adds for this mode: nothing in SimHash mode."""
        return {}

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
        # A skip_if_duplicate batch past SCAN_MAX documents finds its own copies through an
        # index of its own (--max-batch above it).
        bits = self.settings.config.bits
        rows = np.random.default_rng(0).integers(0, 2**64, size=(SCAN_MAX + 1, bits // 64), dtype=np.uint64)
        keep_first_of_near_copies([[] for _ in rows], [None] * len(rows), rows, k, bits, k)

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

    def close(self) -> None:
        """A clean stop: wait for a background compaction (it saves a snapshot of its own, which
        a closed store would refuse), save the snapshot, close the store."""
        self.wait_for_compaction()
        self.snapshot()
        self.store.close()

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
            os.chmod(self.snapshot_path, 0o600)  # private, as the store's files are
            self.store.set_snapshot(*marks)

    def fingerprints(self, documents: list[DocumentIn], limits: Limits) -> np.ndarray:
        """Each document's fingerprint: parsed from its hex, or computed from its text."""
        out, texts = self.prepare(documents, limits)
        if texts:
            self._fingerprint_texts(out, documents, texts)
        return out

    def prepare(self, documents: list[DocumentIn], limits: Limits) -> tuple[np.ndarray, list[int]]:
        """(the fingerprints, the positions of the texts still to fingerprint, zero there so
        far), once every text is within the limit (413) and every hex fingerprint parses (422)."""
        bits = self.settings.config.bits
        out = np.zeros((len(documents), bits // 64), dtype=np.uint64)
        texts = []
        for p, d in enumerate(documents):
            if d.text is None:
                continue
            if len(d.text.encode("utf-8", "surrogatepass")) > limits.max_text_bytes:
                raise HTTPException(
                    413, f"documents[{p}].text is over the limit of {limits.max_text_bytes:,} bytes"
                )
            texts.append(p)
        for p, d in enumerate(documents):
            if d.fingerprint is not None:
                out[p] = parse_fingerprint(d.fingerprint, bits, f"documents[{p}].fingerprint")
        return out, texts

    def _fingerprint_texts(self, out: np.ndarray, documents: list[DocumentIn], texts: list[int]) -> None:
        fps = self.fingerprinter.fingerprint_batch([documents[p].text for p in texts], n_jobs=1)
        out[texts] = fps.reshape(len(texts), out.shape[1])

    def add(
        self, batch: Batch, fps: np.ndarray, k: int, texts: list[int] | None = None
    ) -> tuple[list[list[dict[str, Any]]], list[bool]]:
        """Look each fingerprint up, then store the documents the batch asks to store: (each
        one's near-duplicates, whether it was stored), returned once they are on disk. The
        texts at positions ``texts``, if any, are fingerprinted by the committer.

        Concurrent calls share one commit (group commit): each answer is what it would be had
        the batches of a group come one at a time, in the order they queued."""
        answered = threading.Event()
        write = Write(batch, fps, k, texts or [], answered)
        self._submit(write)
        answered.wait()
        return write.outcome()

    async def add_soon(
        self, batch: Batch, fps: np.ndarray, k: int, texts: list[int]
    ) -> tuple[list[list[dict[str, Any]]], list[bool]]:
        """:meth:`add` for the event loop: awaited, no thread waits for the commit, and the
        texts at positions ``texts`` (from :meth:`prepare`) are fingerprinted into ``fps`` by
        the committer, with every other text of the group in one call."""
        loop = asyncio.get_running_loop()
        answered = loop.create_future()
        write = Write(batch, fps, k, texts, answered, loop)
        self._submit(write)
        await answered
        return write.outcome()

    def _submit(self, write: Write) -> None:
        """Queue ``write`` for the committer thread, starting one if none is running."""
        with self._queue_changed:
            self._queued.append(write)
            if self._committer is None:
                self._committer = threading.Thread(target=self._commit_queued, name="neardup-commit")
                self._committer.daemon = True
                self._committer.start()
            else:
                self._queue_changed.notify()

    def _commit_queued(self) -> None:
        """The committer thread: commit what is queued, a group at a time (the batches that
        queue during a commit form the next group), until ``_IDLE`` seconds pass without one."""
        try:
            while (group := self._next_group()) is not None:
                self._commit_group(group)
        finally:  # also after an error that ends the thread: the next write starts another
            with self._queue_changed:
                if self._committer is threading.current_thread():
                    self._committer = None

    def _next_group(self) -> list[Write] | None:
        """The batches queued first, once there is one, up to ``_GROUP_DOCUMENTS`` documents
        (at least one batch); None (and the committer ends) when none came."""
        with self._queue_changed:
            if not self._queued:
                self._queue_changed.wait(_IDLE)
            if not self._queued:
                self._committer = None
                return None
            expected = max(self._recent_groups)
            deadline = time.monotonic() + self.commit_delay  # no wait at 0
            while len(self._queued) < expected and (left := deadline - time.monotonic()) > 0:
                self._queue_changed.wait(left)
            group: list[Write] = []
            documents = 0
            for write in self._queued:
                documents += len(write.fps)
                if group and documents > _GROUP_DOCUMENTS:
                    break
                group.append(write)
            self._recent_groups = (self._recent_groups[1], len(group))
            return group

    def _commit_group(self, group: list[Write]) -> None:
        """Commit ``group``, then answer each of its writers, with its result or its error."""
        try:
            with self.write_lock:
                self._commit(group)
        except Exception as error:
            for write in group:  # a failure past the store's, whose error each batch has already
                if write.error is None:
                    write.error, write.result = error, None
        finally:
            with self._queue_changed:
                del self._queued[: len(group)]
            answer(group)

    def _commit(self, group: list[Write]) -> None:
        """Decide each batch of ``group`` in turn, each seeing those before it, then commit
        them all in one transaction and make them visible. Call with ``write_lock`` held."""
        self._fingerprint_group(group)
        view = self._group_view([write for write in group if write.error is None])
        rows: list[tuple[str, tuple[int, ...], Any]] = []
        chosen_of: list[tuple[Write, list[int]]] = []
        decided: list[Write] = []
        for write in group:
            if write.error is not None:
                continue
            try:
                write.result, chosen = self._decide(write, view.found(write))
            except Exception as error:  # this batch alone is refused
                write.error = error
                continue
            decided.append(write)
            if chosen:
                documents = write.batch.documents
                ids = [str(documents[p].id) for p in chosen]
                rows += [(i, _words(write.fps[p]), documents[p].metadata) for i, p in zip(ids, chosen)]
                chosen_of.append((write, chosen))
                view.stage(ids, write, chosen)
        if rows:
            try:
                # One transaction: on disk from here.
                keys, replaced_keys = self.store.add(rows, self._sketch_rows(chosen_of))
            except BaseException as error:
                for write in decided:
                    write.error, write.result = error, None
                raise
            self._made_visible(
                chosen_of, np.array(keys, dtype=np.int64), np.array(replaced_keys, dtype=np.int64)
            )

    def _group_view(self, writes: list[Write]) -> GroupView:
        """What each batch of a group sees (:class:`GroupView`)."""
        return GroupView(self.index, self.store, self.settings.config.bits, writes)

    def _sketch_rows(self, chosen_of: list[tuple[Write, list[int]]]) -> list[tuple[bytes, bytes]] | None:
        """The rows of the store's ``sketches`` of the documents stored: none in SimHash mode."""
        return None

    def _made_visible(
        self, chosen_of: list[tuple[Write, list[int]]], keys: np.ndarray, replaced: np.ndarray
    ) -> None:
        """Show readers a committed group: its documents (``chosen_of``, stored as ``keys``) in,
        the rows they ``replaced`` out. Call with ``write_lock`` held."""
        fps = np.concatenate([write.fps[chosen] for write, chosen in chosen_of])
        self.change(replaced, fps if fps.shape[1] == 2 else fps[:, 0], keys)

    def _fingerprint_group(self, group: list[Write]) -> None:
        """The texts the group's batches left to the commit, in one call: its fixed cost
        (about 30 us, as much as a 2 KB text) is paid once a group, not once a request."""
        waiting = [write for write in group if write.texts]
        if not waiting:
            return
        documents = [write.batch.documents[p] for write in waiting for p in write.texts]
        fps = np.empty((len(documents), self.settings.config.bits // 64), dtype=np.uint64)
        try:
            self._fingerprint_texts(fps, documents, list(range(len(documents))))
        except Exception as error:  # those batches alone are refused
            for write in waiting:
                write.error = error
            return
        start = 0
        for write in waiting:
            write.fps[write.texts] = fps[start : start + len(write.texts)]
            start += len(write.texts)

    def _decide(
        self, write: Write, found: list[list[dict[str, Any]]]
    ) -> tuple[tuple[list[list[dict[str, Any]]], list[bool]], list[int]]:
        """((each document's near-duplicates, ``found`` before the batch, whether to store it),
        the positions to store) for one batch of a group."""
        batch = write.batch
        if batch.store and batch.skip_if_duplicate:  # also of copies within the batch
            ids = [d.id for d in batch.documents]
            bits, radius = self.settings.config.bits, self.settings.max_distance
            keep = keep_first_of_near_copies(found, ids, write.fps, write.k, bits, radius)
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

    def search(
        self, documents: list[DocumentIn], limits: Limits, k: int
    ) -> tuple[np.ndarray, list[list[dict[str, Any]]], list[bool] | None]:
        """``POST /query``: each document's fingerprint, its stored near-duplicates, and
        whether a cap cut each lookup (None: a Hamming lookup is never cut)."""
        fps = self.fingerprints(documents, limits)
        return fps, self.lookup(fps, k), None

    def passages(self, documents: list[PassageDocument], limits: Limits) -> list[dict[str, Any]]:
        """``POST /passages``: answered in passages mode alone (``passages.PassagesService``)."""
        raise HTTPException(
            409,
            f"this service runs in {self.settings.mode} mode ({self.settings.describe()}) and keeps "
            f"no passages; serve a data folder made with --passages",
        )

    def lookup(self, fps: np.ndarray, k: int) -> list[list[dict[str, Any]]]:
        """Each fingerprint's stored near-duplicates (id, distance), nearest first, in the index
        visible now (a reader takes no lock)."""
        offsets, found, distance = search(self.index, fps, k)
        names = self.store.by_keys(sorted(set(found.tolist())))
        found_ids, found_distances = found.tolist(), distance.tolist()
        return [
            [{"id": names[f], "distance": d} for f, d in zip(found_ids[a:b], found_distances[a:b])]
            for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())
        ]


def _words(fp: np.ndarray) -> tuple[int, ...]:
    return tuple(int(w) for w in fp.view(np.int64))
