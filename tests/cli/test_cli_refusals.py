"""Refuse or warn instead of guessing: an output that would replace an input, a run that
skipped every record (or more than --max-skipped), a report whose clusters name no document
of its corpus, and ids that name more than one document."""

from __future__ import annotations

import importlib.util
import json
import warnings

import pytest

import neardup
from neardup import ConfigError, FormatError

TEXTS = [
    "the city council will vote on the new library budget at its meeting next tuesday",
    "the city council will vote on the new library budget at its meeting next tuesday. share",
    "rain is expected across the northern valleys tomorrow with clearing skies by the weekend",
    "fresh bread is baked every morning at the small bakery on the corner of elm street",
    "scientists have discovered a new species of frog in the cloud forests of ecuador",
]


def write_pages(path, n: int = 5, bad: int = 0) -> bytes:
    lines = [json.dumps({"url": f"https://a.example/{i}", "text": TEXTS[i % len(TEXTS)]}) for i in range(n)]
    lines += ["{not json"] * bad
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(data)
    return data


@pytest.mark.parametrize(
    "args",
    [
        ["pages.jsonl", "-o", "pages.jsonl"],
        ["pages.jsonl", "-o", "./sub/../pages.jsonl"],
        ["pages.jsonl", "-o", "kept.jsonl", "--clusters", "pages.jsonl"],
        ["crawl", "-o", "crawl/kept.jsonl"],
        ["crawl/a.jsonl", "-o", "crawl", "--format", "text"],
    ],
)
def test_dedup_refuses_an_output_that_is_or_lies_in_an_input(tmp_path, run, args):
    (tmp_path / "sub").mkdir()
    (tmp_path / "crawl").mkdir()
    data = write_pages(tmp_path / "pages.jsonl")
    write_pages(tmp_path / "crawl" / "a.jsonl")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    ran = run("dedup", *args, cwd=tmp_path)
    assert ran.returncode == 1, ran.stderr
    assert ran.stderr.startswith("ConfigError: ") and "write it somewhere else" in ran.stderr
    assert (tmp_path / "pages.jsonl").read_bytes() == data
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_dedup_refuses_an_output_linked_to_an_input(tmp_path, run):
    data = write_pages(tmp_path / "pages.jsonl")
    (tmp_path / "kept.jsonl").hardlink_to(tmp_path / "pages.jsonl")
    ran = run("dedup", "pages.jsonl", "-o", "kept.jsonl", cwd=tmp_path)
    assert ran.returncode == 1 and "-o kept.jsonl is the input pages.jsonl" in ran.stderr
    assert (tmp_path / "pages.jsonl").read_bytes() == data


def test_fingerprint_refuses_to_write_over_its_input(tmp_path, run):
    data = write_pages(tmp_path / "pages.jsonl")
    ran = run("fingerprint", "pages.jsonl", "-o", "pages.jsonl", cwd=tmp_path)
    assert ran.returncode == 1 and "-o pages.jsonl is the input pages.jsonl" in ran.stderr
    assert (tmp_path / "pages.jsonl").read_bytes() == data


def test_the_library_refuses_to_write_over_an_input(tmp_path):
    data = write_pages(tmp_path / "pages.jsonl")
    result = neardup.dedup(tmp_path / "pages.jsonl")
    with pytest.raises(ConfigError, match="is the input"):
        result.write(tmp_path / "pages.jsonl")
    assert (tmp_path / "pages.jsonl").read_bytes() == data


@pytest.mark.parametrize("command", [["dedup", "-o", "kept.jsonl"], ["fingerprint", "-o", "kept.fp"]])
def test_skipping_every_record_fails_naming_the_likely_cause(tmp_path, run, command):
    write_pages(tmp_path / "pages.jsonl")
    name, *outputs = command
    ran = run(name, "pages.jsonl", *outputs, "--on-error", "skip", "--text-field", "body", cwd=tmp_path)
    assert ran.returncode == 1, ran.stderr
    assert "FormatError: skipped 5 of 5 records, every record" in ran.stderr
    assert "no 'body' field" in ran.stderr and "--text-field" in ran.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pages.jsonl"]


def test_max_skipped_bounds_the_share_left_out(tmp_path, run):
    write_pages(tmp_path / "pages.jsonl", n=8, bad=2)  # 2 of 10 records are not JSON
    over = run(
        "dedup", "pages.jsonl", "-o", "kept.jsonl", "--on-error", "skip", "--max-skipped", "0.1", cwd=tmp_path
    )
    assert over.returncode == 1 and "more than --max-skipped 0.1 of them" in over.stderr
    assert "not valid JSON" in over.stderr and not (tmp_path / "kept.jsonl").exists()
    within = run(
        "dedup", "pages.jsonl", "-o", "kept.jsonl", "--on-error", "skip", "--max-skipped", "0.2", cwd=tmp_path
    )
    assert within.returncode == 0, within.stderr
    usage = run("dedup", "pages.jsonl", "-o", "kept.jsonl", "--max-skipped", "1.5", cwd=tmp_path)
    assert usage.returncode == 2 and "not a fraction in [0, 1]" in usage.stderr


def test_the_library_fails_when_it_skipped_every_record(tmp_path):
    write_pages(tmp_path / "pages.jsonl")
    with pytest.raises(FormatError, match=r"skipped 5 of 5 records, every record.*no 'body' field"):
        neardup.dedup(tmp_path / "pages.jsonl", text_field="body", errors="skip")
    result = neardup.dedup(tmp_path / "pages.jsonl", text_field="body", errors="skip", max_skipped=1)
    assert len(result) == 0 and result.stats.skipped == 5


@pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is None, reason="needs matplotlib: neardup[report]"
)
def test_report_says_when_no_cluster_id_is_a_corpus_id(tmp_path, run):
    write_pages(tmp_path / "pages.jsonl", n=10)
    made = run("dedup", "pages.jsonl", "--id-field", "url", "--clusters", "clusters.csv", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    ran = run("report", "--clusters", "clusters.csv", "--corpus", "pages.jsonl", "-o", "report", cwd=tmp_path)
    assert ran.returncode == 1, ran.stderr
    assert "no id of clusters.csv (e.g. 'https://a.example/" in ran.stderr
    assert "give the --id-field" in ran.stderr and not (tmp_path / "report").exists()
    ok = run(
        "report",
        "--clusters",
        "clusters.csv",
        "--corpus",
        "pages.jsonl",
        "--id-field",
        "url",
        "-o",
        "report",
        cwd=tmp_path,
    )
    assert ok.returncode == 0 and "warning" not in ok.stderr, ok.stderr


@pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is None, reason="needs matplotlib: neardup[report]"
)
def test_report_warns_of_cluster_ids_missing_from_the_corpus(tmp_path, run):
    write_pages(tmp_path / "pages.jsonl", n=10)
    assert (
        run(
            "dedup", "pages.jsonl", "--id-field", "url", "--clusters", "clusters.csv", cwd=tmp_path
        ).returncode
        == 0
    )
    write_pages(tmp_path / "fewer.jsonl", n=6)  # the copies 6..9 are gone
    ran = run(
        "report",
        "--clusters",
        "clusters.csv",
        "--corpus",
        "fewer.jsonl",
        "--id-field",
        "url",
        "-o",
        "report",
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
    assert (
        "warning: 4 of the 10 ids of clusters.csv are not in --corpus (e.g. 'https://a.example/6')"
        in ran.stderr
    )


def test_repeated_ids_are_reported(tmp_path, run):
    lines = [json.dumps({"url": f"u{i % 3}", "text": TEXTS[i % 5]}) for i in range(7)]  # u0 x3, u1 x2, u2 x2
    (tmp_path / "pages.jsonl").write_text("\n".join(lines) + "\n")
    ran = run("dedup", "pages.jsonl", "--id-field", "url", "-o", "kept.jsonl", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    expected = "warning: 3 values of --id-field 'url' name more than one document (4 documents"
    assert expected in ran.stderr and "'u0' names 3" in ran.stderr
    pairs = run("pairs", "pages.jsonl", "--id-field", "url", cwd=tmp_path)
    assert pairs.returncode == 0 and expected in pairs.stderr
    with pytest.warns(UserWarning, match="3 values of --id-field 'url' name more than one document"):
        neardup.dedup(tmp_path / "pages.jsonl", id_field="url")
    unique = tmp_path / "unique.jsonl"
    write_pages(unique)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        neardup.dedup(unique, id_field="url")


@pytest.mark.parametrize("delay", ["-1", "nan", "inf", "soon"])
def test_serve_refuses_a_commit_delay_that_is_not_a_number_of_milliseconds(tmp_path, run, delay):
    refused = run("serve", "--data", "data", f"--commit-delay={delay}", cwd=tmp_path)
    assert refused.returncode == 2 and "--commit-delay" in refused.stderr
    assert not (tmp_path / "data").exists()  # refused before the folder is made
