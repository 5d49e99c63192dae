"""Multi-index hashing: the keys a query probes in each table (Norouzi, Punjani & Fleet, "Fast
Search in Hamming Space with Multi-Index Hashing", CVPR 2012, sec. 3).

The b bits are cut into m contiguous blocks (``starts``, ``sizes`` as in ``index.py``); table
``t`` is keyed on block ``t`` alone, its first ``widths[t]`` bits. Two fingerprints within
distance k differ in at most ``r = k // m`` bits of some block (pigeonhole, the paper's
Proposition 1), so a query probes, in each table, every key within r bits of its own key: all
combinations of up to r of the key's bits flipped, fewest flips first (``next_flips``).

Permuted tables are the case r = 0: a plan of B blocks serves k < B, so ``k // B`` is 0 and each
table is probed at its own key alone. One probe loop (``index._probe``) therefore serves both,
and what a query costs is one directory slot and one short bucket scan per probe either way.

Exactly once. A stored row sits under one key per table, and distinct flip sets give distinct
keys, so a table meets a row at most once per query. The row is reported only from the *first*
table whose kept blocks are each within r bits of the query (``index._owner``): that table's key
(cut to ``widths[t]`` bits) is then within r bits of the query's, so its probe is made; every
other meeting is skipped. A key cut short thus only admits more candidates, never loses one.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit_inline
from ._memory import trailing_zeros


@jit_inline
def _next_combination(mask):
    """The next larger uint64 with as many set bits (Gosper's hack, HAKMEM item 175); ``mask``
    is non-zero and below 2**63, so nothing overflows. ``low`` is a power of two: the division
    of the original is a shift."""
    low = mask & (~mask + np.uint64(1))
    ripple = mask + low
    return (((ripple ^ mask) >> np.uint64(2)) >> trailing_zeros(low)) | ripple


@jit_inline
def next_flips(mask, flips, width, radius):
    """The flip mask after ``mask`` (``flips`` bits set) among those of at most ``radius`` of a
    ``width``-bit key's bits (``width`` <= 63), by number of flips, then value: returns
    ``(mask, flips)``, ``flips`` -1 after the last. The first is ``(0, 0)``, the key itself."""
    if flips > 0:
        mask = _next_combination(mask)
        if mask >> np.uint64(width) == 0:
            return mask, flips
    flips += 1
    if flips > min(radius, width):
        return np.uint64(0), -1
    return (np.uint64(1) << np.uint64(flips)) - np.uint64(1), flips
