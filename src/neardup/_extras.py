"""The optional dependencies, by the pip extra that installs them (pyproject.toml's
``[project.optional-dependencies]``), and the one check that names the extra when one is missing."""

from __future__ import annotations

import importlib

from ._errors import MissingExtraError

EXTRAS = {
    "code": ("pygments", "loky"),
    "report": ("matplotlib",),
    "serve": ("fastapi", "uvicorn", "httpx", "prometheus_client"),
    "spark": ("pyspark", "py4j"),
}
"""The top-level modules each extra installs that neardup imports."""

_EXTRA_OF = {module: extra for extra, modules in EXTRAS.items() for module in modules}


def require(extra: str, *modules: str, needed_by: str) -> None:
    """Import ``modules`` (of ``extra``) now, or raise :class:`MissingExtraError` naming the
    extra that ``needed_by`` (what the user ran: "neardup serve", "neardup.spark") needs."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as e:
            raise missing(extra, e, needed_by) from e


def missing(extra: str, error: ImportError, needed_by: str) -> MissingExtraError:
    """The error that says ``needed_by`` needs ``extra``, for the failed import ``error``."""
    if isinstance(error, ModuleNotFoundError) and error.name:
        why = f"{error.name.split('.')[0]} is not installed"
    else:  # installed but broken: its own message says how
        why = str(error)
    return MissingExtraError(
        f'{needed_by} needs the "{extra}" extra ({why}): pip install "neardup[{extra}]", or '
        f'pip install ".[{extra}]" in a checkout of neardup'
    )


def extra_of(error: ModuleNotFoundError) -> str | None:
    """The extra that installs the module ``error`` did not find; None if it is none of theirs."""
    return _EXTRA_OF.get((error.name or "").split(".")[0])
