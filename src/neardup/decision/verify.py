"""Exact similarity of candidate pairs, recomputed from the texts (``--verify``).

SimHash at a generous radius finds nearly every near-duplicate but also some pairs that are
merely alike; recomputing the similarity of just those candidates keeps the true ones. This is
how SimHash reaches MinHash-level precision without MinHash's cost per document.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

import numba
import numpy as np

from .._config import FEATURE_KINDS, FingerprintConfig
from .._errors import ConfigError
from .._kernels.simhash import feature_counts
from .._kernels.similarity import pair_similarity
from .._system import available_memory
from ..fingerprint.code import (
    code_feature_counts,
    code_token_buffer,
    feature_counts_of_tokens,
    fingerprints_of_tokens,
)
from ..fingerprint.features import char_classes
from ..fingerprint.fingerprinter import Fingerprinter, resolve_threads
from ..fingerprint.text_buffers import chunk_bounds, iter_buffers, named_buffers
from ..io.corpus import file_names
from ..io.rejects import Rejects

if TYPE_CHECKING:
    from .._progress import Progress
    from .selection import Collapsed

T = TypeVar("T")

METRICS = ("jaccard", "cosine")


@dataclass(frozen=True)
class Verification:
    """What ``--verify`` checks: ``metric`` of two texts' features at least ``threshold``,
    the features extracted as ``features`` says (the fingerprint's own by default)."""

    metric: str
    threshold: float
    features: FingerprintConfig


def check_verify(
    verify: object, config: FingerprintConfig, features: str | None = None, size: int | None = None
) -> Verification | None:
    """``verify`` ((metric, threshold)) checked, with the features it compares: the
    fingerprint's (``features`` None) or ``"word-shingles"`` (``size`` words, 3),
    ``"words"`` or ``"char-ngrams"`` (``size`` characters, 5). None stays None."""
    if verify is None:
        if features is not None or size is not None:
            raise ConfigError(
                "verify_features= (--verify-features) and verify_size= (--verify-size) say what a "
                "check compares; give verify= (--verify), jaccard= (--jaccard) or cosine= (--cosine) too"
            )
        return None
    if not (isinstance(verify, tuple) and len(verify) == 2):
        raise ConfigError(f"verify={verify!r} must be (metric, threshold), e.g. ('jaccard', 0.5)")
    metric, threshold = verify
    if metric not in METRICS:
        raise ConfigError(f"verify metric {metric!r} is not known; choose one of {', '.join(METRICS)}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise ConfigError(f"verify threshold {threshold!r} must be a number in [0, 1]")
    if features is None:
        if size is not None:
            raise ConfigError("verify_size needs verify_features: the size of which features?")
        return Verification(metric, float(threshold), config)
    if features not in FEATURE_KINDS:
        raise ConfigError(
            f"verify_features={features!r} is not known; choose one of {', '.join(FEATURE_KINDS)}"
        )
    _refuse_code(features)
    prose = config  # a code fingerprint's pairs checked by prose features: without code's settings
    if config.features == "code":
        prose = replace(
            config, features=features, language=None, code_normalize="identifiers", shingle_size=3
        )
    if features == "words":
        if size is not None:
            raise ConfigError("verify_features='words' has no size; leave verify_size out")
        return Verification(metric, float(threshold), replace(prose, features=features))
    if features == "word-shingles":
        sized = replace(prose, features=features, shingle_size=3 if size is None else size)
    else:
        sized = replace(prose, features=features, ngram_size=5 if size is None else size)
    return Verification(metric, float(threshold), sized)


def _refuse_code(features: str) -> None:
    if features == "code":
        raise ConfigError(
            "verify_features='code' (--verify-features code) is not a choice: a check of a code "
            "fingerprint's pairs compares its own code features when verify_features is left "
            "out; jaccard= (--jaccard) compares prose features (e.g. 'word-shingles')"
        )


def feature_weights(hashes: np.ndarray, counts: np.ndarray, config: FingerprintConfig) -> np.ndarray:
    """float64 weight of features with these hashes and counts (docs/fingerprint-spec.md,
    section 6): uniform 1, tf its count c, sublinear 1 + ln c, tfidf c * idf (a feature the
    model never saw: its default idf)."""
    counts = counts.astype(np.float64)
    if config.weighting == "uniform":
        return np.ones_like(counts)
    if config.weighting == "tf":
        return counts
    if config.weighting == "sublinear":
        return 1.0 + np.log(counts)
    idf = config.idf
    assert idf is not None  # FingerprintConfig requires one for tfidf
    at = np.searchsorted(idf.hashes, hashes)
    known = at < len(idf.hashes)
    known[known] = idf.hashes[at[known]] == hashes[known]
    idf_values = np.full(hashes.shape[0], idf.default_idf)
    idf_values[known] = idf.values[at[known]]
    return counts * idf_values


def map_pieces(texts: Any, normalize: bool, kernel: Callable[[np.ndarray, np.ndarray], T]) -> list[T]:
    """``kernel(data, offsets)`` over the prepared buffers of ``texts`` (anything
    ``Fingerprinter.fingerprint_batch`` takes) in consecutive pieces of about equal bytes, a
    few a thread, on all cores (the kernels release the GIL): the results in the texts' order."""
    threads = numba.config.NUMBA_NUM_THREADS
    results: list[T] = []
    with ThreadPoolExecutor(threads) as pool:
        for b in iter_buffers(texts, normalize):
            # Pieces of about equal bytes, a few per thread, so one long text idles no one.
            cuts = chunk_bounds(b.offsets, threads)
            pieces = [b.offsets[lo : hi + 1] for lo, hi in itertools.pairwise(cuts)] or [b.offsets]
            results += pool.map(lambda offsets, b=b: kernel(b.data, offsets), pieces)
    return results


@dataclass
class FeatureTable:
    """Distinct features of some documents, in CSR form: document p's feature hashes are
    ``hashes[doc_offsets[p]:doc_offsets[p + 1]]`` (ascending), with their ``counts`` (None
    where only Jaccard will read them)."""

    doc_offsets: np.ndarray
    hashes: np.ndarray
    counts: np.ndarray | None

    @classmethod
    def of(
        cls, texts: Any, config: FingerprintConfig, names: Sequence[str | None] | None = None
    ) -> FeatureTable:
        """The features of ``texts`` (anything ``Fingerprinter.fingerprint_batch`` takes),
        extracted as the fingerprint extracts them; ``names``, the file names that choose each
        text's lexer for code features without a language."""
        if config.features == "code":
            return cls.concat(cls.code_pieces(texts, config, names))
        return cls.concat(cls.pieces(texts, config))

    @classmethod
    def code_pieces(
        cls, texts: Any, config: FingerprintConfig, names: Sequence[str | None] | None
    ) -> list[FeatureTable]:
        """The code features of ``texts``, a piece a buffer, lexed as the fingerprint lexes
        them (``fingerprint/code.py``: the lexer is Python, one thread)."""
        return [
            cls(*code_feature_counts(buffer, part, config)) for buffer, part in named_buffers(texts, names)
        ]

    @classmethod
    def pieces(cls, texts: Any, config: FingerprintConfig) -> list[FeatureTable]:
        """The features of ``texts`` in consecutive pieces (:func:`map_pieces`), as the kernel
        left them (views of its scratch room): :meth:`concat` copies them out."""
        size = config.ngram_size if config.features == "char-ngrams" else config.shingle_size
        kind, seed, classes = FEATURE_KINDS[config.features], np.uint64(config.seed), char_classes()
        parts = map_pieces(
            texts,
            config.normalize,
            lambda data, offsets: feature_counts(data, offsets, classes, config.normalize, kind, size, seed),
        )
        return [cls(*part) for part in parts]

    @classmethod
    def concat(cls, tables: list[FeatureTable]) -> FeatureTable:
        """One table of ``tables``' documents in turn, copied (pieces are views of scratch)."""
        if not tables:
            return cls(np.zeros(1, np.int64), np.zeros(0, np.uint64), np.zeros(0, np.int64))
        starts = np.cumsum([0] + [t.doc_offsets[-1] for t in tables[:-1]])
        doc_offsets = np.concatenate(
            [tables[0].doc_offsets[:1]] + [t.doc_offsets[1:] + s for t, s in zip(tables, starts)]
        )
        counts = [t.counts for t in tables if t.counts is not None]
        assert len(counts) == len(tables), "features held without counts are never joined"
        return cls(doc_offsets, np.concatenate([t.hashes for t in tables]), np.concatenate(counts))

    def __len__(self) -> int:
        return self.doc_offsets.shape[0] - 1

    def weights(self, config: FingerprintConfig) -> np.ndarray:
        """float64 weight of each feature, as the fingerprint weighs it."""
        assert self.counts is not None, "features held for Jaccard alone have no weights"
        return feature_weights(self.hashes, self.counts, config)


class DocumentFeatures:
    """The features of some documents of a corpus, found by their positions in it: one read of
    the corpus, keeping just those documents' features (each pair then costs a merge of two
    sorted lists, in compiled code)."""

    def __init__(self, positions: np.ndarray, table: FeatureTable, config: FingerprintConfig) -> None:
        self.positions = positions
        self.table = table
        self.config = config

    @functools.cached_property
    def weights(self) -> np.ndarray:
        """float64, one per feature, as the fingerprint weighs it (cosine needs them)."""
        return self.table.weights(self.config)

    def weights_for(self, metric: str) -> np.ndarray:
        """The weights ``metric`` reads: cosine the features' weights, Jaccard none."""
        return self.weights if metric == "cosine" else np.zeros(0)

    @classmethod
    def read(
        cls,
        corpus: Any,
        positions: np.ndarray,
        config: FingerprintConfig,
        on_read: Callable[[int], object] | None = None,
    ) -> DocumentFeatures:
        """The features of the documents at ``positions`` (int64) of ``corpus``, read again;
        ``on_read(bytes)`` after each batch, the bytes of the corpus read so far."""
        wanted = np.unique(positions)
        parts = []
        start = 0
        lexed_by_name = config.features == "code" and config.language is None
        for batch, owner in corpus.batches(Rejects("skip")):
            lo, hi = np.searchsorted(wanted, [start, start + len(batch)])
            if hi > lo:
                local = wanted[lo:hi] - start
                texts = (
                    [batch.texts[p] for p in local.tolist()]
                    if isinstance(batch.texts, list)
                    else batch.texts.take(local)
                )
                names = file_names(corpus, batch, owner) if lexed_by_name else None
                local_names = None if names is None else [names[p] for p in local.tolist()]
                parts.append(FeatureTable.of(texts, config, local_names))
            start += len(batch)
            if on_read is not None:
                on_read(batch.consumed)
        return cls(wanted, FeatureTable.concat(parts), config)

    def similarity(
        self, first: np.ndarray, second: np.ndarray, metric: str, floor: float = 0.0
    ) -> np.ndarray:
        """float64: ``metric`` of the documents at positions ``first[p]`` and ``second[p]``
        (each one of those read); a Jaccard pair proved below ``floor`` gets -1 instead,
        unmerged (for callers that only compare with ``floor``)."""
        return pair_similarity(
            self.table.doc_offsets,
            self.table.hashes,
            self.weights_for(metric),
            np.searchsorted(self.positions, first).astype(np.int64),
            np.searchsorted(self.positions, second).astype(np.int64),
            metric == "cosine",
            floor,
        )


def check_copies(
    collapsed: Collapsed,
    linked: Any,
    verification: Verification,
    corpus: Any,
    progress: Progress,
    held: DocumentFeatures | None,
) -> tuple[DocumentFeatures, np.ndarray]:
    """The ``verify`` stage of a decision over the distinct fingerprints of ``collapsed``:
    the features the checks read,
    ``held`` from the first read, else read again for the leaders ``linked`` (bool, a
    leader) and for each copy and its leader; and which copies fail the check against their
    leader (bool, a compared document), to stand alone."""
    compared, rank, leader = collapsed.compared, collapsed.rank, collapsed.leader
    metric, threshold = verification.metric, verification.threshold
    copies = np.flatnonzero(leader[rank] != compared)
    detached = np.zeros(compared.size, dtype=bool)
    with progress.stage("verify", total=None if held is not None else corpus.total_bytes) as stage:
        features = held
        if features is None:
            wanted = np.concatenate([leader[linked], leader[rank[copies]], compared[copies]])
            features = DocumentFeatures.read(corpus, wanted, verification.features, stage.update)
        detached[copies] = (
            features.similarity(leader[rank[copies]], compared[copies], metric, threshold) < threshold
        )
    return features, detached


def holds_code_features(check: Verification | None, config: FingerprintConfig) -> bool:
    """Whether ``check`` compares the code features ``config`` fingerprints, so that the read
    pass can keep them (:class:`HeldFeatures`) instead of lexing every file twice."""
    return (
        check is not None
        and config.features == "code"
        and check.features.feature_config() == config.feature_config()
    )


def fingerprints_and_code_features(
    texts: Any, names: Sequence[str | None] | None, fingerprinter: Fingerprinter, n_jobs: int | None
) -> tuple[np.ndarray, FeatureTable]:
    """The code fingerprints of ``texts`` (named ``names``), as ``fingerprint_batch`` gives
    them, and their features with counts, from one lexing (on ``n_jobs`` cores)."""
    config = fingerprinter.config
    workers = resolve_threads(n_jobs)
    fingerprints, tables = [], []
    for buffer, piece_names in named_buffers(texts, names):
        tokens = code_token_buffer(buffer, piece_names, config, workers)
        fingerprints.append(fingerprints_of_tokens(tokens, config, fingerprinter.weighing()))
        tables.append(FeatureTable(*feature_counts_of_tokens(tokens, config)))
    words = config.bits // 64
    out = np.concatenate(fingerprints) if fingerprints else np.zeros((0, words), dtype=np.uint64)
    return (out.reshape(-1) if words == 1 else out), FeatureTable.concat(tables)


class HeldFeatures:
    """The features of a corpus's documents kept from the read pass, batch after batch, while
    they fit in ``budget`` bytes (default: a quarter of the memory available); past it they
    are dropped, and the checks read the texts of the documents they need again."""

    def __init__(self, config: FingerprintConfig, budget: int | None = None) -> None:
        self.config = config
        self.budget = available_memory() // 4 if budget is None else budget
        self.tables: list[FeatureTable] | None = []
        self.size = 0

    def add(self, table: FeatureTable) -> None:
        """Keep the features of the next documents, if they fit."""
        if self.tables is None:
            return
        assert table.counts is not None
        self.size += table.doc_offsets.nbytes + table.hashes.nbytes + table.counts.nbytes
        if self.size > self.budget:
            self.tables = None
        else:
            self.tables.append(table)

    def features(self) -> DocumentFeatures | None:
        """Every document's features, or None where they did not fit."""
        if self.tables is None:
            return None
        table = FeatureTable.concat(self.tables)
        self.tables = None  # handed over: not held twice
        return DocumentFeatures(np.arange(len(table), dtype=np.int64), table, self.config)


def featureless_texts(
    texts: Any, fps: np.ndarray, config: FingerprintConfig, names: Sequence[str | None] | None = None
) -> np.ndarray:
    """bool, shape (n,): which of ``texts`` (named ``names``, for code) have no features. Such
    a text gets fingerprint 0, which a text with features gets only by a 2**-64 chance, so only
    those are extracted."""
    zero = np.flatnonzero(fps == 0 if fps.ndim == 1 else (fps == 0).all(axis=1))
    out = np.zeros(fps.shape[0], dtype=bool)
    if zero.size:
        subset = [texts[p] for p in zero.tolist()] if isinstance(texts, list) else texts.take(zero)
        subset_names = None if names is None else [names[p] for p in zero.tolist()]
        out[zero] = np.diff(FeatureTable.of(subset, config, subset_names).doc_offsets) == 0
    return out
