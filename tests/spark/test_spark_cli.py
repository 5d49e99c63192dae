"""``neardup dedup --engine spark``, run for real (``python -m neardup``, its own local Spark):
the kept rows and clusters the local engine finds, written as folders of part files."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import neardup
from neardup.planted.generator import planted_corpus


def run(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "neardup", *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )


def kept_urls(folder) -> list[str]:
    """The ``url`` of every line of a folder of JSONL part files."""
    return kept_ids(folder, "url")


def kept_ids(folder, field: str) -> list[str]:
    """The ``field`` of every line of a folder of JSONL part files."""
    return [
        json.loads(line)[field] for part in folder.glob("part-*") for line in part.read_text().splitlines()
    ]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spark_cli")
    docs = planted_corpus(20, variants_per_original=2, edit_rates=(0.0, 0.02), scripts=("en",), seed=6)
    texts = [d.text for d in docs] + [docs[0].text] * 10 + [f"{docs[1].text} v{i}" for i in range(10)]
    lines = [json.dumps({"url": f"u{i}", "body": t, "n": i}) for i, t in enumerate(texts)]
    (folder / "pages.jsonl").write_text("\n".join(lines) + "\n")
    return folder


LONGEST = ["--text-field", "body", "--id-field", "url", "-k", "5", "--keep", "longest"]
"""The options of the runs that :func:`longest` repeats on the local engine."""


@pytest.fixture(scope="module")
def longest(corpus):
    """The local engine's run with ``LONGEST``, to compare Spark's with."""
    return neardup.dedup(
        corpus / "pages.jsonl", text_field="body", id_field="url", max_distance=5, keep="longest"
    )


def test_spark_engine_keeps_what_the_local_engine_keeps(corpus, longest, tmp_path):
    done = run(
        "dedup", str(corpus / "pages.jsonl"), "-o", "kept.parquet", "--clusters", "clusters.parquet",
        "--pairs", "pairs.parquet", "--engine", "spark", "--master", "local[2]", *LONGEST, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    local = longest
    kept = pq.read_table(tmp_path / "kept.parquet")  # a folder of part files
    assert sorted(kept.column("url").to_pylist()) == sorted(np.array(local.ids)[local.kept].tolist())
    assert set(kept.column_names) == {"url", "body", "n"}  # the rows as read
    clusters = pq.read_table(tmp_path / "clusters.parquet").to_pylist()
    assert len(clusters) == len(local.clusters_table())
    # The pairs that rebuild the clusters, as the local --pairs lists them (unordered ends).
    pairs = pq.read_table(tmp_path / "pairs.parquet").to_pylist()
    local_pairs = local.pairs_table().to_pylist()
    assert len(pairs) == len(local_pairs) > 10
    as_sets = [
        sorted((*sorted((p["id_a"], p["id_b"])), p["distance"]) for p in x) for x in (pairs, local_pairs)
    ]
    assert as_sets[0] == as_sets[1]
    assert f"removed {local.stats.duplicates:,} near-duplicates" in done.stderr
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize("driver_limit", ["0", "100"])
def test_the_example_shows_what_the_local_engine_shows(tmp_path, driver_limit):
    """``--example`` on Spark, decided in the tasks or on the driver: the local engine's
    clusters, texts and distances, line for line, and its kept documents written."""
    local = run("dedup", "--example", "-o", "local.jsonl", cwd=tmp_path)
    assert local.returncode == 0, local.stderr[-3000:]
    spark = run(
        "dedup", "--example", "-o", "spark.jsonl", "--engine", "spark", "--master", "local[2]",
        "--driver-limit", driver_limit, cwd=tmp_path,
    )  # fmt: skip
    assert spark.returncode == 0, spark.stderr[-3000:]
    assert spark.stdout == local.stdout and "15 clusters of near-duplicates" in spark.stdout
    want = sorted(json.loads(line)["id"] for line in (tmp_path / "local.jsonl").read_text().splitlines())
    assert sorted(kept_ids(tmp_path / "spark.jsonl", "id")) == want and len(want) == 32
    refused = run("dedup", "--example", "--clusters", "c.parquet", "--engine", "spark", cwd=tmp_path)
    assert refused.returncode == 2 and "--example on --engine spark shows its clusters" in refused.stderr


def test_spark_engine_refuses_what_it_cannot_do_yet(corpus, tmp_path):
    done = run(
        "dedup", str(corpus / "pages.jsonl"), "--pairs", "p.parquet", "--engine", "spark", cwd=tmp_path
    )
    assert (
        done.returncode != 0 and "--pairs on --engine spark names the documents by --id-field" in done.stderr
    )
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("named_by", ["path", "glob"])
def test_jsonl_to_jsonl_copies_the_kept_lines_as_read(corpus, tmp_path, named_by):
    """No schema: the kept lines are the input's lines, byte for byte, as the local engine
    writes them (a blank line is no document in either). A path is read by the tasks in
    splits; a glob, which only Spark expands, by Spark's text source."""
    pages = tmp_path / "pages.jsonl"
    pages.write_text((corpus / "pages.jsonl").read_text().replace("\n", "\n \n", 3))
    common = ["--text-field", "body", "--id-field", "url", "-k", "5"]
    local = run("dedup", str(pages), "-o", "local.jsonl", *common, cwd=tmp_path)
    given = str(pages) if named_by == "path" else str(tmp_path / "page*.jsonl")
    done = run(
        "dedup", given, "-o", "kept.jsonl", "--clusters", "clusters.parquet", "--engine", "spark",
        "--master", "local[2]", *common, cwd=tmp_path,
    )  # fmt: skip
    assert local.returncode == 0 and done.returncode == 0, done.stderr[-3000:]
    kept = [
        line
        for part in sorted((tmp_path / "kept.jsonl").glob("part-*"))
        for line in part.read_text().splitlines()
    ]
    expected = (tmp_path / "local.jsonl").read_text().splitlines()
    assert sorted(kept) == sorted(expected) and len(expected) < len(pages.read_text().split("\n"))
    written_by = {part.suffix for part in (tmp_path / "kept.jsonl").glob("part-*")}
    assert written_by == ({".jsonl"} if named_by == "path" else {".txt"})  # the tasks, or Spark
    clusters = pq.read_table(tmp_path / "clusters.parquet")
    assert clusters.schema.field("url").type == "string"  # ids as the local engine gives them
    assert "time: fingerprint" in done.stderr and ", total " in done.stderr


def test_bad_jsonl_lines_are_named(corpus, tmp_path):
    lines = (corpus / "pages.jsonl").read_text().splitlines()
    (tmp_path / "missing.jsonl").write_text("\n".join([*lines[:5], '{"url": "x"}', *lines[5:]]) + "\n")
    done = run(
        "dedup", "missing.jsonl", "-o", "kept.jsonl", "--text-field", "body", "--engine", "spark",
        "--master", "local[2]", cwd=tmp_path,
    )  # fmt: skip
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode != 0 and "missing.jsonl" in last and "field 'body'" in last, last
    done = run("dedup", "missing.jsonl", "-o", "kept.jsonl", "--engine", "spark", cwd=tmp_path)
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode != 0 and "first line has no field 'text'" in last and "--text-field" in last, last
    assert not (tmp_path / "kept.jsonl").exists()


def comparable_pairs(rows: list[dict]) -> list[tuple]:
    """Pairs as comparable rows: (the ends in order, then the other columns)."""
    return sorted(
        (
            *sorted((r["id_a"], r["id_b"])),
            *(round(v, 9) for k, v in sorted(r.items()) if k not in ("id_a", "id_b")),
        )
        for r in rows
    )


def test_bad_lines_skipped_as_the_local_engine_skips_them(corpus, tmp_path):
    """--on-error skip: the bad lines (not JSON, no text, a text of the wrong type) are left
    out, counted and named in the summary as the local engine names them, and never written,
    however few documents are removed; --max-skipped fails before anything is written."""
    lines = (corpus / "pages.jsonl").read_text().splitlines()
    bad = ["{not json", '{"url": "x"}', '{"url": "y", "body": 7}']
    (tmp_path / "bad.jsonl").write_text("\n".join([bad[0], *lines[:20], bad[1], *lines[20:], bad[2]]) + "\n")
    common = [
        "--text-field",
        "body",
        "--id-field",
        "url",
        "-k",
        "0",
        "--on-error",
        "skip",
        "--verify",
        "jaccard",
        "0.9",
    ]
    spark = run(
        "dedup", "bad.jsonl", "-o", "kept.jsonl", "--engine", "spark", "--master", "local[2]", *common,
        "--driver-limit", "0", cwd=tmp_path,
    )  # fmt: skip  # the checked texts read again past the bad lines
    local = run("dedup", "bad.jsonl", "-o", "local.jsonl", *common, cwd=tmp_path)
    assert spark.returncode == 0 and local.returncode == 0, spark.stderr[-3000:]
    kept = [
        line for part in (tmp_path / "kept.jsonl").glob("part-*") for line in part.read_text().splitlines()
    ]
    assert sorted(kept) == sorted((tmp_path / "local.jsonl").read_text().splitlines())
    assert not set(bad) & set(kept) and len(kept) > len(lines) // 2  # the removed are few
    summary = [line for line in spark.stderr.splitlines() if "skipped" in line or line.startswith("  ")]
    assert f"read {len(lines):,} documents on Spark (local[2]), skipped 3:" in spark.stderr
    for line in local.stderr.splitlines():
        if line.startswith("  ") and "e.g." not in line:  # the counts by reason
            assert line in summary
    assert "bad.jsonl:1" in spark.stderr
    done = run(
        "dedup", "bad.jsonl", "-o", "strict.jsonl", "--engine", "spark", "--master", "local[2]",
        "--max-skipped", "0.01", *common, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode != 0 and "skipped 3 of" in done.stderr and "--max-skipped" in done.stderr
    assert not (tmp_path / "strict.jsonl").exists()
    pq.write_table(pa.Table.from_pylist([json.loads(line) for line in lines]), tmp_path / "pages.parquet")
    done = run("dedup", "pages.parquet", "-o", "kept.parquet", "--engine", "spark", *common, cwd=tmp_path)
    assert done.returncode != 0 and "--on-error skip on --engine spark reads JSONL" in done.stderr


def test_text_lines_as_the_local_engine_reads_them(corpus, tmp_path):
    """--lines: a folder's text files hold a document a line (read by the tasks in splits),
    the kept lines written as text, as the local engine keeps them; blank lines are no
    documents. Other outputs, ids and a folder without --lines are refused, saying why."""
    texts = [json.loads(line)["body"] for line in (corpus / "pages.jsonl").read_text().splitlines()]
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "a.txt").write_text("\n".join(texts[:30]) + "\n\n")
    (folder / "b.txt").write_text("\n".join(texts[30:]) + "\n")
    checked = ["--lines", "-k", "5", "--verify", "jaccard", "0.5"]
    local = run("dedup", str(folder), "-o", "local.txt", *checked, cwd=tmp_path)
    assert local.returncode == 0, local.stderr[-3000:]
    done = run(
        "dedup", str(folder), "-o", "kept.txt", *checked, "--engine", "spark", "--master", "local[2]",
        "--driver-limit", "0", cwd=tmp_path,
    )  # fmt: skip  # the checked lines read again by the tasks
    assert done.returncode == 0, done.stderr[-3000:]
    kept = [line for part in (tmp_path / "kept.txt").glob("part-*") for line in part.read_text().splitlines()]
    expected = (tmp_path / "local.txt").read_text().splitlines()
    documents = [line for f in folder.iterdir() for line in f.read_text().splitlines() if line.strip()]
    assert sorted(kept) == sorted(expected) and len(expected) < len(documents)
    assert {part.suffix for part in (tmp_path / "kept.txt").glob("part-*")} == {".txt"}
    for extra, message in (
        (["-o", "kept.parquet", "--lines"], "writes the kept lines of text files as text lines"),
        (["-o", "kept2.txt", "--lines", "--id-field", "url"], "lines of text have none"),
        (["-o", "kept3.txt"], "--lines reads one document a line"),
    ):
        done = run("dedup", str(folder), *extra, "--engine", "spark", cwd=tmp_path)
        assert done.returncode != 0 and message in done.stderr, done.stderr[-2000:]


def test_verify_keeps_what_the_local_engine_keeps(corpus, tmp_path):
    """--verify on Spark: the texts of the documents with a neighbour are fetched to the
    driver and every pair the rule needs is checked, as the local engine checks it; --pairs
    with --all-pairs lists every pair, with its similarity, as the local engine does."""
    common = ["--text-field", "body", "--id-field", "url", "-k", "7", "--verify", "jaccard", "0.9"]
    done = run(
        "dedup", str(corpus / "pages.jsonl"), "-o", "kept.jsonl", "--pairs", "pairs.parquet",
        "--all-pairs", "--engine", "spark", "--master", "local[2]", *common, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    local = neardup.dedup(
        corpus / "pages.jsonl", text_field="body", id_field="url", max_distance=7, verify=("jaccard", 0.9)
    )
    kept = kept_urls(tmp_path / "kept.jsonl")
    assert sorted(kept) == sorted(np.array(local.ids)[local.kept].tolist())
    assert (
        f"{local.stats.similar_pairs:,} of {local.stats.checked_pairs:,} pairs checked passed verification"
        in done.stderr
    )
    assert local.stats.similar_pairs < local.stats.checked_pairs  # the check removed something
    pairs = pq.read_table(tmp_path / "pairs.parquet")
    every = local.pairs_table(every=True)
    assert pairs.num_rows == every.num_rows > len(local.pairs_table()) and "similarity" in pairs.column_names
    assert comparable_pairs(pairs.to_pylist()) == comparable_pairs(every.to_pylist())


def test_against_and_save_index_as_the_local_engine(corpus, tmp_path):
    """A crawl's second part deduplicated against the index of its first, and the index of
    both saved for the next run: on Spark as on the local engine."""
    lines = (corpus / "pages.jsonl").read_text().splitlines()
    (tmp_path / "one.jsonl").write_text("\n".join(lines[::2]) + "\n")
    (tmp_path / "two.jsonl").write_text("\n".join(lines[1::2]) + "\n")
    common = ["--text-field", "body", "--id-field", "url", "-k", "5"]
    first = run(
        "dedup", "one.jsonl", "-o", "one_kept.jsonl", "--save-index", "seen.idx", *common, cwd=tmp_path
    )
    assert first.returncode == 0, first.stderr
    outputs = {}
    for engine in ("local", "spark"):
        extra = ["--engine", "spark", "--master", "local[2]"] if engine == "spark" else []
        done = run(
            "dedup", "two.jsonl", "-o", f"{engine}.jsonl", "--against", "seen.idx", "--save-index",
            f"{engine}.idx", *common, *extra, cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        kept = tmp_path / f"{engine}.jsonl"
        files = sorted(kept.glob("part-*")) if kept.is_dir() else [kept]
        removed = [line.split(";")[0] for line in done.stderr.splitlines() if "of the index" in line]
        outputs[engine] = (sorted(line for f in files for line in f.read_text().splitlines()), removed)
    assert outputs["spark"] == outputs["local"] and outputs["local"][1]  # some were near the index
    local, spark = (neardup.HammingIndex.open(tmp_path / f"{e}.idx") for e in ("local", "spark"))
    assert np.array_equal(np.sort(local.ids), np.sort(spark.ids)) and len(local.ids) == len(lines)
    assert all(np.array_equal(x, y) for x, y in zip(local.pairs(), spark.pairs()))


def test_cosine_keeps_what_the_local_engine_keeps(corpus, tmp_path):
    common = ["--text-field", "body", "--id-field", "url", "--cosine", "0.98"]
    done = run(
        "dedup", str(corpus / "pages.jsonl"), "-o", "kept.jsonl", "--engine", "spark", "--master",
        "local[2]", *common, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    local = neardup.dedup(corpus / "pages.jsonl", text_field="body", id_field="url", cosine=0.98)
    kept = kept_urls(tmp_path / "kept.jsonl")
    assert sorted(kept) == sorted(np.array(local.ids)[local.kept].tolist())
    assert local.stats.plan in done.stderr and 0 < local.stats.similar_pairs < local.stats.checked_pairs


@pytest.mark.parametrize("driver_limit", [None, "0"])
def test_jaccard_keeps_what_the_local_engine_keeps(corpus, tmp_path, driver_limit):
    """--jaccard on Spark: band keys made in the tasks, every candidate pair checked on the
    driver, or with --driver-limit 0 in the tasks (the texts read again by the splits): the
    local engine's kept documents, plan and pairs (and, on the driver, its counts)."""
    common = ["--text-field", "body", "--id-field", "url", "--jaccard", "0.7"]
    limit = ["--driver-limit", driver_limit] if driver_limit else []
    done = run(
        "dedup", str(corpus / "pages.jsonl"), "-o", "kept.jsonl", "--pairs", "pairs.parquet",
        "--engine", "spark", "--master", "local[2]", *common, *limit, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    local = neardup.dedup(corpus / "pages.jsonl", text_field="body", id_field="url", jaccard=0.7)
    kept = kept_urls(tmp_path / "kept.jsonl")
    assert sorted(kept) == sorted(np.array(local.ids)[local.kept].tolist())
    assert local.stats.plan in done.stderr and "MinHash-LSH" in local.stats.plan
    stats = local.stats
    counts = f"{stats.similar_pairs:,} of {stats.checked_pairs:,} pairs checked passed verification"
    assert (counts in done.stderr) == (driver_limit is None)
    assert ("decide on the driver" in done.stderr) == (driver_limit is None)
    assert not all(local.kept)
    pairs = pq.read_table(tmp_path / "pairs.parquet").to_pylist()
    assert comparable_pairs(pairs) == comparable_pairs(local.pairs_table().to_pylist()) and pairs


def test_decided_by_spark_as_the_local_engine(corpus, longest, tmp_path):
    """--driver-limit 0: Spark takes the decision (ranks, the join, the rule in rounds); the
    tasks write the kept lines from its outcome and Spark the clusters: the local engine's."""
    done = run(
        "dedup", str(corpus / "pages.jsonl"), "-o", "kept.jsonl", "--clusters", "clusters.parquet",
        "--engine", "spark", "--master", "local[2]", "--driver-limit", "0", *LONGEST, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(kept_urls(tmp_path / "kept.jsonl")) == sorted(np.array(longest.ids)[longest.kept].tolist())
    assert pq.read_table(tmp_path / "clusters.parquet").num_rows == len(longest.clusters_table())
    assert ", join " in done.stderr and "decide on the driver" not in done.stderr


def test_the_default_radius_serves_against_and_save_index(corpus, tmp_path):
    """Without -k the radius is the local default (3 bits a 64) for --against and
    --save-index too (they once met None there)."""
    common = ["--text-field", "body", "--id-field", "url", "--engine", "spark", "--master", "local[2]"]
    first = run("dedup", str(corpus / "pages.jsonl"), "--save-index", "seen.idx", *common, cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    assert neardup.HammingIndex.open(tmp_path / "seen.idx").max_distance == 3
    again = run(
        "dedup",
        str(corpus / "pages.jsonl"),
        "-o",
        "kept.jsonl",
        "--against",
        "seen.idx",
        *common,
        cwd=tmp_path,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert not kept_urls(tmp_path / "kept.jsonl")  # every page is in the index already


_HEAP = """
from neardup.spark.session import connect, local_heap
cluster = connect("local[1]", "heap")
codec = cluster.sc.getConf().get("spark.io.compression.codec")
print(cluster.sc._jvm.java.lang.Runtime.getRuntime().maxMemory(), local_heap(), codec)
cluster.stop()
"""


def test_a_local_master_gets_a_heap_of_its_own_size_and_zstd(tmp_path):
    """A local context the job starts sizes its JVM from the memory available, not Spark's
    1 GiB (which ran out at 4M documents), and compresses its shuffles with zstd, unless the
    user said otherwise."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_SUBMIT_ARGS", "SPARK_DRIVER_MEMORY")}
    done = subprocess.run(
        [sys.executable, "-c", _HEAP], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    heap, asked, codec = done.stdout.split()
    assert 0.9 * int(asked) <= int(heap) <= 1.05 * int(asked) and codec == "zstd"
    env["PYSPARK_SUBMIT_ARGS"] = "--driver-memory 700m --conf spark.io.compression.codec=lz4 pyspark-shell"
    done = subprocess.run(
        [sys.executable, "-c", _HEAP], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    heap, _, codec = done.stdout.split()
    assert int(heap) <= 700 << 20 and codec == "lz4"
