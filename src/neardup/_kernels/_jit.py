"""The one compilation policy for every kernel.

Kernels are cached on disk (numba's ``cache=True``) so that a new process loads them in
milliseconds instead of compiling for seconds. Set ``NEARDUP_NUMBA_CACHE=0`` to turn caching off,
for read-only installs or executors whose package directory is not writable.

numba keys a cached function on its own source file only, not on helpers it inlined from other
files: after an edit to ``xxh3.py`` alone, ``simhash.py``'s cached kernels would keep the old
hash and give wrong fingerprints. So the cache of these sources is dropped whenever any of
them changes (``_drop_stale_cache``), wherever numba keeps it (``cache_dir``: ``__pycache__``
here, ``$NUMBA_CACHE_DIR``, or the user's cache folder for a read-only install).

``pipeline.warmup.warmup`` compiles every hot kernel and then leaves a marker there
(``mark_warm``), so a command can tell cheaply whether its first call will compile
(``is_warm``) and say so.
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

_WARM = "neardup-kernels.warm"


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
        for cached in [*cache.glob("*.nbi"), *cache.glob("*.nbc"), cache / _WARM]:
            cached.unlink(missing_ok=True)
        cache.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest)


def _warm_key() -> str:
    """What the cached machine code depends on: these sources, numba, Python and the CPU."""
    cpu = numba.config.CPU_NAME or llvmlite.binding.get_host_cpu_name()
    python = ".".join(map(str, sys.version_info[:2]))
    return f"sources {_sources_digest()} numba {numba.__version__} python {python} cpu {cpu}\n"


def is_warm() -> bool:
    """True when ``warmup`` filled the cache for these sources on this machine, so the hot
    kernels load in milliseconds; False when their first call will compile (and always when
    caching is off)."""
    cache = cache_dir()
    if cache is None:
        return False
    try:
        return (cache / _WARM).read_text() == _warm_key()
    except OSError:
        return False


def mark_warm() -> None:
    """Records that the cache holds every hot kernel (``warmup`` calls it once they compiled)."""
    cache = cache_dir()
    with contextlib.suppress(OSError):  # read-only: every run will say it compiles, none breaks
        if cache is not None:
            (cache / _WARM).write_text(_warm_key())


if CACHE and (_cache := cache_dir()) is not None:
    _drop_stale_cache(_cache)
