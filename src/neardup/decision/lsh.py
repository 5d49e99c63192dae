"""MinHash-LSH candidates with exact verification: how ``--jaccard T`` finds its pairs.

SimHash's radius is a proxy for cosine similarity; a threshold stated in shingle Jaccard below
about 0.9 needs a radius the permuted tables cannot serve (benchmarks/bench_curves.py). MinHash
estimates Jaccard itself: each document gets ``bands`` keys of ``rows`` MinHash values over the
features the threshold is stated in (3-shingles by default), documents sharing a key are
candidates, and every candidate pair the rule needs is verified on the exact feature sets.
Reported pairs are therefore exactly those at least ``T`` similar; recall is that of the
banding, ``1 - (1 - J^rows)^bands`` for a pair of Jaccard J.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from .._config import FEATURE_KINDS
from .._errors import ConfigError
from .._kernels.buckets import components_in_buckets, greedy_in_buckets, pairs_in_runs
from .._kernels.minhash import band_keys, features_and_keys, text_band_keys
from .._progress import Progress
from .._system import available_memory
from ..fingerprint.features import char_classes
from ..fingerprint.fingerprinter import Fingerprinter
from ..fingerprint.text_buffers import chunk_bounds, iter_buffers
from .pairs import Pairs
from .selection import Collapsed, undecided
from .verify import (
    DocumentFeatures,
    FeatureTable,
    Verification,
    check_copies,
    check_verify,
    fingerprints_and_code_features,
    map_pieces,
)


@dataclass(frozen=True)
class Banding:
    """MinHash banding: ``bands`` keys of ``rows`` values each (``bands * rows`` bins of one
    permutation hashing, ``_kernels/minhash.py``)."""

    bands: int
    rows: int
    seed: int = 0

    def probability(self, similarity: float) -> float:
        """The chance that two sets of this Jaccard index share a band key (are candidates)."""
        return 1.0 - (1.0 - similarity**self.rows) ** self.bands

    def keys(self, texts: Any, verification: Verification) -> np.ndarray:
        """uint64, shape (n, bands): the band keys of ``texts``' features, extracted as
        ``verification`` compares them; all cores."""
        config = verification.features
        size = config.ngram_size if config.features == "char-ngrams" else config.shingle_size
        threads = numba.config.NUMBA_NUM_THREADS
        parts = [
            text_band_keys(
                b.data,
                b.offsets,
                chunk_bounds(b.offsets, threads),
                char_classes(),
                config.normalize,
                FEATURE_KINDS[config.features],
                size,
                np.uint64(config.seed),
                np.uint64(self.seed),
                self.bands,
                self.rows,
            )
            for b in iter_buffers(texts, config.normalize)
        ]
        return np.concatenate(parts) if parts else np.zeros((0, self.bands), dtype=np.uint64)

    def keys_of_features(self, table: FeatureTable) -> np.ndarray:
        """uint64, shape (n, bands): the band keys of features already extracted (code's,
        which the lexer makes, not a kernel: ``table`` a document's distinct hashes)."""
        return band_keys(table.doc_offsets, table.hashes, np.uint64(self.seed), self.bands, self.rows)

    def describe(self) -> str:
        return f"MinHash-LSH, {self.bands} bands of {self.rows} rows ({self.bands * self.rows} bins)"


class CorpusKeys:
    """The band keys of a corpus read a batch at a time, and its features while they fit.

    Verification needs the features of every document in a bucket, often most of them. Held
    from the first read (8 bytes a distinct feature: Jaccard reads no counts), they need no
    second read; past ``budget`` bytes (a quarter of the memory available) they are dropped,
    the keys come straight from the tokeniser, and the features are read again for just the
    documents that need them. Both ways give the same keys.

    The room for the held hashes is reserved at the start, as one array the batches are copied
    into in turn: its pages are the operating system's until written, and the whole needs no
    concatenation at the end (a copy of every feature, as slow as the first on a machine slow
    to fault pages in)."""

    def __init__(
        self,
        banding: Banding,
        verification: Verification,
        fingerprinter: Fingerprinter,
        budget: int | None = None,
    ) -> None:
        self.banding, self.verification, self.fingerprinter = banding, verification, fingerprinter
        # The checked features are the fingerprint's: hashed once, for both.
        self.shared = verification.features.feature_config() == fingerprinter.config.feature_config()
        budget = available_memory() // 4 if budget is None else budget
        self.parts: list[np.ndarray] = []
        # No room (a budget of 0, as Spark's tasks ask): the keys alone, the features forgotten.
        self.room: np.ndarray | None = np.empty(budget // 8, dtype=np.uint64) if budget > 0 else None
        self.held = 0  # hashes in the room
        self.doc_offsets: list[np.ndarray] = [np.zeros(1, dtype=np.int64)]

    def add(
        self, texts: Any, names: Sequence[str | None] | None = None, n_jobs: int | None = None
    ) -> np.ndarray | None:
        """Key the next batch of documents (code: named ``names``, lexed on ``n_jobs``
        cores), holding their features while they fit. Return the fingerprinter's
        fingerprints of them where they came with the features (while the features are held,
        if the fingerprint's features are the checked ones; code's always, then), else None:
        the caller fingerprints the texts."""
        if self.verification.features.features == "code":
            return self._add_code(texts, names, n_jobs)
        if self.room is None:
            self.parts.append(self.banding.keys(texts, self.verification))
            return None
        pieces = self._features_and_keys(texts)
        self.parts.append(np.concatenate([keys for *_, keys, _ in pieces]))
        for offsets, hashes, _, _ in pieces:
            self._hold(offsets, hashes)
        if not self.shared:
            return None
        fingerprints = np.concatenate([fps for *_, fps in pieces])
        return fingerprints.reshape(-1) if self.fingerprinter.config.bits == 64 else fingerprints

    def _add_code(
        self, texts: Any, names: Sequence[str | None] | None, n_jobs: int | None
    ) -> np.ndarray | None:
        """:meth:`add` for code: the lexer makes the features, once for the fingerprints too
        where they are the checked ones, and the keys are hashed from them."""
        if self.shared:
            fingerprints, table = fingerprints_and_code_features(texts, names, self.fingerprinter, n_jobs)
        else:
            fingerprints, table = None, FeatureTable.of(texts, self.verification.features, names)
        self.parts.append(self.banding.keys_of_features(table))
        self._hold(table.doc_offsets, table.hashes)
        return fingerprints

    def _hold(self, doc_offsets: np.ndarray, hashes: np.ndarray) -> None:
        """Keep one more table of features in the room, or give the room up if they do not
        fit: the checks will read the features again."""
        if self.room is None:
            return
        end = self.held + len(hashes)
        if end <= len(self.room):
            self.room[self.held : end] = hashes
            self.doc_offsets.append(doc_offsets[1:] - doc_offsets[0] + self.held)
            self.held = end
        else:
            self.room, self.doc_offsets = None, []

    def _features_and_keys(self, texts: Any) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """``features_and_keys`` of ``texts`` in pieces: (doc offsets, distinct hashes, band
        keys, fingerprints, of zeros unless ``shared``)."""
        kernel = keyed_features(self.banding, self.verification, self.fingerprinter, self.shared)
        return map_pieces(texts, self.verification.features.normalize, kernel)

    def keys(self) -> np.ndarray:
        """uint64, shape (n, bands): every document's band keys, in reading order."""
        return np.concatenate(self.parts) if self.parts else np.zeros((0, self.banding.bands), np.uint64)

    def features(self) -> DocumentFeatures | None:
        """Every document's features (without counts), if they were held; else None."""
        if self.room is None:
            return None
        table = FeatureTable(np.concatenate(self.doc_offsets), self.room[: self.held], None)
        return DocumentFeatures(np.arange(len(table), dtype=np.int64), table, self.verification.features)


def keyed_features(
    banding: Banding, verification: Verification, fingerprinter: Fingerprinter, fingerprints: bool
) -> Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """``features_and_keys`` of a prepared buffer's ``(data, offsets)``, the features extracted
    as ``verification`` compares them: (int64 doc offsets, their distinct uint64 hashes,
    ascending, uint64 band keys (n, bands), uint64 fingerprints (n, words), made from the same
    features when ``fingerprints``, else (n, 1) of zeros). The hashes are a view of the
    kernel's scratch room: copy them to keep them. One place for both engines, the batch job
    and the service, so that their features and keys agree to the bit."""
    config = verification.features
    size = config.ngram_size if config.features == "char-ngrams" else config.shingle_size
    kind, classes = FEATURE_KINDS[config.features], char_classes()
    weighting, seed, words, *idf = fingerprinter.weighing()
    weighing = (weighting, seed, words if fingerprints else 0, *idf)
    return lambda data, offsets: features_and_keys(
        data,
        offsets,
        classes,
        config.normalize,
        kind,
        size,
        np.uint64(config.seed),
        np.uint64(banding.seed),
        banding.bands,
        banding.rows,
        *weighing,
    )


MAX_BANDS = 1024
"""The most bands a banding may take: 8 KiB of keys a document."""


def banding_for(threshold: float, recall: float = 0.95, rows: int | None = None) -> Banding:
    """The banding with the fewest bands whose candidates include a pair at exactly
    ``threshold`` with probability at least ``recall`` (pairs more similar: more likely),
    among those with ``rows`` values a band (default: the rows :data:`ROWS` gives for the
    threshold, which keep dissimilar pairs rare)."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold={threshold!r} must be in (0, 1]")
    if threshold == 1.0:  # equal sets agree on every value: one band finds them all
        return Banding(bands=1, rows=16)
    r = rows if rows is not None else rows_for(threshold)
    miss = 1.0 - threshold**r  # the chance that a band misses a pair at the threshold
    bands = math.inf if miss == 1.0 else math.ceil(math.log(1.0 - recall) / math.log(miss))
    if bands > MAX_BANDS:
        raise ConfigError(
            f"jaccard={threshold:g} is too low for MinHash-LSH: finding its pairs would take more "
            f"than {MAX_BANDS} bands; give a threshold of at least 0.01, or a radius with verify"
        )
    return Banding(bands=max(int(bands), 1), rows=r)


def explain_jaccard(
    threshold: float, features: str | None = None, size: int | None = None, config: Any = None
) -> str:
    """What ``--jaccard threshold`` runs, in a few lines: the features (as ``jaccard_plan``
    picks them for the fingerprint ``config``, the default one if None), the banding, the
    chance that pairs of some similarities become candidates, and the recall measured for it."""
    from .._config import FingerprintConfig

    verification, banding, _ = jaccard_plan(threshold, config or FingerprintConfig(), features, size)
    levels = sorted(
        {min(1.0, threshold + 0.1), threshold, *(t for t in (0.9, 0.7, 0.5, 0.3) if t < threshold)}
    )
    chances = ", ".join(f"J={j:.2f}: {banding.probability(j):.3f}" for j in reversed(levels))
    lines = [
        f"--jaccard {threshold:g} on {feature_name(verification)}:",
        f"  candidates: {banding.describe()} of each document's features; copies (identical "
        "fingerprints) are one entry",
        f"  chance that a pair becomes a candidate: {chances}",
        "  every candidate pair the rule needs is verified exactly: no pair below the threshold "
        "counts as a near-duplicate",
    ]
    measured = measured_recall(threshold) if feature_name(verification) == "word 3-shingles" else None
    if measured is not None:
        lines.append(f"  measured: {measured}")
    return "\n".join(lines)


def jaccard_plan(
    threshold: float, config: Any, features: str | None, size: int | None
) -> tuple[Verification, Banding, str]:
    """What ``--jaccard threshold`` runs: (the check of every candidate pair, on ``features``
    of ``size``, word 3-shingles by default, code's own shingles for code; the banding that
    finds the candidates; the line that says so)."""
    verification = check_verify(("jaccard", threshold), config, _checked(config, features), size)
    assert verification is not None
    banding = banding_for(float(threshold))
    line = f"--jaccard {threshold:g} on {feature_name(verification)}: candidates from {banding.describe()}"
    return verification, banding, line


def _checked(config: Any, features: str | None) -> str | None:
    """The features ``--jaccard`` compares: those named, else word 3-shingles, or for code the
    fingerprint's own code shingles (None: the fingerprint's)."""
    if features is None and config.features != "code":
        return "word-shingles"
    return features


def feature_name(verification: Verification) -> str:
    """The compared features in words: "word 3-shingles", "words", "character 5-grams"."""
    config = verification.features
    if config.features == "word-shingles":
        return f"word {config.shingle_size}-shingles"
    if config.features == "char-ngrams":
        return f"character {config.ngram_size}-grams"
    if config.features == "code":
        return f"code {config.shingle_size}-token shingles"
    return "words"


MEASURED = {
    # threshold: (bands, rows, recall of pairs >= T, recall of pairs in [T, T + 0.1), candidate
    # pairs per document), word 3-shingles, 20,000 documents of real-world shape, 127,766 pairs
    # at Jaccard >= 0.5 by an exact join: `python benchmarks/bench_curves.py` (docs/jaccard.md).
    0.5: (47, 4, 0.995, 0.985, 17.2),
    0.6: (38, 5, 0.998, 0.992, 9.1),
    0.7: (35, 7, 0.999, 0.993, 5.2),
    0.8: (21, 9, 0.999, 0.998, 3.7),
    0.85: (20, 12, 1.000, 0.999, 2.9),
    0.9: (15, 16, 0.999, 0.996, 2.5),
    0.95: (6, 16, 0.999, 0.999, 2.0),
}
"""What benchmarks/bench_curves.py measured for the banding of each threshold."""


def measured_recall(threshold: float) -> str | None:
    """The recall benchmarks/bench_curves.py measured for this threshold's banding on its
    corpus of real-world shape, or None where it measured none."""
    entry = MEASURED.get(round(threshold, 4))
    banding = banding_for(threshold)
    if entry is None or entry[:2] != (banding.bands, banding.rows):
        return None
    _, _, recall, near, candidates = entry
    return (
        f"recall {recall:.3f} of the pairs at >= {threshold:g} ({near:.3f} of those in "
        f"[{threshold:g}, {threshold + 0.1:g})), {candidates:g} candidate pairs per document, on "
        "benchmarks/bench_curves.py's 20,000 documents of real-world shape (docs/jaccard.md)"
    )


def rows_for(threshold: float) -> int:
    """Values per band: the most whose banding stays within 256 bins, so that a pair of
    unrelated documents (Jaccard ~0) is rarely a candidate while the keys stay small (8 bytes
    a band a document); low thresholds need few rows, or the bands multiply (J^r vanishes)."""
    best = 1
    for r in range(1, 17):
        if threshold**r == 0.0 or 1.0 - threshold**r == 1.0:  # no band would ever agree
            break
        b = math.ceil(math.log(0.05) / math.log(1.0 - threshold**r))
        if b * r <= 256:
            best = r
    return best


def bucket_groups(keys: np.ndarray) -> tuple[np.ndarray, int]:
    """int64 (m, bands): the bucket of each row's key per band, numbered across bands, -1 where
    the row is alone in its bucket; and the number of buckets."""
    m, bands = keys.shape
    groups = np.full((m, bands), -1, dtype=np.int64)
    n_groups = 0
    for b in range(bands):
        _, inverse, counts = np.unique(keys[:, b], return_inverse=True, return_counts=True)
        shared = counts > 1
        numbers = np.full(counts.shape[0], -1, dtype=np.int64)
        numbers[shared] = n_groups + np.arange(int(shared.sum()), dtype=np.int64)
        groups[:, b] = numbers[inverse.reshape(-1)]
        n_groups += int(shared.sum())
    return groups, n_groups


@dataclass
class BucketOutcome:
    """What a rule over the buckets decided, one entry per rank."""

    roots: np.ndarray
    """int64: greedy: the kept rank that removed each (itself when kept, -1 when blocked);
    components: the smallest rank of its component."""
    checked: int
    similar: int


def rule_in_buckets(
    groups: np.ndarray,
    n_groups: int,
    features: DocumentFeatures,
    documents: np.ndarray,
    verification: Verification,
    cluster: str,
    state: np.ndarray | None = None,
    representative: np.ndarray | None = None,
) -> BucketOutcome:
    """Run ``cluster`` ("greedy" with its starting ``state`` and ``representative`` from
    ``selection.undecided``, or "components") over ranks whose buckets are ``groups``.
    ``documents`` (int64, shape (m,)) is each rank's position in the corpus, whose features
    ``features`` has read (those of every rank that shares a bucket)."""
    rows = np.searchsorted(features.positions, documents).astype(np.int64)
    rows = np.minimum(rows, max(len(features.positions) - 1, 0))  # never read: never checked
    table = features.table
    cosine = verification.metric == "cosine"
    weights = features.weights_for(verification.metric)
    args = (rows, table.doc_offsets, table.hashes, weights, verification.threshold, cosine)
    if cluster == "components":
        roots, checked, similar = components_in_buckets(groups, n_groups, *args)
        return BucketOutcome(roots, int(checked), int(similar))
    assert state is not None and representative is not None
    checked, similar = greedy_in_buckets(groups, n_groups, state, representative, *args)
    return BucketOutcome(representative, int(checked), int(similar))


@dataclass
class Buckets:
    """The outcome of :func:`choose_in_buckets`."""

    roots: np.ndarray
    """int64, one per rank: its kept representative (greedy) or component root (components)."""
    detached: np.ndarray
    """bool, one per compared document: a copy of its leader's fingerprint whose text failed
    verification against the leader's (kept on its own)."""
    checked: int
    similar: int
    features: DocumentFeatures
    """The features read for the checks (of the leaders in some bucket, the copies and theirs)."""


def choose_in_buckets(
    collapsed: Collapsed,
    keys: np.ndarray,
    cluster: str,
    verification: Verification,
    corpus: Any,
    progress: Progress,
    held: DocumentFeatures | None = None,
) -> Buckets:
    """The dedup rule over the distinct fingerprints of ``collapsed``, their candidates the
    leaders sharing a band of ``keys`` (uint64, shape (n, bands), one row per document), every
    pair the rule needs verified, on the ``held`` features of every document when the first
    read kept them; else the features of just the leaders that share a bucket (and of each
    copy and its leader) are read, once."""
    leader = collapsed.leader
    with progress.stage("buckets", unit="docs") as stage:
        groups, n_groups = bucket_groups(keys[leader])
        linked = (groups >= 0).any(axis=1)
        stage.update(leader.size)
    features, detached = check_copies(collapsed, linked, verification, corpus, progress, held)
    with progress.stage("join verified", unit="docs") as stage:
        if cluster == "components":
            outcome = rule_in_buckets(groups, n_groups, features, leader, verification, cluster)
        else:
            state, representative, _ = undecided(leader.size, None)
            outcome = rule_in_buckets(
                groups, n_groups, features, leader, verification, cluster, state, representative
            )
        stage.update(leader.size)
    return Buckets(outcome.roots, detached, outcome.checked, outcome.similar, features)


def candidate_pairs(keys: np.ndarray, chunk_size: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Every pair of rows sharing a band key, once each (rows ``first < second``), streamed in
    chunks of at most ``chunk_size``: a bucket of n rows gives its n (n - 1) / 2 pairs without
    holding them."""
    for band in range(keys.shape[1]):
        order = np.argsort(keys[:, band], kind="stable")
        ranked = keys[order, band]
        bounds = np.flatnonzero(np.concatenate([[True], ranked[1:] != ranked[:-1], [True]]))
        starts, ends = bounds[:-1], bounds[1:]
        shared = ends - starts > 1
        starts, ends = starts[shared].astype(np.int64), ends[shared].astype(np.int64)
        if starts.size == 0:
            continue
        cursor = np.array([0, starts[0], starts[0] + 1], dtype=np.int64)
        while cursor[0] < starts.size:
            first, second = pairs_in_runs(
                keys, order.astype(np.int64), starts, ends, band, cursor, chunk_size
            )
            if first.size:
                yield np.minimum(first, second), np.maximum(first, second)


def stream_bucket_pairs(
    fingerprints: np.ndarray,
    collapsed: Collapsed,
    keys: np.ndarray,
    verification: Verification,
    corpus: Any,
    every: bool,
    chunk_size: int,
    features: DocumentFeatures | None = None,
) -> Iterator[Pairs]:
    """The verified pairs of a ``--jaccard`` dedup, as :func:`neardup.decision.pairs.stream_pairs`
    gives a radius's: by default each candidate pair of distinct fingerprints (between their
    leaders) at least the threshold similar, and each copy's link to its leader that passes;
    ``every``: every pair of documents sharing a band key and passing. Streamed: the candidates
    once to find who is in one, the texts of those read once (unless ``features``, read
    before, holds them all), then the candidates again."""
    compared, rank, leader = collapsed.compared, collapsed.rank, collapsed.leader
    rows = compared if every else leader
    row_keys = keys[rows]
    in_pair = np.zeros(rows.size, dtype=bool)
    for first, second in candidate_pairs(row_keys, chunk_size):
        in_pair[first] = in_pair[second] = True
    copies = np.flatnonzero(leader[rank] != compared)
    wanted = [rows[in_pair]] if every else [rows[in_pair], leader[rank[copies]], compared[copies]]
    needed = np.concatenate(wanted)
    if features is None or not np.isin(needed, features.positions).all():
        features = DocumentFeatures.read(corpus, needed, verification.features)
    read = features

    def checked(a: np.ndarray, b: np.ndarray) -> Pairs:
        similarity = read.similarity(a, b, verification.metric, verification.threshold)
        good = similarity >= verification.threshold
        a, b = a[good], b[good]
        distance = np.bitwise_count(fingerprints[a] ^ fingerprints[b]).astype(np.int64)
        return Pairs(a, b, distance if distance.ndim == 1 else distance.sum(axis=1), similarity[good])

    for first, second in candidate_pairs(row_keys, chunk_size):
        a, b = rows[first], rows[second]
        yield checked(np.minimum(a, b), np.maximum(a, b))
    if not every:
        for at in range(0, copies.size, chunk_size):
            copy, own = compared[copies[at : at + chunk_size]], leader[rank[copies[at : at + chunk_size]]]
            yield checked(np.minimum(own, copy), np.maximum(own, copy))
