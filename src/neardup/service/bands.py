"""Jaccard mode's in-memory index: every stored document's MinHash band keys, searched for the
documents that share a band with a query (its candidates, each then checked exactly). Passages
mode keeps each document's distinct passage seeds in one the same way (any number a document).

The keys of all bands live in one sorted array: a band's key starts its hash from the band's
number (``_kernels/minhash.py``), so equal keys of two bands are a chance of 2**-64 and only
add a candidate. The array is a few sorted runs (a log-structured merge): a commit adds a run
of its documents' keys, and runs of about equal size merge, so a document's keys are moved
about log2(n) times in all and a merge never sorts (``_merge`` interleaves two sorted runs). A
document's keys all sit in the run its commit made, so a removed document's keys leave at the
next merge of that run; until then its key is in ``removed`` and skipped.

Immutable: :meth:`BandIndex.added` and :meth:`BandIndex.without` return a new index, so a
reader holding the old one sees every commit whole or not at all, as with ``HammingIndex.copy``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

_EMPTY_KEYS = np.zeros(0, dtype=np.uint64)
_EMPTY_DOCS = np.zeros(0, dtype=np.int64)

Run = tuple[np.ndarray, np.ndarray]
"""(band keys, uint64 ascending; the document key of each, int64)."""


class Candidates(NamedTuple):
    """What :meth:`BandIndex.candidates` found for one document."""

    keys: np.ndarray
    """int64, ascending: the documents sharing a band key with it, at most the cap."""
    truncated: bool
    """True when a cap left some out (a bucket over it, or more documents than it): an answer
    made from ``keys`` may miss a document that shares a band."""


class BandIndex:
    """The band keys of the stored documents, by document key (the store's ``key``)."""

    def __init__(self, runs: tuple[Run, ...] = (), removed: np.ndarray = _EMPTY_DOCS, size: int = 0) -> None:
        self.runs = runs
        self.removed = removed  # sorted int64: removed documents whose keys a run still holds
        self.size = size

    @classmethod
    def of(cls, keys: np.ndarray, bands: np.ndarray) -> BandIndex:
        """The index of documents ``keys`` (int64, (n,)) with band keys ``bands`` (uint64, (n, b))."""
        return cls().added(keys, bands)

    def __len__(self) -> int:
        return self.size

    @property
    def nbytes(self) -> int:
        return sum(keys.nbytes + docs.nbytes for keys, docs in self.runs) + self.removed.nbytes

    def added(self, keys: np.ndarray, bands: np.ndarray) -> BandIndex:
        """This index and documents ``keys`` with band keys ``bands`` (uint64, (n, b))."""
        docs = np.repeat(keys.astype(np.int64), bands.shape[1])
        return self.added_entries(bands.reshape(-1), docs, int(keys.size))

    def added_entries(self, flat: np.ndarray, docs: np.ndarray, documents: int) -> BandIndex:
        """This index and ``documents`` new documents, whose keys are ``flat`` (uint64), of
        documents ``docs`` (int64, one each): any number a document (passage seeds), none
        for some."""
        if flat.size == 0:
            return self if documents == 0 else BandIndex(self.runs, self.removed, self.size + documents)
        order = np.argsort(flat, kind="stable")  # equal keys: the older document first
        runs, removed = [*self.runs, (flat[order], docs[order])], self.removed
        # Merge while the run before the last is not twice the last's size: sizes halve down
        # the list, so there are about log2(n) runs, and each entry moves about log2(n) times.
        while len(runs) > 1 and runs[-2][0].size < 2 * runs[-1][0].size:
            merged, removed = _merge(runs[-2], runs[-1], removed)
            runs[-2:] = [merged]
        return BandIndex(tuple(runs), removed, self.size + documents)

    def without(self, keys: np.ndarray) -> BandIndex:
        """This index less documents ``keys`` (int64, each one held)."""
        if keys.size == 0:
            return self
        return BandIndex(self.runs, np.union1d(self.removed, keys), self.size - int(np.unique(keys).size))

    def candidates(self, bands: np.ndarray, most: int) -> Candidates:
        """The documents that share a band key with ``bands`` (uint64, (b,)): at most
        ``most``, and at most ``most`` read from any one bucket of a run, those that share the
        most bands kept, and whether a cap left any out. Bounded work whatever is stored: a
        bucket of a text stored a million times costs ``most`` entries, not a million."""
        found, truncated = [], False
        for keys, docs in self.runs:
            lo = np.searchsorted(keys, bands, side="left")
            held = np.searchsorted(keys, bands, side="right") - lo
            taken = np.minimum(held, most)
            # A full bucket may hold removed documents among those read: still reported, as
            # the ones past the cap might have been live and similar.
            truncated = truncated or bool((held > most).any())
            total = int(taken.sum())
            if total:
                # Each bucket's first ``taken`` entries, gathered in one indexing.
                starts = np.repeat(lo - np.cumsum(taken) + taken, taken)
                found.append(docs[starts + np.arange(total)])
        if not found:
            return Candidates(_EMPTY_DOCS, truncated)
        every = np.concatenate(found)
        if self.removed.size:
            every = every[~np.isin(every, self.removed)]
        unique, shared = np.unique(every, return_counts=True)
        if unique.size > most:
            unique = np.sort(unique[np.argsort(-shared, kind="stable")[:most]])
            truncated = True
        return Candidates(unique, truncated)


def _merge(older: Run, newer: Run, removed: np.ndarray) -> tuple[Run, np.ndarray]:
    """The two runs as one, in key order (``older``'s entries first among equal keys), less
    the entries of ``removed`` documents, and ``removed`` less the documents it no longer
    holds (a document's entries are all in one run)."""
    old_keys, old_docs = older
    new_keys, new_docs = newer
    at = np.searchsorted(old_keys, new_keys, side="right") + np.arange(new_keys.size)
    keys = np.empty(old_keys.size + new_keys.size, dtype=np.uint64)
    docs = np.empty(keys.size, dtype=np.int64)
    theirs = np.ones(keys.size, dtype=bool)
    theirs[at] = False
    keys[at], docs[at] = new_keys, new_docs
    keys[theirs], docs[theirs] = old_keys, old_docs
    if removed.size:
        dead = np.isin(docs, removed)
        if dead.any():
            removed = np.setdiff1d(removed, docs[dead])
            keys, docs = keys[~dead], docs[~dead]
    return (keys, docs), removed
