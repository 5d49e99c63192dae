"""Hamming distance between fingerprints, and what a distance says about cosine similarity.

Fingerprints are uint64 arrays: shape (n,) for 64 bits, (n, 2) for 128 bits. Charikar (2002):
for a random hyperplane per bit, P[bit equal] = 1 - angle/pi, so a distance d out of b bits
estimates the angle as pi * d / b and the cosine similarity as cos(pi * d / b).
"""

from __future__ import annotations

import math

import numpy as np

_BITS = (64, 128)


def _as_fingerprints(x: object, name: str) -> np.ndarray:
    """uint64, shape (n, words) with words 1 or 2; a Python int becomes one row."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        value = int(x)
        if not 0 <= value < 2**128:
            raise ValueError(f"{name}={value} is not a fingerprint: it must be in [0, 2**128)")
        words = 1 if value < 2**64 else 2
        return np.array([[(value >> (64 * w)) & (2**64 - 1) for w in range(words)]], dtype=np.uint64)
    arr = np.asarray(x)
    if arr.dtype != np.uint64:
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{name} must hold uint64 fingerprints, got dtype {arr.dtype}")
        if arr.size and arr.min() < 0:
            raise ValueError(f"{name} holds negative values; fingerprints are unsigned")
        arr = arr.astype(np.uint64)
    if arr.ndim == 1:
        return arr.reshape(-1, 1)
    if arr.ndim == 2 and arr.shape[1] in (1, 2):
        return arr
    raise ValueError(
        f"{name} has shape {arr.shape}; expected (n,) for 64-bit or (n, 2) for 128-bit fingerprints"
    )


def _as_one_fingerprint(x: object, name: str) -> np.ndarray:
    """One fingerprint as a row (1, words): an int, a uint64 scalar, or a row of 1 or 2 words."""
    row = _as_fingerprints(x, name)
    if row.shape[0] == 2 and row.shape[1] == 1 and not isinstance(x, (int, np.integer)):
        row = row.reshape(1, 2)  # a 128-bit row [lo, hi] given as a 1-d array
    if row.shape[0] != 1:
        raise ValueError(
            f"{name} must be one fingerprint, got {row.shape[0]}; "
            "use hamming_many or hamming_pairwise for arrays"
        )
    return row


def _pair_words(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Widen 64-bit operands to the other's width (a 64-bit int is a 128-bit one with zero top)."""
    words = max(a.shape[1], b.shape[1])
    pad = lambda x: x if x.shape[1] == words else np.pad(x, ((0, 0), (0, words - x.shape[1])))  # noqa: E731
    return pad(a), pad(b)


def hamming(a: int | np.ndarray, b: int | np.ndarray) -> int:
    """Number of differing bits between two fingerprints: ints, uint64 scalars, or 128-bit rows
    ``[lo, hi]``."""
    x, y = _pair_words(_as_one_fingerprint(a, "a"), _as_one_fingerprint(b, "b"))
    return int(np.bitwise_count(x ^ y).sum())


def hamming_many(fingerprints: np.ndarray, query: int | np.ndarray) -> np.ndarray:
    """Distance from each fingerprint to ``query``: int64, shape (n,)."""
    fps, q = _pair_words(_as_fingerprints(fingerprints, "fingerprints"), _as_one_fingerprint(query, "query"))
    return np.bitwise_count(fps ^ q).sum(axis=1, dtype=np.int64)


def hamming_pairwise(a: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """Distances between every row of ``a`` and every row of ``b`` (default ``a``): int64,
    shape (len(a), len(b))."""
    x = _as_fingerprints(a, "a")
    y = x if b is None else _as_fingerprints(b, "b")
    x, y = _pair_words(x, y)
    return np.bitwise_count(x[:, None, :] ^ y[None, :, :]).sum(axis=2, dtype=np.int64)


def _check_bits(bits: int) -> None:
    if bits not in _BITS:
        raise ValueError(f"bits={bits!r} must be 64 or 128")


def estimate_cosine(distance: float | np.ndarray, bits: int = 64) -> float | np.ndarray:
    """Cosine similarity estimated from a Hamming distance: cos(pi * distance / bits)."""
    _check_bits(bits)
    d = np.asarray(distance, dtype=np.float64)
    if ((d < 0) | (d > bits)).any():
        raise ValueError(f"distance must be in [0, {bits}], got {distance!r}")
    s = np.cos(np.pi * d / bits)
    return float(s) if s.ndim == 0 else s


def distance_for_cosine(similarity: float, bits: int = 64) -> int:
    """The largest distance whose estimated cosine is still >= ``similarity``: the radius to
    search for documents at least that similar. ``distance_for_cosine(0.95)`` is 6 on 64 bits."""
    _check_bits(bits)
    if not -1.0 <= similarity <= 1.0:
        raise ValueError(f"similarity={similarity!r} must be in [-1, 1]")
    # Start one above the closed form and step down, so float error in acos cannot cost a bit.
    d = min(bits, math.floor(bits * math.acos(similarity) / math.pi) + 1)
    while d > 0 and math.cos(math.pi * d / bits) < similarity - 1e-12:
        d -= 1
    return d
