"""Bytes copied out of Python objects on all cores, in place of a loop that holds the GIL."""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import jit_parallel
from ._memory import copy_from_address


@jit_parallel
def gather(addresses, offsets, bounds, out):
    """Copy document ``d``'s ``offsets[d + 1] - offsets[d]`` bytes from ``addresses[d]`` to
    ``out[offsets[d]:]``, the documents split into chunks by ``bounds``, a chunk a thread."""
    for chunk in prange(bounds.shape[0] - 1):
        for d in range(bounds[chunk], bounds[chunk + 1]):
            copy_from_address(out, offsets[d], addresses[d], np.int64(offsets[d + 1] - offsets[d]))
