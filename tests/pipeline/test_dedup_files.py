"""neardup.dedup on real files: every format round-trips with every field intact, bad input
is named (file and line) or skipped and counted, and outputs are all-or-nothing."""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import neardup
import neardup.io.lines as lines_module
from neardup import FormatError
from neardup.io.batch import ReadOptions
from neardup.io.sources import find_sources
from neardup.io.writers import output_format

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "omicron",
    "pi",
]


def make_records(n: int = 30) -> list[dict]:
    """Distinct texts, then exact and near copies of the first few, with extra fields."""
    rng = np.random.default_rng(7)
    records = []
    for i in range(n):
        words = rng.choice(WORDS, size=40).tolist()
        records.append(
            {"id": f"doc{i}", "text": " ".join(words), "n": str(i), "tag": "x,y" if i % 3 else 'q"z'}
        )
    for i in range(5):
        copy = dict(records[i], id=f"copy{i}", n=str(100 + i))
        copy["text"] = copy["text"].upper() + " ."
        records.append(copy)
    return records


def write_input(records: list[dict], path: Path, fmt: str) -> None:
    table = pa.Table.from_pylist(records)
    if fmt == "parquet":
        pq.write_table(table, path)
    elif fmt in ("csv", "tsv"):
        pa_csv.write_csv(table, path, pa_csv.WriteOptions(delimiter="\t" if fmt == "tsv" else ","))
    elif fmt == "jsonl":
        data = "".join(json.dumps(r) + "\n" for r in records).encode()
        path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)


def read_output(path: Path, fmt: str) -> list[dict]:
    if fmt == "parquet":
        return pq.read_table(path).to_pylist()
    if fmt in ("csv", "tsv"):
        convert = pa_csv.ConvertOptions(column_types={c: pa.string() for c in ("id", "text", "n", "tag")})
        parse = pa_csv.ParseOptions(delimiter="\t" if fmt == "tsv" else ",")
        return pa_csv.read_csv(path, parse_options=parse, convert_options=convert).to_pylist()
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f]


@pytest.mark.parametrize(
    "name, fmt",
    [
        ("in.jsonl", "jsonl"),
        ("in.jsonl.gz", "jsonl"),
        ("in.parquet", "parquet"),
        ("in.csv", "csv"),
        ("in.tsv", "tsv"),
    ],
)
@pytest.mark.parametrize("out_name", ["kept.jsonl", "kept.parquet", "kept.csv", "kept.jsonl.zst"])
def test_formats_round_trip_with_every_field(tmp_path, name, fmt, out_name):
    records = make_records()
    source = tmp_path / name
    write_input(records, source, fmt)
    result = neardup.dedup(source, id_field="id")
    assert result.kept.sum() == 30 and not result.kept[30:].any()  # the copies go
    result.write(tmp_path / out_name)
    out_fmt = "jsonl" if "jsonl" in out_name else out_name.rsplit(".", 1)[1]
    if out_name.endswith(".zst"):
        import pyarrow as pa_

        with pa_.input_stream(str(tmp_path / out_name), compression="zstd") as f:
            kept = [json.loads(line) for line in f.read().decode().splitlines()]
    else:
        kept = read_output(tmp_path / out_name, out_fmt)
    assert [{k: str(v) for k, v in r.items()} for r in kept] == records[:30]


def test_jsonl_to_jsonl_copies_the_lines_byte_for_byte(tmp_path):
    lines = [
        '{"text": "one two three four", "b": 1.50, "c": [1, {"d": null}]}',
        '{"c": 2, "text": "one two three four"}',
        "",
        '{"text":"five six seven eight","z":"\\u00e9"}',
    ]
    (tmp_path / "in.jsonl").write_bytes(("\r\n".join(lines)).encode())  # no break after the last
    result = neardup.dedup(tmp_path / "in.jsonl")
    assert result.rows.tolist() == [1, 2, 4]  # blank lines are not documents
    result.write(tmp_path / "out.jsonl")
    assert (tmp_path / "out.jsonl").read_bytes() == (lines[0] + "\r\n" + lines[3] + "\n").encode()


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["\n", "\r\n"])), min_size=1, max_size=40),
    st.sampled_from([".jsonl", ".jsonl.gz"]),
    st.sampled_from([1e-4, 2e-4, 16]),
    st.booleans(),
    st.sampled_from([0, 256]),
)
def test_kept_jsonl_is_the_kept_lines_whatever_the_blocks(
    tmp_path_factory, docs, suffix, block_mb, last_break, max_slices
):
    folder = tmp_path_factory.mktemp("spans")
    lines = [
        json.dumps({"text": " ".join(WORDS[t : t + 8]) + f" {i % 3}", "i": i}) + end
        for i, (t, end) in enumerate(docs)
    ]
    data = "".join(lines)
    if not last_break:
        data = data.rstrip("\r\n")
    path = folder / f"in{suffix}"
    path.write_bytes(gzip.compress(data.encode()) if suffix.endswith(".gz") else data.encode())
    result = neardup.dedup(path, block_mb=block_mb, max_distance=0)
    saved, lines_module._MAX_SLICES = lines_module._MAX_SLICES, max_slices  # 0: always one copy
    try:
        result.write(folder / "out.jsonl")
    finally:
        lines_module._MAX_SLICES = saved
    kept = [line for line, k in zip(data.splitlines(keepends=True), result.kept) if k]
    expected = "".join(kept) if kept[-1].endswith("\n") else "".join(kept) + "\n"
    assert (folder / "out.jsonl").read_bytes() == expected.encode()
    assert result.kept.sum() == len({(t, i % 3) for i, (t, _) in enumerate(docs)})


def test_a_path_given_as_a_str_is_the_file(tmp_path):
    """As documented: a path, str or Path, names files (only a list of str is texts)."""
    lines = [json.dumps({"text": f"the same words here {i % 2}", "i": i}) for i in range(6)]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    by_str = neardup.dedup(str(tmp_path / "in.jsonl"))
    by_path = neardup.dedup(tmp_path / "in.jsonl")
    assert by_str.kept.tolist() == by_path.kept.tolist() == [True, True] + [False] * 4
    by_str.write(tmp_path / "out.jsonl")
    assert (tmp_path / "out.jsonl").read_text().splitlines() == lines[:2]


def test_lines_and_one_document_files(tmp_path):
    (tmp_path / "docs.txt").write_text("a b c d e\n\nA B C D E\nf g h i j\n")
    result = neardup.dedup(tmp_path / "docs.txt", lines=True)
    assert result.ids == [
        "%s:1" % (tmp_path / "docs.txt"),
        "%s:3" % (tmp_path / "docs.txt"),
        "%s:4" % (tmp_path / "docs.txt"),
    ]
    assert result.kept.tolist() == [True, False, True]
    folder = tmp_path / "pages"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("the same page of text here")
    (folder / "sub" / "b.txt.gz").write_bytes(gzip.compress(b"the same page of text here!"))
    (folder / "c.txt").write_text("another page entirely different words")
    result = neardup.dedup(folder)
    assert [i.split("pages/")[1] for i in result.ids] == ["a.txt", "c.txt", "sub/b.txt.gz"]
    assert result.kept.sum() == 2
    result.write(tmp_path / "kept")
    assert sorted(p.name for p in (tmp_path / "kept").rglob("*") if p.is_file()) == ["a.txt", "c.txt"]


def test_clusters_and_pairs_files(tmp_path):
    records = make_records()
    write_input(records, tmp_path / "in.jsonl", "jsonl")
    result = neardup.dedup(tmp_path / "in.jsonl", id_field="id")
    result.write(clusters=tmp_path / "c.parquet", pairs=tmp_path / "p.csv")
    clusters = pq.read_table(tmp_path / "c.parquet").to_pylist()
    assert {r["id"] for r in clusters} == {f"doc{i}" for i in range(5)} | {f"copy{i}" for i in range(5)}
    assert all(r["representative"] == "doc" + r["id"][-1] for r in clusters)
    pairs = pa_csv.read_csv(tmp_path / "p.csv").to_pylist()
    assert sorted((p["id_a"], p["id_b"]) for p in pairs) == [(f"doc{i}", f"copy{i}") for i in range(5)]


def bad_jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(
        b'{"text": "good one here"}\n{"text": "broken\n[1, 2]\n{"other": 1}\n'
        b'{"text": 5}\n{"text": "bad \xff byte"}\n{"text": null}\n{"text": "good two"}\n'
    )
    return path


def test_a_bad_record_stops_the_run_naming_file_and_line_and_writes_nothing(tmp_path):
    path = bad_jsonl(tmp_path)
    with pytest.raises(neardup.FormatError, match=r"bad\.jsonl:2: not valid JSON"):
        neardup.dedup(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]


def test_skip_leaves_bad_records_out_and_counts_each(tmp_path):
    result = neardup.dedup(bad_jsonl(tmp_path), errors="skip")
    assert result.rows.tolist() == [1, 8]
    assert result.stats.skipped == 6
    summary = result.stats.format()
    for reason in (
        "not valid JSON",
        "not a JSON object",
        "no 'text' field",
        "text not a string",
        "invalid UTF-8",
        "'text' null",
    ):
        assert reason in summary
    assert "bad.jsonl:6: not valid UTF-8" in summary


@pytest.mark.parametrize(
    "content, message",
    [
        (b"id,text\n1,hello world\n2,too,many\n", r"in\.csv:3: 3 fields where the header has 2"),
        (b"", r"in\.csv: holds no documents"),
    ],
)
def test_bad_csv(tmp_path, content, message):
    (tmp_path / "in.csv").write_bytes(content)
    with pytest.raises(neardup.FormatError, match=message):
        neardup.dedup(tmp_path / "in.csv")
    result = neardup.dedup(tmp_path / "in.csv", errors="skip", max_skipped=1)  # the empty one: all
    assert result.stats.skipped == 1


def test_missing_column_and_corrupt_files(tmp_path):
    pq.write_table(pa.table({"body": ["x"]}), tmp_path / "t.parquet")
    with pytest.raises(neardup.FormatError, match=r"t\.parquet: no column 'text' \(columns: 'body'\)"):
        neardup.dedup(tmp_path / "t.parquet")
    (tmp_path / "cut.jsonl.gz").write_bytes(gzip.compress(b'{"text": "a"}\n' * 1000)[:50])
    with pytest.raises(neardup.FormatError, match=r"cut\.jsonl\.gz: cannot be read as gzip"):
        neardup.dedup(tmp_path / "cut.jsonl.gz")


def test_a_document_over_the_size_limit(tmp_path):
    big = "word " * (21 * 2**20 // 5)  # 21 MiB
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps({"text": "small one"}) + "\n" + json.dumps({"text": big}) + "\n")
    with pytest.raises(
        neardup.FormatError, match=r"big\.jsonl:2: a text of 21\.0 MiB, over the limit of 20 MiB"
    ):
        neardup.dedup(path, max_document_mb=20)
    result = neardup.dedup(path, max_document_mb=20, errors="skip", block_mb=1)
    assert result.rows.tolist() == [1] and result.stats.skipped == 1


def test_a_100_mb_document_is_refused_by_default_without_holding_the_line(tmp_path):
    path = tmp_path / "huge.txt"
    with open(path, "wb") as f:
        f.write(b"first line of words\n")
        for _ in range(100):
            f.write(b"x " * (2**19))  # 100 MiB without a line break
        f.write(b"\nlast line of words\n")
    with pytest.raises(neardup.FormatError, match=r"huge\.txt:2: a line of over 33 MiB"):
        neardup.dedup(path, lines=True)
    result = neardup.dedup(path, lines=True, errors="skip")
    assert result.rows.tolist() == [1, 3] and result.stats.skipped == 1


def test_outputs_are_all_or_nothing(tmp_path, monkeypatch):
    records = make_records()
    write_input(records, tmp_path / "in.jsonl", "jsonl")
    (tmp_path / "kept.jsonl").write_text("old\n")
    result = neardup.dedup(tmp_path / "in.jsonl")

    streamed = type(result).iter_pairs

    def interrupted(self, every=False):  # Ctrl-C once a chunk of pairs is written
        yield next(streamed(self, every))
        raise KeyboardInterrupt

    monkeypatch.setattr(type(result), "iter_pairs", interrupted)
    with pytest.raises(KeyboardInterrupt):
        result.write(tmp_path / "kept.jsonl", clusters=tmp_path / "c.csv", pairs=tmp_path / "p.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "kept.jsonl"]
    assert (tmp_path / "kept.jsonl").read_text() == "old\n"


def test_formats_and_compression_come_from_names(tmp_path):
    for name in ("a.jsonl.gz", "b.parquet", "c.tsv", "d.txt", "e.ndjson.zst", "f.CSV.bz2"):
        (tmp_path / name).write_bytes(b"")
    found = {s.path.name: (s.format, s.compression) for s in find_sources([str(tmp_path)])}
    assert found == {
        "a.jsonl.gz": ("jsonl", "gzip"),
        "b.parquet": ("parquet", None),
        "c.tsv": ("tsv", None),
        "d.txt": ("text", None),
        "e.ndjson.zst": ("jsonl", "zstd"),
        "f.CSV.bz2": ("csv", "bz2"),
    }
    sources = find_sources([str(tmp_path / "b.parquet"), str(tmp_path / "c.tsv")])
    with pytest.raises(neardup.ConfigError, match="mix formats"):
        output_format(str(tmp_path / "out"), None, sources)
    assert output_format(str(tmp_path / "out.csv.gz"), None, sources) == ("csv", "gzip")


@pytest.mark.parametrize("name", ["in.jsonl", "in.jsonl.gz", "in.csv", "in.parquet"])
@pytest.mark.parametrize("change", ["truncated", "rewritten"])
def test_an_input_changed_after_the_read_pass_fails_the_copy_and_writes_nothing(tmp_path, name, change):
    path = tmp_path / name
    write_input(make_records(), path, split_format(name))
    result = neardup.dedup(path, id_field="id")
    if change == "truncated":  # a crawler's file cut while it is read, as a log rotation does
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    else:  # the same size, other bytes: only its modification time tells
        stat = path.stat()
        data = path.read_bytes()
        path.write_bytes(data[::-1])
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    with pytest.raises(FormatError, match=re.escape(f"{name}: the file changed while neardup was")):
        result.write(tmp_path / "kept.jsonl", clusters=tmp_path / "clusters.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_a_one_document_file_changed_after_the_read_pass_fails_the_copy(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for i, text in enumerate(["alpha beta gamma delta epsilon", "zeta eta theta iota kappa"]):
        (folder / f"{i}.txt").write_text(text)
    result = neardup.dedup(folder)
    (folder / "1.txt").write_text("zeta")
    with pytest.raises(FormatError, match=r"1\.txt: the file changed .* from 25 to 4 bytes"):
        result.write(tmp_path / "kept")
    assert not (tmp_path / "kept").exists()


def test_a_file_changed_during_the_read_pass_stops_it(tmp_path, monkeypatch):
    path = tmp_path / "in.jsonl"
    write_input(make_records(), path, "jsonl")
    reader = lines_module.line_blocks

    def appended_to(source, options, rejects):  # a writer appends while the pass reads
        yield from reader(source, options, rejects)
        with open(source.path, "ab") as f:
            f.write(b'{"text": "late"}\n')

    monkeypatch.setattr(lines_module, "line_blocks", appended_to)
    with pytest.raises(FormatError, match=r"in\.jsonl: the file changed .* size went from"):
        neardup.dedup(path)


def test_copying_spans_past_the_end_of_a_file_is_an_error(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"text": "a"}\n{"text": "b"}\n')
    (source,) = find_sources([str(path)])
    spans = np.array([[0, 14], [14, 28], [28, 42]], dtype=np.int64)
    ends = "the file ends at byte 28, but the read pass found kept lines up to byte 42"
    with pytest.raises(FormatError, match=ends):
        list(lines_module.copy_spans(source, spans, ReadOptions()))


def split_format(name: str) -> str:
    return name.split(".")[1]


def test_a_list_of_str_that_are_all_paths_is_refused_not_deduplicated_as_texts(tmp_path, monkeypatch):
    write_input(make_records(), tmp_path / "pages.jsonl", "jsonl")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(neardup.ConfigError, match=r"these texts are all paths of files \('pages\.jsonl'\)"):
        neardup.dedup(["pages.jsonl"])
    assert len(neardup.dedup([Path("pages.jsonl")])) == 35  # a list of Path is files
    assert len(neardup.dedup(["pages.jsonl", "a text"])) == 2  # not all paths: texts


@pytest.mark.parametrize(
    "keywords, named",
    [({"text_field": "body"}, "text_field='body'"), ({"id_field": "url"}, "id_field='url'")],
)
def test_a_field_given_with_texts_is_refused(keywords, named):
    for texts in (["one text", "another"], pa.array(["one text", "another"])):
        with pytest.raises(
            neardup.ConfigError, match=re.escape(f"{named} names a field, but the data is texts")
        ):
            neardup.dedup(texts, **keywords)
