"""The one compilation policy for every kernel.

Kernels are cached on disk (numba's ``cache=True``) so that a new process loads them in
milliseconds instead of compiling for seconds. Set ``NEARDUP_NUMBA_CACHE=0`` to turn caching off,
for read-only installs or executors whose package directory is not writable.
"""

from __future__ import annotations

import os

import numba

CACHE = os.environ.get("NEARDUP_NUMBA_CACHE", "1").strip().lower() not in {"0", "false", "no", "off"}

# No fastmath: integers gain nothing from it, and reassociated float sums can flip a
# fingerprint bit (docs/fingerprint-spec.md fixes the summation order).
jit = numba.njit(cache=CACHE, nogil=True)
jit_parallel = numba.njit(cache=CACHE, nogil=True, parallel=True)
# Small helpers are inlined into their callers at numba's IR level: left to LLVM they stay calls
# (measured: a byte-copy helper made tokenising 6x slower as a call).
jit_inline = numba.njit(inline="always")
