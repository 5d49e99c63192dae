"""``neardup passages`` on files in tmp_path: what it writes, where, and what it refuses."""

from __future__ import annotations

import csv
import gzip
import io
import json
import random

import pyarrow.parquet as pq
import pytest

SHARED_WORDS = 120


def _pages(n: int = 12, footer: bool = False) -> tuple[list[dict], str]:
    """``n`` unrelated pages; page 7 quotes 120 words of page 2 with two words changed; with
    ``footer``, every page ends with one footer of 60 words."""
    rng = random.Random(5)
    vocabulary = [f"w{i}" for i in range(5000)]
    footer = " ".join(f"footer{i}" for i in range(60)) if footer else ""
    bodies = [[rng.choice(vocabulary) for _ in range(300)] for _ in range(n)]
    quote = bodies[2][100 : 100 + SHARED_WORDS]
    edited = [*quote[:40], "changed", *quote[41:80], "also", *quote[81:]]
    bodies[7] = bodies[7][:150] + edited + bodies[7][150:]
    pages = [
        {"url": f"https://a.example/{i}", "text": " ".join(body) + "\n" + footer}
        for i, body in enumerate(bodies)
    ]
    return pages, " ".join(quote)


def _write_jsonl(path, pages) -> None:
    path.write_text("".join(json.dumps(page) + "\n" for page in pages))


def test_writes_each_shared_passage_with_its_place(tmp_path, run):
    pages, quote = _pages(footer=True)
    _write_jsonl(tmp_path / "pages.jsonl", pages)
    ran = run(
        "passages", "pages.jsonl", "--id-field", "url", "--common-docs", "10",
        "-o", "shared.csv", "--common", "common.jsonl", cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    rows = list(csv.DictReader(io.StringIO((tmp_path / "shared.csv").read_text())))
    assert [(r["id_a"], r["id_b"]) for r in rows] == [("https://a.example/2", "https://a.example/7")]
    row = rows[0]
    a, b = pages[2]["text"], pages[7]["text"]
    assert a[int(row["start_a"]) : int(row["end_a"])] == quote
    copied = b[int(row["start_b"]) : int(row["end_b"])].split()
    assert len(copied) == SHARED_WORDS and copied[40] == "changed" and copied[80] == "also"
    assert int(row["words"]) == SHARED_WORDS
    assert float(row["similarity"]) == pytest.approx(118 / 120, abs=1e-3)
    # The footer all 12 pages end with is one common passage, not 66 pairs.
    (common,) = [json.loads(line) for line in (tmp_path / "common.jsonl").read_text().splitlines()]
    assert common["documents"] == 12 and common["id"] == "https://a.example/0"
    assert pages[0]["text"][common["start"] : common["end"]] == pages[0]["text"].split("\n")[1]
    summary = ran.stderr.splitlines()[-4:]
    assert summary[0].startswith("neardup: read 12 documents (") and summary[3].startswith("neardup: in ")
    assert summary[1:3] == [
        "neardup: 1 shared passages between 1 pairs of documents",
        "neardup: 1 common passages, each in 12 documents (listed once, not as pairs)",
    ]


def test_stdout_parquet_and_stdin_agree(tmp_path, run):
    pages, _ = _pages()
    texts = "".join(page["text"].replace("\n", " ") + "\n" for page in pages)
    (tmp_path / "pages.txt").write_text(texts)
    to_stdout = run("passages", "pages.txt", "-q", cwd=tmp_path)
    assert to_stdout.returncode == 0, to_stdout.stderr
    assert to_stdout.stderr == ""  # -q: no summary
    shown = list(csv.DictReader(io.StringIO(to_stdout.stdout), delimiter="\t"))
    assert [(r["id_a"], r["id_b"]) for r in shown] == [("pages.txt:3", "pages.txt:8")]
    from_stdin = run("passages", "-", "-o", "shared.parquet", cwd=tmp_path, stdin=texts.encode())
    assert from_stdin.returncode == 0, from_stdin.stderr
    table = pq.read_table(tmp_path / "shared.parquet").to_pylist()
    assert [(r["id_a"], r["id_b"]) for r in table] == [("<stdin>:3", "<stdin>:8")]
    assert [r["start_a"] for r in table] == [int(r["start_a"]) for r in shown]


def test_compressed_input_is_read_as_dedup_reads_it(tmp_path, run):
    pages, _ = _pages()
    with gzip.open(tmp_path / "pages.jsonl.gz", "wt") as f:
        f.writelines(json.dumps(page) + "\n" for page in pages)
    ran = run("passages", "pages.jsonl.gz", "-o", "shared.tsv", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    rows = list(csv.DictReader(io.StringIO((tmp_path / "shared.tsv").read_text()), delimiter="\t"))
    assert [(r["id_a"], r["id_b"]) for r in rows] == [("pages.jsonl.gz:3", "pages.jsonl.gz:8")]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-o", "pages.jsonl"], "is the input"),
        (["-o", "shared.tsv.gz"], "uncompressed"),
        (["--common", "common.txt"], "suffix"),
        (["--min-words", "5"], "min_words (--min-words) must be an integer >= 8"),
        (["--text-field", "body", "--on-error", "skip"], "skipped 12 of 12"),
    ],
)
def test_refuses_what_it_cannot_do_right(tmp_path, run, args, message):
    pages, _ = _pages()
    _write_jsonl(tmp_path / "pages.jsonl", pages)
    ran = run("passages", "pages.jsonl", *args, cwd=tmp_path)
    assert ran.returncode == 1 and message in ran.stderr, ran.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pages.jsonl"]  # nothing written
