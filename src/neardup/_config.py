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
FEATURE_KINDS = {"word-shingles": 1, "words": 0, "char-ngrams": 2, "code": 3}
# What ``features="code"`` makes of identifiers and literals (``code_normalize``): kept as they are,
# or each identifier one token and each literal one per kind (clones with renamed variables).
CODE_NORMALIZATIONS = ("identifiers", "none")
# Tokens per shingle when none is given: words for prose; lexer tokens for code, which are
# shorter (bench_code.py --only jobs: 4 finds the most clones at a precision of 0.99).
DEFAULT_SHINGLE_SIZES = {"code": 4}
DEFAULT_SHINGLE_SIZE = 3
WEIGHTING_CODES = {"uniform": 0, "tf": 1, "sublinear": 2, "tfidf": 3}
FEATURES = tuple(FEATURE_KINDS)
WEIGHTINGS = tuple(WEIGHTING_CODES)
BITS = (64, 128)
_MAX_SEED = 2**64 - 1


def check_code_settings(features: str, language: str | None, code_normalize: str) -> None:
    """``language`` and ``code_normalize`` belong to ``features="code"``; a language must be
    a lexer pygments knows (imported only then: the ``code`` extra). The one rule of them, for
    fingerprints and passages alike."""
    _choice("code_normalize", code_normalize, CODE_NORMALIZATIONS)
    if features != "code":
        if language is not None or code_normalize != "identifiers":
            raise ConfigError(
                f"language= and code_normalize= are settings of features='code', "
                f"not of features={features!r}; leave them out or use features='code'"
            )
        return
    if language is not None:
        if not isinstance(language, str):
            raise ConfigError(f"language={language!r} must be a name such as 'python', or None")
        from ._lexers import check_language

        check_language(language)


class IdfWeights(Protocol):
    """What a config and the kernels read of an IDF model (:class:`neardup.IdfModel`, from
    :func:`neardup.fit_idf`). Stated here so that the config, a root module, imports nothing
    from ``fingerprint/``."""

    feature_config: dict[str, Any]
    digest: str
    hashes: np.ndarray
    values: np.ndarray
    default_idf: float


def check_same_lexers(recorded: dict[str, Any] | None, where: str) -> None:
    """Raise ConfigError when ``recorded`` (a :meth:`FingerprintConfig.to_dict` that a file
    ``where`` keeps) is of code fingerprints lexed by another pygments than the installed one:
    other lexers may give other tokens, so texts fingerprinted now would not be comparable with
    the file's. Nothing to check for prose features, or without pygments (lexing will then ask
    for the ``code`` extra)."""
    if recorded is None or recorded.get("features") != "code":
        return
    from ._lexers import pygments_version

    installed, theirs = pygments_version(), recorded.get("pygments_version")
    if installed is None or theirs == installed:
        return
    made_with = f"pygments {theirs}" if theirs else "a pygments whose version it does not record"
    fix = f", or install the one it was made with (pip install pygments=={theirs})" if theirs else ""
    raise ConfigError(
        f"{where} holds code fingerprints lexed by {made_with}, but pygments {installed} is "
        f"installed, whose lexers may give other tokens and so other fingerprints; rebuild the "
        f"index with this pygments{fix}"
    )


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
        features: ``"word-shingles"`` (runs of ``shingle_size`` words), ``"words"``,
            ``"char-ngrams"`` (``ngram_size`` code points of the text, whitespace collapsed) or
            ``"code"`` (runs of ``shingle_size`` tokens of source code, lexed by pygments,
            comments and whitespace left out; the ``code`` extra).
        shingle_size: words (tokens, for code) per shingle; a text with fewer uses them all.
            Default 3 for words, 4 for code tokens.
        ngram_size: code points per character n-gram; a shorter text is one feature.
        normalize: NFKC-normalise and casefold the text first.
        weighting: ``"uniform"`` (each distinct feature once), ``"tf"`` (its count),
            ``"sublinear"`` (1 + ln count) or ``"tfidf"`` (count times IDF; needs ``idf``).
        idf: the IDF model for ``"tfidf"``, from :func:`neardup.fit_idf`.
        seed: seed of the feature hash (XXH64), 0 <= seed < 2**64.
        language: for ``"code"``: the pygments lexer name (``"python"``, ``"java"``, ...) of
            every text, or None to choose each document's lexer by its file name.
        code_normalize: for ``"code"``: ``"identifiers"`` (every identifier is the token
            ``$id``, every literal ``$str``, ``$num`` or ``$lit``; keywords and operators kept)
            or ``"none"`` (tokens as written).
    """

    bits: int = 64
    features: str = "word-shingles"
    shingle_size: int = None  # type: ignore[assignment]  # None: the kind's default, set below
    ngram_size: int = 5
    normalize: bool = True
    weighting: str = "tf"
    idf: IdfWeights | None = field(default=None, compare=True, repr=False)
    seed: int = 0
    language: str | None = None
    code_normalize: str = "identifiers"

    def __post_init__(self) -> None:
        _choice("bits", self.bits, BITS)
        _choice("features", self.features, FEATURES)
        _choice("weighting", self.weighting, WEIGHTINGS)
        if self.shingle_size is None:
            default = DEFAULT_SHINGLE_SIZES.get(self.features, DEFAULT_SHINGLE_SIZE)
            object.__setattr__(self, "shingle_size", default)
        _positive_int("shingle_size", self.shingle_size)
        self._check_code()
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

    def _check_code(self) -> None:
        check_code_settings(self.features, self.language, self.code_normalize)

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
        if self.features == "code":
            config["language"] = self.language
            config["code_normalize"] = self.code_normalize
        return config

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able description, as recorded in every file neardup writes. The IDF model is
        named by its digest; :meth:`from_dict` needs the model itself to rebuild a tfidf config."""
        d = asdict(self) if self.idf is None else {k: v for k, v in asdict(self).items() if k != "idf"}
        d["idf"] = None if self.idf is None else self.idf.digest
        if self.features != "code":  # as written before code features: old files still match
            del d["language"], d["code_normalize"]
        else:
            from ._lexers import pygments_version

            # Another pygments may lex a text into other tokens, so other bits: a file of code
            # fingerprints names the version that made them, and compares unequal to another's.
            d["pygments_version"] = pygments_version()
        d["fingerprint_version"] = FINGERPRINT_VERSION
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], idf: IdfWeights | None = None) -> FingerprintConfig:
        """Rebuild a config from :meth:`to_dict`, refusing another fingerprint version. The
        pygments version a code config records is not a setting: the config rebuilt records this
        installation's, so comparing the two dicts tells whether the lexers were the same."""
        d = dict(d)
        version = d.pop("fingerprint_version", FINGERPRINT_VERSION)
        if version != FINGERPRINT_VERSION:
            raise ConfigError(
                f"fingerprint_version={version} is not readable by this release, "
                f"which implements version {FINGERPRINT_VERSION}"
            )
        d.pop("pygments_version", None)  # a record of what lexed, not a setting
        digest = d.pop("idf", None)
        if digest is not None and (idf is None or idf.digest != digest):
            raise ConfigError(f"this config was made with IDF model {digest}; pass that model as idf=")
        unknown = set(d) - {f for f in cls.__dataclass_fields__ if f != "idf"}
        if unknown:
            raise ConfigError(f"unknown config fields {sorted(unknown)}")
        return cls(**d, idf=idf if digest is not None else None)
