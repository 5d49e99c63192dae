"""``neardup warmup``: compile every kernel into numba's cache, for container images and Spark
executors; and, before a command's first kernel, the groups of kernels it needs, said in one line."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

FIRST_RUN_SECONDS = 90
"""About how long a first run compiles the kernels it needs, on an empty cache: measured on 2
cores, `dedup` 90 s, `fingerprint` 75 s, `explain` 166 s (README and docs/cli.md say 90 s)."""


def _dedup(args: argparse.Namespace) -> list[str]:
    if args.explain_plan or args.engine == "spark":  # a plan is arithmetic; Spark's executors warm up
        return []
    groups = ["read", "fingerprint", "join", "dedup"]
    code = getattr(args, "features", None) == "code"  # MinHash bands by default, or a radius checked
    if args.jaccard is not None or code:
        groups.append("minhash")
    if args.cosine is not None or args.verify is not None or code:
        groups.append("verify")
    if args.against is not None:
        groups.append("snapshot")
    if args.save_index is not None:
        groups.append("index")
    return groups


NEEDS: dict[str, Callable[[argparse.Namespace], list[str]]] = {
    "fingerprint": lambda args: ["read", "fingerprint"],
    "pairs": lambda args: ["read", "fingerprint", "join"],
    "index": lambda args: {
        "build": ["read", "fingerprint", "index"],
        "query": ["fingerprint", "snapshot"],
    }.get(args.action, []),
    "dedup": _dedup,
    "passages": lambda args: ["read", "passages"],
    "logs": lambda args: ["read", "logs"],
    "explain": lambda args: ["read", "fingerprint", "passages", "explain"],
    "serve": lambda args: [
        "fingerprint",
        "service",
        *(["passages"] if getattr(args, "passages", None) else []),
    ],
}
"""The groups of kernels (``groups()``) each command runs, given its arguments; a command not
here runs none on this machine (`neardup client` leaves them to the service). The group
``search`` (an index's other operations) is the library's: `neardup warmup` compiles it."""


def needs(args: argparse.Namespace) -> list[str]:
    """The names of the groups of kernels the command of ``args`` runs."""
    groups = NEEDS.get(args.command, lambda args: [])(args)
    if groups and getattr(args, "features", None) == "code":
        groups.append("code")
    return groups


def add_command(commands: Any) -> None:
    warmup = commands.add_parser(
        "warmup",
        help="compile every kernel into the cache now, for container images and Spark executors",
        description="Compile every kernel (a few minutes) into numba's cache beside the package, "
        "or in $NUMBA_CACHE_DIR, so that later commands start at once. Run it where the package "
        "is installed, as the user who will run neardup; NEARDUP_NUMBA_CACHE=0 turns caching off.",
    )
    warmup.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from .._kernels._jit import cache_dir, is_warm

    every = list(groups())
    seconds = compile_groups(every)
    folder = cache_dir()
    if folder is None:
        print(f"neardup: compiled in {seconds:.0f} s; caching is off (NEARDUP_NUMBA_CACHE)", file=sys.stderr)
    elif not all(map(is_warm, every)):
        print(f"neardup: compiled in {seconds:.0f} s, but {folder} is not writable", file=sys.stderr)
    else:
        print(f"neardup: every kernel compiled into {folder} ({seconds:.0f} s)", file=sys.stderr)
    return 0


def compile_once(args: argparse.Namespace) -> float | None:
    """Before the command of ``args`` runs: compile the groups of kernels it needs that the
    cache does not hold yet, and say so in one line on stderr, terminal or not, unless
    ``--quiet``: numba compiles silently, and a first run would seem to hang. Returns the
    seconds it took, or None when nothing needed compiling."""
    needed = needs(args)
    if not needed:
        return None
    from .._kernels._jit import CACHE, is_warm

    _load_numpy_support()
    cold = [group for group in needed if not is_warm(group)]
    if not CACHE or not cold:  # uncached, every run compiles what it uses: no notice each time
        return None
    if _missing_input(args):  # the command stops at once, naming it: no wait before that
        return None
    quiet = getattr(args, "quiet", False)
    if not quiet:
        print(
            f"neardup: compiling the kernels this command needs (first run only, about "
            f"{FIRST_RUN_SECONDS} s) ...",
            end="",
            file=sys.stderr,
            flush=True,
        )
    try:
        seconds = compile_groups(cold)
    except BaseException:  # Ctrl-C or a bug: the error that follows starts on a line of its own
        if not quiet:
            print(" stopped", file=sys.stderr)
        raise
    if not quiet:
        print(f" done in {seconds:.0f} s", file=sys.stderr)
    return seconds


def _load_numpy_support() -> None:
    """Load numba's support of numpy arrays now, without its probe for scipy's BLAS: where
    scipy is installed, the probe imports all of ``scipy.linalg`` (0.3 s of each command's
    start, most of the first kernel's load). No kernel here uses BLAS; numba then sums inner
    products in a loop of its own (``numba/np/arraymath.py``, ``_HAVE_BLAS``) and imports
    scipy later where a kernel needs linear algebra. For the command line only, whose process
    is neardup's: a caller's process may have kernels of its own that want BLAS. Here, not in
    ``_kernels/``, whose sources key the kernel cache: an edit there compiles every kernel again."""
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    sys.modules["scipy.linalg"] = None  # type: ignore[assignment]  # importing it raises ImportError
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        del sys.modules["scipy.linalg"]


def _missing_input(args: argparse.Namespace) -> bool:
    """True when a file or folder the command would read does not exist."""
    named = [*(getattr(args, "inputs", None) or []), *(getattr(args, "corpus", None) or [])]
    return any(given != "-" and not Path(given).exists() for given in named)


def compile_groups(names: list[str]) -> float:
    """Compile the groups ``names`` and mark each in the cache; returns the seconds it took."""
    from .._kernels._jit import mark_warm

    started = time.perf_counter()
    every = groups()
    for name in names:
        every[name]()
        mark_warm(name)
    return time.perf_counter() - started


def groups() -> dict[str, Callable[[], None]]:
    """Every group of kernels by name, each with the function that compiles it."""
    from ..passage.job import warm as warm_passages
    from ..pipeline.warmup import GROUPS

    return {**GROUPS, "passages": warm_passages, "explain": _warm_explain, "service": _warm_service}


def _warm_explain() -> None:
    from ..report.explain import explain

    shared = " ".join(f"word{i}" for i in range(12))
    explain(f"warm up {shared} one", f"a warm {shared} two", passage_words=8)


def _warm_service() -> None:
    """A service of each width, warmed, then started again from its snapshot and warmed again
    (memory-mapped tables): what `neardup serve` runs before it listens. Nothing without the
    serve extra, which `serve` itself needs."""
    try:
        from ..service.models import Batch, DocumentIn, Limits
        from ..service.state import Service
        from ..service.store import Settings, Store
    except ModuleNotFoundError:
        return
    from .._config import FingerprintConfig

    for bits in (64, 128):
        with tempfile.TemporaryDirectory() as folder:
            data = Path(folder) / "data"
            service = Service(Store(data, Settings(FingerprintConfig(bits=bits), 3 * bits // 64)))
            service.warm()
            pages = [DocumentIn(id=f"p{i}", text=f"page {i} of a crawl") for i in range(40)]
            service.add(Batch(documents=pages), service.fingerprints(pages, Limits()), 3)
            service.close()  # saves the snapshot the restart opens
            restarted = Service(Store(data))
            restarted.warm()
            restarted.store.close()
