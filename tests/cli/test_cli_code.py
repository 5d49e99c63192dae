"""``--features code`` on a folder of source files: ids are the files' paths, each file's
language is its suffix's (or ``--language``), and clones with renamed variables are found."""

from __future__ import annotations

import importlib.metadata
import json

import pytest

pytest.importorskip("pygments", reason="--features code needs the code extra (pygments)")

ORIGINAL = """\
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
RENAMED = """\
def load_settings(filename, fallback=None):
    if not os.path.exists(filename): return fallback
    with open(filename, encoding="latin-1") as f:
        rows = [r.strip() for r in f if r.strip()]
    table = {}
    for r in rows:
        k, _, v = r.partition(":")
        table[k.strip()] = v.strip()
    return table
"""
OTHER = """\
class Stack:
    def __init__(self):
        self.items = []

    def push(self, item):
        self.items.append(item)

    def pop(self):
        return self.items.pop()
"""


@pytest.fixture
def sources(tmp_path):
    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    for name, text in (("a.py", ORIGINAL), ("b.py", RENAMED), ("c.py", OTHER)):
        (package / name).write_text(text)
    return tmp_path


def test_dedup_features_code_finds_the_renamed_copy(sources, run):
    ran = run("dedup", "src", "--features", "code", "-o", "kept", "--clusters", "clusters.jsonl", cwd=sources)
    assert ran.returncode == 0, ran.stderr
    assert sorted(p.name for p in (sources / "kept" / "pkg").iterdir()) == ["a.py", "c.py"]
    rows = [json.loads(line) for line in (sources / "clusters.jsonl").read_text().splitlines()]
    assert sorted(row["id"] for row in rows) == ["src/pkg/a.py", "src/pkg/b.py"]
    prose = run("dedup", "src", "-o", "kept-prose", cwd=sources)
    assert prose.returncode == 0, prose.stderr
    assert len(list((sources / "kept-prose" / "pkg").iterdir())) == 3  # prose features miss it


def test_fingerprint_and_pairs_record_the_code_settings(sources, run):
    ran = run(
        "fingerprint", "src", "--features", "code", "--code-normalize", "none", "-o", "fp.txt", cwd=sources
    )
    assert ran.returncode == 0, ran.stderr
    header = (sources / "fp.txt").read_text().splitlines()[0]
    config = json.loads(header[header.index("{") :])
    assert config["features"] == "code" and config["code_normalize"] == "none"
    assert config["shingle_size"] == 4 and config["language"] is None
    assert config["pygments_version"] == importlib.metadata.version("pygments")
    prose = run("fingerprint", "src", "-o", "prose.txt", cwd=sources)
    assert prose.returncode == 0, prose.stderr
    prose_header = (sources / "prose.txt").read_text().splitlines()[0]
    assert "pygments" not in prose_header  # prose files are written as they always were
    pairs = run("pairs", "src", "--features", "code", cwd=sources)
    assert pairs.returncode == 0, pairs.stderr
    assert pairs.stdout.splitlines()[1].split("\t")[:2] == ["src/pkg/a.py", "src/pkg/b.py"]


def test_language_errors_are_clear(sources, run):
    (sources / "src" / "notes.zzz").write_text("not code\n")
    unknown = run("dedup", "src", "--features", "code", "-o", "kept", cwd=sources)
    assert unknown.returncode != 0
    assert "src/notes.zzz: no language is known for this file name" in unknown.stderr
    assert not (sources / "kept").exists()
    given = run("dedup", "src", "--features", "code", "--language", "python", "-o", "kept", cwd=sources)
    assert given.returncode == 0, given.stderr
    bad = run("dedup", "src", "--features", "code", "--language", "pyton", "-o", "kept2", cwd=sources)
    assert bad.returncode != 0 and "language='pyton' is not a language pygments can lex" in bad.stderr
    misuse = run("dedup", "src", "--language", "python", "-o", "kept3", cwd=sources)
    assert misuse.returncode == 2
    assert "--language is a setting of --features code, not --features word-shingles" in misuse.stderr


def test_code_features_check_their_pairs_by_their_own_shingles(sources, run):
    """The code defaults check every pair's code-shingle Jaccard index (``verify`` in the
    report); naming those features is refused, as they are the default; prose checks run."""
    ran = run("dedup", "src", "--features", "code", "-o", "kept", cwd=sources)
    assert ran.returncode == 0 and "verify" in ran.stderr, ran.stderr
    assert sorted(p.name for p in (sources / "kept" / "pkg").iterdir()) == ["a.py", "c.py"]
    refused = ("--verify", "jaccard", "0.5", "--verify-features", "code")
    named = run("dedup", "src", "--features", "code", *refused, "-o", "k3", cwd=sources)
    assert named.returncode != 0 and "verify_features='code' (--verify-features code)" in named.stderr
    prose = ("--verify-features", "word-shingles")
    checked = run(
        "dedup", "src", "--features", "code", "--verify", "jaccard", "0.1", *prose, "-o", "k", cwd=sources
    )
    assert checked.returncode == 0, checked.stderr


def test_an_index_of_code_lexed_by_another_pygments_is_refused(sources, run):
    """Its texts would be lexed into other tokens now: ``index query --text`` and ``dedup
    --against`` refuse it, naming both versions and the fixes."""
    from neardup.index.hamming_index import HammingIndex

    code = ("--features", "code", "--language", "python")  # a language: --text can be lexed
    saved = run("dedup", "src", *code, "-o", "kept", "--save-index", "code.idx", cwd=sources)
    assert saved.returncode == 0, saved.stderr
    index = HammingIndex.open(sources / "code.idx")
    index.fingerprint_config = {**index.fingerprint_config, "pygments_version": "1.0"}
    index.save(sources / "old.idx")
    installed = importlib.metadata.version("pygments")
    said = f"old.idx holds code fingerprints lexed by pygments 1.0, but pygments {installed} is installed"
    fixes = "rebuild the index with this pygments, or install the one it was made with "
    fixes += "(pip install pygments==1.0)"
    for command in (
        ("index", "query", "old.idx", "--text", ORIGINAL),
        ("dedup", "src", *code, "-o", "again", "--against", "old.idx"),
    ):
        refused = run(*command, cwd=sources)
        assert refused.returncode == 1 and said in refused.stderr and fixes in refused.stderr, refused.stderr
    same = run("index", "query", "code.idx", "--text", ORIGINAL, cwd=sources)  # this pygments': answered
    assert same.returncode == 0 and same.stdout.startswith("0\t0\n"), same.stderr  # a.py, itself
