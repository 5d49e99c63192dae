"""Jaccard mode of ``neardup serve`` (``--jaccard T``): a query is answered with the stored
documents whose word-shingle Jaccard index with it is at least T, each one checked exactly.

Candidates are the stored documents that share a MinHash band key with the query (the banding
``neardup dedup --jaccard T`` uses: a pair at T is a candidate with probability >= 0.95); each
candidate's features are read from the store and its Jaccard index computed exactly, so every
answer is at least T similar (precision 1) and recall is the banding's. The work of one query
is bounded whatever is stored: at most ``MAX_CANDIDATES`` candidates are checked, those
sharing the most bands first (a text stored a million times fills its buckets with a million
copies; a query of it checks a thousand of them and lists those), and the answer to ``POST
/query`` says ``"truncated": true`` for a text whose candidates a cap cut.

Writes are the SimHash mode's (``state.Service``): group commit, one transaction, answered once
on disk. The fingerprint is still made and stored (``GET`` answers it); the store keeps each
document's band keys and features beside its row, in the same transaction.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from fastapi import HTTPException

from .bands import BandIndex
from .group_commit import Write
from .models import Batch, DocumentIn, Limits
from .sketches import Sketcher, Sketches, exact_jaccard
from .state import COMMIT_DELAY, Service
from .store import Store

MAX_CANDIDATES = 1000
"""Candidates checked exactly for one document, at most: those sharing the most band keys with
it. A document has a few candidates (3.7 a document at T = 0.8 on bench_curves.py's corpus);
only a text stored many times reaches this."""

_CHECK_BLOCK = 4096
"""Candidates whose features are read from the store at once, about: a batch of documents each
with a thousand candidates is checked a block at a time, in bounded memory."""

Hit = tuple[float, int]
"""(Jaccard index, the stored document's key)."""


class JaccardService(Service):
    """:class:`Service` answering by word-shingle Jaccard: the in-memory index is the stored
    documents' band keys (:class:`BandIndex`), swapped whole at each commit as the SimHash
    index is; a candidate's features are read from the store when it is checked."""

    def __init__(self, store: Store, commit_delay: float = COMMIT_DELAY) -> None:
        super().__init__(store, commit_delay)
        assert self.settings.jaccard is not None, "a Jaccard service needs a Jaccard folder"
        self.sketcher = Sketcher(self.settings.jaccard, self.fingerprinter)
        self.threshold = self.sketcher.threshold
        self.bands = BandIndex.of(*store.band_keys(self.sketcher.banding.bands))

    def stats(self) -> dict[str, Any]:
        banding = self.sketcher.banding
        return {
            "jaccard": self.threshold,
            "banding": {"bands": banding.bands, "rows": banding.rows},
            "max_candidates": MAX_CANDIDATES,
            "band_index_bytes": self.bands.nbytes,
        }

    def warm(self) -> None:
        """:meth:`Service.warm`, then the features and band keys of texts of each kind, the
        band index and the exact check."""
        super().warm()
        texts = [
            "warm up",
            "",
            "Stra\u00dfe caf\u00e9 \u01c5 \ufb01",
            *(f"text {i} of the warm-up" for i in range(8)),
        ]
        for n in (1, len(texts)):
            sketches = self.sketcher.sketch(texts[:n])
        index = BandIndex.of(np.arange(len(texts), dtype=np.int64), sketches.bands)
        index = index.added(np.array([99], dtype=np.int64), sketches.bands[:1]).without(np.array([0]))
        index.candidates(sketches.bands[1], MAX_CANDIDATES)
        features = [sketches.features(p) for p in range(len(texts))]
        exact_jaccard(features, np.array([0, 1]), np.array([1, 1]), self.threshold)

    def prepare(self, documents: list[DocumentIn], limits: Limits) -> tuple[np.ndarray, list[int]]:
        """:meth:`Service.prepare`, once every document is a text: a fingerprint has no
        features to compare (422)."""
        for p, d in enumerate(documents):
            if d.fingerprint is not None:
                raise HTTPException(
                    422,
                    f"documents[{p}].fingerprint: this service compares texts by word-shingle "
                    f"Jaccard (--jaccard {self.threshold:g}), which a fingerprint cannot give; "
                    f"send the text",
                )
        return super().prepare(documents, limits)

    def fingerprints(self, documents: list[DocumentIn], limits: Limits) -> np.ndarray:
        """Zeros, once the documents are checked: the committer makes each text's
        fingerprint with its features (:meth:`add` leaves every text to it)."""
        return self.prepare(documents, limits)[0]

    def add(
        self, batch: Batch, fps: np.ndarray, k: int, texts: list[int] | None = None
    ) -> tuple[list[list[dict[str, Any]]], list[bool]]:
        return super().add(batch, fps, k, list(range(len(fps))))

    def search(
        self, documents: list[DocumentIn], limits: Limits, k: int
    ) -> tuple[np.ndarray, list[list[dict[str, Any]]], list[bool] | None]:
        """Each document's fingerprint, the stored documents at least the threshold similar,
        most similar first, in the index visible now (a reader takes no lock), and whether a
        cap on candidates cut each one's search."""
        fps, texts = self.prepare(documents, limits)
        sketches = self.sketcher.sketch([str(documents[p].text) for p in texts])
        fps[texts] = sketches.fingerprints
        hits, truncated = found_in_index(self.bands, self.store, sketches, self.threshold, MAX_CANDIDATES)
        names = self.store.by_keys(sorted({key for doc in hits for _, key in doc}))
        return (
            fps,
            [
                [
                    {"id": names[key], "similarity": s}
                    for s, key in sorted(doc, key=_most_similar)
                    if key in names
                ]
                for doc in hits
            ],
            truncated,
        )

    def _fingerprint_group(self, group: list[Write]) -> None:
        """The features, band keys and fingerprints of the group's texts, in one call."""
        waiting = [write for write in group if write.texts]
        if not waiting:
            return
        texts = [str(write.batch.documents[p].text) for write in waiting for p in write.texts]
        try:
            sketches = self.sketcher.sketch(texts)
        except Exception as error:  # those batches alone are refused
            for write in waiting:
                write.error = error
            return
        start = 0
        for write in waiting:
            assert write.texts == list(range(len(write.fps))), "Jaccard mode takes texts alone"
            write.sketches = sketches.part(start, start + len(write.texts))
            write.fps[:] = write.sketches.fingerprints
            start += len(write.texts)

    def _group_view(self, writes: list[Write]) -> JaccardView:  # type: ignore[override]
        return JaccardView(self.bands, self.store, writes, self.threshold)

    def _decide(
        self, write: Write, found: list[list[dict[str, Any]]]
    ) -> tuple[tuple[list[list[dict[str, Any]]], list[bool]], list[int]]:
        batch = write.batch
        if batch.store and batch.skip_if_duplicate:  # also of copies within the batch
            ids = [d.id for d in batch.documents]
            keep = keep_first_of_similar(found, ids, write.sketches, self.threshold)
        else:
            keep = [batch.store] * len(found)
        return (found, keep), [p for p, ok in enumerate(keep) if ok]

    def _sketch_rows(self, chosen_of: list[tuple[Write, list[int]]]) -> list[tuple[bytes, bytes]] | None:
        return [row for write, chosen in chosen_of for row in write.sketches.rows(chosen)]

    def _made_visible(
        self, chosen_of: list[tuple[Write, list[int]]], keys: np.ndarray, replaced: np.ndarray
    ) -> None:
        bands = np.concatenate([write.sketches.bands[chosen] for write, chosen in chosen_of])
        self.bands = self.bands.added(keys, bands)  # then change() removes what they replaced
        super()._made_visible(chosen_of, keys, replaced)

    def change(
        self,
        removed: np.ndarray | None = None,
        added: np.ndarray | None = None,
        keys: np.ndarray | None = None,
    ) -> None:
        super().change(removed, added, keys)
        if removed is not None and removed.size:
            self.bands = self.bands.without(removed)


def found_in_index(
    index: BandIndex, store: Store, sketches: Sketches, threshold: float, most: int = MAX_CANDIDATES
) -> tuple[list[list[Hit]], list[bool]]:
    """Each sketched text's stored documents at least ``threshold`` similar, checked exactly on
    the features the store holds (a document removed meanwhile has none, and is left out):
    (similarity, key), unordered; and whether a cap of ``most`` cut each text's candidates. A
    block of candidates at a time (``_CHECK_BLOCK``)."""
    out: list[list[Hit]] = []
    truncated: list[bool] = []
    pending: list[tuple[int, list[int]]] = []  # (position, its candidates' keys)
    held = 0
    for p in range(len(sketches)):
        found = index.candidates(sketches.bands[p], most)
        candidates = found.keys.tolist()
        truncated.append(found.truncated)
        pending.append((p, candidates))
        held += len(candidates)
        if held >= _CHECK_BLOCK or p == len(sketches) - 1:
            out += _checked(pending, store, sketches, threshold)
            pending, held = [], 0
    return out, truncated


def _checked(
    pending: list[tuple[int, list[int]]], store: Store, sketches: Sketches, threshold: float
) -> list[list[Hit]]:
    """The candidates of ``pending`` documents at least ``threshold`` similar to them."""
    stored = store.features(sorted({key for _, candidates in pending for key in candidates}))
    features = [sketches.features(p) for p, _ in pending]  # the texts first, then the stored
    row = {key: len(features) + n for n, key in enumerate(stored)}
    features += [np.frombuffer(blob, dtype=np.uint64) for blob in stored.values()]
    pairs = [(n, key) for n, (_, candidates) in enumerate(pending) for key in candidates if key in row]
    first = np.array([n for n, _ in pairs], dtype=np.int64)
    second = np.array([row[key] for _, key in pairs], dtype=np.int64)
    similarity = exact_jaccard(features, first, second, threshold).tolist()
    out: list[list[Hit]] = [[] for _ in pending]
    for (n, key), s in zip(pairs, similarity):
        if s >= threshold:
            out[n].append((s, key))
    return out


def _most_similar(hit: Hit) -> tuple[float, int]:
    """Most similar first; at a tie, the one stored first."""
    return -hit[0], hit[1]


class JaccardView:
    """:class:`~neardup.service.group_commit.GroupView` for Jaccard mode: what each batch of a
    group sees, in turn, as though the batches before it had been committed one at a time: the
    band index as the group found it, searched once for all of their texts, less the rows
    that earlier batches replaced, plus the rows that earlier batches stored (found through
    their band keys, as the index would find them, and checked exactly). Most similar first;
    at a tie, rows stored before the group first, then the group's in order."""

    def __init__(self, index: BandIndex, store: Store, writes: list[Write], threshold: float) -> None:
        self.threshold = threshold
        self._hits: dict[int, list[list[Hit]]] = {
            id(write): found_in_index(index, store, write.sketches, threshold)[0] for write in writes
        }
        keys = sorted({key for hits in self._hits.values() for doc in hits for _, key in doc})
        self._names = store.by_keys(keys)
        storing = [d.id for w in writes if w.batch.store for d in w.batch.documents if d.id is not None]
        self._stored = store.keys_of(storing)  # id -> key, before the group
        self._replaced: set[int] = set()  # keys of those the group's rows so far replace
        self._ids: list[str] = []  # the group's rows so far, in order
        self._features: list[np.ndarray] = []
        self._buckets: dict[int, list[int]] = {}  # band key -> the group's rows with it
        self._alive: list[bool] = []  # False once a later row of the group replaced it
        self._latest: dict[str, int] = {}  # id -> its last row in the group

    def found(self, write: Write) -> list[list[dict[str, Any]]]:
        """Each of ``write``'s documents' stored documents at least the threshold similar."""
        out = []
        for p, hits in enumerate(self._hits[id(write)]):
            ranked = [(-s, 0, key) for s, key in hits if key not in self._replaced]
            ranked += [(-s, 1, row) for s, row in self._near_staged(write.sketches, p)]
            ranked.sort()
            out.append([{"id": self._name(tier, key), "similarity": -s} for s, tier, key in ranked])
        return out

    def stage(self, ids: list[str], write: Write, chosen: list[int]) -> None:
        """The rows a batch stores (``write``'s documents at ``chosen``, as ``ids``), seen by
        the batches after it."""
        for doc_id, p in zip(ids, chosen):
            row = self._latest.get(doc_id)
            if row is not None:
                self._alive[row] = False
            elif (key := self._stored.get(doc_id)) is not None:
                self._replaced.add(key)
            self._latest[doc_id] = len(self._ids)
            for band in set(write.sketches.bands[p].tolist()):
                self._buckets.setdefault(band, []).append(len(self._ids))
            self._ids.append(doc_id)
            self._features.append(write.sketches.features(p))
            self._alive.append(True)

    def _near_staged(self, sketches: Sketches, p: int) -> list[Hit]:
        """The group's live rows that share a band with text ``p`` and are at least the
        threshold similar to it: (similarity, row)."""
        rows = sorted(
            {r for band in sketches.bands[p].tolist() for r in self._buckets.get(band, ()) if self._alive[r]}
        )
        rows = rows[:MAX_CANDIDATES]
        if not rows:
            return []
        features = [sketches.features(p), *(self._features[r] for r in rows)]
        similarity = exact_jaccard(
            features, np.zeros(len(rows), np.int64), np.arange(1, len(rows) + 1), self.threshold
        ).tolist()
        return [(s, r) for s, r in zip(similarity, rows) if s >= self.threshold]

    def _name(self, tier: int, key: int) -> str:
        return self._names[key] if tier == 0 else self._ids[key]


def keep_first_of_similar(
    found: list[list[dict[str, Any]]], ids: list[str | None], sketches: Sketches, threshold: float
) -> list[bool]:
    """Which documents of a ``skip_if_duplicate`` batch to store: those with no similar
    document stored before the batch (``found``) nor stored earlier in it (sharing a band and
    checked exactly, as a stored one would be found). Each document's ``found`` gains the
    earlier documents of the batch stored and similar to it, merged in by similarity (the
    ones stored before the batch first at a tie)."""
    keep = [not similar for similar in found]
    buckets: dict[int, list[int]] = {}  # band key -> the batch's documents kept so far
    for p in range(len(found)):
        bands = set(sketches.bands[p].tolist())
        earlier = sorted({q for band in bands for q in buckets.get(band, ())})[:MAX_CANDIDATES]
        if earlier:
            features = [sketches.features(p), *(sketches.features(q) for q in earlier)]
            similarity = exact_jaccard(
                features, np.zeros(len(earlier), np.int64), np.arange(1, len(earlier) + 1), threshold
            ).tolist()
            stored = [{"id": ids[q], "similarity": s} for q, s in zip(earlier, similarity) if s >= threshold]
            if stored:
                keep[p] = False
                found[p] = sorted([*found[p], *stored], key=lambda dup: -dup["similarity"])
        if keep[p]:
            for band in bands:
                buckets.setdefault(band, []).append(p)
    return keep
