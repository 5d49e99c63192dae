"""The outcome of a local dedup (:class:`DedupResult`): who is kept, the clusters, the pairs on
demand, and the writing of every output atomically."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._atomic import atomic_dir, atomic_path
from .._config import FingerprintConfig
from .._errors import ConfigError, TooManyPairsError
from .._progress import Progress
from ..decision.bounded import JoinBudget
from ..decision.lsh import Banding
from ..decision.pairs import Pairs
from ..decision.selection import Collapsed
from ..decision.stats import DedupStats
from ..decision.steps import index_to_save, near_pairs
from ..decision.verify import DocumentFeatures, Verification
from ..index.hamming_index import PAIRS_CHUNK, HammingIndex
from ..index.join import pairs_memory_limit
from ..io.corpus import MemoryCorpus
from ..io.dispatch import write_kept as _write_kept
from ..io.sources import check_outputs
from ..io.writers import TableWriter, output_format, table_format, write_table


@dataclass
class DedupResult:
    """The outcome of :func:`dedup`, one entry per document read, in input order.

    Attributes:
        config: how the fingerprints were made.
        max_distance: the Hamming radius of a near-duplicate pair, in bits.
        fingerprints: uint64, shape (n,), or (n, 2) for 128 bits.
        kept: bool, shape (n,): the documents to keep, one per cluster.
        labels: int64, shape (n,): each document's cluster, numbered from 0; a document
            without near-duplicates is a cluster of its own.
        representatives: int64, shape (n,): the position of each document's representative,
            the kept document of its cluster.
        distances: int64, shape (n,): Hamming distance to the representative.
        pairs: (first, second, distance): int64 positions (first < second) of every
            near-duplicate pair (verified, with ``verify``), and their Hamming distance.
            Computed on first use: for n copies of one text that is n(n-1)/2 pairs.
        similarity: float64 exact similarity of each pair, with ``verify``; else None.
        matched: with ``against``, int64 id in that index of a near-duplicate of each document
            (-1 for none); else None.
        rows: int64, shape (n,): each document's line or row in its file (its position, for
            data in memory).
        stats: counts and times.
    """

    config: FingerprintConfig
    max_distance: int
    fingerprints: np.ndarray
    kept: np.ndarray
    labels: np.ndarray
    representatives: np.ndarray
    distances: np.ndarray
    matched: np.ndarray | None
    rows: np.ndarray
    stats: DedupStats
    _corpus: Any = field(repr=False)
    _owners: np.ndarray = field(repr=False)
    _ids: Any = field(repr=False)
    _lengths: np.ndarray = field(repr=False)
    _against_index: HammingIndex | None = field(default=None, repr=False)
    _spans: np.ndarray | None = field(default=None, repr=False)
    _collapsed: Collapsed | None = field(default=None, repr=False)
    _verify: Verification | None = field(default=None, repr=False)
    _pairs: Pairs | None = field(default=None, repr=False)
    plan: Banding | None = None
    """With ``jaccard``: the MinHash-LSH banding that found the candidates; else None."""
    _keys: np.ndarray | None = field(default=None, repr=False)
    _features: DocumentFeatures | None = field(default=None, repr=False)
    """With a check (``verify``, ``jaccard``, ``cosine``): the features its checks read (under
    ``jaccard``, held from the first read while within a quarter of the memory available),
    kept for the pairs, which then read nothing again; None where they were not held, and the
    pairs read the texts they need again."""
    _budget: JoinBudget | None = field(default=None, repr=False)
    """The run's ``memory=`` and ``work_dir=``, which its pairs are joined in too."""

    def __len__(self) -> int:
        return self.kept.shape[0]

    def iter_pairs(self, every: bool = False, *, chunk_size: int = PAIRS_CHUNK) -> Iterator[Pairs]:
        """The near-duplicate pairs, streamed in chunks of at most ``chunk_size`` (memory stays
        bounded however large a cluster): :class:`Pairs` of int64 positions ``first <
        second``, ``distance`` and, with ``verify``, ``similarity`` (pairs below the threshold
        left out).

        By default the pairs that rebuild every cluster: each pair of distinct fingerprints
        within the radius, between their leaders (the members first in ``keep`` order), and
        each other document's link to its fingerprint's leader (distance 0). ``every=True``:
        every pair of documents within the radius, n (n - 1) / 2 for n copies of one text.
        """
        assert self._collapsed is not None
        return near_pairs(
            self.fingerprints,
            self._collapsed,
            self.config.bits,
            self.max_distance,
            self._verify,
            self._corpus,
            self._keys,
            self._features,
            every=every,
            chunk_size=chunk_size,
            budget=self._budget,
        )

    @property
    def pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every near-duplicate pair (see the class docstring), computed on first use and held:
        where they would not fit in memory this raises :class:`TooManyPairsError`; stream them
        with :meth:`iter_pairs` instead."""
        if self._pairs is None:
            limit, held, chunks = pairs_memory_limit(), 0, [self._no_pairs()]
            for chunk in self.iter_pairs(every=True):
                held += len(chunk.first)
                if held > limit:
                    raise TooManyPairsError(
                        f"more than {held:,} near-duplicate pairs, more than memory holds; "
                        f"stream them with result.iter_pairs(every=True), or write them with "
                        f"result.write(pairs=PATH, every_pair=True)"
                    )
                chunks.append(chunk)
            first, second, distance = (np.concatenate([c[f] for c in chunks]) for f in range(3))
            order = np.lexsort((second, first))
            similarity = None
            if self._verify is not None:
                similarity = np.concatenate([c.similarity for c in chunks])[order]
            self._pairs = Pairs(first[order], second[order], distance[order], similarity)
        return self._pairs.first, self._pairs.second, self._pairs.distance

    @property
    def similarity(self) -> np.ndarray | None:
        """float64 exact similarity of each of :attr:`pairs`, with ``verify``; else None."""
        if self._verify is None:
            return None
        self.pairs  # noqa: B018 - computes the similarities with the pairs
        assert self._pairs is not None
        return self._pairs.similarity

    def ids_at(self, positions: np.ndarray) -> list:
        """The ids of the documents at ``positions``."""
        positions = np.asarray(positions, dtype=np.int64)
        if self._ids is not None:
            return self._ids.take(pa.array(positions)).to_pylist()
        return self._corpus.default_ids(self.rows[positions], self._owners[positions])

    @property
    def ids(self) -> list:
        """Every document's id: the id field's value, else ``file:line`` (``file:row``), else
        its position in the data."""
        return self.ids_at(np.arange(len(self)))

    def clusters_table(self) -> pa.Table:
        """One row per document that has a near-duplicate: ``id``, ``cluster``,
        ``representative`` (its id), ``distance`` to it; with ``against``, the ``against``
        id in the index of a near-duplicate (null if none)."""
        sizes = np.bincount(self.labels, minlength=1)
        members = sizes[self.labels] > 1
        if self.matched is not None:
            members |= self.matched >= 0
        at = np.flatnonzero(members)
        columns = {
            "id": self.ids_at(at),
            "cluster": self.labels[at],
            "representative": self.ids_at(self.representatives[at]),
            "distance": self.distances[at],
        }
        if self.matched is not None:
            matched = self.matched[at]
            columns["against"] = pa.array(matched, mask=matched < 0)
        return pa.table(columns)

    def pairs_table(self, every: bool = False) -> pa.Table:
        """The pairs of :meth:`iter_pairs` as one table: ``id_a``, ``id_b``, ``distance`` (and
        ``similarity`` with ``verify``). Held whole: :meth:`write` streams them instead."""
        batches = [self._pairs_batch(chunk) for chunk in self.iter_pairs(every)]
        return pa.Table.from_batches(batches or [self._pairs_batch(self._no_pairs())])

    def _no_pairs(self) -> Pairs:
        """An empty chunk of pairs (with an empty similarity under ``verify``)."""
        empty = np.zeros(0, dtype=np.int64)
        return Pairs(empty, empty, empty, None if self._verify is None else np.zeros(0))

    def _pairs_batch(self, chunk: Pairs) -> pa.RecordBatch:
        columns: dict[str, Any] = {
            "id_a": self.ids_at(chunk.first),
            "id_b": self.ids_at(chunk.second),
            "distance": chunk.distance,
        }
        if chunk.similarity is not None:
            columns["similarity"] = chunk.similarity
        return pa.RecordBatch.from_pydict(columns)

    def to_pandas(self) -> Any:
        """A pandas DataFrame, one row per document: id, kept, cluster, representative (id),
        distance (to it); with ``against``, the matched index id (-1 for none)."""
        columns = {
            "id": self.ids,
            "kept": self.kept,
            "cluster": self.labels,
            "representative": self.ids_at(self.representatives),
            "distance": self.distances,
        }
        if self.matched is not None:
            columns["against"] = self.matched
        return pa.table(columns).to_pandas()

    def write(
        self,
        output: str | os.PathLike | None = None,
        *,
        format: str | None = None,
        clusters: str | os.PathLike | None = None,
        pairs: str | os.PathLike | None = None,
        every_pair: bool = False,
        save_index: str | os.PathLike | None = None,
        progress: Progress | None = None,
    ) -> None:
        """Write the outputs, all atomically: each goes to a temporary file beside it and
        replaces its target only once every output is complete (an error or Ctrl-C leaves
        the targets as they were). Outputs that would replace an input or each other, or
        could not be written, are refused first (:func:`neardup.io.sources.check_outputs`).

        Args:
            output: the kept documents, every field as it was, in ``format`` (default: named
                by the suffix, else the inputs' format; a folder for one-document files).
            clusters: the clusters table (:meth:`clusters_table`), .parquet, .csv, .tsv or .jsonl.
            pairs: the pairs of :meth:`iter_pairs` (``id_a``, ``id_b``, ``distance``, and
                ``similarity`` with ``verify``), likewise, streamed a chunk at a time.
            every_pair: write every pair of documents to ``pairs``, not just those that
                rebuild the clusters.
            save_index: a :class:`HammingIndex` of every document's fingerprint (ids: the
                positions, after those of the ``against`` index when there was one).
        """
        progress = progress or Progress(enabled=False)
        written = {"output": output, "clusters": clusters, "pairs": pairs, "save_index": save_index}
        if isinstance(self._corpus, MemoryCorpus):
            check_outputs(written, [])
        else:  # never write over the documents read
            fmt = None if output is None else output_format(str(output), format, self._corpus.sources)[0]
            self._corpus.check_outputs(written, folders=("output",) if fmt == "text" else ())
        with contextlib.ExitStack() as stack:
            if output is not None:
                self._write_output(stack, Path(output), format, progress)
            if clusters is not None:
                with progress.stage(f"write {Path(clusters).name}", unit="rows"):
                    target = stack.enter_context(atomic_path(clusters))
                    write_table(self.clusters_table(), target, table_format(clusters))
            if pairs is not None:
                with progress.stage(f"write {Path(pairs).name}", unit="pairs") as stage:
                    fmt = table_format(pairs)
                    writer = TableWriter(stack.enter_context(atomic_path(pairs)), fmt, name=Path(pairs).name)
                    for chunk in self.iter_pairs(every_pair):  # never empty
                        writer.write(self._pairs_batch(chunk))
                        stage.update(len(chunk.first))
                    if writer.schema is None:  # no pair: the columns alone
                        writer.write(self._pairs_batch(self._no_pairs()))
                    writer.close()
            if save_index is not None:
                with progress.stage("save index", unit="docs"):
                    index = index_to_save(
                        self.fingerprints, self._against_index, self.config, self.max_distance
                    )
                    index.save(stack.enter_context(atomic_path(save_index)))

    def _write_output(
        self, stack: contextlib.ExitStack, output: Path, format: str | None, progress: Progress
    ) -> None:
        corpus = self._corpus
        if isinstance(corpus, MemoryCorpus):
            fmt, compression = output_format(str(output), format, [])
            if fmt == "text":
                raise ConfigError(
                    "text output copies one-document files, and these texts came from memory; "
                    "write JSONL, CSV, Parquet or lines (.txt)"
                )
            memory_writer = TableWriter(
                stack.enter_context(atomic_path(output)), fmt, compression, name=output.name
            )
            at = np.flatnonzero(self.kept)
            texts = (
                pc.take(corpus.texts, pa.array(at))
                if not isinstance(corpus.texts, list)
                else pa.array([corpus.texts[p] for p in at.tolist()])
            )
            if isinstance(texts, pa.ChunkedArray):  # a table's column: a record batch takes one array
                texts = texts.combine_chunks()
            memory_writer.write(pa.record_batch({"id": pa.array(self.ids_at(at)), "text": texts}))
            memory_writer.close()
            return
        fmt, compression = output_format(str(output), format, corpus.sources)
        folder = stack.enter_context(atomic_dir(output)) if fmt == "text" else None
        writer = (
            None
            if folder
            else TableWriter(
                stack.enter_context(atomic_path(output)),
                fmt,
                compression,
                corpus.options.text_field,
                name=output.name,
            )
        )
        at = np.flatnonzero(self.kept)
        assert self._spans is not None  # a file corpus records every document's span
        spans = self._spans[at]
        owners, rows = self._owners[at], self.rows[at]
        bounds = np.searchsorted(owners, np.arange(len(corpus.sources) + 1))
        written: set[str] = set()
        total = sum(s.size for p, s in enumerate(corpus.sources) if bounds[p + 1] > bounds[p])
        with progress.stage(f"write {output.name}", total=total) as stage:
            done = 0
            for position, source in enumerate(corpus.sources):
                if bounds[position + 1] > bounds[position]:
                    piece = slice(bounds[position], bounds[position + 1])
                    _write_kept(source, rows[piece], spans[piece], writer, folder, corpus.options, written)
                    done += source.size
                    stage.update(done, int(bounds[position + 1] - bounds[position]))
            if writer is not None:
                writer.close()
