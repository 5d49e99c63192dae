"""What Jaccard mode keeps of a text: its distinct feature hashes and MinHash band keys, made by
the batch job's own kernel (``decision.lsh.keyed_features``: one rule for both engines), and
the exact check of a pair from them (``_kernels.similarity``, the batch job's check)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._kernels.similarity import pair_similarity
from ..decision.lsh import Banding, jaccard_plan, keyed_features
from ..decision.verify import Verification, fingerprints_and_code_features
from ..fingerprint.fingerprinter import Fingerprinter
from ..fingerprint.text_buffers import iter_buffers


@dataclass
class Sketches:
    """Some texts' features and band keys, in order: text p's distinct feature hashes are
    ``hashes[doc_offsets[p]:doc_offsets[p + 1]]`` (uint64, ascending), its band keys
    ``bands[p]`` (uint64, (bands,)) and its fingerprint ``fingerprints[p]`` (uint64, (words,))."""

    doc_offsets: np.ndarray
    hashes: np.ndarray
    bands: np.ndarray
    fingerprints: np.ndarray

    def __len__(self) -> int:
        return self.doc_offsets.shape[0] - 1

    def features(self, p: int) -> np.ndarray:
        return self.hashes[self.doc_offsets[p] : self.doc_offsets[p + 1]]

    def rows(self, positions: list[int]) -> list[tuple[bytes, bytes]]:
        """The store's ``(band keys, features)`` bytes of the texts at ``positions``."""
        return [(self.bands[p].tobytes(), self.features(p).tobytes()) for p in positions]

    def part(self, start: int, stop: int) -> Sketches:
        """Texts ``start`` to ``stop`` (views)."""
        offsets = self.doc_offsets[start : stop + 1]
        return Sketches(
            offsets - offsets[0],
            self.hashes[offsets[0] : offsets[-1]],
            self.bands[start:stop],
            self.fingerprints[start:stop],
        )


class Sketcher:
    """Makes the :class:`Sketches` of texts for a ``--jaccard threshold`` service whose
    fingerprints ``fingerprinter`` makes; the features, banding and threshold are
    ``jaccard_plan``'s, as ``neardup dedup --jaccard`` runs them."""

    def __init__(self, threshold: float, fingerprinter: Fingerprinter) -> None:
        verification, banding, _ = jaccard_plan(threshold, fingerprinter.config, None, None)
        self.verification: Verification = verification
        self.banding: Banding = banding
        self.threshold = verification.threshold
        self.fingerprinter = fingerprinter
        # The checked features are the fingerprint's (the default): both from one pass.
        self.shared = verification.features.feature_config() == fingerprinter.config.feature_config()
        # Code's features come from the lexer (pygments), not from a kernel over the bytes.
        code = verification.features.features == "code"
        self._kernel = None if code else keyed_features(banding, verification, fingerprinter, self.shared)

    def sketch(self, texts: list[str]) -> Sketches:
        """The features, band keys and fingerprints of ``texts``, on this thread."""
        words = self.fingerprinter.config.bits // 64
        if not texts:
            return Sketches(
                np.zeros(1, np.int64),
                np.zeros(0, np.uint64),
                np.zeros((0, self.banding.bands), np.uint64),
                np.zeros((0, words), np.uint64),
            )
        if self._kernel is None:  # code: fingerprints and shingles from one lexing, keys from those
            fingerprints, table = fingerprints_and_code_features(texts, None, self.fingerprinter, 1)
            bands = self.banding.keys_of_features(table)
            return Sketches(table.doc_offsets, table.hashes, bands, fingerprints.reshape(len(texts), words))
        parts = [
            self._kernel(b.data, b.offsets) for b in iter_buffers(texts, self.verification.features.normalize)
        ]
        ((doc_offsets, hashes, bands, fingerprints),) = parts  # a list of texts is one buffer
        if not self.shared:
            fingerprints = self.fingerprinter.fingerprint_batch(texts, n_jobs=1).reshape(len(texts), words)
        return Sketches(doc_offsets, hashes.copy(), bands, fingerprints)  # hashes: the kernel's scratch


def exact_jaccard(
    features: list[np.ndarray], first: np.ndarray, second: np.ndarray, floor: float
) -> np.ndarray:
    """float64: the Jaccard index of the feature sets ``features[first[p]]`` and
    ``features[second[p]]`` (uint64, each ascending and distinct), or a negative number for a
    pair proved below ``floor`` (``_kernels.similarity``, the batch job's check)."""
    if first.size == 0:
        return np.zeros(0, dtype=np.float64)
    doc_offsets = np.zeros(len(features) + 1, dtype=np.int64)
    np.cumsum([f.size for f in features], out=doc_offsets[1:])
    hashes = np.concatenate(features) if features else np.zeros(0, np.uint64)
    return pair_similarity(
        doc_offsets,
        hashes.astype(np.uint64, copy=False),
        np.zeros(0),
        first.astype(np.int64, copy=False),
        second.astype(np.int64, copy=False),
        False,
        floor,
    )
