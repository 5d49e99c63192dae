"""Which documents a dedup keeps, in bounded memory however skewed the corpus.

Identical fingerprints are collapsed first: a crawl's million copies of one page are one entry,
whose members follow its *leader* (the member first in ``--keep`` order). Then, over the
distinct fingerprints ranked by their leaders:

- ``"greedy"`` (the default) is Manku's online rule run in ``--keep`` order: a fingerprint is
  kept unless a kept one ranked before it lies within the radius, and a removed one names that
  kept one as its representative. Every removed document has a kept near-duplicate. Where
  the self-join is cheap (its candidate pairs, counted from the index's key groups, are few)
  the rule runs over its pairs; where a near-identical family would make it quadratic, no
  pair list is built: only the kept fingerprints are searched for, in batches whose size
  adapts so that a batch's matches stay bounded (one search of a family of 100,000 finds it
  at once; random fingerprints are searched 65,536 at a time).
- ``"components"``: connected components of the near-duplicate pairs between distinct
  fingerprints (union-find), each represented by its best member. Components chain: a removed
  document may lie far from the kept one.

Collapsing and components are the index's (``index/components.py``: one rule with
:meth:`HammingIndex.clusters` and :func:`neardup.clusters`); the greedy rule is here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._kernels.pair_graph import KEPT, REMOVED, keep_in_order
from ..index.components import Accept
from ..index.hamming_index import HammingIndex

_MATCH_BUDGET = 1 << 22
"""Matches a search batch aims to stay under (two int64 arrays: 64 MiB)."""
_MAX_BATCH = 1 << 16
_JOIN_BUDGET = 1 << 24
"""Candidate pairs under which the rule runs over a self-join instead of searches: a join of
1M random fingerprints examines a few million and takes tens of milliseconds, a million
searches a few seconds."""
HELD_PAIRS = _JOIN_BUDGET
"""Pairs a dedup's join holds for the rule before it turns to searches (``bounded.py``)."""


@dataclass
class Collapsed:
    """The compared documents of a dedup, their identical fingerprints collapsed."""

    compared: np.ndarray
    """int64, shape (c,): the positions of the documents compared with others."""
    rank: np.ndarray
    """int64, shape (c,): the rank of each one's fingerprint among the distinct ones."""
    leader: np.ndarray
    """int64, shape (m,): the position of each rank's best member (first in ``--keep`` order)."""


@dataclass
class Greedy:
    """The outcome of :func:`keep_greedy`, one entry per rank."""

    kept: np.ndarray
    """bool: kept."""
    representative: np.ndarray
    """int64: the rank of the kept fingerprint within the radius that removed each one (itself
    when kept, -1 when blocked)."""
    distance: np.ndarray
    """int64: the Hamming distance to it."""
    linked: np.ndarray
    """bool: has another fingerprint within the radius (a pair passing ``accept`` or not);
    false where the rule never looked (blocked ranks nothing kept was near)."""


def keep_greedy(
    index: HammingIndex,
    distinct: np.ndarray,
    blocked: np.ndarray | None = None,
    on_progress: Callable[[int], None] | None = None,
    accept: Accept | None = None,
    lonely: np.ndarray | None = None,
) -> Greedy:
    """Manku's rule over ``distinct`` fingerprints ranked best first (from
    ``components.collapse``, stored in ``index`` by ``hamming_index.distinct_index``).

    ``blocked``, bool shape (m,), marks fingerprints removed beforehand (near an index of what
    was seen): never kept, they remove nothing. ``accept`` keeps only the pairs it passes as
    near-duplicates (then every pair it is asked about has two ``linked`` ranks of a run
    without it). ``lonely``, bool shape (m,), marks fingerprints known to have no other within
    the radius: kept without a search. Where the self-join is cheap (its candidate pairs,
    counted from the tables first, are few) the rule runs over its pairs; else only the
    fingerprints not yet removed are searched for, in batches. ``on_progress`` is told how many
    ranks are decided.
    """
    m = distinct.shape[0]
    join_work = index.join_candidates()
    if join_work is not None and join_work <= _JOIN_BUDGET:  # no family makes the join quadratic
        return greedy_over_pairs(m, index.pairs(), blocked, accept, on_progress)
    state, representative, distance = undecided(m, blocked)
    linked = np.zeros(m, dtype=bool)
    if lonely is not None:
        state[lonely & (state == 0)] = KEPT
    start, size = 0, 1
    while start < m:
        span = np.arange(start, min(m, start + max(4 * size, 4096)), dtype=np.int64)
        candidates = span[state[span] == 0]
        if candidates.size > size:
            candidates = candidates[:size]
            start = int(candidates[-1]) + 1
        else:
            start = int(span[-1]) + 1
        if candidates.size == 0:
            continue
        offsets, found, found_distance = index.query_batch(distinct[candidates])
        owner = np.repeat(np.arange(candidates.size, dtype=np.int64), np.diff(offsets))
        others = found != candidates[owner]  # every candidate finds itself
        linked[found[others]] = True
        linked[candidates[owner[others]]] = True
        if accept is not None:
            # Only pairs with an undecided later rank can remove anything: ask about those.
            asked = others & (found > candidates[owner])
            asked[asked] = state[found[asked]] == 0
            good = np.zeros(found.size, dtype=bool)
            good[asked] = accept(candidates[owner[asked]], found[asked], found_distance[asked])
            found, found_distance = found[good], found_distance[good]
            offsets = np.zeros(candidates.size + 1, dtype=np.int64)
            np.cumsum(np.bincount(owner[good], minlength=candidates.size), out=offsets[1:])
        keep_in_order(candidates, offsets, found, found_distance, state, representative, distance)
        if on_progress is not None:
            on_progress(start)
        # Grow the batch while its matches are few, shrink it when a family made them many.
        if found.size * 2 < _MATCH_BUDGET:
            size = min(size * 2, _MAX_BATCH)
        elif found.size > _MATCH_BUDGET:
            size = max(size // 2, 1)
    return Greedy(state == KEPT, representative, distance, linked)


def greedy_over_pairs(
    m: int,
    pairs: tuple[np.ndarray, np.ndarray, np.ndarray],
    blocked: np.ndarray | None = None,
    accept: Accept | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> Greedy:
    """:func:`keep_greedy` over ranks ``0 .. m - 1`` from every pair of them within the radius
    (``(first, second, distance)``), held; ``accept`` asked about each."""
    first, second, pair_distance = pairs
    linked = np.zeros(m, dtype=bool)
    linked[first] = linked[second] = True
    if accept is not None:
        good = accept(first, second, pair_distance)
        first, second, pair_distance = first[good], second[good], pair_distance[good]
    if on_progress is not None:
        on_progress(m)
    return Greedy(*keep_greedy_pairs(m, first, second, pair_distance, blocked), linked)


def keep_greedy_pairs(
    m: int,
    first: np.ndarray,
    second: np.ndarray,
    pair_distance: np.ndarray,
    blocked: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Manku's rule over ranks ``0 .. m - 1`` where only the given pairs of ranks (verified
    ones, say) count as near-duplicates; ``blocked`` as in :func:`keep_greedy`. Returns
    ``(kept, representative, distance)`` as :class:`Greedy` has them."""
    ends = np.concatenate([first, second])
    others = np.concatenate([second, first])
    order = np.argsort(ends, kind="stable")
    offsets = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(ends, minlength=m), out=offsets[1:])
    state, representative, distance = undecided(m, blocked)
    keep_in_order(
        np.arange(m, dtype=np.int64),
        offsets,
        np.ascontiguousarray(others[order], dtype=np.int64),
        np.ascontiguousarray(np.concatenate([pair_distance, pair_distance])[order], dtype=np.int64),
        state,
        representative,
        distance,
    )
    return state == KEPT, representative, distance


def undecided(m: int, blocked: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rule's starting state for ``m`` ranks: (int8 state, int64 representative, int64
    distance), every rank undecided and its own representative but the ``blocked`` ones,
    removed with no representative (-1)."""
    state = np.zeros(m, dtype=np.int8)
    representative = np.arange(m, dtype=np.int64)
    if blocked is not None:
        state[blocked] = REMOVED
        representative[blocked] = -1
    return state, representative, np.zeros(m, dtype=np.int64)
