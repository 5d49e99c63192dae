"""The public API is what __all__ says, and importing it stays light."""

from __future__ import annotations

import importlib
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


def _behind_a_missing_extra(error: ImportError) -> bool:
    """Whether ``error`` only says an optional dependency is not installed here, so that a run
    without the serve or spark extra still checks everything else. A module that is not
    neardup's own counts: the required ones are installed wherever these tests run."""
    if isinstance(error, neardup.MissingExtraError):
        return True
    return isinstance(error, ModuleNotFoundError) and (error.name or "neardup").split(".")[0] != "neardup"


def _public_here() -> list[tuple[str, object]]:
    """(name, value) of each name in ``__all__``, but those behind an extra not installed here."""
    found = []
    for name in neardup.__all__:
        try:
            found.append((name, getattr(neardup, name)))
        except ImportError as error:
            if not _behind_a_missing_extra(error):
                raise
    return found


def test_all_is_pinned_and_sorted():
    assert neardup.__all__ == EXPECTED
    assert neardup.__all__ == sorted(neardup.__all__)
    for name, value in _public_here():
        assert value is not None, name


def test_public_callables_have_docstrings():
    for name, obj in _public_here():
        if callable(obj):
            assert obj.__doc__, name


def test_import_does_not_load_numba_or_pyarrow():
    code = "import sys, neardup; print('numba' in sys.modules, 'pyarrow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_function_names_are_not_shadowed_by_submodules():
    import pkgutil

    for module in pkgutil.walk_packages(neardup.__path__, "neardup."):
        if module.name != "neardup.__main__":
            try:
                importlib.import_module(module.name)
            except ImportError as error:
                if not _behind_a_missing_extra(error):
                    raise

    assert callable(neardup.hamming) and callable(neardup.simhash) and callable(neardup.clusters)
    assert callable(neardup.explain) and callable(neardup.dedup) and callable(neardup.write_report)


def test_unknown_attribute():
    import pytest

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        neardup.nope  # noqa: B018
