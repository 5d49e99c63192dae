"""Near-duplicate pairs on Spark: Manku's permuted tables as a distributed join.

The distinct fingerprints (copies collapse first: a page copied a million times is one row) are
sent once per table to the task that holds that table's key, ``fingerprint & kept_mask[t]``
(hash partitioning on table and key): two fingerprints within k bits differ in at most k of the
plan's blocks, so they agree on every kept block of some table (pigeonhole) and meet in one
task. There the local engine's kernels take over (``_kernels/key_groups.py``): one sort brings
each key group together, and each candidate is checked by XOR + popcount and reported only by
the first table whose kept blocks it agrees on, as the local index does, so each pair within the
radius comes out exactly once, d == k included. No Python runs per row, and the only shuffle is
the one that places the rows: 8-16 bytes of fingerprint and a table number each.

A key group of g fingerprints holds g (g - 1) / 2 candidates. A task checks the groups within
``group_limit`` itself and hands back the members of larger ones, which are cut into s =
ceil(g / group_limit) blocks (by a hash of the fingerprint) and joined per pair of blocks
(i <= j), each its own task: no task meets more than ``group_limit``**2 candidates, whatever the
skew. A task holds at most about ``ROWS_PER_TASK`` rows (the number of partitions follows from
the rows), so memory is bounded by design.

The plan (``"auto"``) is chosen for Spark's costs, not the local index's: a shuffled row costs
as much as about a thousand compiled checks, so fewer tables with larger groups win until the
groups grow past that (4 tables of 16-bit keys at k = 3 up to ~200M distinct fingerprints, 10
beyond).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StructField, StructType

from .._errors import ConfigError
from .._kernels import key_groups
from ..index.plan import MAX_DISTANCE, IndexPlan, row_bits
from .session import cores

GROUP_LIMIT = 20_000
"""Fingerprints per tile of a key group: a task checks at most GROUP_LIMIT**2 / 2 candidates."""
ROWS_PER_TASK = 4_000_000
"""Table rows one task of the join holds at most on average (about 40 bytes each in the Python
worker: fingerprint, table, entry and sort)."""
SHUFFLED_ROW_NS = 2_000.0
CHECK_NS = 2.0
"""The costs that choose the "auto" plan: one table row through the shuffle (explode, write,
read, hand to Python) and one candidate check in the kernel, per core (measured on local[2]
with benchmarks/bench_spark.py; only their ratio matters)."""
PAIRS_PER_BATCH = 1 << 20
_SIGN = -(2**63)


def near_duplicate_pairs(
    df: DataFrame,
    max_distance: int,
    *,
    name: str = "fingerprint",
    group_limit: int = GROUP_LIMIT,
    plan: object = "auto",
    distinct: bool = False,
) -> DataFrame:
    """Every pair of distinct fingerprints of ``df`` within ``max_distance`` bits, exactly once.

    Args:
        df: a DataFrame with the fingerprint column(s) of :func:`neardup.spark.fingerprint`:
            ``name`` (and ``name + "_hi"`` at 128 bits); other columns are ignored.
        max_distance: the radius k, 0 to 7 (permuted tables).
        group_limit: the most fingerprints of one key group a task joins at once.
        plan: the table layout: ``"auto"`` (the fewest tables whose key groups stay cheap for
            the number of distinct fingerprints, by Spark's costs), or what
            :class:`neardup.IndexPlan.choose` takes.
        distinct: the fingerprints are distinct already (say so to save a shuffle; a repeated
            one would pair with itself at distance 0).

    Returns a DataFrame with columns ``a``, ``b`` (and ``a_hi``, ``b_hi`` at 128 bits) and
    ``distance``: the two fingerprints, ``a`` before ``b`` as unsigned numbers. It is
    checkpointed: computed once, on the executors.
    """
    words = _words(df, name)
    bits = 64 * len(words)
    if (
        isinstance(max_distance, bool)
        or not isinstance(max_distance, int)
        or not 0 <= max_distance <= MAX_DISTANCE
    ):
        raise ConfigError(
            f"max_distance={max_distance!r}: the Spark join serves 0 to {MAX_DISTANCE} bits (permuted tables)"
        )
    if isinstance(group_limit, bool) or not isinstance(group_limit, int) or group_limit < 2:
        raise ConfigError(f"group_limit={group_limit!r} must be an integer of at least 2")
    fp = [f"w{i}" for i in range(len(words))]
    fingerprints = df.select(*(F.col(w).alias(f) for w, f in zip(words, fp)))
    if not distinct:
        fingerprints = fingerprints.distinct()
    fingerprints = fingerprints.persist()
    n = fingerprints.count()
    chosen = (
        spark_plan(bits, max_distance, n) if plan == "auto" else IndexPlan.choose(bits, max_distance, plan, n)
    )
    if chosen.strategy != "tables":
        raise ConfigError(f"plan {chosen.name!r} is not permuted tables; the Spark join needs them")
    masks = _kept_masks(chosen)
    rows = n * chosen.num_tables
    # Two tasks a core keep every core busy; more only add tasks' overhead (~0.1 s each).
    partitions = max(2 * cores(df.sparkSession), -(-rows // ROWS_PER_TASK))
    keyed = fingerprints.select(*fp, F.explode(F.sequence(F.lit(0), F.lit(chosen.num_tables - 1))).alias("t"))
    placed = keyed.repartition(partitions, "t", *_keys(fp, masks))
    out = pair_columns("a", len(fp)) + pair_columns("b", len(fp))
    schema = StructType(
        [*(StructField(c, LongType(), False) for c in out), StructField("distance", IntegerType(), False)]
    )
    checked = placed.mapInArrow(
        partial(_pairs_in_partition, plan=chosen, max_distance=max_distance, group_limit=group_limit, fp=fp),
        schema,
    ).persist()
    # Members of groups over the limit come back marked by a negative distance (see
    # _pairs_in_partition) and are joined tile by tile.
    found = checked.where(F.col("distance") >= 0)
    large = checked.where(F.col("distance") < 0).select(
        *(F.col(c).alias(f) for c, f in zip(out, fp)),
        F.col(out[len(fp)]).cast("int").alias("t"),
        (-F.col("distance")).alias("s"),
    )
    if not large.isEmpty():
        found = found.unionByName(_tiled(large, fp, masks, max_distance))
    found = found.localCheckpoint()
    checked.unpersist()
    fingerprints.unpersist()
    return found


def spark_plan(bits: int, max_distance: int, n: int) -> IndexPlan:
    """The permuted-table plan of least estimated cost for a join of ``n`` distinct
    fingerprints on Spark: per fingerprint, a shuffled row per table and, in each table, a check
    against half its key group (``SHUFFLED_ROW_NS``, ``CHECK_NS``)."""
    return IndexPlan.for_join(bits, max_distance, n, SHUFFLED_ROW_NS, CHECK_NS, whole_keys=True)


def _keys(fp: list[str], masks: list[list[int]]) -> list[Column]:
    """Each word of row's key in its table ``t``: the fingerprint's kept bits."""
    return [
        F.col(w).bitwiseAND(F.element_at(F.array(*(F.lit(m[i]).cast("long") for m in masks)), F.col("t") + 1))
        for i, w in enumerate(fp)
    ]


def _pairs_in_partition(
    batches: Iterator[pa.RecordBatch], plan: IndexPlan, max_distance: int, group_limit: int, fp: list[str]
) -> Iterator[pa.RecordBatch]:
    """One task: the pairs inside the key groups of its rows (words ``fp`` and table ``t``),
    ``a`` before ``b`` as unsigned numbers. The members of a group larger than ``group_limit``
    are not joined here but handed back, one row each: the fingerprint in ``a``, the table in
    ``b``, and ``-s`` in ``distance``, s the number of tiles to cut the group into."""
    received = list(batches)
    n = sum(batch.num_rows for batch in received)
    if n == 0:
        return
    table = pa.Table.from_batches(received)
    del received
    fps = np.empty((n, len(fp)), dtype=np.uint64)
    for i, w in enumerate(fp):
        fps[:, i] = table.column(w).to_numpy().view(np.uint64)
    tables = table.column("t").to_numpy()
    del table
    starts = np.array(plan.block_starts, dtype=np.int64)
    sizes = np.array(plan.block_sizes, dtype=np.int64)
    kept = np.array(plan.tables, dtype=np.int64).reshape(plan.num_tables, -1)
    masks = np.array([sum(1 << j for j in t) for t in plan.tables], dtype=np.uint64)
    rowbits = row_bits(n)
    tshift = 64 - max(1, (plan.num_tables - 1).bit_length())
    entries = key_groups.group_entries(fps, tables, starts, sizes, kept, rowbits, tshift)
    entries.sort()
    groups = entries >> np.uint64(rowbits)
    bounds = np.concatenate(([0], np.flatnonzero(groups[1:] != groups[:-1]) + 1, [n]))
    del groups
    counts = np.diff(bounds)
    large = np.flatnonzero(counts > group_limit)
    if large.size:
        at = np.concatenate([np.arange(bounds[g], bounds[g + 1]) for g in large])
        members = (entries[at] & np.uint64((1 << rowbits) - 1)).astype(np.int64)
        where = np.zeros_like(fps[members])
        where[:, 0] = tables[members]
        yield _batch(fps[members], where, -np.repeat(-(-counts[large] // group_limit), counts[large]))
        entries = np.delete(entries, at)
    cursor = np.array([0, 1], dtype=np.int64)
    while True:
        a, b, d = key_groups.group_pairs(
            fps, entries, rowbits, tshift, starts, sizes, masks, max_distance, cursor, PAIRS_PER_BATCH
        )
        if len(a):
            x, y = fps[a], fps[b]
            swap = _unsigned_less(y, x)
            x[swap], y[swap] = y[swap], x[swap]
            yield _batch(x, y, d)
        if len(a) < PAIRS_PER_BATCH:
            return


def _batch(a: np.ndarray, b: np.ndarray, distance: np.ndarray) -> pa.RecordBatch:
    """A batch of the join's output: the words of ``a`` and ``b`` (uint64, (n, words)) as
    longs, and ``distance``."""
    words = a.shape[1]
    columns = [
        pa.array(np.ascontiguousarray(side[:, w]).view(np.int64)) for side in (a, b) for w in range(words)
    ]
    names = pair_columns("a", words) + pair_columns("b", words) + ["distance"]
    return pa.RecordBatch.from_arrays([*columns, pa.array(distance.astype(np.int32))], names=names)


def _unsigned_less(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row by row, x < y as unsigned numbers of 64 or 128 bits (uint64 (n, words), low word
    first)."""
    if x.shape[1] == 1:
        return x[:, 0] < y[:, 0]
    return (x[:, 1] < y[:, 1]) | ((x[:, 1] == y[:, 1]) & (x[:, 0] < y[:, 0]))


def _tiled(large: DataFrame, fp: list[str], masks: list[list[int]], max_distance: int) -> DataFrame:
    """The pairs within the radius among the members of large key groups (words ``fp``, table
    ``t``, tiles ``s``), in Spark SQL: each member goes to a block by a hash of its
    fingerprint, and each pair of blocks (i <= j) of a group is its own join key."""
    keys = [f"key{i}" for i in range(len(fp))]
    group = ["t", *keys]
    blocked = large.select(
        *fp,
        "t",
        *(key.alias(name) for key, name in zip(_keys(fp, masks), keys)),
        F.col("s").cast("long").alias("s"),
        F.pmod(F.xxhash64(*fp), F.col("s").cast("long")).alias("block"),
    )
    left = blocked.select(
        *group, *fp, F.col("block").alias("i"), F.explode(F.sequence("block", F.col("s") - 1)).alias("j")
    )
    right = blocked.select(
        *group,
        *fp,
        F.explode(F.sequence(F.lit(0).cast("long"), "block")).alias("i"),
        F.col("block").alias("j"),
    )
    a, b = [F.col(f"a.{w}") for w in fp], [F.col(f"b.{w}") for w in fp]
    xor = [x.bitwiseXOR(y) for x, y in zip(a, b)]
    distance = sum((F.bit_count(x) for x in xor[1:]), F.bit_count(xor[0]))
    once = (F.col("i") < F.col("j")) | _before(a, b)
    joined = left.alias("a").join(right.alias("b"), on=[*group, "i", "j"])
    pairs = joined.where(once & (distance <= max_distance) & (_owner(xor, masks) == F.col("t")))
    swap = _before(b, a)
    return pairs.select(
        *(F.when(swap, y).otherwise(x).alias(c) for x, y, c in zip(a, b, pair_columns("a", len(fp)))),
        *(F.when(swap, x).otherwise(y).alias(c) for x, y, c in zip(a, b, pair_columns("b", len(fp)))),
        distance.cast("int").alias("distance"),
    )


def pair_columns(end: str, words: int) -> list[str]:
    """The columns of one end (``"a"`` or ``"b"``) of a pair: ``[end]``, and ``end + "_hi"`` at
    128 bits."""
    return [end, f"{end}_hi"][:words]


def _words(df: DataFrame, name: str) -> list[str]:
    if name not in df.columns:
        raise ConfigError(
            f"the DataFrame has no fingerprint column {name!r}; add it with neardup.spark.fingerprint"
        )
    return [name, f"{name}_hi"] if f"{name}_hi" in df.columns else [name]


def _kept_masks(plan: IndexPlan) -> list[list[int]]:
    """Per table, per 64-bit word, the bits of its kept blocks, as signed longs."""
    words = plan.bits // 64
    masks = []
    for kept in plan.tables:
        value = 0
        for block in kept:
            value |= ((1 << plan.block_sizes[block]) - 1) << plan.block_starts[block]
        masks.append([_signed((value >> (64 * w)) & (2**64 - 1)) for w in range(words)])
    return masks


def _signed(word: int) -> int:
    return word - 2**64 if word >= 2**63 else word


def _owner(xor: list[Column], masks: list[list[int]]) -> Column:
    """The first table whose kept blocks the pair agrees on (its XOR is 0 there)."""
    owner = None
    for t, mask in enumerate(masks):
        agree = F.lit(True)
        for x, m in zip(xor, mask):
            agree = agree & (x.bitwiseAND(F.lit(m)) == 0)
        owner = F.when(agree, F.lit(t)) if owner is None else owner.when(agree, F.lit(t))
    assert owner is not None
    return owner


def _before(x: list[Column], y: list[Column]) -> Column:
    """x < y as unsigned numbers of 64 or 128 bits (words low first)."""
    ux = [c.bitwiseXOR(F.lit(_SIGN)) for c in x]  # flipping the sign bit orders longs as unsigned
    uy = [c.bitwiseXOR(F.lit(_SIGN)) for c in y]
    if len(x) == 1:
        return ux[0] < uy[0]
    return (ux[1] < uy[1]) | ((ux[1] == uy[1]) & (ux[0] < uy[0]))
