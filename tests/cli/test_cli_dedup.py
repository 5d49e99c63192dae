"""``neardup dedup``, ``report`` and ``explain`` on files in tmp_path, run in this process by the
``run`` fixture (one dedup end to end in a process of its own); expectations come from the
library on the same data."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest
from cli_helpers import run_process

import neardup
from neardup.planted.example import example_corpus
from neardup.planted.generator import planted_corpus


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cli_dedup")
    docs = planted_corpus(
        30, variants_per_original=2, edit_rates=(0.0, 0.02), scripts=("en", "ru"), words_per_doc=80, seed=5
    )
    path = folder / "pages.jsonl"
    path.write_text(
        "".join(json.dumps({"url": d.id, "body": d.text, "n": i}) + "\n" for i, d in enumerate(docs))
    )
    return path


@pytest.mark.slow
def test_dedup_writes_what_the_library_finds(corpus_file, tmp_path):
    result = run_process(
        "dedup",
        str(corpus_file),
        "-o",
        "kept.jsonl",
        "--text-field",
        "body",
        "--id-field",
        "url",
        "--clusters",
        "clusters.csv",
        "--pairs",
        "pairs.parquet",
        "-k",
        "4",
        "--keep",
        "longest",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    expected = neardup.dedup(corpus_file, text_field="body", id_field="url", max_distance=4, keep="longest")
    lines = corpus_file.read_text().splitlines()
    kept = (tmp_path / "kept.jsonl").read_text().splitlines()
    assert kept == [line for line, k in zip(lines, expected.kept) if k]
    assert expected.stats.duplicates > 10
    clusters = pa_csv.read_csv(tmp_path / "clusters.csv").to_pylist()
    assert len(clusters) == len(expected.clusters_table())
    assert f"removed {expected.stats.duplicates} near-duplicates" in result.stderr
    assert re.search(r"time: (compile [\d.]+ s, )?read \+ fingerprint", result.stderr)
    assert not list(tmp_path.glob(".*.tmp"))


def test_dedup_error_names_the_line_and_writes_nothing(tmp_path, run):
    (tmp_path / "in.jsonl").write_text('{"text": "fine"}\n{"text": 7}\n')
    result = run("dedup", "in.jsonl", "-o", "out.jsonl", "--clusters", "c.csv", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("FormatError: in.jsonl:2: field 'text' is a JSON number")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]
    result = run("dedup", "in.jsonl", "-o", "out.jsonl", "--on-error", "skip", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "skipped 1" in result.stderr and "in.jsonl:2: field 'text'" in result.stderr
    assert (tmp_path / "out.jsonl").read_text() == '{"text": "fine"}\n'


def test_dedup_usage_errors(tmp_path, run):
    assert "nothing to write" in run("dedup", "x.jsonl", cwd=tmp_path).stderr
    assert "name INPUT" in run("dedup", "-o", "y", cwd=tmp_path).stderr
    result = run("dedup", "x.jsonl", "-o", "y", "--verify", "jaccard", "high", cwd=tmp_path)
    assert "the threshold must be a number" in result.stderr


def test_verify_and_against_and_save_index(corpus_file, tmp_path, run):
    result = run(
        "dedup",
        str(corpus_file),
        "--text-field",
        "body",
        "--bits",
        "128",
        "-k",
        "16",
        "--verify",
        "jaccard",
        "0.7",
        "--pairs",
        "pairs.csv",
        "--save-index",
        "seen.idx",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    pairs = pa_csv.read_csv(tmp_path / "pairs.csv").to_pylist()
    assert pairs and all(p["similarity"] >= 0.7 for p in pairs)
    again = run(
        "dedup",
        str(corpus_file),
        "--text-field",
        "body",
        "--bits",
        "128",
        "-k",
        "16",
        "--against",
        "seen.idx",
        "-o",
        "fresh.jsonl",
        cwd=tmp_path,
    )
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "fresh.jsonl").read_text() == ""  # every document was seen
    mismatch = run(
        "dedup",
        str(corpus_file),
        "--text-field",
        "body",
        "--against",
        "seen.idx",
        "-o",
        "x.jsonl",
        cwd=tmp_path,
    )
    assert mismatch.returncode == 1 and "128-bit" in mismatch.stderr


def test_example_shows_clusters(tmp_path, run):
    result = run("dedup", "--example", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    ids = {d.id for d in example_corpus()}
    shown = [line.split()[1] for line in result.stdout.splitlines() if line.startswith((" +", " -"))]
    assert shown and set(shown) <= ids
    assert "clusters of near-duplicates" in result.stdout


def test_report_and_explain(corpus_file, tmp_path, run):
    pytest.importorskip("matplotlib", reason="a report draws with matplotlib: pip install 'neardup[report]'")
    assert (
        run(
            "dedup",
            str(corpus_file),
            "--text-field",
            "body",
            "--clusters",
            "c.parquet",
            "--pairs",
            "p.csv",
            cwd=tmp_path,
        ).returncode
        == 0
    )
    result = run(
        "report",
        "--clusters",
        "c.parquet",
        "--pairs",
        "p.csv",
        "-o",
        "report",
        "--corpus",
        str(corpus_file),
        "--text-field",
        "body",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "report" / "index.html").read_text()
    assert "(no text)" not in page
    first = pq.read_table(tmp_path / "c.parquet").column("id")[0].as_py()
    line = int(first.rsplit(":", 1)[1])
    text = json.loads(corpus_file.read_text().splitlines()[line - 1])["body"]
    assert html.escape(" ".join(text.split()[:5])) in page
    a, b = "the cat sat on the mat today", "the cat sat on a mat today"
    shown = run("explain", a, b, "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["distance"] == neardup.hamming(neardup.simhash(a), neardup.simhash(b))
    by_id = run(
        "explain",
        f"{corpus_file}:1",
        f"{corpus_file}:2",
        "--corpus",
        str(corpus_file),
        "--text-field",
        "body",
        cwd=tmp_path,
    )
    assert by_id.returncode == 0, by_id.stderr
    assert "exact jaccard" in by_id.stdout
    missing = run("explain", "nope", "x", "--corpus", str(corpus_file), "--text-field", "body", cwd=tmp_path)
    assert missing.returncode == 1 and "no document with id 'nope'" in missing.stderr


@pytest.mark.parametrize(
    "flag, name", [("--keep", "keep"), ("--featureless", "featureless"), ("--cluster", "cluster")]
)
def test_the_cli_offers_exactly_the_choices_the_options_accept(flag, name):
    from neardup.cli.main import build_parser

    dedup_parser = build_parser()._subparsers._group_actions[0].choices["dedup"]
    offered = next(a.choices for a in dedup_parser._actions if flag in a.option_strings)
    for value in offered:
        assert getattr(neardup.DedupOptions(**{name: value}), name) == value
    with pytest.raises(neardup.ConfigError, match=f"{name}='bogus' is not allowed; choose one of"):
        neardup.DedupOptions(**{name: "bogus"})


def test_one_document_per_file_to_txt_is_refused_before_reading(tmp_path, run):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("one page\nof two lines\n")
    (docs / "b.txt").write_bytes(b"\xff not UTF-8, which reading would report first")
    result = run("dedup", "docs", "-o", "out.txt", cwd=tmp_path)
    assert result.returncode != 0
    assert "one document per file" in result.stderr and "-o out/" in result.stderr
    assert "UTF-8" not in result.stderr and ".tmp" not in result.stderr  # refused before reading
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"]


def test_featureless_documents_kept_by_default_and_dropped_on_request(tmp_path, run):
    (tmp_path / "in.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate([" ", "...", "", "a real page"])
        )
    )
    kept = run("dedup", "in.jsonl", "-o", "kept.jsonl", "--id-field", "id", cwd=tmp_path)
    assert kept.returncode == 0, kept.stderr
    assert len((tmp_path / "kept.jsonl").read_text().splitlines()) == 4
    assert "3 documents had no features" in kept.stderr
    dropped = run("dedup", "in.jsonl", "-o", "kept.jsonl", "--featureless", "drop", cwd=tmp_path)
    assert dropped.returncode == 0, dropped.stderr
    assert [json.loads(line)["id"] for line in (tmp_path / "kept.jsonl").read_text().splitlines()] == [3]


def test_pairs_by_default_rebuild_the_clusters_and_all_pairs_lists_every_one(tmp_path, run):
    page = "the same page of a crawl, copied word for word many times over " * 3
    lines = [json.dumps({"id": i, "text": page}) for i in range(60)]  # 1,770 pairs of copies
    lines += [json.dumps({"id": 100 + i, "text": f"{page} {i}"}) for i in range(3)]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    common = ("dedup", "in.jsonl", "--id-field", "id", "-k", "6", "--features", "words")
    assert run(*common, "--pairs", "some.csv", cwd=tmp_path).returncode == 0
    assert run(*common, "--pairs", "all.csv", "--all-pairs", cwd=tmp_path).returncode == 0
    expected = neardup.dedup(tmp_path / "in.jsonl", id_field="id", max_distance=6, features="words")
    every = pa_csv.read_csv(tmp_path / "all.csv").to_pylist()
    assert len(every) == len(expected.pairs[0]) >= 60 * 59 // 2
    some = pa_csv.read_csv(tmp_path / "some.csv").to_pylist()
    assert len(some) < 100
    assert {(p["id_a"], p["id_b"]) for p in some} <= {(p["id_a"], p["id_b"]) for p in every}
    assert sum(p["id_b"] < 60 and p["distance"] == 0 for p in some) == 59  # each copy to the first
    refused = run(*common, "-o", "kept.jsonl", "--all-pairs", cwd=tmp_path)
    assert refused.returncode == 2 and "give --pairs FILE too" in refused.stderr


def test_verify_features_reach_the_library_and_need_verify(corpus_file, tmp_path, run):
    options = ["--text-field", "body", "--features", "words", "--bits", "128", "-k", "16"]
    done = run(
        "dedup", str(corpus_file), "--pairs", "pairs.csv", *options,
        "--verify", "jaccard", "0.7", "--verify-features", "char-ngrams", "--verify-size", "4", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    expected = neardup.dedup(
        corpus_file, text_field="body", features="words", bits=128, max_distance=16,
        verify=("jaccard", 0.7), verify_features="char-ngrams", verify_size=4,
    )  # fmt: skip
    written = pa_csv.read_csv(tmp_path / "pairs.csv").to_pylist()
    assert sorted(round(p["similarity"], 9) for p in written) == sorted(
        round(s, 9) for c in expected.iter_pairs() for s in c.similarity.tolist()
    )
    refused = run("dedup", str(corpus_file), "-o", "k.jsonl", "--verify-features", "words", cwd=tmp_path)
    assert refused.returncode == 1 and "give verify= (--verify), jaccard= (--jaccard)" in refused.stderr


def test_jaccard_writes_what_the_library_keeps(corpus_file, tmp_path, run):
    done = run(
        "dedup", str(corpus_file), "-o", "kept.jsonl", "--clusters", "clusters.csv", "--text-field", "body",
        "--jaccard", "0.7", "--cluster", "components", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    expected = neardup.dedup(corpus_file, text_field="body", jaccard=0.7, cluster="components")
    lines = corpus_file.read_text().splitlines()
    assert (tmp_path / "kept.jsonl").read_text().splitlines() == [
        l for l, k in zip(lines, expected.kept) if k
    ]
    assert expected.stats.duplicates > 10
    assert "--jaccard 0.7 on word 3-shingles: candidates from MinHash-LSH" in done.stderr
    assert "passed verification" in done.stderr


def test_explain_plan_and_jaccard_usage_errors(corpus_file, tmp_path, run):
    plan = run("dedup", "--jaccard", "0.8", "--explain-plan", cwd=tmp_path)
    assert plan.returncode == 0, plan.stderr
    assert "21 bands of 9 rows" in plan.stdout and "J=0.80: 0.952" in plan.stdout
    plan = run("dedup", "--cosine", "0.98", "--bits", "128", "--explain-plan", cwd=tmp_path)
    assert plan.returncode == 0 and "SimHash radius 13 of 128 bits" in plan.stdout, plan.stderr
    refusals = [
        (["--explain-plan"], "explains a --jaccard or --cosine run"),
        (["--jaccard", "0.8", "--verify", "jaccard", "0.5"], "leave out verify= (--verify)"),
        (["--jaccard", "0.8", "-k", "3"], "not allowed with argument"),
        (
            ["--jaccard", "0.8", "--against", "x.idx", "--engine", "spark"],
            "not combine with jaccard= (--jaccard)",
        ),
        (["--cosine", "0.9"], "needs a radius the index does not serve"),
        (["--cosine", "0.99", "--verify", "cosine", "0.5"], "leave out verify= (--verify)"),
    ]
    for options, message in refusals:
        done = run("dedup", str(corpus_file), "-o", "k.jsonl", "--text-field", "body", *options, cwd=tmp_path)
        assert done.returncode != 0 and message in done.stderr, (options, done.stderr)


@pytest.mark.parametrize("flag", ["--block-mb", "--max-document-mb"])
@pytest.mark.parametrize("value", ["-1", "0", "nan"])
def test_sizes_that_are_not_positive_are_usage_errors(run, tmp_path, flag, value):
    (tmp_path / "pages.jsonl").write_text('{"text": "one"}\n')
    done = run("dedup", "pages.jsonl", "-o", "kept.jsonl", flag, value, cwd=tmp_path)
    assert done.returncode == 2 and f"{value} is not a positive number" in done.stderr
    assert not (tmp_path / "kept.jsonl").exists()


def test_dedup_in_a_memory_budget_writes_what_it_writes_without(tmp_path, run):
    """20,000 lines, 6,000 of them a word away from another: past --memory 300K the join
    goes out of core into --work-dir, and the kept lines and clusters are the same."""
    import random
    from unittest import mock

    from neardup.index import disk_join

    rng = random.Random(4)
    words = [f"w{i}" for i in range(5000)]
    lines = [" ".join(rng.choices(words, k=40)) for _ in range(14_000)]
    lines += [line.rsplit(" ", 1)[0] + " changed" for line in lines[:6_000]]
    (tmp_path / "lines.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "work").mkdir()
    plain = run("dedup", "lines.txt", "-o", "plain.txt", "--clusters", "plain.csv", "-q", cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    joined = []
    real = disk_join.disk_self_join
    spy = mock.patch(
        "neardup.index.self_join.disk_self_join", lambda *a, **k: joined.append(1) or real(*a, **k)
    )
    with spy:
        budget = run(
            "dedup", "lines.txt", "-o", "kept.txt", "--clusters", "clusters.csv", "-q",
            "--memory", "300K", "--work-dir", "work", cwd=tmp_path,
        )  # fmt: skip
    assert budget.returncode == 0, budget.stderr
    assert joined and list((tmp_path / "work").iterdir()) == []
    assert (tmp_path / "kept.txt").read_text() == (tmp_path / "plain.txt").read_text()
    assert (tmp_path / "clusters.csv").read_text() == (tmp_path / "plain.csv").read_text()
    assert len((tmp_path / "kept.txt").read_text().splitlines()) < 18_000  # near-duplicates went

    alone = run("dedup", "lines.txt", "-o", "x.txt", "--work-dir", "work", cwd=tmp_path)
    assert alone.returncode == 2 and "give --memory SIZE too" in alone.stderr
    jaccard = run("dedup", "lines.txt", "-o", "x.txt", "--memory", "1G", "--jaccard", "0.8", cwd=tmp_path)
    assert jaccard.returncode != 0 and "MinHash buckets are joined in memory" in jaccard.stderr
    spark = run("dedup", "lines.txt", "-o", "x.txt", "--memory", "1G", "--engine", "spark", cwd=tmp_path)
    assert spark.returncode == 2 and "--memory does not run on --engine spark" in spark.stderr
    assert not (tmp_path / "x.txt").exists()
