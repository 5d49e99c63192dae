"""``dedup`` on Spark: the local job's choices (``--keep``, ``--cluster``, ``--featureless``)
over a DataFrame, with the same answer as :func:`neardup.dedup` on the same rows.

1. Each row gets its position in the input (``monotonically_increasing_id``: input order),
   its fingerprint, its text's length in bytes and whether it has features; the result is
   checkpointed, so positions and fingerprints are computed once.
2. The rows are sorted in ``keep`` order and numbered by it: a row's *rank* (increasing, not
   dense).
3. Copies collapse: each distinct fingerprint is led by its lowest rank.
4. :func:`near_duplicate_pairs` joins the distinct fingerprints; the pairs, as leader ranks,
   go to :func:`representatives` (Manku's rule or components).
5. A leader follows its representative, a copy its leader's; a row is kept when it is its
   own representative, and its cluster is its representative's rank.

:func:`dedup_with_pairs` also gives the pairs that rebuild every cluster, as the local
``--pairs`` writes them: each pair of distinct fingerprints within the radius between their
leaders, and each copy's link to its leader (distance 0).
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from .._config import FingerprintConfig
from .._errors import ConfigError
from ..pipeline.choices import CLUSTERINGS, FEATURELESS, KEEP
from .clusters import LOCAL_LIMIT, representatives
from .fingerprints import fingerprint, fingerprint_columns
from .join import GROUP_LIMIT, near_duplicate_pairs, pair_columns

_INTERNAL = ("_position", "_length", "_featureless", "_rank")


def dedup(
    df: DataFrame,
    text_col: str = "text",
    **options: Any,
) -> DataFrame:
    """Every row of ``df`` with its fingerprint column(s) and two more: ``cluster``, the rank
    (in ``keep`` order) of the kept row it duplicates (its own when kept: rows of one cluster
    share it), and ``kept``. ``.where("kept")`` gives the deduplicated rows. The options are
    :func:`dedup_with_pairs`'s."""
    return dedup_with_pairs(df, text_col, **options)[0]


def dedup_with_pairs(
    df: DataFrame,
    text_col: str = "text",
    *,
    config: FingerprintConfig | None = None,
    max_distance: int | None = None,
    keep: str = "first",
    id_col: str | None = None,
    cluster: str = "greedy",
    featureless: str = "keep",
    group_limit: int = GROUP_LIMIT,
    local_limit: int = LOCAL_LIMIT,
) -> tuple[DataFrame, DataFrame]:
    """(the rows of :func:`dedup`, the pairs that rebuild its clusters): the pairs have columns
    ``a``, ``b`` (``id_col``'s values, else the rows' positions in the input) and ``distance``:
    each pair of distinct fingerprints within the radius, between their leaders (the rows first
    in ``keep`` order), and each other copy's link to its leader (distance 0), as the local
    ``--pairs`` writes them. Lazy: nothing is computed until they are used.

    Args:
        df: the documents, one per row, text in ``text_col`` (no nulls).
        config: fingerprint settings (default :class:`FingerprintConfig`).
        max_distance: the radius in bits, 0 to 7 (default 3 at 64 bits, 6 at 128).
        keep: which row of a cluster stays: ``"first"`` (input order), ``"longest"``,
            ``"shortest"`` (text length in bytes; ties in input order) or ``"lowest-id"``
            (``id_col``'s order).
        cluster: ``"greedy"`` (Manku's rule: every removed row has a kept one within the
            radius) or ``"components"``, as :func:`neardup.dedup` has them.
        featureless: rows whose text has no features (fingerprint 0): ``"keep"`` each,
            compared with nothing; ``"drop"`` them; or ``"compare"`` them as any other.
        group_limit, local_limit: see :func:`near_duplicate_pairs` and
            :func:`neardup.spark.clusters.representatives`.
    """
    config = config or FingerprintConfig()
    k = 3 * config.bits // 64 if max_distance is None else max_distance
    for name, value, allowed in (
        ("keep", keep, KEEP),
        ("cluster", cluster, CLUSTERINGS),
        ("featureless", featureless, FEATURELESS),
    ):
        if value not in allowed:
            raise ConfigError(f"{name}={value!r} is not allowed; choose one of {', '.join(allowed)}")
    if keep == "lowest-id" and (id_col is None or id_col not in df.columns):
        raise ConfigError('keep="lowest-id" needs id_col=, a column of the DataFrame')
    if clash := {*_INTERNAL, "cluster", "kept"} & set(df.columns):
        raise ConfigError(
            f"the DataFrame has a column named {sorted(clash)[0]!r}, which dedup adds; rename it"
        )
    fp = fingerprint_columns(config)
    docs = fingerprint(
        df.withColumn("_position", F.monotonically_increasing_id()),
        text_col,
        config,
        featureless="_featureless",
    )
    docs = docs.withColumn("_length", F.octet_length(text_col)).localCheckpoint()
    order = {
        "first": [F.col("_position")],
        "longest": [F.col("_length").desc(), F.col("_position")],
        "shortest": [F.col("_length"), F.col("_position")],
        "lowest-id": [F.col(id_col or "_position"), F.col("_position")],
    }[keep]
    ranked = (
        docs.select(
            "_position", "_featureless", *fp, *([id_col] if keep == "lowest-id" and id_col else []), "_length"
        )
        .orderBy(*order)
        .withColumn("_rank", F.monotonically_increasing_id())  # increasing in keep order
        .select("_position", "_rank", "_featureless", *fp)
        .localCheckpoint()
    )
    compared = ranked if featureless == "compare" else ranked.where(~F.col("_featureless"))
    leaders = compared.groupBy(*fp).agg(F.min("_rank").alias("leader")).localCheckpoint()
    pairs = near_duplicate_pairs(leaders, k, group_limit=group_limit, distinct=True)
    edges = pairs
    for end, node in (("a", "u"), ("b", "v")):  # each end of a pair to its leader's rank
        names = pair_columns(end, len(fp))
        renamed = leaders.select(*(F.col(w).alias(n) for w, n in zip(fp, names)), F.col("leader").alias(node))
        edges = edges.join(renamed, names)
    chosen = representatives(edges.select("u", "v"), cluster, local_limit=local_limit)
    follow = (
        compared.join(leaders, fp)
        .join(chosen.withColumnRenamed("node", "leader"), "leader", "left")
        .select("_position", F.coalesce("representative", "leader").alias("representative"))
    )
    outcome = ranked.join(follow, "_position", "left").select(
        "_position",
        F.coalesce("representative", "_rank").alias("cluster"),
        (
            (F.coalesce("representative", "_rank") == F.col("_rank"))
            & (~F.col("_featureless") if featureless == "drop" else F.lit(True))
        ).alias("kept"),
    )
    # The pairs, as positions: between leaders, and each copy to its leader.
    where = ranked.select(F.col("_rank").alias("leader"), F.col("_position").alias("at"))
    placed = leaders.join(where, "leader")
    between = (
        edges.select("u", "v", "distance")
        .join(where.withColumnRenamed("leader", "u").withColumnRenamed("at", "a"), "u")
        .join(where.withColumnRenamed("leader", "v").withColumnRenamed("at", "b"), "v")
        .select("a", "b", F.col("distance").cast("long"))
    )
    links = (
        compared.join(placed, fp)
        .where(F.col("_rank") != F.col("leader"))
        .select(
            F.col("at").alias("a"), F.col("_position").alias("b"), F.lit(0).cast("long").alias("distance")
        )
    )
    pairs = between.unionByName(links)
    if id_col is not None:
        id_of = docs.select("_position", id_col)
        for end in ("a", "b"):
            pairs = (
                pairs.join(
                    id_of.withColumnRenamed("_position", end).withColumnRenamed(id_col, f"{end}_id"), end
                )
                .drop(end)
                .withColumnRenamed(f"{end}_id", end)
            )
        pairs = pairs.select("a", "b", "distance")
    return docs.join(outcome, "_position").drop(*_INTERNAL), pairs
