"""``--jaccard``'s candidates on Spark: every pair of leaders that share a MinHash band key,
found by a distributed join, past the driver.

Each leader (the first in ``--keep`` order of the documents of one fingerprint) is sent once
per band, its rank alone keyed by the band key (which mixes in the band's number: keys of two
bands meet only by a 64-bit collision, and then add a candidate the exact check judges); a
window counts each bucket (one shuffle; a bucket's ranks spill to disk past Spark's window
buffer) and a key held by one leader is dropped, so only the members of shared buckets go on.
A bucket of g members joins itself: within ``group_limit`` in one task; past it cut into s =
ceil(g / group_limit) blocks (by a hash of the leader) and joined per pair of blocks (i <= j),
each its own task, as the Hamming join cuts its key groups (``join.py``): a bucket of a
million near-identical pages is never held whole. A pair sharing several bands is found in
each, and kept once; the pairs then meet their leaders' positions and fingerprints (sent
to the leaders, broadcast, while they are few).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.window import Window

from .facts import broadcast_while_few

_KEYS = ["_key", "_lo", "_hi"]


def bucket_pairs(keys: DataFrame, leaders: DataFrame, fp: list[str], group_limit: int) -> DataFrame:
    """Every pair of leaders that share a band key, once: columns ``u`` < ``v`` (ranks),
    ``u_at``, ``v_at`` (positions) and ``distance`` (the fingerprints' Hamming distance).
    ``keys`` has each leader's ``leader`` (its rank) and band key columns; ``leaders`` its
    ``leader``, ``leader_at`` (its position) and fingerprint columns ``fp``. Only the ranks go
    through the buckets; the pairs meet the rest after."""
    bands = [c for c in keys.columns if c != "leader"]
    keyed = keys.select("leader", F.explode(F.array(*bands)).alias("_key"))
    bucket = Window.partitionBy("_key")
    blocks = F.ceil(F.col("count") / F.lit(group_limit)).cast("long")
    members = (
        keyed.withColumn("count", F.count(F.lit(1)).over(bucket))
        .where(F.col("count") > 1)
        .withColumn("_blocks", blocks)
        .withColumn("_block", F.pmod(F.xxhash64("leader"), F.col("_blocks")))
        .withColumn("_with", F.explode(F.sequence(F.lit(0).cast("long"), F.col("_blocks") - 1)))
        .select(
            "_key",
            F.least("_block", "_with").alias("_lo"),
            F.greatest("_block", "_with").alias("_hi"),
            "_block",
            "leader",
        )
    )

    def end(name: str) -> DataFrame:
        return members.select(*_KEYS, F.col("_block").alias(f"{name}_block"), F.col("leader").alias(name))

    met = (
        end("u")
        .join(end("v"), _KEYS)
        .where(
            (F.col("u") < F.col("v"))
            & ((F.col("_lo") == F.col("_hi")) | (F.col("u_block") != F.col("v_block")))
        )
        .select("u", "v")
        .distinct()
        .localCheckpoint()
    )
    few = met.count()
    for name in ("u", "v"):  # the pairs go to the leaders while they are few, not the leaders to them
        met = broadcast_while_few(met, few).join(
            leaders.select(
                F.col("leader").alias(name),
                F.col("leader_at").alias(f"{name}_at"),
                *(F.col(w).alias(f"{name}_{w}") for w in fp),
            ),
            name,
        )
    words = [F.bit_count(F.col(f"u_{w}").bitwiseXOR(F.col(f"v_{w}"))).cast("long") for w in fp]
    distance = words[0] if len(words) == 1 else words[0] + words[1]
    return met.select("u", "v", "u_at", "v_at", distance.alias("distance"))
