"""What a dedup decides, validated once: :class:`DedupOptions`, taken by the local job
(:func:`neardup.dedup`), the Spark job and its driver's decision, and the CLI's two engines, so that each
rule (a default, what combines with what, the error text) is written in one place.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._config import FingerprintConfig, check_same_lexers
from .._errors import ConfigError
from ..index.hamming import distance_for_cosine
from ..index.hamming_index import HammingIndex
from .choices import CLUSTERINGS, FEATURELESS, KEEP
from .cosine import checked_cosine_radius, describe_cosine
from .lsh import Banding, jaccard_plan
from .verify import Verification, check_verify


@dataclass(frozen=True)
class DedupOptions:
    """How near-duplicates are found and which document of each cluster is kept.

    Built once, checked as it is built (a :class:`~neardup.ConfigError` names what is wrong);
    every engine reads the same fields. The radius, the check of each pair and the MinHash
    banding are worked out here too (:attr:`radius`, :attr:`check`, :attr:`banding`).

    Attributes:
        config: how the fingerprints are made.
        max_distance: the Hamming radius of a near-duplicate, in bits; default 3 per 64 bits
            (Manku et al. 2007). Code features (``config.features == "code"``) default to
            ``jaccard`` 0.7 instead (:func:`code_defaults`).
        similarity: instead of ``max_distance``, the least cosine similarity, turned into a
            radius with :func:`neardup.distance_for_cosine`.
        jaccard: instead of a radius, the least Jaccard index of a near-duplicate pair, stated
            on ``verify_features`` (default: word 3-shingles; code's own shingles for code).
            Candidates come from MinHash-LSH banded for that threshold (a pair at it is a
            candidate with probability >= 0.95) and every pair the rule needs is verified
            exactly.
        cosine: instead of a radius, the least cosine similarity of the fingerprint's weighted
            features: the radius that holds a pair at that cosine with probability >= 0.95
            (``pipeline/cosine.py``), every candidate verified exactly.
        verify: ``(metric, threshold)``: recompute the exact ``"jaccard"`` (of the feature
            sets) or ``"cosine"`` (of the weighted features) of every candidate pair from the
            texts and keep only the pairs at least ``threshold`` similar.
        verify_features, verify_size: the features ``verify`` (or ``jaccard``, ``cosine``)
            compares: the fingerprint's own (default for ``verify``), or ``"word-shingles"``
            (``verify_size`` words, 3), ``"words"`` or ``"char-ngrams"`` (``verify_size``
            characters, 5).
        keep: which document of near-duplicates to keep: ``"first"`` in input order,
            ``"longest"`` or ``"shortest"`` text (ties: the first), ``"lowest-id"``.
        cluster: ``"greedy"``: in ``keep`` order, a document is kept unless a kept one lies
            within the radius (and passes the check); ``"components"``: connected components
            of the near-duplicate pairs, one kept per component.
        featureless: documents with no features (empty, blank, or punctuation only for word
            features), which all get fingerprint 0: ``"keep"`` each, compared with nothing;
            ``"drop"`` them; or ``"compare"`` them as any other document.
        against: a :class:`~neardup.HammingIndex` (or its file) of documents seen before:
            documents near one of them are dropped with their whole cluster.
    """

    config: FingerprintConfig = field(default_factory=FingerprintConfig)
    max_distance: int | None = None
    similarity: float | None = None
    jaccard: float | None = None
    cosine: float | None = None
    verify: tuple[str, float] | None = None
    verify_features: str | None = None
    verify_size: int | None = None
    keep: str = "first"
    cluster: str = "greedy"
    featureless: str = "keep"
    against: str | os.PathLike | HammingIndex | None = None

    radius: int = field(init=False)
    """The Hamming radius the join searches, in bits."""
    check: Verification | None = field(init=False, repr=False)
    """The exact check of each candidate pair (``verify``, ``jaccard``, ``cosine``), or None."""
    banding: Banding | None = field(init=False, repr=False)
    """With ``jaccard``: the MinHash-LSH banding that finds the candidates; else None."""
    plan: str = field(init=False, repr=False)
    """A line that says how ``jaccard`` or ``cosine`` finds its pairs; else empty."""

    def __post_init__(self) -> None:
        for name, value, allowed in (
            ("keep", self.keep, KEEP),
            ("cluster", self.cluster, CLUSTERINGS),
            ("featureless", self.featureless, FEATURELESS),
        ):
            if value not in allowed:
                raise ConfigError(f"{name}={value!r} is not allowed; choose one of {', '.join(allowed)}")
        if self.jaccard is not None and self.cosine is not None:
            raise ConfigError(f"give {named('jaccard')} or {named('cosine')}, not both")
        bits = self.config.bits
        verify, max_distance, jaccard, plan = self.verify, self.max_distance, self.jaccard, ""
        if self.config.features == "code":
            max_distance, verify, jaccard = code_defaults(self, bits)
        for name, threshold in (("jaccard", jaccard), ("cosine", self.cosine)):
            if threshold is not None:
                check_threshold(name, threshold, max_distance, self.similarity, verify)
        if self.cosine is not None:  # the radius that holds 95% of the pairs at T, each checked
            max_distance, verify = checked_cosine_radius(self.cosine, bits), ("cosine", self.cosine)
            plan = describe_cosine(self.cosine, bits)
        banding, check = None, None
        if jaccard is not None:  # MinHash-LSH candidates, each pair checked
            if self.against is not None:
                raise ConfigError(
                    f"{named('against')} finds documents within a radius; it does not combine "
                    f"with {named('jaccard')} yet"
                )
            jaccard_check, banding, plan = jaccard_plan(
                jaccard, self.config, self.verify_features, self.verify_size
            )
            if self.jaccard is None:
                plan += " (code's default)"
            check = jaccard_check
        else:
            check = check_verify(verify, self.config, self.verify_features, self.verify_size)
        object.__setattr__(self, "radius", radius(max_distance, self.similarity, bits))
        object.__setattr__(self, "check", check)
        object.__setattr__(self, "banding", banding)
        object.__setattr__(self, "plan", plan)

    @property
    def bands(self) -> tuple[Banding, Verification] | None:
        """Under ``jaccard``: the banding and the check whose features its keys hash."""
        if self.banding is None or self.check is None:
            return None
        return self.banding, self.check

    def bounded(self) -> DedupOptions:
        """These options for a join in bounded memory (``memory=``), which holds no MinHash
        buckets: code's default banding gives way to code's radius, each pair checked by the
        same threshold on the same features; a ``jaccard`` asked for is refused."""
        if self.banding is None:
            return self
        if self.jaccard is not None:
            raise ConfigError(
                "memory= bounds the Hamming join; jaccard's MinHash buckets are joined in memory: "
                "leave memory= out, or use verify=('jaccard', T) with a radius"
            )
        return dataclasses.replace(self, verify=CODE_VERIFY)  # a check, no radius: code's radius

    @classmethod
    def from_keywords(cls, config: FingerprintConfig | None = None, **keywords: Any) -> DedupOptions:
        """The options named in ``keywords``; those that are not fields of this class are the
        fingerprint's (:class:`~neardup.FingerprintConfig`'s), given instead of ``config``."""
        names = {f.name for f in dataclasses.fields(cls) if f.init}
        fingerprint = {name: keywords.pop(name) for name in list(keywords) if name not in names}
        if config is None:
            config = FingerprintConfig(**fingerprint)
        elif fingerprint:
            raise ConfigError(f"pass either config= or fingerprint options, not both: {sorted(fingerprint)}")
        return cls(config=config, **keywords)

    def open_against(self) -> HammingIndex | None:
        """The ``against`` index (opened from its file), checked against this run's
        fingerprints and radius; None without ``against``."""
        against, config, k = self.against, self.config, self.radius
        if against is None:
            return None
        index = against if isinstance(against, HammingIndex) else HammingIndex.open(against)
        name = against if not isinstance(against, HammingIndex) else "the index"
        if index.bits != config.bits:
            raise ConfigError(
                f"{name} holds {index.bits}-bit fingerprints; this run makes {config.bits}-bit ones"
            )
        if config.features == "code":  # another pygments: a refusal naming both, clearer than the next
            check_same_lexers(index.fingerprint_config, str(name))
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


CODE_JACCARD = 0.7
"""Code features' pairs when neither a radius nor a check is given: ``jaccard`` at 0.7 on the
fingerprint's own code shingles, MinHash-LSH candidates each checked. benchmarks/bench_code.py:
the threshold that holds the job's precision at 0.99 on clones of the standard library (0.65:
0.968), whose own modules alike (lib2to3's fixers) count as false; its bands reach the edited
copies (Jaccard 0.8-0.9, SimHash 8-10 bits apart) that a radius of 8 bits misses."""
CODE_RADIUS = 8
"""Code features' radius where a check but no radius is given (and under ``memory=``), in bits
per 64: the widest multi-index hashing serves (``index/plan.py``); the check prunes the rest."""
CODE_VERIFY = ("jaccard", CODE_JACCARD)
"""Code features' check where a radius but no check is given: the same threshold on the same
features as the default bands."""


def code_defaults(
    options: DedupOptions, bits: int
) -> tuple[int | None, tuple[str, float] | None, float | None]:
    """``(max_distance, verify, jaccard)`` for code features: those given, and in their place
    - with neither a radius (``max_distance``, ``similarity``, ``cosine``, ``jaccard``) nor a
      ``verify``: ``jaccard`` :data:`CODE_JACCARD` (on ``verify_features`` if named);
    - with a radius but no check: each pair checked by :data:`CODE_VERIFY`;
    - with a check but no radius: :data:`CODE_RADIUS`.
    With ``against``, the radius stays the prose default, each pair checked: a match in the
    index is not checked (its texts are not at hand), so a wide radius would drop files merely
    alike, and MinHash bands do not search an index."""
    max_distance, verify, jaccard = options.max_distance, options.verify, options.jaccard
    radius_given = any(v is not None for v in (max_distance, options.similarity, options.cosine, jaccard))
    if not radius_given and verify is None and options.against is None:
        return None, None, CODE_JACCARD
    if not radius_given and options.against is None:
        max_distance = CODE_RADIUS * bits // 64
    if verify is None and jaccard is None and options.cosine is None and options.verify_features is None:
        verify = CODE_VERIFY
    return max_distance, verify, jaccard


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
            raise ConfigError(
                f"{named(name)} states the threshold and verifies every pair at it; leave out {named(other)}"
            )


def named(option: str) -> str:
    """An option as both faces spell it, for errors both may show: "verify= (--verify)"."""
    return f"{option}= (--{option.replace('_', '-')})"
