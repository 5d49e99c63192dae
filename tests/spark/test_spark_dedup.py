"""neardup.spark.dedup equals neardup.dedup on the same rows: kept rows and representatives,
under every keep policy and both clusterings, with copies, a near-identical family and texts
without features."""

from __future__ import annotations

import importlib

import numpy as np
import pyarrow as pa
import pytest

import neardup
from code_lines import python_files
from neardup import ConfigError, DedupOptions
from neardup.planted.generator import planted_corpus
from neardup.spark import dedup, dedup_with_pairs
from neardup.spark.dedup import decide, numbered
from neardup.spark.facts import Facts, text_facts, texts_by_position


@pytest.fixture(scope="module")
def texts():
    docs = planted_corpus(
        30, variants_per_original=2, edit_rates=(0.0, 0.02, 0.05), scripts=("en", "ru"), seed=4
    )
    page = docs[0].text
    texts = (
        [d.text for d in docs] + [page] * 25 + [f"{page} edition {i}" for i in range(40)] + ["", "  ", "..."]
    )
    return [texts[p] for p in np.random.default_rng(1).permutation(len(texts))]


def first_of_each(labels: list) -> list[int]:
    """The position of the first document with each one's label: the same for any two labelings
    of documents into the same clusters."""
    first: dict = {}
    return [first.setdefault(label, i) for i, label in enumerate(labels)]


def spark_representatives(rows) -> tuple[list[bool], list[int]]:
    """(kept, representative id) per id, from the rows' cluster and kept columns."""
    rows = sorted(rows, key=lambda r: r["id"])
    kept_of = {r["cluster"]: r["id"] for r in rows if r["kept"]}
    return [r["kept"] for r in rows], [kept_of.get(r["cluster"], r["id"]) for r in rows]


@pytest.mark.parametrize(
    "keep, cluster, featureless",
    [
        ("first", "greedy", "keep"),
        ("longest", "greedy", "drop"),
        ("shortest", "components", "keep"),
        ("lowest-id", "greedy", "compare"),
    ],
)
@pytest.mark.parametrize("where", ["spark", "driver"])
def test_dedup_equals_the_local_job(spark, texts, keep, cluster, featureless, where):
    ids = [(7 * i) % len(texts) for i in range(len(texts))]  # an id order other than the input's
    df = spark.createDataFrame(list(zip(ids, texts)), "id long, text string")  # in order: "first"
    options = dict(max_distance=6, keep=keep, cluster=cluster, featureless=featureless)
    limits = dict(
        local_limit=0 if cluster == "greedy" else 10_000, driver_limit=0 if where == "spark" else 10_000
    )
    rows = dedup(df, id_col="id", **limits, **options).collect()
    local = neardup.dedup(pa.table({"id": ids, "text": texts}), id_field="id", **options)
    by_id = np.argsort(ids)
    kept, representative = spark_representatives(rows)
    assert kept == local.kept[by_id].tolist()
    assert representative == [ids[r] for r in local.representatives[by_id]]
    assert 0 < sum(kept) < len(texts) - 30


def test_bad_choices_are_named(spark):
    df = spark.createDataFrame([(1, "a")], "id long, text string")
    with pytest.raises(ConfigError, match="keep='best' is not allowed"):
        dedup(df, keep="best")
    with pytest.raises(ConfigError, match="needs id_col="):
        dedup(df, keep="lowest-id")


@pytest.mark.parametrize(
    "keep, driver_limit", [("first", 0), ("shortest", 0), ("first", 10_000), ("shortest", 10_000)]
)
def test_pairs_equal_the_local_pairs(spark, texts, keep, driver_limit):
    ids = list(range(len(texts)))
    df = spark.createDataFrame(list(zip(ids, texts)), "id long, text string")
    _, pairs = dedup_with_pairs(df, id_col="id", max_distance=6, keep=keep, driver_limit=driver_limit)
    got = sorted(
        (*sorted((str(r["a"]), str(r["b"]))), r["distance"]) for r in pairs.collect()
    )  # local ids: str
    local = neardup.dedup(pa.table({"id": ids, "text": texts}), id_field="id", max_distance=6, keep=keep)
    want = sorted((*sorted((r["id_a"], r["id_b"])), r["distance"]) for r in local.pairs_table().to_pylist())
    assert got == want and len(got) > 60  # the 25 copies' links, the family's pairs, the planted ones


@pytest.mark.parametrize("cluster", ["greedy", "components"])
def test_both_decisions_count_what_the_local_job_counts(spark, texts, cluster):
    """The summary's counts, from the driver's decision and from Spark's."""
    df = spark.createDataFrame([(t,) for t in texts], "text string")
    facts = text_facts(numbered(df), "text", Facts(neardup.FingerprintConfig()))
    local = neardup.dedup(pa.table({"text": texts}), max_distance=6, cluster=cluster)
    for driver_limit in (0, 10_000):
        decision = decide(
            facts, DedupOptions(max_distance=6, cluster=cluster), driver_limit=driver_limit, with_pairs=False
        )
        assert decision.pairs is None
        counts = (decision.documents, decision.kept, decision.clusters)
        assert counts == (len(texts), len(texts) - local.stats.duplicates, local.stats.clusters)


def test_the_driver_decides_what_only_it_can_past_driver_rows(spark, texts, monkeypatch):
    """Past DRIVER_ROWS Spark decides, unless the outcome must be held by the driver (or only
    the driver can check the pairs): then the driver does, as far as its memory goes."""
    monkeypatch.setattr(importlib.import_module("neardup.spark.dedup"), "DRIVER_ROWS", 10)
    df = spark.createDataFrame([(t,) for t in texts], "text string")
    facts = text_facts(numbered(df), "text", Facts(neardup.FingerprintConfig()))
    spread = decide(facts, DedupOptions(max_distance=6), with_pairs=False)
    held = decide(facts, DedupOptions(max_distance=6), with_pairs=False, hold="the test")
    assert spread.held is None and held.held is not None
    assert (held.documents, held.kept, held.clusters) == (spread.documents, spread.kept, spread.clusters)
    with pytest.raises(ConfigError, match="the test run on the driver on Spark, up to 5 rows"):
        decide(facts, DedupOptions(max_distance=6), with_pairs=False, hold="the test", driver_limit=5)


@pytest.mark.parametrize("cluster", ["greedy", "components"])
@pytest.mark.parametrize("where", ["spark", "driver"])
@pytest.mark.parametrize(
    "check",
    [
        dict(max_distance=7, verify=("jaccard", 0.97), verify_features="words"),
        dict(cosine=0.99),
    ],
    ids=["verify", "cosine"],
)
def test_checks_equal_the_local_job(spark, texts, cluster, where, check):
    """Each pair checked on its texts, on the driver or in Spark's tasks (copies whose text
    fails their leader's check included): the local job's answer."""
    ids = list(range(len(texts)))
    df = spark.createDataFrame(list(zip(ids, texts)), "id long, text string")
    options = dict(cluster=cluster, **check)
    driver_limit = 0 if where == "spark" else 10_000
    rows = dedup(df, id_col="id", driver_limit=driver_limit, local_limit=0, **options).collect()
    local = neardup.dedup(pa.table({"id": ids, "text": texts}), id_field="id", **options)
    kept, representative = spark_representatives(rows)
    assert kept == local.kept.tolist()
    assert representative == local.representatives.tolist()
    assert local.stats.similar_pairs < local.stats.checked_pairs  # the check removed something
    if where == "spark" and cluster == "greedy" and "cosine" in check:
        with pytest.raises(ConfigError, match=r"cosine=0\.99 searches 10 bits, and past the driver"):
            dedup(df, bits=128, cosine=0.99, driver_limit=0)  # radius 10 at 128 bits


@pytest.mark.parametrize("cluster", ["greedy", "components"])
@pytest.mark.parametrize("where", ["spark", "driver"])
def test_jaccard_equals_the_local_job(spark, texts, cluster, where):
    """MinHash-LSH candidates keyed in the tasks, each pair checked on the driver or, past it,
    in the tasks (the buckets cut into tiles of 4): the local job's answer."""
    ids = list(range(len(texts)))
    df = spark.createDataFrame(list(zip(ids, texts)), "id long, text string")
    limits = dict(driver_limit=0, group_limit=4, local_limit=0) if where == "spark" else {}
    rows = dedup(df, id_col="id", jaccard=0.6, cluster=cluster, **limits).collect()
    local = neardup.dedup(pa.table({"id": ids, "text": texts}), id_field="id", jaccard=0.6, cluster=cluster)
    kept, representative = spark_representatives(rows)
    assert kept == local.kept.tolist() and not all(kept)
    assert representative == local.representatives.tolist()
    with pytest.raises(ConfigError, match="leave out max_distance="):
        dedup(df, jaccard=0.6, max_distance=3)


@pytest.mark.parametrize("where", ["spark", "driver"])
def test_code_bands_its_own_shingles_as_the_local_job(spark, where):
    """Code's default (``jaccard`` 0.7 on its code shingles, MinHash-banded in the tasks from
    the one lexing that fingerprints them) keeps and links the rows the local job does;
    renamed copies are found, and no pair is linked below 0.7."""
    pytest.importorskip("pygments", reason="code features need the code extra (pygments)")
    files = []
    for body in python_files(20):
        files += [body, body.replace("item", "thing") + "# a copy\n"]
    ids = list(range(len(files)))
    df = spark.createDataFrame(list(zip(ids, files)), "id long, text string")
    options = dict(features="code", language="python")
    limits = dict(driver_limit=0, group_limit=4, local_limit=0) if where == "spark" else {}
    rows, pairs = dedup_with_pairs(df, id_col="id", **limits, **options)
    local = neardup.dedup(pa.table({"id": ids, "text": files}), id_field="id", **options)
    assert local.stats.plan.startswith("--jaccard 0.7 on code")
    kept, representative = spark_representatives(rows.collect())
    assert kept == local.kept.tolist() and sum(kept) < len(files)
    assert representative == local.representatives.tolist()
    similarities = [r["similarity"] for r in pairs.collect()]
    assert similarities and min(similarities) >= 0.7


@pytest.mark.parametrize("where", ["spark", "driver"])
def test_copies_that_fail_their_leaders_check_stand_alone(spark, texts, where):
    """Fingerprinted on words, a text and its words reversed are copies (one fingerprint) whose
    3-shingles share nothing: each is kept on its own, as the local job keeps it, and the
    pairs are the local job's, similarity included."""
    reversed_texts = [" ".join(t.split()[::-1]) for t in texts[:30] if len(t.split()) > 3]
    every = texts + reversed_texts
    ids = list(range(len(every)))
    df = spark.createDataFrame(list(zip(ids, every)), "id long, text string")
    options = dict(jaccard=0.6, features="words")
    limits = dict(driver_limit=0, group_limit=4, local_limit=0) if where == "spark" else {}
    rows, pairs = dedup_with_pairs(df, id_col="id", **limits, **options)
    local = neardup.dedup(pa.table({"id": ids, "text": every}), id_field="id", **options)
    kept, representative = spark_representatives(rows.collect())
    assert kept == local.kept.tolist()
    assert representative == local.representatives.tolist()
    assert all(kept[len(texts) :]) and len(reversed_texts) > 20
    got = sorted(
        (*sorted((str(r["a"]), str(r["b"]))), r["distance"], r["similarity"]) for r in pairs.collect()
    )
    want = sorted(
        (*sorted((r["id_a"], r["id_b"])), r["distance"], r["similarity"])
        for r in local.pairs_table().to_pylist()
    )
    assert got == want and len(got) > 30


@pytest.mark.parametrize(
    "cluster, check",
    [("greedy", {}), ("components", dict(verify=("jaccard", 0.97), verify_features="words"))],
    ids=["greedy", "components-verify"],
)
@pytest.mark.parametrize("where", ["spark", "driver"])
def test_against_equals_the_local_job(spark, texts, tmp_path, cluster, check, where):
    """Documents near an index of pages seen before are not kept (under components, nor their
    clusters), decided on the driver or in the tasks (the index file shipped to them, or an
    index in memory saved for the run): the local job's kept documents and count."""
    seen = neardup.HammingIndex(
        bits=64, max_distance=7, fingerprint_config=neardup.FingerprintConfig().to_dict()
    )
    seen.add(neardup.Fingerprinter().fingerprint_batch(texts[::4]))
    seen.save(tmp_path / "seen.idx")
    ids = list(range(len(texts)))
    df = spark.createDataFrame(list(zip(ids, texts)), "id long, text string")
    options = dict(max_distance=7, cluster=cluster, **check)
    local = neardup.dedup(pa.table({"id": ids, "text": texts}), id_field="id", against=seen, **options)
    driver_limit = 0 if where == "spark" else 10_000
    for against in (str(tmp_path / "seen.idx"), seen):
        rows = dedup(df, id_col="id", driver_limit=driver_limit, against=against, **options).collect()
        rows = sorted(rows, key=lambda r: r["id"])
        kept = [r["kept"] for r in rows]
        assert kept == local.kept.tolist()
        # a cleared cluster has no kept document to name it: compare the clusters themselves
        assert first_of_each([r["cluster"] for r in rows]) == first_of_each(local.representatives.tolist())
    assert 0 < local.stats.against_matches < len(texts) - sum(kept) - 20  # some, and not all removed
    facts = text_facts(numbered(df), "text", Facts(neardup.FingerprintConfig(), "id"))
    options = DedupOptions(against=tmp_path / "seen.idx", **options)
    decision = decide(
        facts,
        options,
        id_col="id",
        driver_limit=driver_limit,
        with_pairs=False,
        against=options.open_against(),
        texts=texts_by_position(numbered(df), "text") if check else None,
    )
    assert (decision.kept, decision.against_matches) == (sum(kept), local.stats.against_matches)


@pytest.mark.parametrize("check", [None, ("jaccard", 0.5)])
def test_each_step_is_timed_and_named_and_the_callers_description_restored(spark, texts, check):
    """Past the driver, the steps map onto the local engine's and each names the Spark jobs
    it runs (``neardup: join``); the caller's own description is back once decide returns,
    whether it returns or fails."""
    df = spark.createDataFrame([(t,) for t in texts], "text string")
    positioned = numbered(df)
    facts = text_facts(positioned, "text", Facts(neardup.FingerprintConfig()))
    context = spark.sparkContext
    context.setJobDescription("the caller's own")
    seen: list[str | None] = []
    original = importlib.import_module("neardup.spark.stages").outcome

    def outcome(*args, **keywords):  # the description while the keep rule's jobs run
        seen.append(context.getLocalProperty("spark.job.description"))
        return original(*args, **keywords)

    timings: dict[str, float] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(importlib.import_module("neardup.spark.stages"), "outcome", outcome)
        decide(
            facts,
            DedupOptions(max_distance=3, verify=check),
            driver_limit=0,
            texts=texts_by_position(positioned, "text") if check else None,
            timings=timings,
        )
    assert seen == ["neardup: clusters"]
    steps = (
        ["fingerprint", "join", "candidates", "check", "clusters"]
        if check
        else ["fingerprint", "join", "clusters"]
    )
    assert list(timings) == steps
    assert context.getLocalProperty("spark.job.description") == "the caller's own"
    with pytest.raises(ConfigError):  # a refusal past the count restores it too
        decide(facts, DedupOptions(max_distance=3), driver_limit=0, hold="the outcome", timings=timings)
    assert context.getLocalProperty("spark.job.description") == "the caller's own"
    context.setJobDescription(None)


@pytest.mark.parametrize("broadcast", [20_000_000, 0])
def test_copies_never_join_the_buckets(spark, monkeypatch, broadcast):
    """Under jaccard only the leaders' band keys go to the buckets (the copies' positions
    broadcast, or joined): a copy's keys are its leader's, and a page copied a million times
    would make a bucket of a million, whose pairs would all be dropped later."""
    module = importlib.import_module("neardup.spark.stages")
    monkeypatch.setattr(importlib.import_module("neardup.spark.facts"), "BROADCAST_ROWS", broadcast)
    compared = spark.createDataFrame([(p, 10 + p, 7) for p in range(6)], ["_position", "_rank", "_band_0"])
    copies = spark.createDataFrame(
        [(1, 11, 10, 0), (4, 14, 13, 3)], ["_position", "_rank", "leader", "leader_at"]
    )
    keys = module._leaders_keys(compared, copies, ["_band_0"])
    assert sorted(keys.columns) == ["_band_0", "leader"]
    assert sorted(row.leader for row in keys.collect()) == [10, 12, 13, 15]
