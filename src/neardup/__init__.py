"""neardup: find near-duplicate documents with SimHash fingerprints (Charikar 2002; Manku,
Jain & Das Sarma 2007).

    >>> import neardup
    >>> fp = neardup.Fingerprinter(features="words")
    >>> a, b = fp.fingerprint_batch(["the cat sat on the mat", "the cat sat on a mat"])
    >>> neardup.hamming(a, b) < 32
    True

The fingerprinting names resolve on first use, so ``import neardup`` stays light: numba loads
with the first fingerprint, not before.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._config import FINGERPRINT_VERSION, FingerprintConfig
from ._errors import (
    ConfigError,
    FormatError,
    MissingExtraError,
    NeardupError,
    ServiceError,
    TooManyPairsError,
)
from ._version import __version__

# hamming.py needs only numpy, so these load now.
from .index.hamming import distance_for_cosine, estimate_cosine, hamming, hamming_many, hamming_pairwise

if TYPE_CHECKING:
    from .decision.clustering import clusters
    from .decision.options import DedupOptions
    from .decision.passage_matching import PassageOptions
    from .fingerprint.fingerprinter import Fingerprinter, simhash
    from .fingerprint.idf import IdfModel, fit_idf
    from .index.hamming_index import HammingIndex
    from .index.plan import IndexPlan
    from .index.self_join import self_join
    from .logs.templates import LogTemplates
    from .passage.job import passages
    from .passage.result import PassageResult
    from .pipeline.job import dedup
    from .pipeline.result import DedupResult
    from .pipeline.warmup import warmup
    from .report.explain import Explanation, explain
    from .report.html import write_report

# Public name -> the module that defines it, imported on first use.
_LAZY = {
    "DedupOptions": "decision.options",
    "DedupResult": "pipeline.result",
    "Explanation": "report.explain",
    "Fingerprinter": "fingerprint.fingerprinter",
    "HammingIndex": "index.hamming_index",
    "IdfModel": "fingerprint.idf",
    "IndexPlan": "index.plan",
    "LogTemplates": "logs.templates",
    "PassageOptions": "decision.passage_matching",
    "PassageResult": "passage.result",
    "clusters": "decision.clustering",
    "dedup": "pipeline.job",
    "explain": "report.explain",
    "fit_idf": "fingerprint.idf",
    "passages": "passage.job",
    "self_join": "index.self_join",
    "simhash": "fingerprint.fingerprinter",
    "warmup": "pipeline.warmup",
    "Client": "service.client",
    "write_report": "report.html",
}

__all__ = [  # sorted case-insensitively (tests/test_public_api.py)
    "Client",
    "ConfigError",
    "DedupOptions",
    "DedupResult",
    "Explanation",
    "FINGERPRINT_VERSION",
    "FingerprintConfig",
    "Fingerprinter",
    "FormatError",
    "HammingIndex",
    "IdfModel",
    "IndexPlan",
    "LogTemplates",
    "MissingExtraError",
    "NeardupError",
    "PassageOptions",
    "PassageResult",
    "ServiceError",
    "TooManyPairsError",
    "__version__",
    "clusters",
    "dedup",
    "distance_for_cosine",
    "estimate_cosine",
    "explain",
    "fit_idf",
    "hamming",
    "hamming_many",
    "hamming_pairwise",
    "passages",
    "self_join",
    "simhash",
    "warmup",
    "write_report",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'neardup' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
