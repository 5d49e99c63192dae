"""``neardup warmup``: compile every kernel into numba's cache, for container images and Spark
executors; and, before a command's first kernel, the notice that they are being compiled."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

COMPILING = frozenset({"fingerprint", "pairs", "index", "dedup", "passages", "explain", "serve"})
"""The commands that run kernels (on this machine: `neardup client` leaves them to the service)."""


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

    seconds = _compile()
    folder = cache_dir()
    if folder is None:
        print(f"neardup: compiled in {seconds:.0f} s; caching is off (NEARDUP_NUMBA_CACHE)", file=sys.stderr)
    elif not is_warm():
        print(f"neardup: compiled in {seconds:.0f} s, but {folder} is not writable", file=sys.stderr)
    else:
        print(f"neardup: every kernel compiled into {folder} ({seconds:.0f} s)", file=sys.stderr)
    return 0


def compile_once(command: str) -> None:
    """Before ``command`` runs: if it runs kernels the cache does not hold yet, compile them all
    now and say so, once, on a terminal: numba compiles silently, and a first run would seem to
    hang for minutes. Pipes and logs see nothing."""
    if command not in COMPILING or not sys.stderr.isatty():
        return
    from .._kernels._jit import CACHE, is_warm

    if not CACHE or is_warm():  # uncached, every run compiles what it uses: no notice each time
        return
    print("neardup: compiling the kernels (once; a few minutes) ...", end=" ", file=sys.stderr, flush=True)
    print(f"done in {_compile():.0f} s", file=sys.stderr)


def _compile() -> float:
    from ..passage.job import warm as warm_passages
    from ..pipeline.warmup import warmup

    started = time.perf_counter()
    warm_passages()  # before warmup(), which marks the cache warm
    warmup()
    return time.perf_counter() - started
