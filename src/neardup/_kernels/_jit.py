"""The one compilation policy for every kernel.

Kernels are cached on disk (numba's ``cache=True``) so that a new process loads them in
milliseconds instead of compiling for seconds. Set ``NEARDUP_NUMBA_CACHE=0`` to turn caching off,
for read-only installs or executors whose package directory is not writable.

numba keys a cached function on its own source file only, not on helpers it inlined from other
files: after an edit to ``xxh3.py`` alone, ``simhash.py``'s cached kernels would keep the old
hash and give wrong fingerprints. So the cache of these sources is dropped whenever any of
them changes (``_drop_stale_cache``), wherever numba keeps it (``cache_dir``: ``__pycache__``
here, ``$NUMBA_CACHE_DIR``, or the user's cache folder for a read-only install).

The hot kernels are compiled in named groups (``cli/warmup.py``: fingerprint, index, ...); each
group, once compiled, leaves a marker of its own there (``mark_warm(group)``), so a command can
tell cheaply whether its first call will compile the groups it needs (``is_warm(group)``) and
say so.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from pathlib import Path

import llvmlite.binding  # type: ignore[import-untyped]  # pyproject skips llvmlite, not .binding
import numba

CACHE = os.environ.get("NEARDUP_NUMBA_CACHE", "1").strip().lower() not in {"0", "false", "no", "off"}

# No fastmath: integers gain nothing from it, and reassociated float sums can flip a
# fingerprint bit (docs/fingerprint-spec.md fixes the summation order).
jit = numba.njit(cache=CACHE, nogil=True)
jit_parallel = numba.njit(cache=CACHE, nogil=True, parallel=True)
# Small helpers are inlined into their callers at numba's IR level: left to LLVM they stay calls
# (measured: a byte-copy helper made tokenising 6x slower as a call).
jit_inline = numba.njit(inline="always")

_MARKERS = "neardup-kernels.{group}.warm"
"""The marker of a compiled group of kernels, beside them in the cache."""


@jit
def _locate() -> None:
    """Never called: numba's cache of it is where it caches every kernel of this folder."""


def cache_dir() -> Path | None:
    """The folder numba caches these kernels in; None when caching is off."""
    path = getattr(getattr(_locate, "_cache", None), "cache_path", None)
    return Path(path) if CACHE and path else None


def _sources_digest() -> str:
    digest = hashlib.sha256()
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.name.encode() + source.read_bytes())
    return digest.hexdigest()


def _drop_stale_cache(cache: Path) -> None:
    stamp = cache / "neardup-kernels.sha256"
    digest = _sources_digest()
    with contextlib.suppress(OSError):  # a read-only install simply keeps what it has
        if stamp.exists() and stamp.read_text() == digest:
            return
        for cached in [*cache.glob("*.nbi"), *cache.glob("*.nbc"), *cache.glob("neardup-kernels*.warm")]:
            cached.unlink(missing_ok=True)
        cache.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest)


def _warm_key() -> str:
    """What the cached machine code depends on: these sources, numba, Python and the CPU."""
    cpu = numba.config.CPU_NAME or llvmlite.binding.get_host_cpu_name()
    python = ".".join(map(str, sys.version_info[:2]))
    return f"sources {_sources_digest()} numba {numba.__version__} python {python} cpu {cpu}\n"


def _marker(group: str) -> Path | None:
    cache = cache_dir()
    return None if cache is None else cache / _MARKERS.format(group=group)


def is_warm(group: str) -> bool:
    """True when the kernels of ``group`` were compiled into the cache for these sources on this
    machine (``mark_warm``), so they load in milliseconds; False when their first call will
    compile (and always when caching is off)."""
    marker = _marker(group)
    if marker is None:
        return False
    try:
        return marker.read_text() == _warm_key()
    except OSError:
        return False


def mark_warm(group: str) -> None:
    """Records that the cache holds the kernels of ``group`` (called once they compiled)."""
    marker = _marker(group)
    with contextlib.suppress(OSError):  # read-only: every run will say it compiles, none breaks
        if marker is not None:
            marker.write_text(_warm_key())


if CACHE and (_cache := cache_dir()) is not None:
    _drop_stale_cache(_cache)
