"""The steps of a dedup decision that both engines take: the local job (``job.py``) and the
Spark driver (``spark/driver.py``) call these, so they decide alike.

:func:`choose_representatives` is the decision itself: copies collapsed, the distinct
fingerprints joined, Manku's rule or components (or MinHash buckets under ``jaccard``), each
pair checked where the options ask; :func:`near_pairs` lists the pairs it found.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._config import FingerprintConfig
from .._progress import Progress
from ..index.components import collapse, linked_roots
from ..index.hamming_index import PAIRS_CHUNK, HammingIndex
from .bounded import DistinctJoin, JoinBudget
from .lsh import choose_in_buckets, stream_bucket_pairs
from .options import DedupOptions
from .pairs import Pairs, stream_pairs
from .selection import Collapsed
from .verify import DocumentFeatures, Verification, check_copies


@dataclass(frozen=True)
class Choice:
    """What :func:`choose_representatives` decided."""

    representatives: np.ndarray
    """int64, shape (n,): each document's representative position (its own when kept)."""
    matched: np.ndarray | None
    """With an ``against`` index: int64, shape (n,), the id in it of a near-duplicate of each
    document (-1 for none); else None."""
    collapsed: Collapsed
    """The compared fingerprints, copies collapsed onto their leaders."""
    features: DocumentFeatures | None = None
    """With a check: the features read for it, for the pairs after."""
    candidate_pairs: int | None = None
    """Under ``components``: the pairs between distinct fingerprints the join found."""
    checked_pairs: int | None = None
    similar_pairs: int | None = None
    """With a check: the pairs whose similarity was computed, and those that passed."""


def choose_representatives(
    fps: np.ndarray,
    compared: np.ndarray,
    order: np.ndarray,
    options: DedupOptions,
    corpus: Any,
    progress: Progress,
    *,
    against: HammingIndex | None = None,
    keys: np.ndarray | None = None,
    held: DocumentFeatures | None = None,
    budget: JoinBudget | None = None,
) -> Choice:
    """Each document's representative, as ``options`` decide among the ``compared`` positions
    ranked by ``order`` (positions, the one to keep first first); ``against``, the opened
    index of documents seen before; under ``jaccard`` the MinHash band ``keys`` of every
    document; the checked features ``held``, if the caller has them (else they are read).

    Only the ``compared`` documents take part; the others represent themselves. Identical
    fingerprints are collapsed (``index.components.collapse``), so copies cost nothing beyond their
    entry, and no list of pairs is ever held: the components stream the join into a
    union-find, the greedy rule searches. With ``verify`` a first run without it finds the
    fingerprints that have a neighbour; the texts of just those are read, and a second run
    asks each pair it needs about their similarity. In a ``budget`` the fingerprints are
    joined without an index, out of core past it (``bounded.py``)."""
    k, cluster, verify = options.radius, options.cluster, options.check
    n = fps.shape[0]
    local = np.full(n, -1, dtype=np.int64)
    local[compared] = np.arange(compared.size, dtype=np.int64)
    ranked = local[order]
    del local  # n-sized arrays go as soon as they are used: the job's peak is here
    ranked = ranked[ranked >= 0]
    distinct, rank, leader = collapse(fps[compared], ranked)
    del ranked
    collapsed = Collapsed(compared, rank, compared[leader])  # leaders as document positions
    if keys is not None:  # --jaccard: MinHash-LSH buckets instead of a radius
        assert verify is not None
        buckets = choose_in_buckets(collapsed, keys, cluster, verify, corpus, progress, held)
        return Choice(
            _representatives(n, collapsed, buckets.roots, buckets.detached),
            None,
            collapsed,
            buckets.features,
            checked_pairs=buckets.checked,
            similar_pairs=buckets.similar,
        )
    leader = collapsed.leader
    m = distinct.shape[0]
    matched, blocked, candidate_pairs = None, None, None
    join = DistinctJoin(distinct, options.config.bits, k, budget)
    with progress.stage("join", total=None if cluster == "components" else m, unit="docs") as stage:
        if against is not None:
            offsets, found, _ = against.query_batch(distinct, max_distance=k)
            blocked = np.diff(offsets) > 0
            nearest = np.full(m, -1, dtype=np.int64)
            nearest[blocked] = found[offsets[:-1][blocked]]
            matched = np.full(n, -1, dtype=np.int64)
            matched[compared] = nearest[rank]
        if cluster == "components":
            found_components = linked_roots(m, join.pairs(), on_progress=stage.update)
            candidate_pairs = found_components.pairs
            roots = found_components.roots
            linked = np.bincount(roots, minlength=m)[roots] > 1
        else:
            chosen = join.greedy(blocked, stage.update)
            roots, linked = chosen.representative, chosen.linked
    detached = np.zeros(compared.size, dtype=bool)  # copies whose text fails verification
    checked = similar_pairs = None
    features = None
    if verify is not None:
        metric, threshold = verify.metric, verify.threshold
        features, detached = check_copies(collapsed, linked, verify, corpus, progress, held)

        counted = np.zeros(2, dtype=np.int64)  # pairs checked, pairs similar enough

        def similar(first: np.ndarray, second: np.ndarray, _: np.ndarray) -> np.ndarray:
            good = features.similarity(leader[first], leader[second], metric, threshold) >= threshold
            counted[:] += len(good), int(good.sum())
            return good

        with progress.stage("join verified", unit="docs") as stage:
            if cluster == "components":
                roots = linked_roots(m, join.pairs(), accept=similar).roots
            else:
                roots = join.greedy(blocked, stage.update, similar, ~linked).representative
        checked, similar_pairs = int(counted[0]), int(counted[1])
    del join, distinct
    return Choice(
        _representatives(n, collapsed, roots, detached),
        matched,
        collapsed,
        features,
        candidate_pairs=candidate_pairs,
        checked_pairs=checked,
        similar_pairs=similar_pairs,
    )


def _representatives(n: int, collapsed: Collapsed, roots: np.ndarray, detached: np.ndarray) -> np.ndarray:
    """int64, shape (n,): each document's representative position, from the rule's ``roots``
    (a rank per rank, -1 for blocked) and the ``detached`` copies (bool per compared)."""
    compared, rank = collapsed.compared, collapsed.rank
    own = roots[rank]
    own = np.where(own >= 0, own, rank)  # a blocked entry's copies follow its best member
    representatives = np.arange(n, dtype=np.int64)
    representatives[compared] = np.where(detached, compared, collapsed.leader[own])
    return representatives


def near_pairs(
    fingerprints: np.ndarray,
    collapsed: Collapsed,
    bits: int,
    max_distance: int,
    verify: Verification | None,
    corpus: Any,
    keys: np.ndarray | None = None,
    features: DocumentFeatures | None = None,
    *,
    every: bool = False,
    chunk_size: int = PAIRS_CHUNK,
    budget: JoinBudget | None = None,
) -> Iterator[Pairs]:
    """The pairs of :meth:`DedupResult.iter_pairs`, from what :func:`choose_representatives`
    found: within ``max_distance``, or under MinHash ``keys`` (``--jaccard``) in a shared
    bucket; with ``verify``, checked on the texts of ``corpus`` (or the ``features`` held);
    in a ``budget`` as :func:`choose_representatives` joins in one. Chunks are never empty:
    one whose pairs all failed their check would type its ids as nulls in a table."""
    if keys is not None:
        assert verify is not None
        chunks = stream_bucket_pairs(
            fingerprints, collapsed, keys, verify, corpus, every, chunk_size, features
        )
    else:
        chunks = stream_pairs(
            fingerprints,
            collapsed,
            bits,
            max_distance,
            every=every,
            verify=verify,
            corpus=corpus,
            features=features,
            chunk_size=chunk_size,
            budget=budget,
        )
    return (chunk for chunk in chunks if len(chunk.first))


def index_to_save(
    fingerprints: np.ndarray, against: HammingIndex | None, config: FingerprintConfig, max_distance: int
) -> HammingIndex:
    """What ``--save-index`` saves: every document's fingerprint, ids their positions, added
    after those of the ``against`` index (to it) when there was one."""
    index = against
    first = 0
    if index is not None:
        first = int(index.ids.max()) + 1 if len(index) else 0
    else:
        index = HammingIndex(bits=config.bits, max_distance=max_distance, fingerprint_config=config.to_dict())
    index.add(fingerprints, ids=np.arange(first, first + fingerprints.shape[0], dtype=np.int64))
    return index


def drop_near_index(kept: np.ndarray, labels: np.ndarray, matched: np.ndarray) -> int:
    """Clears ``kept`` (bool per document) for the clusters (``labels``) of the documents near
    the ``against`` index (``matched`` >= 0), and says how many kept ones that cleared. Under
    components a near document's whole cluster goes with it; under greedy it removes nothing,
    so only its copies follow it."""
    hit = np.zeros(int(labels.max()) + 1 if labels.size else 0, dtype=bool)
    hit[labels[matched >= 0]] = True
    cleared = int((kept & hit[labels]).sum())
    kept &= ~hit[labels]
    return cleared


def priority(n: int, keep: str, lengths: np.ndarray, ids: Any) -> np.ndarray:
    """int64, shape (n,): positions, the one to keep first under ``keep`` (ties: input order)."""
    position = np.arange(n, dtype=np.int64)
    if keep == "longest":
        return np.lexsort((position, -lengths))
    if keep == "shortest":
        return np.lexsort((position, lengths))
    if keep == "first" or ids is None:
        return position  # default ids (file:line, or positions) sort as the input does
    with contextlib.suppress(pa.ArrowInvalid):
        ids = pc.cast(ids, pa.int64())  # integer ids compare as numbers: 9 before 10
    return pc.sort_indices(ids).to_numpy().astype(np.int64)  # stable: ties in input order


def distances(fps: np.ndarray, representatives: np.ndarray) -> np.ndarray:
    bits = np.bitwise_count(fps ^ fps[representatives]).astype(np.int64)
    return bits if bits.ndim == 1 else bits.sum(axis=1)
