"""``neardup passages --features code`` on a folder of source files: a function copied into
another file with its variables renamed and its lines re-laid is found, with the lines it
spans in both; a file whose name says no language, or that is not UTF-8, is a bad record."""

from __future__ import annotations

import csv
import io

import pytest

pytest.importorskip("pygments", reason="--features code needs the code extra (pygments)")

ORIGINAL = """\
import os


def read_config(path, default=None):
    # A missing file is not an error here.
    if not os.path.exists(path):
        return default
    with open(path, encoding="utf-8") as handle:
        lines = [line.strip() for line in handle if line.strip()]
    settings = {}
    for line in lines:
        key, _, value = line.partition("=")
        settings[key.strip()] = value.strip()
    return settings
"""
COPIED_INTO = """\
class Cache:
    pass


def load_settings(filename, fallback=None):
    if not os.path.exists(filename): return fallback
    with open(filename, encoding="latin-1") as f:
        rows = [r.strip()
                for r in f if r.strip()]
    table = {}
    for r in rows:
        k, _, v = r.partition(":")
        table[k.strip()] = v.strip()
    return table


print(load_settings("app.ini"))
"""


@pytest.fixture
def sources(tmp_path):
    package = tmp_path / "src"
    package.mkdir()
    (package / "a.py").write_text(ORIGINAL)
    (package / "b.py").write_text(COPIED_INTO)
    (package / "c.py").write_text("def unrelated():\n    return [i * i for i in range(10)]\n")
    return tmp_path


def _rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text), delimiter="\t"))


def test_a_renamed_copy_is_found_with_its_lines(sources, run):
    ran = run("passages", "src", "--features", "code", "--min-words", "40", cwd=sources)
    assert ran.returncode == 0, ran.stderr
    (row,) = _rows(ran.stdout)
    assert list(row) == [
        "id_a", "id_b", "start_a", "end_a", "start_b", "end_b",
        "line_a", "end_line_a", "line_b", "end_line_b", "words", "similarity",
    ]  # fmt: skip
    assert (row["id_a"], row["id_b"]) == ("src/a.py", "src/b.py")
    assert [int(row[k]) for k in ("line_a", "end_line_a", "line_b", "end_line_b")] == [4, 14, 5, 14]
    assert ORIGINAL[int(row["start_a"]) : int(row["end_a"])].startswith("def read_config(")
    assert COPIED_INTO[int(row["start_b"]) : int(row["end_b"])].endswith("return table")
    as_written = run("passages", "src", "--features", "code", "--code-normalize", "none", cwd=sources)
    assert as_written.returncode == 0 and _rows(as_written.stdout) == [], as_written.stderr
    prose = run("passages", "src", "--min-words", "40", cwd=sources)
    assert prose.returncode == 0 and _rows(prose.stdout) == [], prose.stderr  # the words differ
    assert "line_a" not in prose.stdout.splitlines()[0]


def test_a_file_of_no_language_is_a_bad_record(sources, run):
    (sources / "src" / "notes.zzz").write_text("not code\n")
    (sources / "src" / "latin.py").write_bytes("x = 'caf\xe9'\n".encode("latin-1"))
    refused = run("passages", "src", "--features", "code", "--min-words", "40", "-o", "out.tsv", cwd=sources)
    assert refused.returncode == 1
    assert "src/latin.py: " in refused.stderr or "src/notes.zzz: no language is known" in refused.stderr
    assert not (sources / "out.tsv").exists()
    skipped = run(
        "passages", "src", "--features", "code", "--min-words", "40", "--on-error", "skip", "-o", "out.tsv",
        cwd=sources,
    )  # fmt: skip
    assert skipped.returncode == 0, skipped.stderr
    assert "skipped 2 bad records" in skipped.stderr
    assert [(r["id_a"], r["id_b"]) for r in _rows((sources / "out.tsv").read_text())] == [
        ("src/a.py", "src/b.py")
    ]
    named = run("passages", "src", "--features", "code", "--language", "python", "-o", "all.tsv", cwd=sources)
    assert "src/notes.zzz" not in named.stderr  # every file read as Python: none refused by name


def test_code_settings_need_features_code(sources, run):
    misuse = run("passages", "src", "--language", "python", cwd=sources)
    assert misuse.returncode == 2
    assert "--language is a setting of --features code, not --features words" in misuse.stderr
    bad = run("passages", "src", "--features", "code", "--language", "pyton", cwd=sources)
    assert bad.returncode == 1 and "language='pyton' is not a language pygments can lex" in bad.stderr
