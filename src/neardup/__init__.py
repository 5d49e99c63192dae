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
from ._errors import ConfigError, FormatError, NeardupError

# Imported now, not lazily: the submodule ``neardup.hamming`` would otherwise shadow the
# function of the same name once anything imports it. It needs only numpy.
from .hamming import distance_for_cosine, estimate_cosine, hamming, hamming_many, hamming_pairwise

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .fingerprint import Fingerprinter, simhash, warmup
    from .cluster import clusters
    from .explanation import Explanation, explain
    from .pipeline import DedupResult, dedup
    from .report import write_report
    from .idf import IdfModel, fit_idf
    from .index import HammingIndex, IndexPlan

_LAZY = {
    "DedupResult": "pipeline",
    "Explanation": "explanation",
    "Fingerprinter": "fingerprint",
    "HammingIndex": "index",
    "IdfModel": "idf",
    "IndexPlan": "index",
    "clusters": "cluster",
    "dedup": "pipeline",
    "explain": "explanation",
    "fit_idf": "idf",
    "simhash": "fingerprint",
    "warmup": "fingerprint",
    "write_report": "report",
}

__all__ = [
    "ConfigError",
    "DedupResult",
    "Explanation",
    "FINGERPRINT_VERSION",
    "FingerprintConfig",
    "Fingerprinter",
    "FormatError",
    "HammingIndex",
    "IdfModel",
    "IndexPlan",
    "NeardupError",
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
