"""What every test shares: the markers and the folders that carry them, and the hypothesis profiles.

``pytest -m "not slow and not spark"`` is the quick loop; ``.ci/run`` runs everything with the
thorough profile (``NEARDUP_HYPOTHESIS_PROFILE=ci``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

TESTS = Path(__file__).parent

MARKERS = {
    "slow": "takes seconds, not milliseconds: big hypothesis runs, planted corpora, subprocesses",
    "spark": "starts a local Spark session (needs the spark extra and Java 17+)",
    "service": "starts a real `neardup serve` process (needs the serve extra)",
}

FOLDER_MARKERS = {"spark": "spark", "service": "service"}
"""Every test under tests/<folder> carries the marker: the folder is what needs the component."""

# Examples for a @given test that does not set its own max_examples. Tests that set it keep
# their number under every profile: it is the budget their author measured as enough.
settings.register_profile("dev", max_examples=25, deadline=None)
settings.register_profile("ci", max_examples=200, deadline=None, print_blob=True)
PROFILE_VARIABLE = "NEARDUP_HYPOTHESIS_PROFILE"
PROFILE = os.environ.get(PROFILE_VARIABLE, "dev")
if PROFILE not in ("dev", "ci"):
    raise pytest.UsageError(f"{PROFILE_VARIABLE}={PROFILE!r} is not a hypothesis profile: use dev or ci")
settings.load_profile(PROFILE)


def pytest_configure(config: pytest.Config) -> None:
    for name, meaning in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {meaning}")


def pytest_report_header(config: pytest.Config) -> str:
    return f"hypothesis profile: {PROFILE} (from ${PROFILE_VARIABLE}: dev or ci)"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(TESTS):
            folder = item.path.relative_to(TESTS).parts[0]
            if folder in FOLDER_MARKERS:
                item.add_marker(FOLDER_MARKERS[folder])
