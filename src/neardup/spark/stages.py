"""The decision past the driver, as stages that map one to one onto the local engine's steps
(``decision/steps.py``): the rows in ``keep`` order (``ranked``: ``priority``), identical
fingerprints collapsed onto their leaders (``leaders``: ``components.collapse``), the pairs
of leaders to decide on (``candidates``: the permuted tables' join, or MinHash buckets under
``jaccard``), each checked on its texts (``checked``: ``Verification``), the keep rule and
each row's cluster (``outcome``: ``choose_representatives``), and the pairs that rebuild the
clusters (``spread_pairs``: ``near_pairs``). ``dedup.decide`` runs them, each a named step."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.window import Window

from ..decision.options import DedupOptions
from ..decision.verify import Verification
from ..index.hamming_index import HammingIndex
from .against import NEAR, ship, with_near
from .buckets import bucket_pairs
from .checks import SIMILARITY, with_similarity
from .facts import POSITION, Texts, band_columns, broadcast_while_few
from .fingerprints import fingerprint_columns
from .join import near_duplicate_pairs, pair_columns
from .keep_rules import representatives


@dataclass
class Ranked:
    """The rows in ``keep`` order (``steps.priority``): ``ranked`` every row with its rank,
    fingerprint, ids and band keys; ``compared`` those compared with others."""

    facts: DataFrame
    ranked: DataFrame
    compared: DataFrame
    fp: list[str]
    ids: list[str]
    bands: list[str]


def ranked(facts: DataFrame, options: DedupOptions, id_col: str | None) -> Ranked:
    if options.keep == "first":  # input order: the position is the rank
        ranked = facts.withColumn("_rank", F.col(POSITION))
    else:
        order = {
            "longest": [F.col("_length").desc(), F.col(POSITION)],
            "shortest": [F.col("_length"), F.col(POSITION)],
            "lowest-id": [F.col(id_col or POSITION), F.col(POSITION)],
        }[options.keep]
        ranked = (
            facts.orderBy(*order)
            .withColumn("_rank", F.monotonically_increasing_id())  # increasing in keep order
            .localCheckpoint()
        )
    fp, ids, bands = (
        fingerprint_columns(options.config),
        [id_col] if id_col else [],
        band_columns(options.bands),
    )
    ranked = ranked.select(POSITION, "_rank", "_featureless", *fp, *ids, *bands)
    compared = ranked if options.featureless == "compare" else ranked.where(~F.col("_featureless"))
    return Ranked(facts, ranked, compared, fp, ids, bands)


@dataclass
class Led:
    """Identical fingerprints collapsed (``components.collapse``): each distinct one's
    ``leaders`` (its first row in keep order, and where it is; with ``NEAR`` under
    ``against``), and the ``copies``, each with its leader."""

    leaders: DataFrame
    copies: DataFrame
    ranked: Ranked
    near: bool


def leaders(rows: Ranked, options: DedupOptions, against: HammingIndex | None) -> Led:
    fp = rows.fp
    # Each row meets its fingerprint's leader (its first row in keep order, and where it is)
    # in one shuffle of the rows: a window, which spills a page copied a million times.
    first = F.min(F.struct("_rank", POSITION)).over(Window.partitionBy(*fp))
    placed = (
        rows.compared.select(POSITION, "_rank", *fp, first.alias("_first"))
        .select(
            POSITION,
            "_rank",
            *fp,
            F.col("_first._rank").alias("leader"),
            F.col(f"_first.{POSITION}").alias("leader_at"),
        )
        .localCheckpoint()
    )
    leaders = placed.where(F.col("_rank") == F.col("leader")).select(*fp, "leader", "leader_at")
    if against is not None:  # whether each leader's fingerprint is near the index
        source = options.against if options.against is not None else against
        leaders = with_near(
            leaders, fp, ship(rows.facts.sparkSession, source), options.radius
        ).localCheckpoint()
    copies = placed.where(F.col("_rank") != F.col("leader")).select(POSITION, "_rank", "leader", "leader_at")
    return Led(leaders, copies, rows, against is not None)


def candidates(led: Led, options: DedupOptions, group_limit: int) -> DataFrame:
    """The pairs of leaders to decide on (``steps.near_pairs``): within the radius by the
    permuted tables' join, or sharing a MinHash band key under ``jaccard``; as ranks ``u``,
    ``v`` and positions ``u_at``, ``v_at``, with their distance."""
    fp, leaders = led.ranked.fp, led.leaders
    if options.banding is not None:
        edges = bucket_pairs(
            _leaders_keys(led.ranked.compared, led.copies, led.ranked.bands), leaders, fp, group_limit
        )
    else:
        edges = near_duplicate_pairs(
            leaders.select(*fp), options.radius, group_limit=group_limit, distinct=True
        )
        for end, node in (("a", "u"), ("b", "v")):  # each end of a pair to its leader's rank
            names = pair_columns(end, len(fp))
            renamed = leaders.select(
                *(F.col(w).alias(n) for w, n in zip(fp, names)),
                F.col("leader").alias(node),
                F.col("leader_at").alias(f"{node}_at"),
            )
            edges = edges.join(renamed, names)
        edges = edges.select("u", "v", "u_at", "v_at", F.col("distance").cast("long"))
    if led.near and options.cluster == "greedy":  # a leader near the index is never kept, and removes nothing
        blocked = leaders.where(F.col(NEAR)).select("leader")
        for node in ("u", "v"):
            edges = edges.join(blocked.withColumnRenamed("leader", node), node, "left_anti")
    return edges


def checked(
    candidates: DataFrame, led: Led, texts: Texts, verify: Verification
) -> tuple[DataFrame, Led, int, int]:
    """The ``candidates`` (checkpointed) and each copy's link to its leader checked on their
    texts (``Verification``): the pairs that pass, the copies that pass (a copy whose text fails
    its leader's check is its own representative), and the counts checked and passed."""
    # A copy is checked against its leader as one more pair: one pass over the texts.
    to_leaders = led.copies.select(
        F.col("leader").alias("u"),
        F.col("_rank").alias("v"),
        F.col("leader_at").alias("u_at"),
        F.col(POSITION).alias("v_at"),
        F.lit(0).cast("long").alias("distance"),
    )
    both = candidates.withColumn("_copy", F.lit(False)).unionByName(
        to_leaders.withColumn("_copy", F.lit(True))
    )
    judged = with_similarity(both, texts, "u_at", "v_at", verify).localCheckpoint()
    passed = F.col(SIMILARITY) >= verify.threshold
    edges = judged.where(~F.col("_copy") & passed).drop("_copy")
    copies = judged.where(F.col("_copy") & passed).select(
        F.col("v_at").alias(POSITION),
        F.col("u").alias("leader"),
        F.col("u_at").alias("leader_at"),
        SIMILARITY,
    )
    return edges, Led(led.leaders, copies, led.ranked, led.near), candidates.count(), edges.count()


@dataclass
class Outcome:
    """Each row's ``cluster`` and whether it is ``kept`` (``rows``, checkpointed), and the
    counts of the summary."""

    rows: DataFrame
    kept: int
    clusters: int
    cleared: int


def outcome(rows: Ranked, led: Led, edges: DataFrame, options: DedupOptions, local_limit: int) -> Outcome:
    """The keep rule over the pairs (``steps.choose_representatives``), then each row's
    cluster and whether it is kept."""
    chosen = representatives(edges.select("u", "v"), options.cluster, local_limit=local_limit)
    moved = _moved(led.leaders, led.copies, chosen)
    moved_rows = moved.count()
    drop = options.featureless == "drop"
    # Every row not moved is its own representative: the rows are never shuffled to learn it.
    decided = (
        rows.ranked.join(broadcast_while_few(moved, moved_rows), POSITION, "left")
        .select(
            POSITION,
            *rows.fp,
            F.coalesce("cluster", "_rank").alias("cluster"),
            (F.col("cluster").isNull() & (~F.col("_featureless") if drop else F.lit(True))).alias("kept"),
            *rows.ids,
        )
        .localCheckpoint()
    )
    cleared = 0
    if led.near:  # the clusters of documents near the index keep nothing
        decided = _cleared(decided, rows.compared, led.leaders, rows.fp).localCheckpoint()
        cleared = decided.where(F.col("_cleared")).count()
        decided = decided.drop("_cleared")
    kept = decided.where(F.col("kept")).count()
    clusters = moved.select("cluster").distinct().count()  # a cluster of several has a moved row
    return Outcome(decided, kept, clusters, cleared)


def spread_pairs(
    edges: DataFrame, led: Led, facts: DataFrame, id_col: str | None, verify: Verification | None
) -> DataFrame:
    """The pairs that rebuild the clusters (``steps.near_pairs``), as positions or ids:
    between leaders, and each copy to its leader."""
    scored = [F.col(SIMILARITY)] if verify is not None else []
    between = edges.select(F.col("u_at").alias("a"), F.col("v_at").alias("b"), "distance", *scored)
    links = led.copies.select(
        F.col("leader_at").alias("a"),
        F.col(POSITION).alias("b"),
        F.lit(0).cast("long").alias("distance"),
        *scored,
    )
    pairs = between.unionByName(links)
    if id_col is None:
        return pairs
    id_of = facts.select(POSITION, id_col)
    for end in ("a", "b"):
        pairs = (
            pairs.join(id_of.withColumnRenamed(POSITION, end).withColumnRenamed(id_col, f"{end}_id"), end)
            .drop(end)
            .withColumnRenamed(f"{end}_id", end)
        )
    return pairs.select("a", "b", "distance", *scored)


def _leaders_keys(compared: DataFrame, copies: DataFrame, bands: list[str]) -> DataFrame:
    """``leader`` (a rank) and the band key columns ``bands`` of each leader: the rows of
    ``compared`` that are not among ``copies`` (their positions broadcast while they are
    few). The keys are read where the rows lie: carried through the leaders' grouping they
    would be shuffled once more, the widest part of a row. A copy must not join the buckets:
    its pairs would be dropped later, but a page copied a million times would make a bucket
    of a million."""
    others = broadcast_while_few(copies.select(POSITION), copies.count())
    return compared.join(others, POSITION, "left_anti").select(F.col("_rank").alias("leader"), *bands)


def _moved(leaders: DataFrame, copies: DataFrame, chosen: DataFrame) -> DataFrame:
    """``POSITION`` and ``cluster`` (a representative's rank) of the rows whose representative
    is another row, checkpointed: the leaders the keep rule gave another representative
    (``chosen``: ``node``, ``representative``), and the ``copies`` (``POSITION``, ``leader``;
    those that passed their leader's check) with their leader's. ``chosen`` is broadcast
    while it is few, so the leaders are read where they lie."""
    chosen = chosen.where(F.col("node") != F.col("representative")).localCheckpoint()
    few = broadcast_while_few(chosen, chosen.count())
    of_leaders = leaders.join(few, F.col("leader") == F.col("node")).select(
        F.col("leader_at").alias(POSITION), F.col("representative").alias("cluster")
    )
    of_copies = copies.join(few, F.col("leader") == F.col("node"), "left").select(
        POSITION, F.coalesce("representative", "leader").alias("cluster")
    )
    return of_leaders.unionByName(of_copies).localCheckpoint()


def _cleared(outcome: DataFrame, compared: DataFrame, leaders: DataFrame, fp: list[str]) -> DataFrame:
    """``outcome`` with no row kept in a cluster that holds a row near the ``against`` index
    (its fingerprint's leader says so: ``NEAR``), and ``_cleared``: the rows that would have
    been kept."""
    nearby = leaders.where(F.col(NEAR)).select(*fp)
    near_rows = compared.join(broadcast_while_few(nearby, nearby.count()), fp, "left_semi").select(POSITION)
    near_rows = near_rows.localCheckpoint()
    hit = outcome.join(broadcast_while_few(near_rows, near_rows.count()), POSITION, "left_semi")
    hit = hit.select("cluster").distinct().withColumn("_hit", F.lit(True)).localCheckpoint()
    return outcome.join(broadcast_while_few(hit, hit.count()), "cluster", "left").select(
        *(c for c in outcome.columns if c != "kept"),
        (F.col("kept") & F.col("_hit").isNull()).alias("kept"),
        (F.col("kept") & F.col("_hit").isNotNull()).alias("_cleared"),
    )
