""":func:`neardup.spark.dedup.decide` on the driver, for facts few enough to collect.

A distributed decision costs Spark about thirty jobs (ranks, copies, the join, rounds of the
rule, the outcome), each a fixed fraction of a second, whatever the data: on half a million
rows they took 13 of 36 seconds. Below ``DRIVER_ROWS`` the facts (a few longs a row) are
collected instead and the local engine's own steps decide (``pipeline.selection``: copies
collapsed, the distinct fingerprints joined by a :class:`~neardup.HammingIndex`, Manku's rule
or components), with the same answer; the outcome goes back as a DataFrame. The texts never
come to the driver.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..pipeline.selection import collapse, component_roots, distinct_index, keep_greedy
from .facts import POSITION

DRIVER_ROWS = 2_000_000
"""Rows of facts decided on the driver (about 40 bytes each collected, plus the index)."""


def decide_on_driver(
    facts: pa.Table,
    fp: list[str],
    *,
    max_distance: int,
    keep: str,
    id_col: str | None,
    cluster: str,
    featureless: str,
    with_pairs: bool,
) -> tuple[pa.Table, pa.Table | None]:
    """(the outcome, the pairs or None) of ``decide`` from the collected ``facts``, as the
    distributed steps give them (``cluster`` values: the representative's rank in ``keep``
    order, the position itself for ``"first"``)."""
    n = facts.num_rows
    position = facts.column(POSITION).to_numpy()
    words = [facts.column(w).to_numpy().view(np.uint64) for w in fp]
    fps = words[0] if len(words) == 1 else np.ascontiguousarray(np.stack(words, axis=1))
    no_features = facts.column("_featureless").to_numpy(zero_copy_only=False)
    order = pc.sort_indices(facts, sort_keys=_sort_keys(keep, id_col)).to_numpy().astype(np.int64)
    rank = position.copy()
    if keep != "first":
        rank[order] = np.arange(n, dtype=np.int64)
    compared = np.ones(n, dtype=bool) if featureless == "compare" else ~no_features
    rows = np.flatnonzero(compared)  # the compared rows; below, indices into them
    cluster_of = rank.copy()
    first = second = distance = leader_row = np.zeros(0, dtype=np.int64)
    copies = np.zeros(0, dtype=np.int64)
    if rows.size:
        at = np.cumsum(compared) - 1
        distinct, by_rank, leader = collapse(fps[rows], at[order[compared[order]]])
        index = distinct_index(distinct, 64 * len(fp), max_distance)
        if cluster == "greedy":
            chosen = keep_greedy(index, distinct).representative
        else:
            chosen = component_roots(index).roots
        cluster_of[rows] = rank[rows[leader[chosen[by_rank]]]]
        if with_pairs:
            first, second, distance = index.pairs()
            leader_row = rows[leader]
            copies = np.flatnonzero(leader_row[by_rank] != rows)  # copies, as indices into rows
    kept = cluster_of == rank
    if featureless == "drop":
        kept &= ~no_features
    outcome = pa.table(
        {
            POSITION: position,
            **{w: facts.column(w) for w in fp},
            "cluster": cluster_of,
            "kept": kept,
            **({id_col: facts.column(id_col)} if id_col else {}),
        }
    )
    if not with_pairs:
        return outcome, None
    # Between leaders, then each copy to its leader (distance 0), as the local --pairs has them.
    a = np.concatenate([leader_row[first], leader_row[by_rank[copies]] if rows.size else copies])
    b = np.concatenate([leader_row[second], rows[copies] if rows.size else copies])
    names = facts.column(id_col) if id_col else pa.array(position)
    pairs = pa.table(
        {
            "a": names.take(pa.array(a)),
            "b": names.take(pa.array(b)),
            "distance": np.concatenate([distance, np.zeros(copies.size, dtype=np.int64)]),
        }
    )
    return outcome, pairs


def _sort_keys(keep: str, id_col: str | None) -> list[tuple[str, str]]:
    """``keep`` order as pyarrow's sort keys (ties in input order)."""
    first = {
        "first": [],
        "longest": [("_length", "descending")],
        "shortest": [("_length", "ascending")],
        "lowest-id": [(id_col or POSITION, "ascending")],
    }[keep]
    return [*first, (POSITION, "ascending")]
