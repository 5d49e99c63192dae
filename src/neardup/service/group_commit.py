"""A group commit of the service's writes (``state.py``): the batches waiting in it
(``Write``), what each batch sees as though the batches before it had been committed one at a
time (``GroupView``), and the writers woken once it is committed (``answer``)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..index.hamming_index import HammingIndex
from .models import Batch
from .store import Store

_STAGED_BLOCK = 1024
"""A group's rows compared with a batch this many at a time: a table of at most max_batch x
this many distances."""


class GroupView:
    """What each batch of a group sees, in turn, as though the batches before it had been
    committed one at a time: the index as the group found it, searched once for all of their
    fingerprints, less the rows that earlier batches replaced (by storing their ids again),
    plus the rows that earlier batches stored, compared directly (a group's rows are few). At
    a tie in distance, rows stored before the group come first, then the group's in order."""

    def __init__(self, index: HammingIndex, store: Store, bits: int, writes: list[Write]) -> None:
        self._writes = {id(write): n for n, write in enumerate(writes)}
        words = bits // 64
        fps = np.concatenate([w.fps for w in writes]) if writes else np.zeros((0, words), np.uint64)
        k = max((w.k for w in writes), default=0)
        offsets, keys, distances = search(index, fps, k)
        self._keys, self._distances = keys.tolist(), distances.tolist()
        self._offsets = offsets.tolist()
        self._first = np.cumsum([0] + [len(w.fps) for w in writes]).tolist()  # each batch's row
        self._names = store.by_keys(sorted(set(self._keys)))
        storing = [d.id for w in writes if w.batch.store for d in w.batch.documents if d.id is not None]
        self._stored = store.keys_of(storing)  # id -> key, before the group
        self._replaced: set[int] = set()  # keys of those the group's rows so far replace
        self._ids: list[str] = []  # the group's rows so far, in order
        self._fps = np.zeros((0, words), np.uint64)  # their fingerprints
        self._alive: list[bool] = []  # False once a later row of the group replaced it
        self._latest: dict[str, int] = {}  # id -> its last row in the group

    def found(self, write: Write) -> list[list[dict[str, Any]]]:
        """Each of ``write``'s documents' near-duplicates within its radius, nearest first."""
        first, k = self._first[self._writes[id(write)]], write.k
        near = self._near_staged(write.fps, k)
        out = []
        for p in range(len(write.fps)):
            a, b = self._offsets[first + p], self._offsets[first + p + 1]
            hits = [
                (d, 0, key)
                for key, d in zip(self._keys[a:b], self._distances[a:b])
                if d <= k and key not in self._replaced
            ]
            if near[p]:
                hits = sorted(hits + near[p])
            out.append([{"id": self._name(tier, key), "distance": d} for d, tier, key in hits])
        return out

    def stage(self, ids: list[str], write: Write, chosen: list[int]) -> None:
        """The rows a batch stores (``write``'s documents at ``chosen``, as ``ids``), seen by
        the batches after it."""
        fps = write.fps[chosen]
        for doc_id in ids:
            row = self._latest.get(doc_id)
            if row is not None:
                self._alive[row] = False
            elif (key := self._stored.get(doc_id)) is not None:
                self._replaced.add(key)
        self._latest.update(zip(ids, range(len(self._ids), len(self._ids) + len(ids))))
        self._ids += ids
        self._fps = np.concatenate([self._fps, fps])
        self._alive += [True] * len(ids)

    def _near_staged(self, fps: np.ndarray, k: int) -> list[list[tuple[int, int, int]]]:
        """Each fingerprint's (distance, 1, row) of the group's live rows within ``k``."""
        near: list[list[tuple[int, int, int]]] = [[] for _ in range(len(fps))]
        for start in range(0, len(self._ids), _STAGED_BLOCK):
            staged = self._fps[start : start + _STAGED_BLOCK]
            distance = np.zeros((len(fps), len(staged)), dtype=np.int64)
            for word in range(fps.shape[1]):
                distance += np.bitwise_count(fps[:, word, None] ^ staged[None, :, word])
            for p, j in zip(*np.nonzero(distance <= k)):
                if self._alive[start + j]:
                    near[p].append((int(distance[p, j]), 1, start + int(j)))
        return near

    def _name(self, tier: int, key: int) -> str:
        return self._names[key] if tier == 0 else self._ids[key]


def search(index: HammingIndex, fps: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``index.query_batch`` of fingerprints of shape (n, words)."""
    query = fps if fps.shape[1] == 2 else fps[:, 0]
    return index.query_batch(np.ascontiguousarray(query), max_distance=k)


@dataclass
class Write:
    """One batch waiting for a group commit, and, once committed, its result or its error.
    ``waiter`` is set (an event) or resolved (a future of ``loop``) once it is answered."""

    batch: Batch
    fps: np.ndarray
    k: int
    texts: list[int]  # positions whose fingerprints the committer computes
    waiter: threading.Event | asyncio.Future[None]
    loop: asyncio.AbstractEventLoop | None = None
    sketches: Any = None  # Jaccard mode: the batch's ``Sketches``, made by the committer
    result: tuple[list[list[dict[str, Any]]], list[bool]] | None = None
    error: BaseException | None = None

    def outcome(self) -> tuple[list[list[dict[str, Any]]], list[bool]]:
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


def answer(group: list[Write]) -> None:
    """Wake the writers of a committed group: an event each, and one call into each event
    loop for all of its writers (a wake-up of a loop costs a system call)."""
    waiting: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
    for write in group:
        if write.loop is None:
            write.waiter.set()  # type: ignore[union-attr]
        else:
            waiting.setdefault(write.loop, []).append(write.waiter)  # type: ignore[arg-type]
    for loop, futures in waiting.items():
        with contextlib.suppress(RuntimeError):  # the loop has closed: no one waits
            loop.call_soon_threadsafe(_resolve, futures)


def _resolve(futures: list[asyncio.Future[None]]) -> None:
    for future in futures:
        if not future.done():  # not cancelled (a server stopping)
            future.set_result(None)
