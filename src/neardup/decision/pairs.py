"""The near-duplicate pairs of a dedup, streamed in chunks (``--pairs``, ``DedupResult.iter_pairs``).

n copies of one text make n (n - 1) / 2 pairs, so no list of them is ever held. By default the
pairs that rebuild every cluster are listed: each pair of distinct fingerprints within the
radius (between their leaders, the members first in ``--keep`` order) and each other document's
link to its fingerprint's leader (distance 0). Every pair of documents comes on request
(``every=True``, ``--all-pairs``), streamed the same way. With ``verify`` each pair is checked
on the texts and kept when similar enough: a first pass over the pairs finds the documents
involved, one read of the corpus takes their features, a second pass checks every chunk.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from ..index.hamming_index import PAIRS_CHUNK
from ..index.self_join import self_join
from .bounded import DistinctJoin, JoinBudget
from .selection import Collapsed
from .verify import DocumentFeatures, Verification


class Pairs(NamedTuple):
    """A chunk of near-duplicate pairs: int64 document positions ``first < second``, their
    Hamming ``distance``, and with ``verify`` their float64 exact ``similarity`` (else None)."""

    first: np.ndarray
    second: np.ndarray
    distance: np.ndarray
    similarity: np.ndarray | None


def stream_pairs(
    fingerprints: np.ndarray,
    collapsed: Collapsed,
    bits: int,
    max_distance: int,
    *,
    every: bool = False,
    verify: Verification | None = None,
    corpus: Any = None,
    features: DocumentFeatures | None = None,
    chunk_size: int = PAIRS_CHUNK,
    budget: JoinBudget | None = None,
) -> Iterator[Pairs]:
    """The pairs of a dedup's compared documents (module docstring), in chunks of at most
    ``chunk_size``; ``verify`` reads the texts from ``corpus``, unless ``features``
    (the dedup's own checks read them) hold every document in a pair. In a ``budget`` the
    fingerprints are joined out of core past it."""
    # The leaders' join serves both passes: who is in a pair, then the pairs.
    joins = _Joins(fingerprints, collapsed, bits, max_distance, chunk_size, budget)
    chunks = _positions(fingerprints, collapsed, joins, every, chunk_size)
    if verify is None:
        for first, second, distance in chunks:
            yield Pairs(first, second, distance, None)
        return
    involved = _involved(collapsed, joins)
    if features is None or not np.isin(involved, features.positions).all():
        features = DocumentFeatures.read(corpus, involved, verify.features)
    for first, second, distance in chunks:
        similarity = features.similarity(first, second, verify.metric, verify.threshold)
        good = similarity >= verify.threshold
        yield Pairs(first[good], second[good], distance[good], similarity[good])


class _Joins:
    """The self-joins the pairs need: of the leaders' fingerprints (rows: ranks), or of every
    compared document's (rows: positions); in memory, or in a ``budget``."""

    def __init__(
        self,
        fingerprints: np.ndarray,
        collapsed: Collapsed,
        bits: int,
        k: int,
        chunk_size: int,
        budget: JoinBudget | None,
    ) -> None:
        self.fingerprints, self.collapsed, self.bits, self.k = fingerprints, collapsed, bits, k
        self.chunk_size, self.budget = chunk_size, budget
        self._leaders: DistinctJoin | None = None

    def of_leaders(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        if self._leaders is None:  # made once, for both passes
            distinct = self.fingerprints[self.collapsed.leader]
            self._leaders = DistinctJoin(distinct, self.bits, self.k, self.budget)
        return self._leaders.pairs(self.chunk_size)

    def of_documents(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        compared = self.collapsed.compared
        fingerprints = self.fingerprints[compared]
        if self.budget is not None:
            joined = self.budget.pairs(fingerprints, self.k, self.chunk_size)
        else:
            joined = self_join(fingerprints, self.k, chunk_size=self.chunk_size)
        for i, j, distance in joined:
            yield compared[i], compared[j], distance  # compared ascends: i < j keeps order


def _positions(
    fingerprints: np.ndarray,
    collapsed: Collapsed,
    joins: _Joins,
    every: bool,
    chunk_size: int,
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Unverified pairs as document positions (first < second) and distances."""
    compared, rank, leader = collapsed.compared, collapsed.rank, collapsed.leader
    if every:
        yield from joins.of_documents()
        return
    for a, b, distance in joins.of_leaders():
        a, b = leader[a], leader[b]
        yield np.minimum(a, b), np.maximum(a, b), distance
    copies = np.flatnonzero(leader[rank] != compared)
    for at in range(0, copies.size, chunk_size):
        some = copies[at : at + chunk_size]
        copy, own = compared[some], leader[rank[some]]
        yield np.minimum(own, copy), np.maximum(own, copy), np.zeros(some.size, dtype=np.int64)


def _involved(collapsed: Collapsed, joins: _Joins) -> np.ndarray:
    """Positions of the documents in some pair, every pair or not: the members of a
    fingerprint shared by several, or within the radius of another (one streamed pass over
    the leaders' join)."""
    m = collapsed.leader.shape[0]
    linked = np.bincount(collapsed.rank, minlength=m) > 1
    for a, b, _ in joins.of_leaders():
        linked[a] = linked[b] = True
    return collapsed.compared[linked[collapsed.rank]]
