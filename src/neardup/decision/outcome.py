"""The tail every engine's decision ends in: what the chosen representatives make of each
document (kept or not, its cluster, its distance to the kept one) and the counts the summary
gives. The local job and Spark's driver read it from here; Spark's distributed stages compute
the same columns and counts with DataFrames (``spark/stages.py: outcome``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .options import DedupOptions
from .steps import Choice, distances, drop_near_index


@dataclass(frozen=True)
class Outcome:
    """What ``choice`` makes of each of n documents."""

    kept: np.ndarray
    """bool: the document is kept."""
    labels: np.ndarray
    """int: its cluster, 0 to clusters - 1, in the order of the representatives' positions."""
    sizes: np.ndarray
    """int: the documents in each cluster."""
    distances: np.ndarray
    """int64: bits between it and its representative."""
    duplicates: int
    """Documents removed as near-duplicates of another in the input."""
    against_matches: int
    """Documents that would be kept but are near the ``against`` index."""
    chained: int
    """Duplicates farther than the radius from their kept one (components chain)."""

    @property
    def clusters(self) -> int:
        """Clusters of more than one document."""
        return int((self.sizes > 1).sum())

    @classmethod
    def of(
        cls, fingerprints: np.ndarray, no_features: np.ndarray, choice: Choice, options: DedupOptions
    ) -> Outcome:
        """The outcome of ``choice`` for documents with ``fingerprints`` (and ``no_features``:
        bool, dropped where ``options.featureless`` says so)."""
        representatives, matched = choice.representatives, choice.matched
        n = len(representatives)
        _, labels = np.unique(representatives, return_inverse=True)
        kept = representatives == np.arange(n)
        sizes = np.bincount(labels, minlength=1)
        against_matches = 0 if matched is None else drop_near_index(kept, labels, matched)
        duplicates = int(n - kept.sum()) - against_matches
        if options.featureless == "drop":
            kept &= ~no_features  # each is its own cluster: dropping it touches no other
        to_representative = distances(fingerprints, representatives)
        # Removed as near-duplicates yet farther than k from their kept one: components chain,
        # greedy never does. (Under components each cluster keeps one, so no other kept one
        # lies within k.)
        duplicate = representatives != np.arange(n)
        if matched is not None:
            duplicate &= matched < 0
        chained = 0
        if options.banding is None:  # under --jaccard no radius applies
            chained = int((duplicate & (to_representative > options.radius)).sum())
        return cls(kept, labels, sizes, to_representative, duplicates, against_matches, chained)
