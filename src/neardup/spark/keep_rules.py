"""Which fingerprints are kept, on Spark: the local engine's two rules over a pair graph whose
nodes are ranks (a node's rank orders it in ``--keep`` order: the lower, the better).

- ``"greedy"`` (the default, Manku's rule): a node is kept unless a kept node ranked before it
  shares a pair with it; a removed node's representative is the first such kept node. This is
  the lexicographically first maximal independent set of the graph, computed in rounds
  (Blelloch, Fineman & Shun, SPAA 2012): every undecided node whose earlier neighbours are all
  removed is kept, and its undecided neighbours are removed.
- ``"components"``: connected components, each represented by its lowest rank, by alternating
  large-star and small-star rounds (Kiveris, Lattanzi, Mirrokni, Rastogi & Vassilvitskii,
  SoCC 2014), which converge in O(log^2 n) rounds; no external jar.

Rounds run on Spark while the graph is large; once the edges left fit ``local_limit`` they are
collected and the rest is done by the local engine's compiled rules (the same answer, without a
long tail of nearly empty rounds). Each round's result is checkpointed locally, so plans stay
short however many rounds a graph needs.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .._errors import ConfigError
from .._kernels.pair_graph import components as local_components
from ..decision.choices import CLUSTERINGS
from ..decision.selection import keep_greedy_pairs

LOCAL_LIMIT = 5_000_000
"""Edges under which the rest of a graph is collected and finished on the driver (three longs
an edge: 120 MB)."""


def representatives(
    pairs: DataFrame, cluster: str = "greedy", *, local_limit: int = LOCAL_LIMIT
) -> DataFrame:
    """The representative of every node in some pair of ``pairs`` (columns ``u``, ``v``: long
    ranks, a pair once in either direction), under ``cluster`` (module docstring). Returns
    columns ``node`` and ``representative`` (the node itself when kept); a node in no pair is
    its own representative, and is not listed."""
    if cluster not in CLUSTERINGS:
        raise ConfigError(f"cluster={cluster!r} is not allowed; choose one of {', '.join(CLUSTERINGS)}")
    edges = (
        pairs.select(F.least("u", "v").alias("u"), F.greatest("u", "v").alias("v")).where("u != v").distinct()
    )
    if cluster == "components":
        return _components(edges, local_limit)
    return _greedy(edges, local_limit)


def _components(edges: DataFrame, local_limit: int) -> DataFrame:
    spark = edges.sparkSession
    edges = edges.localCheckpoint()
    signature = None
    while True:
        count = edges.count()
        if count <= local_limit:
            return _components_on_driver(spark, edges)
        edges = _small_star(_large_star(edges)).localCheckpoint()
        now = tuple(edges.agg(F.count(F.lit(1)), F.bit_xor(F.xxhash64("u", "v"))).collect()[0])
        if signature == now:  # a fixed point: every component is a star on its lowest node
            break
        signature = now
    return (
        edges.groupBy(F.col("v").alias("node"))
        .agg(F.min("u").alias("representative"))
        .union(edges.select(F.col("u").alias("node"), F.col("u").alias("representative")).distinct())
    )


def _large_star(edges: DataFrame) -> DataFrame:
    """Every node links its larger neighbours to the smallest of its closed neighbourhood."""
    both = edges.union(edges.select(F.col("v").alias("u"), F.col("u").alias("v")))
    smallest = both.groupBy("u").agg(F.least(F.min("v"), F.col("u")).alias("m"))
    return (
        both.join(smallest, "u")
        .where(F.col("v") > F.col("u"))
        .select(F.least("v", "m").alias("u"), F.greatest("v", "m").alias("v"))
        .where("u != v")
        .distinct()
    )


def _small_star(edges: DataFrame) -> DataFrame:
    """Every node links itself and its smaller neighbours to the smallest of them."""
    both = edges.union(edges.select(F.col("v").alias("u"), F.col("u").alias("v")))
    smaller = both.where(F.col("v") < F.col("u"))
    smallest = smaller.groupBy("u").agg(F.min("v").alias("m"))
    linked = smaller.join(smallest, "u").select(F.col("v").alias("a"), "m")
    own = smallest.select(F.col("u").alias("a"), "m")
    return (
        linked.union(own)
        .select(F.least("a", "m").alias("u"), F.greatest("a", "m").alias("v"))
        .where("u != v")
        .distinct()
    )


def _components_on_driver(spark: SparkSession, edges: DataFrame) -> DataFrame:
    nodes, first, second = _collect(edges)
    roots = local_components(first, second, nodes.size)
    return _frame(spark, {"node": nodes, "representative": nodes[roots]})


def _greedy(edges: DataFrame, local_limit: int) -> DataFrame:
    """Removed nodes in rounds; every other node is kept; then each removed node's first kept
    neighbour."""
    spark = edges.sparkSession
    original = edges.localCheckpoint()
    live = original  # edges whose two ends are undecided
    removed_parts = []
    while True:
        if live.count() <= local_limit:
            removed_parts.append(_removed_on_driver(spark, live))
            break
        # Kept this round: undecided nodes with no undecided earlier neighbour. (A node whose
        # live edges are all gone is never removed: kept in the end.)
        later = live.select(F.col("v").alias("node")).distinct()
        kept = live.select(F.col("u").alias("node")).distinct().join(later, "node", "left_anti")
        removed = (
            live.join(kept.withColumnRenamed("node", "u"), "u").select(F.col("v").alias("node")).distinct()
        )
        removed = removed.localCheckpoint()
        decided = kept.union(removed)
        live = (
            live.join(decided.withColumnRenamed("node", "u"), "u", "left_anti")
            .join(decided.withColumnRenamed("node", "v"), "v", "left_anti")
            .localCheckpoint()
        )
        removed_parts.append(removed)
    removed_nodes = removed_parts[0]
    for part in removed_parts[1:]:
        removed_nodes = removed_nodes.union(part)
    nodes = (
        original.select(F.col("u").alias("node")).union(original.select(F.col("v").alias("node"))).distinct()
    )
    kept_nodes = nodes.join(removed_nodes, "node", "left_anti").localCheckpoint()
    # A removed node's representative: its lowest-ranked kept neighbour (ranked before it).
    nearest = (
        original.join(kept_nodes.withColumnRenamed("node", "u"), "u")
        .join(kept_nodes.withColumnRenamed("node", "v"), "v", "left_anti")
        .groupBy(F.col("v").alias("node"))
        .agg(F.min("u").alias("representative"))
    )
    return kept_nodes.select("node", F.col("node").alias("representative")).union(nearest)


def _removed_on_driver(spark: SparkSession, live: DataFrame) -> DataFrame:
    """The removed nodes among the undecided ones (those in ``live``), by the local rule."""
    nodes, first, second = _collect(live)
    kept, _, _ = keep_greedy_pairs(nodes.size, first, second, np.zeros(first.size, dtype=np.int64))
    return _frame(spark, {"node": nodes[~kept]})


def _collect(edges: DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The edges on the driver, their nodes renumbered 0.. in rank order: (nodes, first, second)."""
    table = edges.toArrow()
    u = table.column("u").to_numpy().astype(np.int64)
    v = table.column("v").to_numpy().astype(np.int64)
    nodes = np.unique(np.concatenate([u, v]))
    return nodes, np.searchsorted(nodes, u), np.searchsorted(nodes, v)


def _frame(spark: SparkSession, columns: dict[str, np.ndarray]) -> DataFrame:
    """A DataFrame of long columns from the driver's arrays (an empty one keeps its types)."""
    schema = ", ".join(f"{name} long" for name in columns)
    return spark.createDataFrame(pa.table({n: pa.array(c, pa.int64()) for n, c in columns.items()}), schema)
