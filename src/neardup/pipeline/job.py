"""Deduplicate a corpus: read -> fingerprint -> candidate pairs (Hamming self-join) ->
verify (optional) -> clusters -> keep one document per cluster -> write.

Memory holds about 30 bytes per document (fingerprint, row, source, length, cluster) plus one
block of input; the texts are read again, never kept, for ``verify`` and for writing.
"""

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
from ..fingerprint.fingerprinter import Fingerprinter
from ..index.hamming import distance_for_cosine
from ..index.hamming_index import PAIRS_CHUNK, HammingIndex, pairs_memory_limit
from ..io.batch import MiB, ReadOptions
from ..io.dispatch import write_kept as _write_kept
from ..io.rejects import Rejects
from ..io.sources import split_suffixes
from ..io.writers import TableWriter, output_format, write_table
from .choices import CLUSTERINGS, FEATURELESS, KEEP
from .corpus import MemoryCorpus, open_corpus
from .cosine import checked_cosine_radius, describe_cosine
from .lsh import Banding, CorpusKeys, choose_in_buckets, jaccard_plan, stream_bucket_pairs
from .pairs import Pairs, stream_pairs
from .selection import Collapsed, collapse, component_roots, distinct_index, keep_greedy
from .verify import DocumentFeatures, Verification, check_verify, featureless_texts


def format_bytes(n: int) -> str:
    """``n`` bytes in the unit that shows it as 1 to 1,023.9: "812 B", "3.4 KiB", "2.0 GiB"."""
    if n < 1024:
        return f"{n:,} B"
    size = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        size /= 1024
        if round(size, 1) < 1024 or unit == "TiB":
            break
    return f"{size:,.1f} {unit}"


@dataclass
class DedupStats:
    """What a run did, for its summary."""

    documents: int = 0
    skipped: int = 0
    skip_summary: str = ""
    input_bytes: int = 0
    text_bytes: int = 0
    candidate_pairs: int | None = None
    checked_pairs: int | None = None
    similar_pairs: int | None = None
    clusters: int = 0
    duplicates: int = 0
    against_matches: int = 0
    featureless: int = 0
    featureless_policy: str = "keep"
    chained: int = 0
    removed_text_bytes: int = 0
    plan: str = ""
    seconds: dict[str, float] = field(default_factory=dict)

    def format(self) -> str:
        """The summary, a few lines for stderr."""
        dropped = self.featureless if self.featureless_policy == "drop" else 0
        kept = self.documents - self.duplicates - self.against_matches - dropped
        lines = [
            f"read {self.documents:,} documents ({format_bytes(self.text_bytes)} of text)"
            + (f", skipped {self.skipped:,}:" if self.skipped else "")
        ]
        if self.skipped:
            lines.append(self.skip_summary)
        if self.featureless:
            what = {
                "keep": "kept, each compared with nothing",
                "drop": "dropped",
                "compare": "compared as any other (all share fingerprint 0)",
            }[self.featureless_policy]
            lines.append(
                f"{self.featureless:,} documents had no features (empty, blank or punctuation "
                f"only): {what} (--featureless)"
            )
        if self.plan:
            lines.append(self.plan)
        found = f"{self.clusters:,} clusters of near-duplicates"
        if self.candidate_pairs is not None:
            found += f", {self.candidate_pairs:,} pairs between distinct fingerprints"
        if self.checked_pairs is not None:
            found += f"; {self.similar_pairs:,} of {self.checked_pairs:,} pairs checked passed verification"
        lines.append(found)
        removed = f"removed {self.duplicates:,} near-duplicates"
        if dropped:
            removed += f" and {dropped:,} documents without features"
        if self.against_matches:
            removed += f" and {self.against_matches:,} near-duplicates of the index"
        lines.append(
            f"{removed}, kept {kept:,} documents; {format_bytes(self.removed_text_bytes)} "
            f"of text saved ({100 * self.removed_text_bytes / max(self.text_bytes, 1):.1f}%)"
        )
        if self.chained:
            lines.append(
                f"{self.chained:,} removed documents are farther than the radius from every kept "
                f"one, linked to it only through others (--cluster components)"
            )
        lines.append(
            "time: " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in self.seconds.items())
        )
        return "\n".join(lines)


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
    """With ``jaccard`` on data in memory: the features the run read, kept for the pairs (the
    texts are held anyway); files are read again instead."""

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
        the targets as they were).

        Args:
            output: the kept documents, every field as it was, in ``format`` (default: named
                by the suffix, else the inputs' format; a folder for one-document files).
            clusters: the clusters table (:meth:`clusters_table`), .parquet, .csv or .tsv.
            pairs: the pairs of :meth:`iter_pairs` (``id_a``, ``id_b``, ``distance``, and
                ``similarity`` with ``verify``), likewise, streamed a chunk at a time.
            every_pair: write every pair of documents to ``pairs``, not just those that
                rebuild the clusters.
            save_index: a :class:`HammingIndex` of every document's fingerprint (ids: the
                positions, after those of the ``against`` index when there was one).
        """
        progress = progress or Progress(enabled=False)
        with contextlib.ExitStack() as stack:
            if output is not None:
                self._write_output(stack, Path(output), format, progress)
            if clusters is not None:
                with progress.stage(f"write {Path(clusters).name}", unit="rows"):
                    target = stack.enter_context(atomic_path(clusters))
                    write_table(self.clusters_table(), target, _table_format(clusters))
            if pairs is not None:
                with progress.stage(f"write {Path(pairs).name}", unit="pairs") as stage:
                    fmt = _table_format(pairs)
                    writer = TableWriter(stack.enter_context(atomic_path(pairs)), fmt, name=Path(pairs).name)
                    for chunk in self.iter_pairs(every_pair):
                        if len(chunk.first):
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


def dedup(
    data: Any,
    *,
    max_distance: int | None = None,
    similarity: float | None = None,
    keep: str = "first",
    verify: tuple[str, float] | None = None,
    jaccard: float | None = None,
    cosine: float | None = None,
    verify_features: str | None = None,
    verify_size: int | None = None,
    against: str | os.PathLike | HammingIndex | None = None,
    text_field: str = "text",
    id_field: str | None = None,
    config: FingerprintConfig | None = None,
    n_jobs: int | None = None,
    errors: str = "raise",
    input_format: str | None = None,
    compression: str | None = None,
    lines: bool = False,
    max_document_mb: float = 32,
    block_mb: float = 16,
    featureless: str = "keep",
    cluster: str = "greedy",
    progress: Progress | None = None,
    **fingerprint_options: Any,
) -> DedupResult:
    """Find the near-duplicates of a corpus and choose one document to keep per cluster.

    Args:
        data: a list of texts; a pandas or polars DataFrame or a pyarrow Table (column
            ``text_field``); or files: a path (str or ``Path``), or a list of ``Path``
            (a list of str is texts). Files are JSONL, Parquet, CSV/TSV, or text (one document
            per file, or per line with ``lines``), plain or .gz/.zst; see ``neardup dedup --help``.
        max_distance: the Hamming radius of a near-duplicate, in bits; default 3 per 64 bits
            (Manku et al. 2007).
        similarity: instead of ``max_distance``, the least cosine similarity, turned into a
            radius with :func:`neardup.distance_for_cosine`.
        keep: which document to keep of near-duplicates: ``"first"`` in input order,
            ``"longest"`` or ``"shortest"`` text (ties: the first), ``"lowest-id"``.
        cluster: ``"greedy"``: in ``keep`` order, a document is kept unless a kept one lies
            within the radius (and, with ``verify``, is at least the threshold similar); each
            removed document's representative is that kept one. ``"components"``: connected
            components of the near-duplicate pairs, one kept per component; a removed
            document may then lie far from the kept one, linked through others.
        verify: ``(metric, threshold)``: recompute the exact ``"jaccard"`` (of the feature
            sets) or ``"cosine"`` (of the weighted features) of every candidate pair from the
            texts and keep only the pairs at least ``threshold`` similar.
        jaccard: instead of a radius, the least Jaccard index of a near-duplicate pair, stated
            on ``verify_features`` (default: word 3-shingles). Candidates come from MinHash-LSH
            banded for that threshold (a pair at it is a candidate with probability >= 0.95;
            more similar pairs, more likely) and every pair the rule needs is verified
            exactly: no reported pair is below the threshold. ``result.plan`` says what ran.
        cosine: instead of a radius, the least cosine similarity of the fingerprint's weighted
            features: the radius that holds a pair at that cosine with probability >= 0.95
            (binomial model, ``pipeline/cosine.py``), every candidate verified exactly.
            Thresholds whose radius the index does not serve (below ~0.96 at 128 bits) are
            refused with what to do instead.
        verify_features, verify_size: the features ``verify`` (or ``jaccard``) compares: the
            fingerprint's own (default for ``verify``), or ``"word-shingles"`` (``verify_size``
            words, 3), ``"words"`` or ``"char-ngrams"`` (``verify_size`` characters, 5),
            extracted as a fingerprint with those settings would extract them. A threshold
            stated in 3-shingle Jaccard is checked on 3-shingles whatever the fingerprint hashes.
        against: a :class:`HammingIndex` (or its file) of documents seen before: documents
            near one of them are dropped with their whole cluster.
        text_field, id_field: the field or column of the text and of the id.
        config, fingerprint_options: the fingerprint (:class:`FingerprintConfig`, or its
            fields as keywords).
        n_jobs: threads for fingerprinting; default all cores.
        errors: ``"raise"`` at the first bad record, naming its file and line; ``"skip"`` to
            leave bad records out, counted in ``result.stats``.
        input_format, compression, lines: override what file names say.
        max_document_mb: a longer text is a bad record.
        block_mb: how much of a file is read at a time; bounds memory, changes no result.
        featureless: documents with no features (empty, blank, or punctuation only for word
            features), which all get fingerprint 0: ``"keep"`` each, compared with nothing;
            ``"drop"`` them from the output; or ``"compare"`` them as any other document (they
            are then all near-duplicates of each other).
        progress: a :class:`neardup._progress.Progress` to report to.
    """
    if config is None:
        config = FingerprintConfig(**fingerprint_options)
    elif fingerprint_options:
        raise ConfigError(
            f"pass either config= or fingerprint options, not both: {sorted(fingerprint_options)}"
        )
    if keep not in KEEP:
        raise ConfigError(f"keep={keep!r} is not allowed; choose one of {', '.join(KEEP)}")
    if cluster not in CLUSTERINGS:
        raise ConfigError(f"cluster={cluster!r} is not allowed; choose one of {', '.join(CLUSTERINGS)}")
    if featureless not in FEATURELESS:
        raise ConfigError(
            f"featureless={featureless!r} is not allowed; choose one of {', '.join(FEATURELESS)}"
        )
    banding: Banding | None = None
    checked_verify: Verification | None = None
    plan_line = ""
    if cosine is not None:
        if jaccard is not None:
            raise ConfigError("give jaccard= or cosine=, not both")
        check_threshold("cosine", cosine, max_distance, similarity, verify)
        max_distance, verify = checked_cosine_radius(cosine, config.bits), ("cosine", cosine)
        plan_line = describe_cosine(cosine, config.bits)
    k = radius(max_distance, similarity, config.bits)
    if jaccard is not None:
        check_threshold("jaccard", jaccard, max_distance, similarity, verify)
        if against is not None:
            raise ConfigError(
                "against= finds documents within a radius; it does not combine with jaccard= yet"
            )
        checked_verify, banding, plan_line = jaccard_plan(jaccard, config, verify_features, verify_size)
    else:
        checked_verify = check_verify(verify, config, verify_features, verify_size)
    options = ReadOptions(
        text_field=text_field,
        id_field=id_field,
        max_document_bytes=int(max_document_mb * MiB),
        block_bytes=int(block_mb * MiB),
    )
    corpus = open_corpus(
        data,
        text_field=text_field,
        id_field=id_field,
        options=options,
        input_format=input_format,
        compression=compression,
        lines=lines,
    )
    against_index = open_against(against, config, k)
    progress = progress or Progress(enabled=False)
    rejects = Rejects(errors)
    stats = DedupStats(input_bytes=corpus.total_bytes or 0)
    stats.plan = plan_line

    fps, lengths, rows, owners, ids, spans, no_features, corpus_keys = _fingerprint_all(
        corpus, Fingerprinter(config), rejects, progress, n_jobs, banding, checked_verify
    )
    keys = None if corpus_keys is None else corpus_keys.keys()
    n = len(rows)
    # Positions of the documents compared with others: all but those without features, unless
    # asked to compare them too.
    compared = np.arange(n) if featureless == "compare" else np.flatnonzero(~no_features)
    representatives, matched, collapsed, features = choose_representatives(
        fps,
        compared,
        _priority(n, keep, lengths, ids),
        k,
        config,
        cluster,
        checked_verify,
        against_index,
        corpus,
        progress,
        stats,
        keys,
        None if corpus_keys is None else corpus_keys.features(),
    )
    with progress.stage("clusters", unit="docs"):
        _, labels = np.unique(representatives, return_inverse=True)
        kept = representatives == np.arange(n)
        sizes = np.bincount(labels, minlength=1)
        if matched is not None:
            stats.against_matches = drop_near_index(kept, labels, matched)
        stats.duplicates = int(n - kept.sum()) - stats.against_matches
        if featureless == "drop":
            kept &= ~no_features  # each is its own cluster: dropping it touches no other
        distances = _distances(fps, representatives)
        # Removed as near-duplicates yet farther than k from their kept one: components chain,
        # greedy never does. (Under components each cluster keeps one, so no other kept one
        # lies within k.)
        duplicate = representatives != np.arange(n)
        if matched is not None:
            duplicate &= matched < 0
        if banding is None:  # under --jaccard no radius applies
            stats.chained = int((duplicate & (distances > k)).sum())
    stats.featureless, stats.featureless_policy = int(no_features.sum()), featureless
    stats.documents, stats.skipped, stats.skip_summary = n, rejects.count, rejects.summary()
    stats.text_bytes, stats.removed_text_bytes = int(lengths.sum()), int(lengths[~kept].sum())
    stats.clusters = int((sizes > 1).sum())
    stats.seconds = progress.seconds
    return DedupResult(
        config,
        k,
        fps,
        kept,
        labels.astype(np.int64),
        representatives,
        distances,
        matched,
        rows,
        stats,
        corpus,
        owners,
        ids,
        lengths,
        against_index,
        spans,
        _collapsed=collapsed,
        _verify=checked_verify,
        plan=banding,
        _keys=keys,
        _features=features if isinstance(corpus, MemoryCorpus) else None,
    )


def choose_representatives(
    fps: np.ndarray,
    compared: np.ndarray,
    order: np.ndarray,
    k: int,
    config: FingerprintConfig,
    cluster: str,
    verify: Verification | None,
    against_index: HammingIndex | None,
    corpus: Any,
    progress: Progress,
    stats: DedupStats,
    keys: np.ndarray | None = None,
    held: DocumentFeatures | None = None,
) -> tuple[np.ndarray, np.ndarray | None, Collapsed, DocumentFeatures | None]:
    """(representative position of every document, the ``against`` match of each or None, the
    compared fingerprints collapsed, and under ``keys`` the features read for the checks).

    Only the ``compared`` documents take part; the others represent themselves. Identical
    fingerprints are collapsed (``selection.collapse``), so copies cost nothing beyond their
    entry, and no list of pairs is ever held: the components stream the join into a
    union-find, the greedy rule searches. With ``verify`` a first run without it finds the
    fingerprints that have a neighbour; the texts of just those are read, and a second run
    asks each pair it needs about their similarity."""
    n = fps.shape[0]
    local = np.full(n, -1, dtype=np.int64)
    local[compared] = np.arange(compared.size, dtype=np.int64)
    ranked = local[order]
    distinct, rank, leader = collapse(fps[compared], ranked[ranked >= 0])
    collapsed = Collapsed(compared, rank, compared[leader])  # leaders as document positions
    if keys is not None:  # --jaccard: MinHash-LSH buckets instead of a radius
        assert verify is not None
        buckets = choose_in_buckets(collapsed, keys, cluster, verify, corpus, progress, held)
        stats.checked_pairs, stats.similar_pairs = buckets.checked, buckets.similar
        representatives = _representatives(n, collapsed, buckets.roots, buckets.detached)
        return representatives, None, collapsed, buckets.features
    leader = collapsed.leader
    m = distinct.shape[0]
    matched, blocked = None, None
    index = distinct_index(distinct, config.bits, k)
    with progress.stage("join", total=None if cluster == "components" else m, unit="docs") as stage:
        if against_index is not None:
            offsets, found, _ = against_index.query_batch(distinct, max_distance=k)
            blocked = np.diff(offsets) > 0
            nearest = np.full(m, -1, dtype=np.int64)
            nearest[blocked] = found[offsets[:-1][blocked]]
            matched = np.full(n, -1, dtype=np.int64)
            matched[compared] = nearest[rank]
        if cluster == "components":
            found_components = component_roots(index, on_progress=stage.update)
            stats.candidate_pairs = found_components.pairs
            roots = found_components.roots
            linked = np.bincount(roots, minlength=m)[roots] > 1
        else:
            greedy = keep_greedy(index, distinct, blocked, on_progress=stage.update)
            roots, linked = greedy.representative, greedy.linked
    detached = np.zeros(compared.size, dtype=bool)  # copies whose text fails verification
    if verify is not None:
        metric, threshold = verify.metric, verify.threshold
        copies = np.flatnonzero(leader[rank] != compared)
        with progress.stage("verify", total=corpus.total_bytes):
            wanted = np.concatenate([leader[linked], leader[rank[copies]], compared[copies]])
            features = DocumentFeatures.read(corpus, wanted, verify.features)
            detached[copies] = (
                features.similarity(leader[rank[copies]], compared[copies], metric, threshold) < threshold
            )

        counted = np.zeros(2, dtype=np.int64)  # pairs checked, pairs similar enough

        def similar(first: np.ndarray, second: np.ndarray, _: np.ndarray) -> np.ndarray:
            good = features.similarity(leader[first], leader[second], metric, threshold) >= threshold
            counted[:] += len(good), int(good.sum())
            return good

        with progress.stage("join verified", unit="docs") as stage:
            if cluster == "components":
                roots = component_roots(index, accept=similar).roots
            else:
                roots = keep_greedy(
                    index, distinct, blocked, on_progress=stage.update, accept=similar, lonely=~linked
                ).representative
        stats.checked_pairs, stats.similar_pairs = int(counted[0]), int(counted[1])
    return _representatives(n, collapsed, roots, detached), matched, collapsed, None


def _representatives(n: int, collapsed: Collapsed, roots: np.ndarray, detached: np.ndarray) -> np.ndarray:
    """int64, shape (n,): each document's representative position, from the rule's ``roots``
    (a rank per rank, -1 for blocked) and the ``detached`` copies (bool per compared)."""
    compared, rank = collapsed.compared, collapsed.rank
    own = roots[rank]
    own = np.where(own >= 0, own, rank)  # a blocked entry's copies follow its best member
    representatives = np.arange(n, dtype=np.int64)
    representatives[compared] = np.where(detached, compared, collapsed.leader[own])
    return representatives


def _table_format(path: str | os.PathLike) -> str:
    """The format a clusters or pairs table is written in, named by its suffix (CSV if none)."""
    fmt = split_suffixes(Path(path).name)[0] or "csv"
    if fmt not in ("parquet", "csv", "tsv"):
        raise ConfigError(f"{Path(path).name}: write clusters and pairs as .parquet, .csv or .tsv, not {fmt}")
    return fmt


def radius(max_distance: int | None, similarity: float | None, bits: int) -> int:
    """The Hamming radius asked for: ``max_distance``, or the one ``similarity`` (cosine)
    gives, or by default 3 bits per 64."""
    if max_distance is not None and similarity is not None:
        raise ConfigError("give max_distance or similarity, not both")
    if similarity is not None:
        return distance_for_cosine(similarity, bits)
    if max_distance is None:
        return 3 * bits // 64
    if (
        isinstance(max_distance, bool)
        or not isinstance(max_distance, (int, np.integer))
        or not 0 <= max_distance <= bits
    ):
        raise ConfigError(f"max_distance={max_distance!r} must be an integer in [0, {bits}]")
    return int(max_distance)


def check_threshold(name: str, threshold: object, *others: object) -> None:
    """``jaccard=`` or ``cosine=`` is a number in (0, 1] and comes without a radius or verify."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
        raise ConfigError(f"{name}={threshold!r} must be a number in (0, 1], e.g. 0.8")
    max_distance, similarity, verify = others
    for other, value in (("max_distance", max_distance), ("similarity", similarity), ("verify", verify)):
        if value is not None:
            raise ConfigError(f"{name}= states the threshold and verifies it; leave {other}= out")


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
) -> Iterator[Pairs]:
    """The pairs of :meth:`DedupResult.iter_pairs`, from what :func:`choose_representatives`
    found: within ``max_distance``, or under MinHash ``keys`` (``--jaccard``) in a shared
    bucket; with ``verify``, checked on the texts of ``corpus`` (or the ``features`` held)."""
    if keys is not None:
        assert verify is not None
        return stream_bucket_pairs(fingerprints, collapsed, keys, verify, corpus, every, chunk_size, features)
    return stream_pairs(
        fingerprints,
        collapsed,
        bits,
        max_distance,
        every=every,
        verify=verify,
        corpus=corpus,
        chunk_size=chunk_size,
    )


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


def open_against(against: Any, config: FingerprintConfig, k: int) -> HammingIndex | None:
    """The ``against`` index (or its file), checked against this run's config and radius."""
    if against is None:
        return None
    index = against if isinstance(against, HammingIndex) else HammingIndex.open(against)
    name = against if not isinstance(against, HammingIndex) else "the index"
    if index.bits != config.bits:
        raise ConfigError(
            f"{name} holds {index.bits}-bit fingerprints; this run makes {config.bits}-bit ones"
        )
    if index.fingerprint_config is not None and index.fingerprint_config != config.to_dict():
        raise ConfigError(
            f"{name} was built with another fingerprint config "
            f"({index.fingerprint_config}); deduplicate with the same options"
        )
    if k > index.max_distance:
        raise ConfigError(
            f"{name} serves radius {index.max_distance} at most; this run asks {k}: "
            f"lower max_distance or rebuild the index with a larger one"
        )
    return index


def _fingerprint_all(
    corpus: Any,
    fingerprinter: Fingerprinter,
    rejects: Rejects,
    progress: Progress,
    n_jobs: int | None,
    banding: Banding | None = None,
    verification: Verification | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Any, np.ndarray, np.ndarray, CorpusKeys | None]:
    """(fingerprints, text lengths in bytes, rows, source positions, ids or None, spans: -1
    where a source is not line-based, whether each document has no features, and with a
    ``banding`` the band keys of ``verification``'s features (and the features, if they fit),
    else None)."""
    fps, lengths, rows, owners, ids, spans, no_features = [], [], [], [], [], [], []
    corpus_keys = None
    if banding is not None:
        assert verification is not None
        corpus_keys = CorpusKeys(banding, verification)
    with progress.stage("read + fingerprint", total=corpus.total_bytes) as stage:
        for batch, owner in corpus.batches(rejects):
            batch_fps = fingerprinter.fingerprint_batch(batch.texts, n_jobs=n_jobs)
            fps.append(batch_fps)
            no_features.append(featureless_texts(batch.texts, batch_fps, fingerprinter.config))
            lengths.append(_text_lengths(batch.texts))
            rows.append(batch.rows)
            owners.append(
                np.broadcast_to(np.int32(owner), len(batch))
                if np.ndim(owner) == 0
                else owner.astype(np.int32)
            )
            if batch.ids is not None:
                ids.append(batch.ids)
            spans.append(batch.spans if batch.spans is not None else np.full((len(batch), 2), -1, np.int64))
            if corpus_keys is not None:
                corpus_keys.add(batch.texts)
            stage.update(batch.consumed, len(batch))
    words = fingerprinter.config.bits // 64
    empty_fps = np.zeros((0,) if words == 1 else (0, 2), dtype=np.uint64)
    return (
        np.concatenate(fps) if fps else empty_fps,
        np.concatenate(lengths) if lengths else np.zeros(0, np.int64),
        np.concatenate(rows) if rows else np.zeros(0, np.int64),
        np.concatenate(owners) if owners else np.zeros(0, np.int32),
        pa.chunked_array(ids, pa.string()) if ids else None,
        np.concatenate(spans) if spans else np.zeros((0, 2), np.int64),
        np.concatenate(no_features) if no_features else np.zeros(0, bool),
        corpus_keys,
    )


def _text_lengths(texts: Any) -> np.ndarray:
    if isinstance(texts, list):
        return np.fromiter(
            (len(t.encode("utf-8", "surrogatepass")) if isinstance(t, str) else len(t) for t in texts),
            dtype=np.int64,
            count=len(texts),
        )
    lengths = pc.binary_length(texts)
    if isinstance(lengths, pa.ChunkedArray):
        lengths = lengths.combine_chunks()
    return lengths.to_numpy(zero_copy_only=False).astype(np.int64)


def _priority(n: int, keep: str, lengths: np.ndarray, ids: Any) -> np.ndarray:
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


def _distances(fps: np.ndarray, representatives: np.ndarray) -> np.ndarray:
    bits = np.bitwise_count(fps ^ fps[representatives]).astype(np.int64)
    return bits if bits.ndim == 1 else bits.sum(axis=1)
