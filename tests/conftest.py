"""What every test shares: the markers, the folders that need an extra, and the hypothesis profiles.

``pytest -m "not slow and not spark"`` is the quick loop; ``.ci/run`` runs everything with the
thorough profile (``NEARDUP_HYPOTHESIS_PROFILE=ci``).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

TESTS = Path(__file__).parent

MARKERS = {
    "slow": "takes seconds, not milliseconds: big hypothesis runs, planted corpora, subprocesses",
    "spark": "starts a local Spark session (needs the spark extra and Java 17+)",
    "service": "starts a real `neardup serve` process (needs the serve extra)",
}


@dataclass(frozen=True)
class Needs:
    """What the tests of one folder need: its marker, the modules of its extra, and programs."""

    marker: str
    extra: str
    modules: tuple[str, ...]
    programs: tuple[str, ...] = ()

    def missing(self) -> str | None:
        """Why the folder's tests cannot run here, or None when they can."""
        for module in self.modules:
            if importlib.util.find_spec(module) is None:
                return f"the {self.marker} tests need {module}: pip install 'neardup[{self.extra}]'"
        for program in self.programs:
            if shutil.which(program) is None:
                return f"the {self.marker} tests need `{program}` on PATH"
        return None


FOLDERS = {
    "spark": Needs("spark", "spark", ("pyspark",), programs=("java",)),  # Java 17 or newer
    "service": Needs("service", "serve", ("fastapi", "uvicorn", "httpx")),
}
"""Every test under tests/<folder> carries the marker, and is skipped, not failed, when the
folder's needs are missing: its modules import the extra at the top."""

# Examples for a @given test that does not set its own max_examples. Tests that set it keep
# their number under every profile: it is the budget their author measured as enough.
settings.register_profile("dev", max_examples=25, deadline=None)
settings.register_profile("ci", max_examples=200, deadline=None, print_blob=True)
PROFILE_VARIABLE = "NEARDUP_HYPOTHESIS_PROFILE"
PROFILE = os.environ.get(PROFILE_VARIABLE, "dev")
if PROFILE not in ("dev", "ci"):
    raise pytest.UsageError(f"{PROFILE_VARIABLE}={PROFILE!r} is not a hypothesis profile: use dev or ci")
settings.load_profile(PROFILE)


def _needs(path: Path) -> Needs | None:
    if not path.is_relative_to(TESTS):
        return None
    return FOLDERS.get(path.relative_to(TESTS).parts[0])


def pytest_configure(config: pytest.Config) -> None:
    for name, meaning in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {meaning}")


def pytest_report_header(config: pytest.Config) -> str:
    return f"hypothesis profile: {PROFILE} (from ${PROFILE_VARIABLE}: dev or ci)"


class UnavailableModule(pytest.Module):
    """A test module whose folder's needs are missing: reported as skipped, never imported."""

    reason = ""

    def collect(self):
        pytest.skip(self.reason)


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    needs = _needs(module_path)
    reason = needs.missing() if needs else None
    if reason is None:
        return None  # pytest's own Module
    module = UnavailableModule.from_parent(parent, path=module_path)
    module.reason = reason
    return module


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        needs = _needs(item.path)
        if needs:
            item.add_marker(needs.marker)
