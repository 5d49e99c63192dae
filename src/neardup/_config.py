"""Frozen, validated configuration of a fingerprint (docs/fingerprint-spec.md)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np

from ._errors import ConfigError

FINGERPRINT_VERSION = 1
"""The version of docs/fingerprint-spec.md this release implements. Any change to the bits a
text gets is a new version, never a silent change."""

# Each feature kind and weighting by name, with the code the kernels know it by
# (docs/fingerprint-spec.md): the one table of them. A new feature kind is a row here and its
# features in ``_kernels/simhash.py``; every command, option and engine reads these.
FEATURE_KINDS = {"word-shingles": 1, "words": 0, "char-ngrams": 2}
WEIGHTING_CODES = {"uniform": 0, "tf": 1, "sublinear": 2, "tfidf": 3}
FEATURES = tuple(FEATURE_KINDS)
WEIGHTINGS = tuple(WEIGHTING_CODES)
BITS = (64, 128)
_MAX_SEED = 2**64 - 1


class IdfWeights(Protocol):
    """What a config and the kernels read of an IDF model (:class:`neardup.IdfModel`, from
    :func:`neardup.fit_idf`). Stated here so that the config, a root module, imports nothing
    from ``fingerprint/``."""

    feature_config: dict[str, Any]
    digest: str
    hashes: np.ndarray
    values: np.ndarray
    default_idf: float


def _choice(name: str, value: object, allowed: tuple) -> None:
    if value not in allowed:
        listed = ", ".join(repr(a) for a in allowed)
        raise ConfigError(f"{name}={value!r} is not allowed; choose one of {listed}")


def _positive_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name}={value!r} must be a positive integer")


@dataclass(frozen=True)
class FingerprintConfig:
    """How texts become fingerprints. Equal configs give equal bits on every machine.

    Args:
        bits: fingerprint width, 64 or 128.
        features: ``"word-shingles"`` (runs of ``shingle_size`` words), ``"words"`` or
            ``"char-ngrams"`` (``ngram_size`` code points of the text, whitespace collapsed).
        shingle_size: words per shingle; a text with fewer words uses its words.
        ngram_size: code points per character n-gram; a shorter text is one feature.
        normalize: NFKC-normalise and casefold the text first.
        weighting: ``"uniform"`` (each distinct feature once), ``"tf"`` (its count),
            ``"sublinear"`` (1 + ln count) or ``"tfidf"`` (count times IDF; needs ``idf``).
        idf: the IDF model for ``"tfidf"``, from :func:`neardup.fit_idf`.
        seed: seed of the feature hash (XXH64), 0 <= seed < 2**64.
    """

    bits: int = 64
    features: str = "word-shingles"
    shingle_size: int = 3
    ngram_size: int = 5
    normalize: bool = True
    weighting: str = "tf"
    idf: IdfWeights | None = field(default=None, compare=True, repr=False)
    seed: int = 0

    def __post_init__(self) -> None:
        _choice("bits", self.bits, BITS)
        _choice("features", self.features, FEATURES)
        _choice("weighting", self.weighting, WEIGHTINGS)
        _positive_int("shingle_size", self.shingle_size)
        _positive_int("ngram_size", self.ngram_size)
        if not isinstance(self.normalize, bool):
            raise ConfigError(f"normalize={self.normalize!r} must be True or False")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed <= _MAX_SEED:
            raise ConfigError(f"seed={self.seed!r} must be an integer in [0, 2**64)")
        if self.weighting == "tfidf" and self.idf is None:
            raise ConfigError('weighting="tfidf" needs an IDF model: pass idf=neardup.fit_idf(texts, ...)')
        if self.idf is not None:
            if self.weighting != "tfidf":
                raise ConfigError(f'an idf model is only used with weighting="tfidf", got {self.weighting!r}')
            if self.idf.feature_config != self.feature_config():
                raise ConfigError(
                    f"the IDF model was fitted on features {self.idf.feature_config}, "
                    f"but this config extracts {self.feature_config()}; fit it with this config"
                )

    @property
    def fingerprint_version(self) -> int:
        """The version of the fingerprint spec these bits follow."""
        return FINGERPRINT_VERSION

    def feature_config(self) -> dict[str, Any]:
        """The settings that decide which features a text has and their hashes (not weights)."""
        size_key = "ngram_size" if self.features == "char-ngrams" else "shingle_size"
        config: dict[str, Any] = {"features": self.features, "normalize": self.normalize, "seed": self.seed}
        if self.features != "words":
            config[size_key] = getattr(self, size_key)
        return config

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able description, as recorded in every file neardup writes. The IDF model is
        named by its digest; :meth:`from_dict` needs the model itself to rebuild a tfidf config."""
        d = asdict(self) if self.idf is None else {k: v for k, v in asdict(self).items() if k != "idf"}
        d["idf"] = None if self.idf is None else self.idf.digest
        d["fingerprint_version"] = FINGERPRINT_VERSION
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], idf: IdfWeights | None = None) -> FingerprintConfig:
        """Rebuild a config from :meth:`to_dict`, refusing another fingerprint version."""
        d = dict(d)
        version = d.pop("fingerprint_version", FINGERPRINT_VERSION)
        if version != FINGERPRINT_VERSION:
            raise ConfigError(
                f"fingerprint_version={version} is not readable by this release, "
                f"which implements version {FINGERPRINT_VERSION}"
            )
        digest = d.pop("idf", None)
        if digest is not None and (idf is None or idf.digest != digest):
            raise ConfigError(f"this config was made with IDF model {digest}; pass that model as idf=")
        unknown = set(d) - {f for f in cls.__dataclass_fields__ if f != "idf"}
        if unknown:
            raise ConfigError(f"unknown config fields {sorted(unknown)}")
        return cls(**d, idf=idf if digest is not None else None)
