"""JSONL read and written by the tasks, a byte-range split each (``neardup.spark.splits``):
the splits cut every file at line starts, each line read once, in order; the facts, texts and
kept lines they give are the ones the file holds."""

from __future__ import annotations

import gzip
import importlib
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql.types import LongType, StringType, StructField, StructType

import neardup
from neardup import ConfigError, DedupOptions, FingerprintConfig, Fingerprinter
from neardup.io.batch import ReadOptions
from neardup.spark.dedup import decide
from neardup.spark.facts import Facts, Make, texts_by_position
from neardup.spark.splits import (
    LINE_BITS,
    SplitFacts,
    SplitTexts,
    _documents,
    _open,
    first_record,
    plan_splits,
    write_kept_lines,
)

_LINE = st.one_of(
    st.just(""),
    st.just(" \t"),
    st.builds(lambda t, n: json.dumps({"text": t, "id": n}), st.text(max_size=40), st.integers(0, 99)),
)


def jsonl_bytes(lines: list[str], crlf: list[bool], last_break: bool) -> bytes:
    ends = ["\r\n" if c else "\n" for c in crlf]
    if not last_break and ends:
        ends[-1] = ""
    return "".join(line + end for line, end in zip(lines, ends)).encode()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(_LINE, min_size=0, max_size=30),
    crlf=st.lists(st.booleans(), min_size=30, max_size=30),
    last_break=st.booleans(),
    split_bytes=st.integers(1, 200),
    cores=st.integers(1, 3),
)
def test_splits_read_every_byte_once_in_order(tmp_path_factory, lines, crlf, last_break, split_bytes, cores):
    """A split owns the lines that start in its range: read one after another, the splits give
    the file back exactly, and a task's first line starts where a line starts."""
    data = jsonl_bytes(lines, crlf, last_break)
    path = tmp_path_factory.mktemp("splits") / "pages.jsonl"
    path.write_bytes(data)
    splits = plan_splits([str(path)], cores, split_bytes)
    assert splits is not None
    assert all(0 < s.end - s.start <= split_bytes for s in splits)
    read = []
    for split in splits:
        stream, _ = _open(split)
        first = stream.position  # where its first line starts
        with stream:
            chunks = []
            while chunk := stream.read(7):
                chunks.append(chunk)
        assert first == 0 or data[first - 1 : first] == b"\n"
        read.append(b"".join(chunks))
    assert b"".join(read) == data


def write_corpus(folder, lines: list[str]) -> str:
    path = folder / "pages.jsonl"
    path.write_text("".join(f"{line}\r\n" if k % 3 == 0 else f"{line}\n" for k, line in enumerate(lines)))
    return str(path)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A JSONL file of 300 lines (some blank, some ending in CRLF, ids both strings and
    numbers) and its split plan: 12 splits, so most start inside a line."""
    rng = np.random.default_rng(3)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    lines = []
    for k in range(300):
        if k % 17 == 5:
            lines.append("   ")
            continue
        text = " ".join(rng.choice(words, size=int(rng.integers(0, 30))).tolist())
        lines.append(json.dumps({"text": text, "id": k if k % 2 else f"doc{k}", "extra": [k]}))
    path = write_corpus(tmp_path_factory.mktemp("split_corpus"), lines)
    splits = plan_splits([path], 2, split_bytes=Path(path).stat().st_size // 11)
    assert splits is not None and len(splits) == 12
    return path, lines, splits


def documents(corpus) -> tuple[np.ndarray, list[str], list[str]]:
    """(positions, texts, ids) of every document, split by split."""
    _, _, splits = corpus
    options = ReadOptions(id_field="id")
    positions, texts, ids = [], [], []
    for split in splits:
        for batch in _documents(split, options):
            positions.extend(((split.number << LINE_BITS) | batch.rows).tolist())
            texts.extend(batch.texts.to_pylist())
            ids.extend(batch.ids.to_pylist())
    return np.array(positions), texts, ids


def test_documents_are_the_files_records_in_order(corpus):
    _, lines, _ = corpus
    positions, texts, ids = documents(corpus)
    records = [json.loads(line) for line in lines if line.strip()]
    assert texts == [r["text"] for r in records]
    assert ids == [str(r["id"]) for r in records]  # as the local engine gives ids
    assert np.all(np.diff(positions) > 0)  # input order


@pytest.mark.parametrize("collected", ["whole", "a partition at a time"])
def test_facts_on_the_driver_and_as_a_dataframe(spark, corpus, monkeypatch, collected):
    _, _, splits = corpus
    if collected != "whole":
        monkeypatch.setattr(importlib.import_module("neardup.spark.splits"), "DRIVER_ROWS", 10)
    positions, texts, ids = documents(corpus)
    facts = SplitFacts(
        spark.sparkContext, splits, ReadOptions(id_field="id"), Facts(FingerprintConfig(), "id")
    )
    assert facts.count() == len(texts)
    held = facts.toArrow().sort_by("_position")
    assert held.column("_position").to_numpy().tolist() == positions.tolist()
    assert held.column("id").to_pylist() == ids
    local = Fingerprinter().fingerprint_batch(texts)
    assert np.array_equal(held.column("fingerprint").to_numpy().view(np.uint64), local)
    assert held.column("_featureless").to_pylist() == [not t.strip() for t in texts]
    frame = facts.frame().toArrow().sort_by("_position")
    assert frame.equals(held.cast(frame.schema))


def texts_with_rows() -> Make:
    """What the tasks make of rows and their texts: the row's ``k`` and its text (a closure:
    the workers cannot import the tests)."""

    def make(batch: pa.RecordBatch, found: pa.Array) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays([batch.column("k"), found.cast(pa.string())], ["k", "text"])

    return make


TEXTS_WITH_ROWS = StructType([StructField("k", LongType()), StructField("text", StringType())])


@pytest.mark.parametrize("block_bytes", [1 << 20, 150])
def test_texts_come_back_in_the_order_asked_or_to_the_rows_in_the_tasks(spark, corpus, block_bytes):
    """The texts at the positions asked for: fetched to the driver in that order, or brought
    to rows that name them (some positions asked by several rows, splits read a block at a
    time) in the tasks."""
    _, _, splits = corpus
    positions, texts, _ = documents(corpus)
    rng = np.random.default_rng(0)
    asked = np.concatenate([rng.permutation(len(positions))[:40], [3, 3, 3, len(positions) - 1]])
    source = SplitTexts(spark.sparkContext, splits, ReadOptions(block_bytes=block_bytes))
    assert source(positions[asked]).to_pylist() == [texts[k] for k in asked]
    rows = spark.createDataFrame([(int(p), k) for k, p in enumerate(positions[asked])], ["_position", "k"])
    read = source.alongside(rows, "_position", texts_with_rows(), TEXTS_WITH_ROWS).toArrow().sort_by("k")
    assert read.column("k").to_pylist() == list(range(len(asked)))
    assert read.column("text").to_pylist() == [texts[k] for k in asked]


@pytest.mark.parametrize("json_field", [None, "text"])
def test_texts_of_a_column_come_to_the_rows(spark, json_field):
    """The texts of a DataFrame's column (or of JSON lines in it) brought to rows that name
    their positions, some more than once."""
    texts = [f"text {k} \u00e9" for k in range(50)]
    held = [json.dumps({"text": t}) for t in texts] if json_field else texts
    positioned = spark.createDataFrame([(k * 7, t) for k, t in enumerate(held)], ["_position", "body"])
    asked = [4, 0, 49, 4, 17, 4]
    rows = spark.createDataFrame([(asked[k] * 7, k) for k in range(len(asked))], ["_at", "k"])
    source = texts_by_position(positioned, "body", json_field)
    read = source.alongside(rows, "_at", texts_with_rows(), TEXTS_WITH_ROWS).toArrow().sort_by("k")
    assert read.column("text").to_pylist() == [texts[k] for k in asked]


def test_texts_of_compressed_files_and_text_lines(spark, tmp_path):
    """The texts read again by position from a gzip JSONL file (blank lines, CRLF, escapes)
    and from a text file of a document a line are those the first read gave."""
    records = [json.dumps({"text": f'caf\u00e9 {k} "q"', "n": k}) if k % 5 else "" for k in range(60)]
    with gzip.open(tmp_path / "pages.jsonl.gz", "wb") as f:
        f.write("".join(r + ("\r\n" if k % 3 else "\n") for k, r in enumerate(records)).encode())
    (tmp_path / "pages.txt").write_text("".join(f"line {k} \u00e9\n" if k % 4 else "\n" for k in range(60)))
    for name in ("pages.jsonl.gz", "pages.txt"):
        splits = plan_splits([str(tmp_path / name)], 2, split_bytes=200, lines=True)
        assert splits is not None
        held = SplitFacts(spark.sparkContext, splits, ReadOptions(), Facts(FingerprintConfig())).toArrow()
        positions = held.column("_position").to_numpy()
        first = [t for split in splits for b in _documents(split, ReadOptions()) for t in b.texts.to_pylist()]
        asked = np.random.default_rng(2).permutation(len(positions))[:20]
        texts = SplitTexts(spark.sparkContext, splits, ReadOptions())(positions[asked]).to_pylist()
        assert texts == [first[k] for k in asked] and len(set(texts)) == 20


@pytest.mark.parametrize("leave_out", [False, True])
@pytest.mark.parametrize("sent", ["held", "shuffled"])
def test_kept_lines_are_copied_byte_for_byte(spark, corpus, tmp_path, leave_out, sent):
    """The chosen documents' lines (or all the others), line breaks as they were, whether the
    driver sends each task its split's positions or a shuffle does."""
    path, _, splits = corpus
    positions, _, _ = documents(corpus)
    chosen = np.sort(np.random.default_rng(1).choice(positions, size=90, replace=False))
    given = chosen if sent == "held" else spark.createDataFrame([(int(p),) for p in chosen], ["_position"])
    out = tmp_path / "kept.jsonl"
    written = write_kept_lines(spark.sparkContext, splits, ReadOptions(), given, leave_out, str(out))
    raw = Path(path).read_bytes().splitlines(keepends=True)
    records = [line for line in raw if line.strip()]
    wanted = np.isin(positions, chosen) != leave_out
    expected = b"".join(line for line, w in zip(records, wanted) if w)
    parts = sorted(out.glob("part-*.jsonl"))
    assert b"".join(p.read_bytes() for p in parts) == expected
    assert written == int(wanted.sum()) and not list(out.glob(".*"))  # no temporary file left


def test_a_last_line_without_a_break_gets_one(spark, tmp_path):
    path = tmp_path / "pages.jsonl"
    path.write_bytes(b'{"text": "one"}\n{"text": "two"}')
    splits = plan_splits([str(path)], 2, split_bytes=8)
    assert splits is not None
    written = write_kept_lines(
        spark.sparkContext, splits, ReadOptions(), np.zeros(0, np.int64), True, str(tmp_path / "out")
    )
    kept = b"".join(p.read_bytes() for p in sorted((tmp_path / "out").glob("part-*")))
    assert kept == b'{"text": "one"}\n{"text": "two"}\n' and written == 2


def test_folders_compressed_files_and_what_is_left_to_spark(tmp_path):
    folder = tmp_path / "crawl"
    (folder / "b").mkdir(parents=True)
    (folder / "a.jsonl").write_text('{"text": "a"}\n' * 50)
    with gzip.open(folder / "b" / "c.jsonl.gz", "wt") as f:
        f.write('\n{"text": "c"}\n' * 50)
    (folder / "_SUCCESS").write_text("")
    (folder / ".a.jsonl.crc").write_text("x")
    (folder / "notes.txt").write_text("not JSONL")
    splits = plan_splits([str(folder)], 2, split_bytes=100)
    assert splits is not None
    assert [s.name for s in splits if s.compression] == [f"{folder}/b/c.jsonl.gz"]  # one split
    assert {s.name for s in splits} == {f"{folder}/a.jsonl", f"{folder}/b/c.jsonl.gz"}
    assert first_record(splits) == b'{"text": "a"}'
    assert first_record([s for s in splits if s.compression]) == b'{"text": "c"}'  # past a blank line
    assert plan_splits([f"{folder}/*.jsonl"], 2) is None  # a glob: Spark's reader expands it
    with pytest.raises(ConfigError, match="no such file or folder"):
        plan_splits([str(tmp_path / "missing.jsonl")], 2)


def test_a_bad_line_is_named_by_its_file_and_place(tmp_path):
    path = tmp_path / "pages.jsonl"
    good = '{"text": "fine words here"}\n'
    path.write_text(good * 20 + '{"text": 5}\n' + good * 20)
    splits = plan_splits([str(path)], 1, split_bytes=300)
    assert splits is not None
    messages = []
    for split in splits:
        try:
            list(_documents(split, ReadOptions()))
        except ValueError as e:
            messages.append(str(e))
    assert len(messages) == 1 and "pages.jsonl from byte" in messages[0]
    assert "field 'text' is a JSON number, not a string" in messages[0]


def test_small_files_share_tasks(spark, tmp_path):
    """Many small files make a few tasks (each file counted with an open cost, as Spark packs
    them), not a task each; every split is read once."""
    folder = tmp_path / "shards"
    folder.mkdir()
    for i in range(40):
        (folder / f"s{i:02d}.jsonl").write_text(json.dumps({"text": f"page number {i}"}) + "\n")
    splits = plan_splits([str(folder)], 2)
    assert splits is not None
    tasks = [s.task for s in splits]
    assert len(splits) == 40 and tasks == sorted(tasks) and 2 <= len(set(tasks)) < 10
    facts = SplitFacts(spark.sparkContext, splits, ReadOptions(), Facts(FingerprintConfig()))
    assert facts.count() == 40 and facts.batches.getNumPartitions() == len(set(tasks))
    positions = facts.toArrow().column("_position").to_numpy()
    assert sorted(positions >> LINE_BITS) == list(range(40))


@pytest.mark.parametrize("driver_limit", [0, None])
def test_split_facts_decide_and_write_as_the_local_engine(spark, corpus, tmp_path, driver_limit):
    """The CLI's JSONL path at scale: facts of the splits decided by Spark (or the driver), the
    kept lines written by the tasks from the outcome: the local engine's kept lines."""
    path, _, splits = corpus
    options = ReadOptions(id_field="id")
    facts = SplitFacts(spark.sparkContext, splits, options, Facts(FingerprintConfig(), "id"))
    chosen_by = DedupOptions(max_distance=3, keep="longest")
    decision = decide(facts, chosen_by, id_col="id", driver_limit=driver_limit, with_pairs=False)
    assert (decision.held is None) == (driver_limit == 0)
    chosen = decision.positions(kept=False)
    written = write_kept_lines(spark.sparkContext, splits, options, chosen, True, str(tmp_path / "kept"))
    local = neardup.dedup(Path(path), id_field="id", max_distance=3, keep="longest")
    records = [line for line in Path(path).read_bytes().splitlines(keepends=True) if line.strip()]
    expected = b"".join(line for line, k in zip(records, local.kept) if k)
    kept = b"".join(p.read_bytes() for p in sorted((tmp_path / "kept").glob("part-*")))
    assert kept == expected and written == decision.kept
    assert local.stats.duplicates > 0 and decision.kept == int(local.kept.sum())
