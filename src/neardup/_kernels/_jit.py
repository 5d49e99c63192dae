"""The one compilation policy for every kernel.

Kernels are cached on disk (numba's ``cache=True``) so that a new process loads them in
milliseconds instead of compiling for seconds. Set ``NEARDUP_NUMBA_CACHE=0`` to turn caching off,
for read-only installs or executors whose package directory is not writable.

numba keys a cached function on its own source file only, not on helpers it inlined from other
files: after an edit to ``xxh3.py`` alone, ``simhash.py``'s cached kernels would keep the old
hash and give wrong fingerprints. So the cache beside these sources is dropped whenever any of
them changes (``_drop_stale_cache``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

import numba

CACHE = os.environ.get("NEARDUP_NUMBA_CACHE", "1").strip().lower() not in {"0", "false", "no", "off"}


def _drop_stale_cache() -> None:
    here = Path(__file__).parent
    digest = hashlib.sha256()
    for source in sorted(here.glob("*.py")):
        digest.update(source.name.encode() + source.read_bytes())
    cache_dir = here / "__pycache__"
    stamp = cache_dir / "neardup-kernels.sha256"
    with contextlib.suppress(OSError):  # a read-only install simply keeps what it has
        if stamp.exists() and stamp.read_text() == digest.hexdigest():
            return
        for cached in [*cache_dir.glob("*.nbi"), *cache_dir.glob("*.nbc")]:
            cached.unlink()
        cache_dir.mkdir(exist_ok=True)
        stamp.write_text(digest.hexdigest())


if CACHE:
    _drop_stale_cache()

# No fastmath: integers gain nothing from it, and reassociated float sums can flip a
# fingerprint bit (docs/fingerprint-spec.md fixes the summation order).
jit = numba.njit(cache=CACHE, nogil=True)
jit_parallel = numba.njit(cache=CACHE, nogil=True, parallel=True)
# Small helpers are inlined into their callers at numba's IR level: left to LLVM they stay calls
# (measured: a byte-copy helper made tokenising 6x slower as a call).
jit_inline = numba.njit(inline="always")
