"""``dedup`` on Spark: the local job's choices (``--keep``, ``--cluster``, ``--featureless``)
over a DataFrame, with the same answer as :func:`neardup.dedup` on the same rows.

1. Each row gets its position in the input (``monotonically_increasing_id``: input order).
   :func:`decide` then works on a narrow table of *facts* (``facts.py``), computed once and
   checkpointed: the position, the fingerprint, the text's length in bytes, whether it has
   features (and the id); the texts go to Python and do not come back.
2. The rows are numbered in ``keep`` order: a row's *rank* (increasing, not dense; the
   position itself for ``keep="first"``, so no sort).
3. Copies collapse: each distinct fingerprint is led by its lowest rank.
4. :func:`near_duplicate_pairs` joins the distinct fingerprints (under ``jaccard``, the
   leaders sharing a MinHash band key are paired instead: ``buckets.py``); the pairs, as
   leader ranks, go to :func:`representatives` (Manku's rule or components), with a check
   (``verify``, ``cosine``, ``jaccard``) only those whose texts pass it (``checks.py``).
5. A leader follows its representative, a copy its leader's (unless its text fails its
   leader's check: then it is its own). Only the rows whose representative is another row
   are named (the leaders the rule moved, and the copies), and they meet the rows by
   position, broadcast while they are few: a row is kept when no one names it, its cluster
   is its representative's rank, and the rows are never shuffled to learn it.
6. The input rows meet the outcome (a few longs a row) by position, broadcast while it is
   small.

:func:`dedup_with_pairs` also gives the pairs that rebuild every cluster, as the local
``--pairs`` writes them: each pair of distinct fingerprints within the radius between their
leaders, and each copy's link to its leader (distance 0).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.window import Window

from .._errors import ConfigError
from ..decision.options import DedupOptions
from ..index.hamming_index import HammingIndex
from ..index.plan import MAX_DISTANCE
from .against import NEAR, ship, with_near
from .buckets import bucket_pairs
from .checks import SIMILARITY, with_similarity
from .driver import DRIVER_ROWS, decide_on_driver, driver_capacity
from .facts import (
    POSITION,
    Facts,
    Texts,
    band_columns,
    broadcast_while_few,
    text_facts,
    texts_by_position,
)
from .fingerprints import fingerprint_columns
from .join import GROUP_LIMIT, near_duplicate_pairs, pair_columns
from .keep_rules import LOCAL_LIMIT, representatives
from .splits import SplitFacts


def dedup(
    df: DataFrame, text_col: str = "text", options: DedupOptions | None = None, **keywords: Any
) -> DataFrame:
    """Every row of ``df`` with its fingerprint column(s) and two more: ``cluster``, the rank
    (in ``keep`` order) of the kept row it duplicates (its own when kept: rows of one cluster
    share it), and ``kept``. ``.where("kept")`` gives the deduplicated rows. The options are
    :func:`dedup_with_pairs`'s."""
    return _dedup(df, text_col, options, with_pairs=False, **keywords)[0]


def dedup_with_pairs(
    df: DataFrame, text_col: str = "text", options: DedupOptions | None = None, **keywords: Any
) -> tuple[DataFrame, DataFrame]:
    """(the rows of :func:`dedup`, the pairs that rebuild its clusters): the pairs have columns
    ``a``, ``b`` (``id_col``'s values, else the rows' positions in the input) and ``distance``:
    each pair of distinct fingerprints within the radius, between their leaders (the rows first
    in ``keep`` order), and each other copy's link to its leader (distance 0), as the local
    ``--pairs`` writes them.

    Args:
        df: the documents, one per row, text in ``text_col`` (no nulls).
        options: a :class:`~neardup.DedupOptions` (the radius, ``keep``, ``cluster``,
            ``featureless``, ``verify``, ``jaccard``, ``cosine``, the fingerprint ``config``),
            or its fields as keywords, as :func:`neardup.dedup` takes them. ``keep="lowest-id"``
            orders by ``id_col``.
        id_col: the column of the ids (optional).
        group_limit, local_limit: see :func:`near_duplicate_pairs` and
            :func:`neardup.spark.keep_rules.representatives`.
        driver_limit: up to this many rows, the decision is taken on the driver, by the local
            engine's steps (``driver.py``); the texts stay on the executors. By default
            ``DRIVER_ROWS`` (2M), or with a check of each pair (``verify``, ``cosine``,
            ``jaccard``) or ``against`` as many as its memory holds (``driver_capacity()``);
            past it the pairs are checked in the tasks (``checks.py``), and the tasks ask the
            ``against`` index, shipped to them (``against.py``).
    """
    rows, pairs = _dedup(df, text_col, options, with_pairs=True, **keywords)
    assert pairs is not None
    return rows, pairs


_ENGINE_KEYWORDS = ("id_col", "group_limit", "local_limit", "driver_limit")
"""What the Spark engine takes beside the options."""


def _dedup(
    df: DataFrame, text_col: str, options: DedupOptions | None, *, with_pairs: bool, **keywords: Any
) -> tuple[DataFrame, DataFrame | None]:
    engine = {name: keywords.pop(name) for name in _ENGINE_KEYWORDS if name in keywords}
    if options is None:
        options = DedupOptions.from_keywords(**keywords)
    elif keywords:
        raise ConfigError(f"pass options= or its fields as keywords, not both: {', '.join(sorted(keywords))}")
    id_col = engine.get("id_col")
    if clash := {*fingerprint_columns(options.config), "cluster", "kept"} & set(df.columns):
        raise ConfigError(
            f"the DataFrame has a column named {sorted(clash)[0]!r}, which dedup adds; rename it"
        )
    # Numbered once and kept: the rows are used twice, and any DataFrame may not give the
    # same order again (files do; the CLI reads them again instead).
    positioned = numbered(df).localCheckpoint(eager=False)
    if text_col not in df.columns:
        raise ConfigError(f"the DataFrame has no column {text_col!r}; its columns: {', '.join(df.columns)}")
    if id_col is not None and id_col not in df.columns:
        raise ConfigError(
            f"the DataFrame has no column {id_col!r} (id_col); its columns: {', '.join(df.columns)}"
        )
    decision = decide(
        text_facts(positioned, text_col, Facts(options.config, id_col, jaccard=options.bands)),
        options,
        texts=texts_by_position(positioned, text_col) if options.check else None,
        against=options.open_against(),
        with_pairs=with_pairs,
        **engine,
    )
    ids = [id_col] if id_col else []
    rows = rows_with(positioned, decision.outcome.drop(*ids), decision.documents)
    return rows.drop(POSITION), decision.pairs


def decide(
    facts: DataFrame | SplitFacts,
    options: DedupOptions,
    *,
    id_col: str | None = None,
    group_limit: int = GROUP_LIMIT,
    local_limit: int = LOCAL_LIMIT,
    driver_limit: int | None = None,
    hold: str | None = None,
    with_pairs: bool = True,
    every_pair: bool = False,
    texts: Texts | None = None,
    against: HammingIndex | None = None,
    timings: dict[str, float] | None = None,
) -> Decision:
    """The :class:`Decision` of :func:`dedup_with_pairs` from the rows' ``facts`` (see
    ``facts.py``; computed here once), as ``options`` decide: its outcome has a row per input
    row, with ``POSITION``, its fingerprint column(s), ``cluster`` and ``kept`` (and
    ``id_col``), and is checkpointed:
    a few longs a row, whatever the texts. ``timings``, when given, gets the seconds of each
    step: ``fingerprint``, then ``join`` (ranks, copies, pairs) and ``clusters``, or ``decide
    on the driver`` for facts of at most ``driver_limit`` rows (``driver.py``). The pairs are
    None without ``with_pairs``; with ``every_pair`` (on the driver only) they are every pair
    of rows, not just those that rebuild the clusters. Where the options check each pair
    (``verify``, ``cosine``, ``jaccard``), a pair counts only if its ``texts`` (fetched to the
    driver, or read by the tasks past it: ``checks.py``) are similar enough, and a copy whose
    text fails its leader's check stands alone: as :func:`neardup.dedup` decides. Under
    ``jaccard`` the candidates share a MinHash band key (``buckets.py``). With ``against``
    (the opened index of documents seen before; past the driver its file is shipped to the
    tasks, ``against.py``), a document near it is not kept, nor its cluster under components.
    ``driver_limit`` is by default ``DRIVER_ROWS``, or with any of those as many rows as the
    driver's memory holds; past it, ``every_pair`` and ``hold`` (what needs the outcome held
    by the driver) are refused, named in the error."""
    clock = _Clock(timings)
    config, k, keep, cluster, featureless = (
        options.config,
        options.radius,
        options.keep,
        options.cluster,
        options.featureless,
    )
    verify, banding = options.check, options.banding
    if keep == "lowest-id" and id_col is None:
        raise ConfigError('keep="lowest-id" needs id_col=, a column of the DataFrame')
    fp = fingerprint_columns(config)
    ids = [id_col] if id_col else []
    if verify is not None and texts is None:
        raise ConfigError("verify on Spark needs texts=, which fetches the texts it checks")
    # Kept for the steps that follow; counting them is what computes them.
    facts = facts.persist(StorageLevel.MEMORY_AND_DISK)
    rows = facts.count()
    clock.lap("fingerprint")
    every = "every pair" if every_pair else None
    on_driver = [str(name) for name in (every, hold) if name is not None]
    if driver_limit is None:  # a check's pairs (and an index's queries) are cheaper on the
        # driver while it holds them
        driver_limit = driver_capacity() if on_driver or verify or against is not None else DRIVER_ROWS
    if on_driver and rows > driver_limit:
        raise ConfigError(
            f"{' and '.join(on_driver)} run on the driver on Spark, up to {driver_limit:,} rows (its "
            f"memory); these are {rows:,}: run without, or on the local engine"
        )
    if rows <= driver_limit:
        decided = decide_on_driver(
            facts.toArrow(),
            fp,
            options,
            id_col=id_col,
            with_pairs=with_pairs,
            every_pair=every_pair,
            texts=texts,
            against=against,
        )
        table = decided.outcome
        _, sizes = np.unique(table.column("cluster").to_numpy(), return_counts=True)
        decision = Decision(
            computed=None,
            spread_pairs=None,
            documents=table.num_rows,
            kept=int(pc.sum(table.column("kept").cast("int64")).as_py() or 0),
            clusters=int(np.count_nonzero(sizes > 1)),
            checked_pairs=decided.checked_pairs,
            similar_pairs=decided.similar_pairs,
            against_matches=decided.against_matches,
            held=Held(lambda: facts.sparkSession, table, decided.pairs),
        )
        clock.lap("decide on the driver")
        return decision
    if banding is None and k > MAX_DISTANCE:
        asked = f"cosine={options.cosine}" if options.cosine is not None else f"max_distance={k}"
        raise ConfigError(
            f"{asked} searches {k} bits, and past the driver the Spark join serves up to "
            f"{MAX_DISTANCE} (permuted tables); decide on the driver (driver_limit, --driver-limit, "
            f"of at least {rows:,} rows, as its memory allows), ask for a smaller radius, or run "
            f"the local engine"
        )
    if isinstance(facts, SplitFacts):
        facts = facts.frame()
    if keep == "first":  # input order: the position is the rank
        ranked = facts.withColumn("_rank", F.col(POSITION))
    else:
        order = {
            "longest": [F.col("_length").desc(), F.col(POSITION)],
            "shortest": [F.col("_length"), F.col(POSITION)],
            "lowest-id": [F.col(id_col or POSITION), F.col(POSITION)],
        }[keep]
        ranked = (
            facts.orderBy(*order)
            .withColumn("_rank", F.monotonically_increasing_id())  # increasing in keep order
            .localCheckpoint()
        )
    bands = band_columns(options.bands)
    ranked = ranked.select(POSITION, "_rank", "_featureless", *fp, *ids, *bands)
    compared = ranked if featureless == "compare" else ranked.where(~F.col("_featureless"))
    # Each row meets its fingerprint's leader (its first row in keep order, and where it is)
    # in one shuffle of the rows: a window, which spills a page copied a million times.
    first = F.min(F.struct("_rank", POSITION)).over(Window.partitionBy(*fp))
    placed = (
        compared.select(POSITION, "_rank", *fp, first.alias("_first"))
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
    near = against is not None
    if against is not None:  # whether each leader's fingerprint is near the index
        source = options.against if options.against is not None else against
        leaders = with_near(leaders, fp, ship(facts.sparkSession, source), k).localCheckpoint()
    copies = placed.where(F.col("_rank") != F.col("leader")).select(POSITION, "_rank", "leader", "leader_at")
    if banding is not None:
        edges = bucket_pairs(_leaders_keys(compared, copies, bands), leaders, fp, group_limit)
    else:
        pairs = near_duplicate_pairs(leaders.select(*fp), k, group_limit=group_limit, distinct=True)
        edges = pairs
        for end, node in (("a", "u"), ("b", "v")):  # each end of a pair to its leader's rank
            names = pair_columns(end, len(fp))
            renamed = leaders.select(
                *(F.col(w).alias(n) for w, n in zip(fp, names)),
                F.col("leader").alias(node),
                F.col("leader_at").alias(f"{node}_at"),
            )
            edges = edges.join(renamed, names)
        edges = edges.select("u", "v", "u_at", "v_at", F.col("distance").cast("long"))
    if near and cluster == "greedy":  # a leader near the index is never kept, and removes nothing
        blocked = leaders.where(F.col(NEAR)).select("leader")
        for node in ("u", "v"):
            edges = edges.join(blocked.withColumnRenamed("leader", node), node, "left_anti")
    clock.lap("join")
    checked = similar = None
    if verify is not None:
        assert texts is not None
        candidates = edges.localCheckpoint()
        clock.lap("candidates")
        # A copy is checked against its leader as one more pair: one pass over the texts.
        to_leaders = copies.select(
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
        checked, similar = candidates.count(), edges.count()
        copies = judged.where(F.col("_copy") & passed).select(
            F.col("v_at").alias(POSITION),
            F.col("u").alias("leader"),
            F.col("u_at").alias("leader_at"),
            SIMILARITY,
        )  # a copy whose text fails its leader's check is its own representative
        clock.lap("check")
    chosen = representatives(edges.select("u", "v"), cluster, local_limit=local_limit)
    moved = _moved(leaders, copies, chosen)
    moved_rows = moved.count()
    # Every row not moved is its own representative: the rows are never shuffled to learn it.
    outcome = (
        ranked.join(broadcast_while_few(moved, moved_rows), POSITION, "left")
        .select(
            POSITION,
            *fp,
            F.coalesce("cluster", "_rank").alias("cluster"),
            (
                F.col("cluster").isNull() & (~F.col("_featureless") if featureless == "drop" else F.lit(True))
            ).alias("kept"),
            *ids,
        )
        .localCheckpoint()
    )
    cleared = 0
    if near:  # the clusters of documents near the index keep nothing
        outcome = _cleared(outcome, compared, leaders, fp).localCheckpoint()
        cleared = outcome.where(F.col("_cleared")).count()
        outcome = outcome.drop("_cleared")
    clock.lap("clusters")
    # A cluster of more than one row holds a moved row, which names it.
    clusters = moved.select("cluster").distinct().count()
    decision = Decision(
        computed=outcome,
        spread_pairs=None,
        documents=rows,
        kept=outcome.where(F.col("kept")).count(),
        clusters=clusters,
        checked_pairs=checked,
        similar_pairs=similar,
        against_matches=cleared,
    )
    if not with_pairs:
        return decision
    # The pairs, as positions: between leaders, and each copy to its leader.
    scored = [F.col(SIMILARITY)] if verify is not None else []
    between = edges.select(F.col("u_at").alias("a"), F.col("v_at").alias("b"), "distance", *scored)
    links = copies.select(
        F.col("leader_at").alias("a"),
        F.col(POSITION).alias("b"),
        F.lit(0).cast("long").alias("distance"),
        *scored,
    )
    pairs = between.unionByName(links)
    if id_col is not None:
        id_of = facts.select(POSITION, id_col)
        for end in ("a", "b"):
            pairs = (
                pairs.join(id_of.withColumnRenamed(POSITION, end).withColumnRenamed(id_col, f"{end}_id"), end)
                .drop(end)
                .withColumnRenamed(f"{end}_id", end)
            )
        pairs = pairs.select("a", "b", "distance", *scored)
    decision.spread_pairs = pairs
    return decision


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


@dataclass
class Held:
    """What the driver holds of a decision it took: the ``outcome`` and the ``pairs`` (when
    asked for) as Arrow tables, and how to get the ``session`` to make DataFrames of them in
    (made only when first needed)."""

    session: Callable[[], SparkSession]
    outcome: pa.Table
    pairs: pa.Table | None


@dataclass
class Decision:
    """What :func:`decide` found."""

    computed: DataFrame | None
    """The outcome, when decided by Spark; else see ``held``."""
    spread_pairs: DataFrame | None
    """The pairs, when decided by Spark and asked for; else see ``held``."""
    documents: int
    kept: int
    clusters: int
    """Clusters of more than one row."""
    checked_pairs: int | None = None
    similar_pairs: int | None = None
    """With ``verify``: the pairs whose similarity was computed, and those that passed."""
    against_matches: int = 0
    """With ``against``: the documents not kept for being near it."""
    held: Held | None = None
    """What the driver holds, when it decided (``driver.py``)."""

    @property
    def outcome(self) -> DataFrame:
        """A row per input row: ``POSITION``, the fingerprint column(s), ``cluster``, ``kept``
        (and the id column). Made from the table ``held`` when first asked for."""
        if self.computed is None:
            assert self.held is not None
            self.computed = self.held.session().createDataFrame(self.held.outcome)
        return self.computed

    @property
    def pairs(self) -> DataFrame | None:
        """The pairs (``a``, ``b``, ``distance``; ``similarity`` where checked), when asked
        for: those that rebuild the clusters, or every pair. Made from the table ``held`` when
        first asked for."""
        if self.spread_pairs is None and self.held is not None and self.held.pairs is not None:
            self.spread_pairs = self.held.session().createDataFrame(self.held.pairs)
        return self.spread_pairs

    def positions(self, kept: bool) -> np.ndarray | DataFrame:
        """The positions of the kept rows (or of the others): an array where the driver holds
        the outcome, else a DataFrame of ``POSITION``."""
        if self.held is not None:
            table = self.held.outcome
            flags = table.column("kept").to_numpy(zero_copy_only=False)
            return table.column(POSITION).to_numpy()[flags == kept]
        return self.outcome.where(F.col("kept") == kept).select(POSITION)


def numbered(df: DataFrame) -> DataFrame:
    """``df`` with ``POSITION``: each row's position in the input, increasing in input order."""
    if POSITION in df.columns:
        raise ConfigError(f"the DataFrame has a column named {POSITION!r}, which dedup adds; rename it")
    return df.withColumn(POSITION, F.monotonically_increasing_id())


def rows_with(positioned: DataFrame, outcome: DataFrame, size: int, how: str = "inner") -> DataFrame:
    """The rows of ``positioned`` joined with ``outcome`` (``size`` rows) by ``POSITION``
    (``how`` as Spark's join takes it), the outcome broadcast while it is small."""
    return positioned.join(broadcast_while_few(outcome, size), POSITION, how)


class _Clock:
    """Seconds between laps, into ``timings`` (a step's checkpoint ends it: Spark runs lazily)."""

    def __init__(self, timings: dict[str, float] | None) -> None:
        self.timings, self.last = timings, time.perf_counter()

    def lap(self, step: str) -> None:
        now = time.perf_counter()
        if self.timings is not None:
            self.timings[step] = self.timings.get(step, 0.0) + now - self.last
        self.last = now
