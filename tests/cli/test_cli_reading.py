"""One reading rule for every command: fingerprint files recognised wherever a command takes
them, a named text file read alike by every command, the same default ids everywhere, and
``-`` for stdin in dedup too."""

from __future__ import annotations

import neardup

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
