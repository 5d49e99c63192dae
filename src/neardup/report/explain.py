"""Why two texts are (or are not) near-duplicates: their fingerprints, the exact similarity of
their features, and the features that differ most.

Features come from the compiled tokeniser itself (``_kernels/simhash.py: feature_spans``), so
each one's hash is the hash the fingerprint adds, and its text is where it lies in the
normalised document (char n-grams: in the text with whitespace runs made one space).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._config import FEATURE_KINDS, FingerprintConfig
from .._errors import ConfigError
from .._kernels.simhash import feature_spans
from ..decision.verify import feature_weights as weigh
from ..fingerprint.features import char_classes
from ..fingerprint.text_buffers import prepare_bytes, prepare_str
from ..index.hamming import estimate_cosine


@dataclass(frozen=True)
class Feature:
    """One feature whose weight differs between the texts (0.0 where it is absent)."""

    text: str
    hash: int
    weight_a: float
    weight_b: float


@dataclass(frozen=True)
class SharedPassage:
    """A passage both texts hold (``neardup.passages``): ``a[start_a:end_a]`` and
    ``b[start_b:end_b]``, its length in words and its similarity."""

    start_a: int
    end_a: int
    start_b: int
    end_b: int
    words: int
    similarity: float
    text_a: str
    text_b: str


@dataclass(frozen=True)
class Explanation:
    """The comparison of two texts under one config. ``jaccard`` is over the sets of distinct
    features, ``cosine`` over the weighted feature vectors (both 1.0 for two featureless texts,
    0.0 when just one is); ``estimated_cosine`` is what the Hamming distance alone suggests.
    ``differing`` holds the ``top`` features with the largest weight difference, of
    ``n_differing`` that differ at all. ``passages`` are the passages of ``passage_words``
    words or more both texts hold, near copies included (``neardup.passages``): where two
    documents far apart as wholes still share a paragraph."""

    config: FingerprintConfig
    fingerprint_a: int
    fingerprint_b: int
    distance: int
    bits: int
    estimated_cosine: float
    jaccard: float
    cosine: float
    features_a: int
    features_b: int
    shared: int
    n_differing: int
    differing: tuple[Feature, ...]
    passage_words: int = 50
    passages: tuple[SharedPassage, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form (the config as ``FingerprintConfig.to_dict`` writes it), the
        fingerprints (as the text shows them) and the features' hashes as hex strings: JSON
        integers above 2**53 lose digits in JavaScript."""
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "differing"}
        d["config"] = self.config.to_dict()
        d["fingerprint_a"] = f"{self.fingerprint_a:0{self.bits // 4}x}"
        d["fingerprint_b"] = f"{self.fingerprint_b:0{self.bits // 4}x}"
        d["differing"] = [{**vars(f), "hash": f"{f.hash:016x}"} for f in self.differing]
        d["passages"] = [vars(p).copy() for p in self.passages]
        return d

    def format(self) -> str:
        """A readable multi-line account, as ``neardup explain`` prints it."""
        c = self.config
        size = (
            f" n={c.ngram_size}"
            if c.features == "char-ngrams"
            else f" k={c.shingle_size}"
            if c.features == "word-shingles"
            else ""
        )
        digits = self.bits // 4
        lines = [
            f"config: {self.bits} bits, {c.features}{size}, {c.weighting} weights"
            f"{'' if c.normalize else ', not normalised'}",
            f"fingerprint a: {self.fingerprint_a:0{digits}x}",
            f"fingerprint b: {self.fingerprint_b:0{digits}x}",
            f"distance: {self.distance} of {self.bits} bits (estimated cosine {self.estimated_cosine:.3f})",
            f"exact cosine: {self.cosine:.3f} (weighted features)",
            f"exact jaccard: {self.jaccard:.3f} (distinct features: a {self.features_a}, "
            f"b {self.features_b}, shared {self.shared})",
        ]
        if not self.differing:
            lines.append(f"{self.n_differing} features differ" if self.n_differing else "no feature differs")
        else:
            lines.append(f"features that differ most ({len(self.differing)} of {self.n_differing}):")
            lines.append(f"  {'weight a':>9} {'weight b':>9}  feature")
            for f in self.differing:
                text = f.text if len(f.text) <= 60 else f.text[:59] + "…"
                lines.append(f"  {f.weight_a:>9.4g} {f.weight_b:>9.4g}  {text!r}")
        lines.append(f"shared passages of {self.passage_words} words or more: {len(self.passages) or 'none'}")
        for p in self.passages:
            lines.append(
                f"  a[{p.start_a}:{p.end_a}] and b[{p.start_b}:{p.end_b}]: {p.words} words, "
                f"similarity {p.similarity:.3f}"
            )
            lines.append(f"    a: {_glimpse(p.text_a)}")
            lines.append(f"    b: {_glimpse(p.text_b)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def document_features(text: str | bytes, config: FingerprintConfig) -> tuple[np.ndarray, list[str]]:
    """Every feature of ``text`` in document order, repeats kept: the first hashes (uint64,
    shape (n,)) the fingerprint adds, and each feature's text."""
    if isinstance(text, str):
        data = prepare_str(text, config.normalize)
    elif isinstance(text, (bytes, bytearray, memoryview)):
        data = prepare_bytes(bytes(text), config.normalize)
    else:
        raise TypeError(f"text is {type(text).__name__}, not str or bytes")
    size = config.ngram_size if config.features == "char-ngrams" else config.shingle_size
    hashes, first, last, chars, ok = feature_spans(
        np.frombuffer(data, dtype=np.uint8),
        char_classes(),
        config.normalize,
        FEATURE_KINDS[config.features],
        size,
        np.uint64(config.seed),
    )
    if not ok:
        raise RuntimeError(
            "neardup's feature spans disagree with its fingerprint kernel; please report this with the text"
        )
    raw = chars.tobytes()
    return hashes, [raw[s:e].decode("utf-8") for s, e in zip(first.tolist(), last.tolist())]


def feature_weights(hashes: np.ndarray, config: FingerprintConfig) -> dict[int, float]:
    """Weight of each distinct feature among ``hashes`` (repeats counted), by hash."""
    keys, counts = np.unique(hashes, return_counts=True)
    return dict(zip(keys.tolist(), weigh(keys, counts, config).tolist()))


def _glimpse(text: str, width: int = 96) -> str:
    """One line of ``text``: its start and end, whitespace collapsed."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return repr(flat)
    half = (width - 3) // 2
    return f"{flat[:half]!r} … {flat[-half:]!r}"


def shared_passages(a: str | bytes, b: str | bytes, min_words: int) -> tuple[SharedPassage, ...]:
    """The passages of ``min_words`` words or more that ``a`` and ``b`` share."""
    from ..passage.job import passages

    found = passages([a, b], min_words=min_words, common_docs=3)
    text_a, text_b = (t.decode("utf-8", "replace") if isinstance(t, bytes) else t for t in (a, b))
    return tuple(
        SharedPassage(
            r["start_a"],
            r["end_a"],
            r["start_b"],
            r["end_b"],
            r["words"],
            r["similarity"],
            text_a[r["start_a"] : r["end_a"]],
            text_b[r["start_b"] : r["end_b"]],
        )
        for r in found.matches.to_pylist()
    )


def explain(
    a: str | bytes,
    b: str | bytes,
    config: FingerprintConfig | None = None,
    *,
    top: int = 10,
    passage_words: int = 50,
    **options: Any,
) -> Explanation:
    """Compare texts ``a`` and ``b`` under ``config`` (or keyword ``options`` for one, as
    :class:`FingerprintConfig` takes): fingerprints, distance, exact Jaccard and cosine, the
    ``top`` features whose weights differ most (largest difference first; ties by text), and
    the passages of ``passage_words`` words or more both hold (see ``neardup.passages``).
    ``print(explain(a, b))`` shows it all readably."""
    from ..fingerprint.fingerprinter import Fingerprinter

    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise ConfigError(f"top={top!r} must be an integer >= 0")
    fingerprinter = Fingerprinter(config, **options)
    config = fingerprinter.config
    if config.features == "code":
        raise ConfigError(
            "explain does not show code features yet; compare the two files with "
            "`neardup pairs --features code A B` for their distance"
        )
    hashes_a, texts_a = document_features(a, config)
    hashes_b, texts_b = document_features(b, config)
    # A feature in both shows a's text (a shingle's spacing or punctuation may differ in b).
    texts = {**dict(zip(hashes_b.tolist(), texts_b)), **dict(zip(hashes_a.tolist(), texts_a))}
    wa, wb = feature_weights(hashes_a, config), feature_weights(hashes_b, config)
    shared = wa.keys() & wb.keys()
    union = len(wa.keys() | wb.keys())
    norms = math.sqrt(math.fsum(w * w for w in wa.values())) * math.sqrt(
        math.fsum(w * w for w in wb.values())
    )
    dot = math.fsum(wa[h] * wb[h] for h in shared)
    differing = sorted(
        (
            Feature(texts[h], h, wa.get(h, 0.0), wb.get(h, 0.0))
            for h in wa.keys() | wb.keys()
            if wa.get(h, 0.0) != wb.get(h, 0.0)
        ),
        key=lambda f: (-abs(f.weight_a - f.weight_b), f.text, f.hash),
    )
    fa, fb = fingerprinter.fingerprint(a), fingerprinter.fingerprint(b)
    distance = bin(fa ^ fb).count("1")
    return Explanation(
        config=config,
        fingerprint_a=fa,
        fingerprint_b=fb,
        distance=distance,
        bits=config.bits,
        estimated_cosine=float(estimate_cosine(distance, config.bits)),
        jaccard=len(shared) / union if union else 1.0,
        cosine=min(1.0, dot / norms) if norms else float(not wa and not wb),
        features_a=len(wa),
        features_b=len(wb),
        shared=len(shared),
        n_differing=len(differing),
        differing=tuple(differing[:top]),
        passage_words=passage_words,
        passages=shared_passages(a, b, passage_words),
    )
