"""One reading rule for every command: fingerprint files recognised wherever a command takes
them, a named text file read alike by every command, the same default ids everywhere, and
``-`` for stdin in dedup too."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import tempfile

import pyarrow.csv as pa_csv

import neardup
import neardup.io.documents

TEXTS = [
    "the city council will vote on the new library budget at its meeting next tuesday",
    "the city council will vote on the new library budget at its meeting next tuesday evening",
    "rain is expected across the northern valleys tomorrow with clearing skies by the weekend",
    "fresh bread is baked every morning at the small bakery on the corner of elm street",
    "fresh bread is baked every morning at the small bakery on the corner of elm road",
]


def test_pairs_reads_several_fingerprint_files_as_fingerprints(tmp_path, run):
    (tmp_path / "a.txt").write_text("\n".join(TEXTS[:3]) + "\n")
    (tmp_path / "b.txt").write_text("\n".join(TEXTS[3:]) + "\n")
    for name in ("a", "b"):
        assert run("fingerprint", f"{name}.txt", "-o", f"{name}.fp", cwd=tmp_path).returncode == 0
    of_files = run("pairs", "a.fp", "b.fp", "-k", "8", cwd=tmp_path)
    of_texts = run("pairs", "a.txt", "b.txt", "-k", "8", cwd=tmp_path)
    assert of_files.returncode == 0, of_files.stderr
    assert "among 5 fingerprints" in of_files.stderr  # not the lines of two files fingerprinted
    distances = [line.split("\t")[2] for line in of_texts.stdout.splitlines()[1:]]
    assert [line.split("\t")[2] for line in of_files.stdout.splitlines()[1:]] == distances
    assert len(of_files.stdout.splitlines()) > 1


def test_fingerprint_files_of_other_configs_or_beside_documents_are_refused(tmp_path, run):
    (tmp_path / "a.txt").write_text("\n".join(TEXTS) + "\n")
    assert run("fingerprint", "a.txt", "-o", "a.fp", cwd=tmp_path).returncode == 0
    assert run("fingerprint", "a.txt", "--bits", "128", "-o", "wide.fp", cwd=tmp_path).returncode == 0
    mixed = run("pairs", "a.fp", "wide.fp", cwd=tmp_path)
    assert (
        mixed.returncode == 1
        and "hold fingerprints of different configs (they differ in bits)" in mixed.stderr
    )
    beside = run("pairs", "a.fp", "a.txt", cwd=tmp_path)
    assert beside.returncode == 1 and "a.fp is a fingerprint file but a.txt is not" in beside.stderr


def test_a_named_text_file_is_one_document_a_line_in_every_command(tmp_path, run):
    (tmp_path / "docs.txt").write_text("\n".join(TEXTS) + "\n")
    deduped = run(
        "dedup", "docs.txt", "-o", "kept.txt", "--clusters", "clusters.csv", "-k", "8", cwd=tmp_path
    )
    assert deduped.returncode == 0, deduped.stderr
    assert "read 5 documents" in deduped.stderr  # not 1, the whole file
    assert (tmp_path / "kept.txt").read_text().splitlines() == [TEXTS[0], TEXTS[2], TEXTS[3]]
    fingerprinted = run("fingerprint", "docs.txt", cwd=tmp_path)
    assert len(fingerprinted.stdout.splitlines()) == 1 + 5
    explained = run("explain", "docs.txt:1", "docs.txt:2", "--corpus", "docs.txt", cwd=tmp_path)
    assert explained.returncode == 0, explained.stderr
    whole = run("dedup", "docs.txt", "-o", "whole.jsonl", "--input-format", "text", cwd=tmp_path)
    assert (whole.returncode == 0 and "1 documents" in whole.stderr) or "1 document" in whole.stderr


def test_the_library_reads_a_named_text_file_as_lines(tmp_path):
    (tmp_path / "docs.txt").write_text("\n".join(TEXTS) + "\n")
    assert len(neardup.dedup(tmp_path / "docs.txt")) == 5
    assert len(neardup.dedup(tmp_path / "docs.txt", input_format="text")) == 1
    folder = tmp_path / "pages"
    folder.mkdir()
    (folder / "a.txt").write_text("\n".join(TEXTS) + "\n")
    assert len(neardup.dedup(folder)) == 1  # a folder's files are one document each
    assert len(neardup.dedup(folder, lines=True)) == 5


def test_every_command_gives_the_same_default_ids(tmp_path, run):
    (tmp_path / "a.jsonl").write_text("".join(f'{{"text": "{t}"}}\n' for t in TEXTS[:3]))
    (tmp_path / "b.txt").write_text("\n".join(TEXTS[3:]) + "\n")
    fingerprinted = run("fingerprint", "a.jsonl", "-o", "a.fp", cwd=tmp_path)
    assert fingerprinted.returncode == 0, fingerprinted.stderr
    assert run("fingerprint", "b.txt", "-o", "b.fp", cwd=tmp_path).returncode == 0
    pairs = run("pairs", "a.fp", "b.fp", "-k", "8", cwd=tmp_path)
    assert pairs.returncode == 0, pairs.stderr
    found = {tuple(line.split("\t")[:2]) for line in pairs.stdout.splitlines()[1:]}
    assert found == {("a.jsonl:1", "a.jsonl:2"), ("b.txt:1", "b.txt:2")}
    deduped = run(
        "dedup", "a.jsonl", "b.txt", "-o", "kept.jsonl", "--pairs", "p.csv", "-k", "8", cwd=tmp_path
    )
    assert deduped.returncode == 0, deduped.stderr
    rows = pa_csv.read_csv(tmp_path / "p.csv").to_pylist()
    assert {(row["id_a"], row["id_b"]) for row in rows} == found
    for first, second in sorted(found):  # each id names its document in `explain --corpus`
        explained = run("explain", first, second, "--corpus", "a.jsonl", "b.txt", cwd=tmp_path)
        assert explained.returncode == 0, explained.stderr
    built = run("index", "build", "a.fp", "b.fp", "-o", "both.idx", cwd=tmp_path)
    assert built.returncode == 0, built.stderr  # ids of two files no longer repeat
    stdin = run("fingerprint", "-", cwd=tmp_path, stdin=(TEXTS[0] + "\n").encode())
    assert stdin.stdout.splitlines()[1].split("\t")[0] == "<stdin>:1"


def test_dedup_reads_stdin_as_other_commands_do(tmp_path, run, monkeypatch):
    spool = tmp_path / "spool"  # $TMPDIR, where stdin is saved while the run lasts
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))
    saved = []
    saved_stdin = neardup.io.documents.saved_stdin

    @contextlib.contextmanager
    def noting_where(*args):
        with saved_stdin(*args) as source:
            saved.append(os.path.realpath(source.path))  # the file, named or not
            yield source

    monkeypatch.setattr(neardup.io.documents, "saved_stdin", noting_where)
    text = "\n".join(TEXTS) + "\n"
    (tmp_path / "docs.txt").write_text(text)
    from_file = run("dedup", "docs.txt", "-o", "file.txt", "--clusters", "file.csv", "-k", "8", cwd=tmp_path)
    from_stdin = run(
        "dedup",
        "-",
        "-o",
        "stdin.txt",
        "--clusters",
        "stdin.csv",
        "-k",
        "8",
        cwd=tmp_path,
        stdin=text.encode(),
    )
    assert from_file.returncode == from_stdin.returncode == 0, from_stdin.stderr
    assert (tmp_path / "stdin.txt").read_text() == (tmp_path / "file.txt").read_text()
    assert "read 5 documents" in from_stdin.stderr
    clusters = pa_csv.read_csv(tmp_path / "stdin.csv").column("id").to_pylist()
    assert clusters == [
        i.replace("docs.txt", "<stdin>")
        for i in pa_csv.read_csv(tmp_path / "file.csv").column("id").to_pylist()
    ]
    assert clusters[0] == "<stdin>:1"
    assert saved[0].startswith(str(spool)) and not list(spool.iterdir())  # removed after the run

    records = "".join(f'{{"url": "u{k}", "body": "{t}"}}\n' for k, t in enumerate(TEXTS))
    jsonl = run(
        "dedup", "-", "docs.txt", "-o", "kept.jsonl", "--input-format", "jsonl", "--compression", "gzip",
        "--text-field", "body", "-k", "8", cwd=tmp_path, stdin=gzip.compress(records.encode()),
    )  # fmt: skip
    assert jsonl.returncode == 1 and "docs.txt" in jsonl.stderr  # --input-format is every input's
    jsonl = run(
        "dedup", "-", "-o", "kept.jsonl", "--input-format", "jsonl", "--compression", "gzip",
        "--text-field", "body", "-k", "8", cwd=tmp_path, stdin=gzip.compress(records.encode()),
    )  # fmt: skip
    assert jsonl.returncode == 0, jsonl.stderr
    kept = [json.loads(line)["url"] for line in (tmp_path / "kept.jsonl").read_text().splitlines()]
    assert kept == ["u0", "u2", "u3"]


def test_dedup_refuses_what_it_cannot_read_from_stdin(tmp_path, run):
    twice = run("dedup", "-", "-", "-o", "kept.txt", cwd=tmp_path, stdin=b"a\n")
    assert twice.returncode == 1 and "'-' (stdin) can be read once" in twice.stderr
    csv = run("dedup", "-", "-o", "kept.csv", "--input-format", "csv", cwd=tmp_path, stdin=b"text\na\n")
    assert csv.returncode == 1 and "stdin ('-') is read as lines or jsonl" in csv.stderr
    spark = run("dedup", "-", "-o", "kept.jsonl", "--engine", "spark", cwd=tmp_path, stdin=b"a\n")
    assert spark.returncode == 2 and "'-' (stdin) does not run on --engine spark" in spark.stderr


def test_fingerprint_and_dedup_find_the_same_lines(tmp_path, run):
    text = TEXTS[0].encode()  # three copies, so that dedup's clusters name every document read
    lines = [text, b"", b"   \t", b"not UTF-8 \xff here", text, text]
    (tmp_path / "docs.txt").write_bytes(b"\n".join(lines) + b"\n")
    skip = ("--on-error", "skip")
    strict = run("fingerprint", "docs.txt", cwd=tmp_path)
    assert strict.returncode == 1 and strict.stderr.startswith("FormatError: docs.txt:4: not valid UTF-8")
    fingerprinted = run("fingerprint", "docs.txt", *skip, cwd=tmp_path)
    deduped = run("dedup", "docs.txt", "-o", "kept.txt", "--clusters", "clusters.csv", *skip, cwd=tmp_path)
    assert fingerprinted.returncode == deduped.returncode == 0, deduped.stderr
    read = pa_csv.read_csv(tmp_path / "clusters.csv").column("id").to_pylist()
    assert read == ["docs.txt:1", "docs.txt:5", "docs.txt:6"]
    assert [row.split("\t")[0] for row in fingerprinted.stdout.splitlines()[1:]] == read
    assert "skipped 1 line" in fingerprinted.stderr and "docs.txt:4" in deduped.stderr
