"""neardup.spark against the local engine on the same data, in a real local Spark session:
the same fingerprints bit for bit, the same pairs of distinct fingerprints (skewed shapes,
key groups cut into tiles, empty partitions, 128 bits)."""

from __future__ import annotations

import numpy as np
import pytest

import neardup
from neardup import ConfigError
from neardup.planted.generator import planted_corpus
from neardup.spark import fingerprint, fingerprint_columns, near_duplicate_pairs
from neardup.spark.join import spark_plan


def as_unsigned(rows, columns) -> np.ndarray:
    return np.array([[row[c] for c in columns] for row in rows], dtype=np.int64).view(np.uint64)


@pytest.mark.parametrize("bits", [64, 128])
def test_fingerprints_equal_the_local_ones(spark, bits):
    docs = planted_corpus(20, variants_per_original=2, scripts=("en", "ru", "zh"), words_per_doc=50, seed=1)
    texts = [d.text for d in docs] + ["", "   ", "Straße café"]
    config = neardup.FingerprintConfig(bits=bits, features="words", weighting="sublinear")
    df = spark.createDataFrame(list(enumerate(texts)), "id long, body string").repartition(9)  # some empty
    rows = fingerprint(df, "body", config).orderBy("id").collect()
    assert [r["id"] for r in rows] == list(range(len(texts)))
    expected = neardup.Fingerprinter(config).fingerprint_batch(texts).reshape(len(texts), -1)
    assert (as_unsigned(rows, fingerprint_columns(config)) == expected).all()


def test_null_texts_and_missing_columns_are_named(spark):
    df = spark.createDataFrame([(1, "a text"), (2, None)], "id long, text string")
    with pytest.raises(Exception, match="column 'text' holds 1 null texts"):
        fingerprint(df).collect()
    with pytest.raises(ConfigError, match="no column 'body'"):
        fingerprint(df, "body")
    with pytest.raises(ConfigError, match="no fingerprint column 'fingerprint'"):
        near_duplicate_pairs(df, 3)


def skewed(bits: int, k: int) -> np.ndarray:
    """Copies of one fingerprint, a family of distinct ones within k of each other (one and
    two bits from a base: all within 4), pairs at exactly k, and random ones."""
    rng = np.random.default_rng(bits + k)
    words = bits // 64
    base = rng.integers(0, 2**64, size=words, dtype=np.uint64)
    rows = [base.copy() for _ in range(30)]  # copies: one distinct row
    for bit in range(bits):
        one = base.copy()
        one[bit // 64] ^= np.uint64(1) << np.uint64(bit % 64)
        rows.append(one)
        if bit % 3 == 0:
            two = one.copy()
            other = (bit + 7) % bits
            two[other // 64] ^= np.uint64(1) << np.uint64(other % 64)
            rows.append(two)
    for _ in range(40):  # a random one and its partner exactly k bits away
        r = rng.integers(0, 2**64, size=words, dtype=np.uint64)
        rows.append(r)
        partner = r.copy()
        for bit in rng.choice(bits, size=k, replace=False):
            partner[bit // 64] ^= np.uint64(1) << np.uint64(int(bit) % 64)
        rows.append(partner)
    rows += list(rng.integers(0, 2**64, size=(300, words), dtype=np.uint64))
    return np.array(rows, dtype=np.uint64)


def local_pairs(fps: np.ndarray, bits: int, k: int) -> list[tuple]:
    distinct = np.unique(fps, axis=0)
    index = neardup.HammingIndex(bits=bits, max_distance=k)
    index.add(distinct if bits == 128 else distinct[:, 0])
    index.compact()
    found = []
    for i, j, d in zip(*(a.tolist() for a in index.pairs())):
        a, b = (tuple(int(w) for w in distinct[x]) for x in (i, j))
        found.append((*sorted((a, b), key=lambda v: v[::-1]), d))  # unsigned order: high word first
    return sorted(found)


@pytest.mark.parametrize(
    "bits, k, group_limit, plan, distinct",
    [
        (64, 4, 20_000, "auto", False),
        (64, 4, 8, "auto", False),  # the family's key groups go through tiles
        (128, 7, 16, "auto", False),
        (64, 0, 5, "auto", False),
        (64, 3, 20_000, "fast", True),
        (128, 5, 20_000, "balanced", False),
    ],
)
def test_pairs_equal_the_local_self_join_of_distinct_fingerprints(
    spark, bits, k, group_limit, plan, distinct
):
    fps = skewed(bits, k)
    if distinct:
        fps = np.unique(fps, axis=0)
    names = fingerprint_columns(neardup.FingerprintConfig(bits=bits))
    signed = fps.view(np.int64)
    df = spark.createDataFrame(
        [tuple(int(w) for w in row) for row in signed], ", ".join(f"{n} long" for n in names)
    )
    found = near_duplicate_pairs(df.repartition(7), k, group_limit=group_limit, plan=plan, distinct=distinct)
    rows = found.collect()
    out_a, out_b = ["a", "a_hi"][: len(names)], ["b", "b_hi"][: len(names)]
    got = sorted(
        (
            tuple(int(w) for w in as_unsigned([r], out_a)[0]),
            tuple(int(w) for w in as_unsigned([r], out_b)[0]),
            r["distance"],
        )
        for r in rows
    )
    expected = local_pairs(fps, bits, k)
    assert got == expected  # each pair once, d == k included, copies collapsed
    if k:
        assert len(expected) > 100 and max(d for *_, d in expected) == k
    else:
        assert expected == []  # copies are one distinct fingerprint: no pair between distinct ones


def test_radius_beyond_the_permuted_tables_is_refused(spark):
    df = spark.createDataFrame([(1,)], "fingerprint long")
    with pytest.raises(ConfigError, match="serves 0 to 7 bits"):
        near_duplicate_pairs(df, 8)


def test_the_spark_plan_trades_shuffled_rows_for_checks():
    """Few tables while the key groups are cheap to check; more once they would grow large."""
    assert spark_plan(64, 3, 10_000_000).num_tables == 4
    assert spark_plan(64, 3, 1_000_000_000).num_tables == 10
    assert spark_plan(64, 0, 10**9).num_tables == 1
    small, large = spark_plan(128, 6, 10**5), spark_plan(128, 6, 10**10)
    assert small.num_tables < large.num_tables


def test_tasks_with_no_rows_and_an_empty_input(spark):
    """Most of the join's partitions get no rows here, and none at all for an empty input."""
    one, two = 5, 5 ^ 0b1001
    df = spark.createDataFrame([(one,), (two,), (one,)], "fingerprint long")
    assert [tuple(r) for r in near_duplicate_pairs(df, 3).collect()] == [(one, two, 2)]
    assert near_duplicate_pairs(df.where("fingerprint < 0"), 3).collect() == []
