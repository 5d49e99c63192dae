"""Clusters as connected components, copies collapsed first: the one rule behind
:meth:`HammingIndex.clusters`, :func:`neardup.clusters` and dedup's ``--cluster components``.

Items are ranked best first. Identical fingerprints are collapsed into one entry
(:func:`collapse`), ranked by its best member, so a page copied a million times costs one entry
in the join. The pairs between ranks stream into a union-find (``_kernels/pair_graph.py``) a chunk
at a time, no pair list held, and each component's root is its lowest rank: the best member
represents its component, whatever the order of the pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._kernels.pair_graph import flatten, same_root, union_pairs

if TYPE_CHECKING:
    from .hamming_index import HammingIndex

Accept = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
"""Which pairs of ranks (first, second, distance) count as near-duplicates: bool, one per pair
(``--verify``'s similarity test). Without one, every pair within the radius counts."""


def collapse(fps: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Identical fingerprints as one entry each.

    Args:
        fps: uint64, shape (n,) or (n, 2).
        order: int64, shape (n,): positions, best first.

    Returns ``(distinct, rank, leader)``: the distinct fingerprints ranked by their best member
    (shape (m,) or (m, 2)); int64 shape (n,), the rank of each item's fingerprint; int64
    shape (m,), the position of each rank's best member.
    """
    ranked = fps[order]
    axis = None if ranked.ndim == 1 else 0  # rows of a 128-bit batch
    values, first, inverse = np.unique(ranked, axis=axis, return_index=True, return_inverse=True)
    by_leader = np.argsort(first, kind="stable")
    rank_of_value = np.empty(by_leader.size, dtype=np.int64)
    rank_of_value[by_leader] = np.arange(by_leader.size, dtype=np.int64)
    rank = np.empty(fps.shape[0], dtype=np.int64)
    rank[order] = rank_of_value[inverse.reshape(-1)]
    return values[by_leader], rank, order[first[by_leader]]


@dataclass
class Components:
    """The outcome of :func:`linked_roots`."""

    roots: np.ndarray
    """int64, shape (m,): the best (lowest) rank of each rank's connected component."""
    pairs: int
    """Pairs streamed through the union-find."""


def linked_roots(
    m: int,
    chunks: Iterable[tuple[np.ndarray, ...]],
    accept: Accept | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> Components:
    """Connected components of ranks ``0 .. m - 1`` linked by the pairs of ``chunks``, each
    ``(first, second)`` or ``(first, second, distance)`` int64 arrays, streamed into a
    union-find a chunk at a time. With ``accept`` (chunks then carry distances), only the pairs
    it passes link, and it is asked only about pairs whose ends are not linked yet (a pair
    inside a component adds nothing). ``on_progress`` is told how many pairs have streamed."""
    parent = np.arange(m, dtype=np.int64)
    streamed = 0
    for chunk in chunks:
        first, second = chunk[0], chunk[1]
        streamed += len(first)
        if accept is not None:
            apart = ~same_root(parent, first, second)
            first, second, distance = first[apart], second[apart], chunk[2][apart]
            good = accept(first, second, distance)
            first, second = first[good], second[good]
        union_pairs(parent, first, second)
        if on_progress is not None:
            on_progress(streamed)
    return Components(flatten(parent), streamed)


def component_roots(
    index: HammingIndex,
    accept: Accept | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> Components:
    """:func:`linked_roots` of the ranks stored in ``index`` (from ``hamming_index.distinct_index``) and
    the pairs of its self-join, streamed (:meth:`HammingIndex.iter_pairs`)."""
    return linked_roots(len(index), index.iter_pairs(), accept, on_progress)
