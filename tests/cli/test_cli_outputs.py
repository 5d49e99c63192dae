"""Results are never lost or hidden: two outputs on one path are refused, an output that
cannot be written is refused before anything is read (stdin left unread), and what a killed
run leaves (its stdin spool, its temporary outputs) is gone or removed by the next run."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys

import pytest

import neardup
from neardup import ConfigError

TEXTS = [
    "the city council will vote on the new library budget at its meeting next tuesday",
    "the city council will vote on the new library budget at its meeting next tuesday evening",
    "rain is expected across the northern valleys tomorrow with clearing skies by the weekend",
]
PAGES = "".join(json.dumps({"text": t}) + "\n" for t in TEXTS).encode()


def _unread(run, *args, cwd):
    """``neardup ARGS`` reading stdin, which must fail with status 1 before reading a byte;
    its stderr."""
    ran = run(*args, "--input-format", "jsonl", cwd=cwd, stdin=PAGES)
    assert ran.returncode == 1, ran.stderr
    assert sys.stdin.buffer.tell() == 0, "stdin was read before the outputs were checked"
    return ran.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["dedup", "-", "-o", "k.jsonl", "--clusters", "x.csv", "--pairs", "x.csv"],
            "--clusters x.csv and --pairs x.csv are one file",
        ),
        (
            ["dedup", "-", "-o", "o.csv", "--pairs", "o.csv", "--format", "jsonl"],
            "-o o.csv and --pairs o.csv are one file",
        ),
        (
            ["dedup", "-", "-o", "k.idx", "--format", "jsonl", "--save-index", "sub/../k.idx"],
            "-o k.idx and --save-index sub/../k.idx are one file",
        ),
        (["dedup", "-", "-o", "k.jsonl", "--clusters", "link/c.csv", "--pairs", "c.csv"], "are one file"),
        (["dedup", "-", "--clusters", "c.csv", "--pairs", "hard.csv"], "--clusters c.csv and --pairs hard"),
        (["dedup", "-", "-o", "sub", "--clusters", "sub/c.csv"], "--clusters sub/c.csv is inside -o sub"),
        (["passages", "-", "-o", "s.csv", "--common", "s.csv"], "-o s.csv and --common s.csv are one file"),
        (
            ["passages", "-", "-o", "s.jsonl", "--documents", "./s.jsonl"],
            "-o s.jsonl and --documents ./s.jsonl are one file",
        ),
    ],
)
def test_two_outputs_on_one_path_are_refused_before_reading(tmp_path, run, args, message):
    (tmp_path / "sub").mkdir()
    (tmp_path / "link").symlink_to(".")
    (tmp_path / "c.csv").write_text("old\n")
    (tmp_path / "hard.csv").hardlink_to(tmp_path / "c.csv")
    before = sorted(p.name for p in tmp_path.iterdir())
    stderr = _unread(run, *args, cwd=tmp_path)
    assert stderr.startswith("ConfigError: ") and message in stderr, stderr
    assert "give each its own path" in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / "c.csv").read_text() == "old\n"


@pytest.mark.skipif(importlib.util.find_spec("pyspark") is None, reason="needs pyspark: neardup[spark]")
def test_spark_refuses_two_outputs_on_one_path_before_it_starts(tmp_path, run):
    (tmp_path / "pages.jsonl").write_bytes(PAGES)
    ran = run(
        "dedup", "pages.jsonl", "--engine", "spark", "--id-field", "text", "-o", "k.parquet",
        "--clusters", "x.parquet", "--pairs", "./x.parquet", cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 1 and "--clusters x.parquet and --pairs ./x.parquet are one file" in ran.stderr
    missing = run("dedup", "pages.jsonl", "--engine", "spark", "-o", "no/such/k.parquet", cwd=tmp_path)
    assert missing.returncode == 1, missing.stderr
    assert "-o no/such/k.parquet: the folder no/such does not exist" in missing.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pages.jsonl"]


def test_the_library_refuses_two_outputs_on_one_path(tmp_path):
    (tmp_path / "pages.jsonl").write_bytes(PAGES)
    result = neardup.dedup(tmp_path / "pages.jsonl", max_distance=8)
    with pytest.raises(ConfigError, match=r"clusters .*x.csv and pairs .*x.csv are one file"):
        result.write(clusters=tmp_path / "x.csv", pairs=tmp_path / "x.csv")
    in_memory = neardup.dedup(TEXTS, max_distance=8)
    with pytest.raises(ConfigError, match=r"output .*k.jsonl and save_index .*k.jsonl are one file"):
        in_memory.write(tmp_path / "k.jsonl", save_index=tmp_path / "k.jsonl")
    found = neardup.passages(tmp_path / "pages.jsonl", min_words=8)
    with pytest.raises(ConfigError, match=r"output .*s.csv and common .*s.csv are one file"):
        found.write(tmp_path / "s.csv", tmp_path / "s.csv")
    with pytest.raises(ConfigError, match=r"path .*pages.jsonl is the input"):
        found.write_documents(tmp_path / "pages.jsonl")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pages.jsonl"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["dedup", "-", "-o", "no/sub/out.jsonl"], "-o no/sub/out.jsonl: the folder no/sub does not exist"),
        (["dedup", "-", "-o", "a.jsonl/out.jsonl"], "-o a.jsonl/out.jsonl: a.jsonl is a file, not a folder"),
        (["dedup", "-", "-o", "folder.tsv"], "-o folder.tsv is a folder"),
        (["dedup", "-", "-o", "k.jsonl", "--clusters", "no/c.csv"], "--clusters no/c.csv: the folder no "),
        (["dedup", "-", "--pairs", "no/p.csv"], "--pairs no/p.csv: the folder no "),
        (["dedup", "-", "--save-index", "a.jsonl/x.idx"], "--save-index a.jsonl/x.idx: a.jsonl is a file"),
        (["passages", "-", "-o", "no/s.tsv"], "-o no/s.tsv: the folder no "),
        (["passages", "-", "--common", "folder.tsv"], "--common folder.tsv is a folder"),
        (["passages", "-", "--documents", "no/d.jsonl"], "--documents no/d.jsonl: the folder no "),
        (["fingerprint", "-", "-o", "no/f.fp"], "-o no/f.fp: the folder no "),
        (["pairs", "-", "-o", "no/p.tsv"], "-o no/p.tsv: the folder no "),
        (["index", "build", "-", "-o", "no/i.idx"], "-o no/i.idx: the folder no "),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_reading(tmp_path, run, args, message):
    (tmp_path / "a.jsonl").write_bytes(PAGES)
    (tmp_path / "folder.tsv").mkdir()
    stderr = _unread(run, *args, cwd=tmp_path)
    assert stderr.startswith("ConfigError: ") and message in stderr, stderr
    assert ".tmp" not in stderr  # the path given, not a temporary one
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "folder.tsv"]


def test_a_folder_of_one_document_files_must_be_new_or_empty(tmp_path, run):
    (tmp_path / "docs").mkdir()
    for name, text in (("1.txt", TEXTS[0]), ("2.txt", TEXTS[1])):
        (tmp_path / "docs" / name).write_text(text)
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "mine.txt").write_text("the user's own")
    (tmp_path / "empty").mkdir()
    taken = run("dedup", "docs", "-o", "kept", cwd=tmp_path)
    assert taken.returncode == 1 and "-o kept exists and is not an empty folder" in taken.stderr
    written = run("dedup", "docs", "-o", "empty", "-k", "8", cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    assert sorted(p.name for p in (tmp_path / "empty").iterdir()) == ["1.txt"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in any folder")
def test_a_folder_not_writable_is_refused_before_reading(tmp_path, run):
    (tmp_path / "locked").mkdir(mode=0o555)
    stderr = _unread(run, "dedup", "-", "-o", "locked/kept.jsonl", cwd=tmp_path)
    assert "-o locked/kept.jsonl: the folder locked is not writable" in stderr
    assert not any((tmp_path / "locked").iterdir())


def _ended_pid() -> int:
    """The id of a process that has ended (and been waited for)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_run_removes_the_temporaries_dead_writers_left_of_its_outputs(tmp_path, run):
    (tmp_path / "pages.jsonl").write_bytes(PAGES)
    dead, alive = _ended_pid(), os.getpid()
    stale_file = tmp_path / f".kept.jsonl.{dead}.0badf00d.tmp"
    stale_folder = tmp_path / f".kept.jsonl.{dead}.1badf00d.tmp"  # as atomic_dir makes them
    stale_clusters = tmp_path / f".clusters.csv.{dead}.2badf00d.tmp"
    stale_file.write_bytes(b"x" * 1000)
    stale_folder.mkdir()
    (stale_folder / "part-00000.jsonl").write_bytes(b"x" * 1000)
    stale_clusters.write_bytes(b"x")
    kept = [
        tmp_path / f".kept.jsonl.{alive}.3badf00d.tmp",  # a live writer's
        tmp_path / f".other.jsonl.{dead}.4badf00d.tmp",  # not this run's output
        tmp_path / f".kept.jsonl.{dead}.5badf00d.tmp.bak",  # not the pattern
        tmp_path / f"kept.jsonl.{dead}.6badf00d.tmp",
    ]
    for path in kept:
        path.write_bytes(b"keep")
    ran = run("dedup", "pages.jsonl", "-o", "kept.jsonl", "--clusters", "clusters.csv", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert not stale_file.exists() and not stale_folder.exists() and not stale_clusters.exists()
    assert all(path.read_bytes() == b"keep" for path in kept)


def test_a_run_killed_while_reading_stdin_leaves_no_spool(tmp_path):
    spool = tmp_path / "tmp"  # $TMPDIR, where stdin is saved
    spool.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-m", "neardup", "dedup", "-", "-o", "kept.txt", "-q"],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(spool)},
    )
    try:
        assert child.stdin is not None
        line = b"a line of text that the run saves before it fingerprints anything\n"
        child.stdin.write(line * 50_000)  # 3 MB: returns once the run has read most of it
        child.stdin.flush()
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=60) == -signal.SIGKILL
    finally:
        child.kill()
        child.wait()
        child.stdin.close()
    assert list(spool.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tmp"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["dedup", "-", "--clusters", "c.csv.gz"], "c.csv.gz: name the table's format by its suffix"),
        (["dedup", "-", "--clusters", "clusters"], "clusters: name the table's format by its suffix"),
        (["dedup", "-", "--clusters", "c.csv", "--pairs", "p.txt"], "p.txt: name the table's format"),
        (["passages", "-", "-o", "s.csv.gz"], "s.csv.gz: name the table's format by its suffix"),
    ],
)
def test_every_command_names_a_table_by_one_rule_before_reading(tmp_path, run, args, message):
    stderr = _unread(run, *args, cwd=tmp_path)
    assert message in stderr and ".parquet, .csv, .tsv, .jsonl" in stderr, stderr
    assert not list(tmp_path.iterdir())


def test_dedup_writes_its_tables_as_jsonl_as_passages_does(tmp_path, run):
    copied = PAGES + (json.dumps({"text": TEXTS[0].upper() + "!"}) + "\n").encode()
    args = ["--input-format", "jsonl", "--clusters", "c.jsonl", "--pairs", "p.jsonl"]
    ran = run("dedup", "-", *args, cwd=tmp_path, stdin=copied)
    assert ran.returncode == 0, ran.stderr
    clusters = [json.loads(line) for line in (tmp_path / "c.jsonl").read_text().splitlines()]
    pairs = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert sorted(row["id"] for row in clusters) == ["<stdin>:1", "<stdin>:4"]
    assert [(row["id_a"], row["id_b"], row["distance"]) for row in pairs] == [("<stdin>:1", "<stdin>:4", 0)]
