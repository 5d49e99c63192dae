""":func:`neardup.spark.dedup.decide` on the driver, for facts few enough to collect.

A distributed decision costs Spark about thirty jobs (ranks, copies, the join, rounds of the
rule, the outcome), each a fixed fraction of a second, whatever the data: on half a million
rows they took 13 of 36 seconds. Below ``DRIVER_ROWS`` the facts (a few longs a row) are
collected instead and the local job's own step decides
(:func:`neardup.decision.steps.choose_representatives`: copies collapsed, the distinct
fingerprints joined by a :class:`~neardup.HammingIndex`, Manku's rule or components, or under
``jaccard`` MinHash buckets, and with ``verify`` the similarity of the pairs it needs), with
the same answer; the pairs are the local engine's too (:func:`~neardup.decision.steps.near_pairs`).
With a check of each pair, and what only the driver can decide, it decides up to
:func:`driver_capacity` rows. Texts come to the driver only for ``verify``, and only those of
documents with a neighbour (:class:`_FetchedCorpus`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._errors import TooManyPairsError
from .._progress import Progress
from .._system import available_memory
from ..decision.options import DedupOptions
from ..decision.outcome import Outcome
from ..decision.steps import choose_representatives, near_pairs
from ..index.hamming_index import HammingIndex
from ..index.join import pairs_memory_limit
from .facts import POSITION, Texts, band_columns
from .fingerprints import fingerprints_of

DRIVER_ROWS = 2_000_000
"""Rows of facts decided on the driver when nothing requires it: below this the fixed cost of
Spark's thirty jobs is more than the driver's work (about 40 bytes a row collected, plus the
index); above it, the cluster's cores are."""
DRIVER_ROW_BYTES = 1024
"""The driver's memory a row of facts may take when decided there: ~270 bytes measured at
1M rows (the facts collected, the index, the outcome), four times over."""


def driver_capacity() -> int:
    """The most rows the driver decides with a check of each pair (``verify``, ``jaccard``)
    or where only it can (``against``, a saved index): as many as a kilobyte each of the
    memory available now holds, at least ``DRIVER_ROWS``."""
    return max(DRIVER_ROWS, available_memory() // DRIVER_ROW_BYTES)


@dataclass(frozen=True)
class DriverDecision:
    """What :func:`decide_on_driver` decided."""

    outcome: pa.Table
    pairs: pa.Table | None
    checked_pairs: int | None
    similar_pairs: int | None
    against_matches: int
    clusters: int
    """Clusters of more than one document."""


def decide_on_driver(
    facts: pa.Table,
    fp: list[str],
    options: DedupOptions,
    *,
    id_col: str | None,
    with_pairs: bool,
    texts: Texts | None = None,
    against: HammingIndex | None = None,
    every_pair: bool = False,
) -> DriverDecision:
    """The outcome, the pairs (or None) and the counts of pairs checked and of documents near
    ``against`` of ``decide`` from the collected ``facts``, as the distributed steps give them
    (``cluster`` values: the representative's rank in ``keep`` order, the position itself for
    ``"first"``). The pairs are the local engine's (:func:`neardup.decision.steps.near_pairs`):
    those that rebuild the clusters, or with ``every_pair`` every pair, with their
    ``similarity`` where checked; held, up to what the driver's memory holds. A document
    near ``against`` is not kept, as the local job decides.
    Under ``jaccard``, the candidates are the documents that share a MinHash band key (the
    facts' ``_band_*`` columns), each pair checked, as ``neardup.dedup(jaccard=...)`` finds
    them."""
    keep, featureless, verify, banding = options.keep, options.featureless, options.check, options.banding
    n = facts.num_rows
    position = facts.column(POSITION).to_numpy()
    fps = fingerprints_of(facts, fp)
    no_features = facts.column("_featureless").to_numpy(zero_copy_only=False)
    order = pc.sort_indices(facts, sort_keys=_sort_keys(keep, id_col)).to_numpy().astype(np.int64)
    rank = position.copy()
    if keep != "first":
        rank[order] = np.arange(n, dtype=np.int64)
    compared = np.arange(n, dtype=np.int64) if featureless == "compare" else np.flatnonzero(~no_features)
    corpus = _FetchedCorpus(position, texts) if texts is not None else None
    keys = None
    if banding is not None:
        assert verify is not None
        bands = [facts.column(c).to_numpy() for c in band_columns((banding, verify))]
        keys = np.ascontiguousarray(np.stack(bands, axis=1).view(np.uint64))
    choice = choose_representatives(
        fps, compared, order, options, corpus, Progress(enabled=False), against=against, keys=keys
    )
    decided_here = Outcome.of(fps, no_features, choice, options)  # as the local job's
    outcome = pa.table(
        {
            POSITION: position,
            **{w: facts.column(w) for w in fp},
            "cluster": rank[choice.representatives],
            "kept": decided_here.kept,
            **({id_col: facts.column(id_col)} if id_col else {}),
        }
    )
    decided = DriverDecision(
        outcome,
        None,
        choice.checked_pairs,
        choice.similar_pairs,
        decided_here.against_matches,
        decided_here.clusters,
    )
    if not with_pairs:
        return decided
    names = facts.column(id_col).combine_chunks() if id_col else pa.array(position)
    limit, held, batches = pairs_memory_limit(), 0, []
    for chunk in near_pairs(
        fps,
        choice.collapsed,
        options.config.bits,
        options.radius,
        verify,
        corpus,
        keys,
        choice.features,
        every=every_pair,
    ):
        held += len(chunk.first)
        if held > limit:
            raise TooManyPairsError(
                f"more than {held:,} near-duplicate pairs, more than the driver's memory holds; "
                f"write them with the local engine, which streams them"
            )
        columns = {"a": names.take(pa.array(chunk.first)), "b": names.take(pa.array(chunk.second))}
        columns["distance"] = pa.array(chunk.distance)
        if chunk.similarity is not None:
            columns["similarity"] = pa.array(chunk.similarity)
        batches.append(pa.RecordBatch.from_pydict(columns))
    empty = {"a": names.slice(0, 0), "b": names.slice(0, 0), "distance": pa.array([], pa.int64())}
    if verify is not None:
        empty["similarity"] = pa.array([], pa.float64())
    listed = pa.Table.from_batches(batches or [pa.RecordBatch.from_pydict(empty)])
    return dataclasses.replace(decided, pairs=listed)


def _sort_keys(keep: str, id_col: str | None) -> list[tuple[str, str]]:
    """``keep`` order as pyarrow's sort keys (ties in input order)."""
    first = {
        "first": [],
        "longest": [("_length", "descending")],
        "shortest": [("_length", "ascending")],
        "lowest-id": [(id_col or POSITION, "ascending")],
    }[keep]
    return [*first, (POSITION, "ascending")]


class _FetchedCorpus:
    """The corpus as ``choose_representatives`` reads it for ``verify``: one batch of all the
    rows, whose texts are fetched from the executors only for the rows it takes."""

    def __init__(self, position: np.ndarray, texts: Texts) -> None:
        self.position = position
        self.texts = texts
        self.total_bytes = None

    def batches(self, rejects: Any) -> Iterator[tuple[_Fetched, None]]:
        yield _Fetched(self), None


class _Fetched:
    def __init__(self, corpus: _FetchedCorpus) -> None:
        self.corpus = corpus
        self.texts = self
        self.consumed = 0  # bytes of files read, for progress (``Batch.consumed``): none here

    def __len__(self) -> int:
        return len(self.corpus.position)

    def take(self, rows: np.ndarray) -> pa.Array:
        return self.corpus.texts(self.corpus.position[np.asarray(rows, dtype=np.int64)])
