"""The public API is what __all__ says, and importing it stays light."""

from __future__ import annotations

import subprocess
import sys

import neardup

EXPECTED = [
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
    "MissingExtraError",
    "NeardupError",
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
    "simhash",
    "warmup",
    "write_report",
]


def test_all_is_pinned_and_sorted():
    assert neardup.__all__ == EXPECTED
    assert neardup.__all__ == sorted(neardup.__all__)
    for name in neardup.__all__:
        assert getattr(neardup, name) is not None


def test_public_callables_have_docstrings():
    for name in neardup.__all__:
        obj = getattr(neardup, name)
        if callable(obj):
            assert obj.__doc__, name


def test_import_does_not_load_numba_or_pyarrow():
    code = "import sys, neardup; print('numba' in sys.modules, 'pyarrow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_function_names_are_not_shadowed_by_submodules():
    import importlib
    import pkgutil

    for module in pkgutil.walk_packages(neardup.__path__, "neardup."):
        if module.name != "neardup.__main__":
            importlib.import_module(module.name)

    assert callable(neardup.hamming) and callable(neardup.simhash) and callable(neardup.clusters)
    assert callable(neardup.explain) and callable(neardup.dedup) and callable(neardup.write_report)


def test_unknown_attribute():
    import pytest

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        neardup.nope  # noqa: B018
