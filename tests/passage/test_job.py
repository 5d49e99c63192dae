"""neardup.passages as a job: what it reads (texts, tables, files with FILE:LINE ids, bad
records skipped), where its offsets point (code points, not bytes), and its result's summary
and files (by suffix, atomically)."""

from __future__ import annotations

import json
import random

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import neardup
import neardup.passage.result as result_module
from naive_passages import naive_keys, naive_words
from neardup import ConfigError
from neardup.decision.passage_matching import PassageOptions
from neardup.passage.result import COMMON_COLUMNS, MATCH_COLUMNS

PASSAGE = " ".join(f"word{i}" for i in range(60))


def unique_words(tag: str, n: int) -> str:
    return " ".join(f"{tag}{k}" for k in range(n))


def assert_points_at_passage(text: str, start: int, end: int, passage: str = PASSAGE) -> None:
    """``text[start:end]`` begins with the passage's first word and ends with its last."""
    assert naive_keys(text[start:end]) == naive_keys(passage)
    assert text[start:end].startswith(passage.split()[0]) and text[start:end].endswith(passage.split()[-1])


# --- Offsets ------------------------------------------------------------------------------

PREFIXES = [
    "",
    "Пролог на русском, ",
    "東京タワー。",
    "😀👍🏽 emoji first ",
    "e\u0301 combining marks o\u0308 ",
    "مرحبا بالعالم ",
    "\U0001d400\U0001d7ce math letters ",
    "lone \ud800 surrogate ",
    "\u00ad\u200b invisible ",
]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(PREFIXES), min_size=1, max_size=4).map("".join),
    st.lists(st.sampled_from(PREFIXES), min_size=1, max_size=4).map("".join),
    st.sampled_from(["", " ", ". ", "«", "😀"]),
)
def test_offsets_are_str_indices_whatever_comes_before(prefix_a, prefix_b, edge):
    # 20 words of their own keep the alignment from reaching back into equal prefixes.
    a = prefix_a + unique_words("a", 20) + " " + edge + PASSAGE + edge + " tail of a"
    b = prefix_b + unique_words("b", 20) + " " + edge + PASSAGE.upper() + edge
    (row,) = neardup.passages([a, b]).matches.to_pylist()
    assert (row["id_a"], row["id_b"], row["words"], row["similarity"]) == (0, 1, 60, 1.0)
    assert_points_at_passage(a, row["start_a"], row["end_a"])
    assert_points_at_passage(b, row["start_b"], row["end_b"], PASSAGE.upper())


def test_offsets_index_the_str_of_arrow_and_bytes_inputs():
    a = "Ünïcödé 東京 😀 " + PASSAGE
    b = "ß " * 7 + PASSAGE
    for data in (pa.array([a, b]), pa.array([a, b], pa.large_string()), [a.encode(), b.encode()]):
        (row,) = neardup.passages(data).matches.to_pylist()
        assert_points_at_passage(a, row["start_a"], row["end_a"])
        assert_points_at_passage(b, row["start_b"], row["end_b"])


def test_offsets_of_a_large_list_built_by_pyarrow():
    # Over a million characters, a list of str goes to pyarrow in one piece (text_buffers).
    a = "Ж" * 600_000 + " lone \ud800 surrogate 😀 " + PASSAGE
    b = "ё" * 600_000 + " " + PASSAGE
    (row,) = neardup.passages([a, b]).matches.to_pylist()
    assert_points_at_passage(a, row["start_a"], row["end_a"])
    assert_points_at_passage(b, row["start_b"], row["end_b"])


@pytest.mark.parametrize("bad", [b"\x80", b"\xff\xfe", b"\xe2\x82", b"\xf0\x9f\x98", b"\xed\xa0\x80"])
def test_offsets_of_ill_formed_bytes_index_their_decoded_text(bad):
    # Bytes are read as neardup reads them everywhere (io.encoding.decode_bytes, as
    # tests/naive.py's naive_decode): each maximal ill-formed subpart is one U+FFFD.
    a = b"before " + bad + b" then " + PASSAGE.encode()
    (row,) = neardup.passages([a, PASSAGE]).matches.to_pylist()
    text = a.decode("utf-8", "replace")
    assert_points_at_passage(text, row["start_a"], row["end_a"])
    assert (row["start_a"], row["end_a"]) == (naive_words(a)[-60].start, naive_words(a)[-1].end)


# --- Inputs -------------------------------------------------------------------------------


def test_list_positions_are_ids_and_skipped_items_keep_theirs():
    texts = ["x " + PASSAGE, None, "unrelated words only", 7, PASSAGE + " y"]
    with pytest.raises(neardup.FormatError, match="document 1: is a NoneType"):
        neardup.passages(texts)
    result = neardup.passages(texts, errors="skip")
    (row,) = result.matches.to_pylist()
    assert (row["id_a"], row["id_b"]) == (0, 4)
    assert (result.documents, result.skipped) == (3, 2)
    assert "skipped 2 bad records" in result.summary()


def write_jsonl(path, records) -> None:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))


def test_files_are_read_as_dedup_reads_them_with_file_line_ids(tmp_path):
    path = tmp_path / "pages.jsonl"
    write_jsonl(
        path,
        [
            {"text": "Первая страница: " + PASSAGE, "url": "u1"},
            {"text": "unrelated words only", "url": "u2"},
            "",
            {"text": PASSAGE + " — конец", "url": "u4"},
        ],
    )
    for data in (path, str(path), [path]):
        result = neardup.passages(data)
        (row,) = result.matches.to_pylist()
        assert (row["id_a"], row["id_b"]) == (f"{path}:1", f"{path}:4")
        assert result.documents == 3
    lines = path.read_text().splitlines()
    assert_points_at_passage(json.loads(lines[0])["text"], row["start_a"], row["end_a"])
    assert_points_at_passage(json.loads(lines[3])["text"], row["start_b"], row["end_b"])
    (by_url,) = neardup.passages(path, id_field="url").matches.to_pylist()
    assert (by_url["id_a"], by_url["id_b"]) == ("u1", "u4")
    assert {k: v for k, v in by_url.items() if k not in ("id_a", "id_b")} == {
        k: v for k, v in row.items() if k not in ("id_a", "id_b")
    }


def test_bad_records_stop_the_run_or_are_skipped_and_counted(tmp_path):
    path = tmp_path / "bad.jsonl"
    write_jsonl(path, [{"text": "a " + PASSAGE}, '{"text": "broken', {"text": 5}, {"text": PASSAGE + " b"}])
    with pytest.raises(neardup.FormatError, match=r"bad\.jsonl:2"):
        neardup.passages(path)
    result = neardup.passages(path, errors="skip")
    (row,) = result.matches.to_pylist()
    assert (row["id_a"], row["id_b"]) == (f"{path}:1", f"{path}:4")
    assert (result.documents, result.skipped) == (2, 2)
    with pytest.raises(neardup.FormatError, match="skipped"):
        neardup.passages(path, errors="skip", max_skipped=0.1)


def test_repeated_ids_are_warned_about(tmp_path):
    path = tmp_path / "dup.jsonl"
    write_jsonl(path, [{"text": "a " + PASSAGE, "id": "same"}, {"text": PASSAGE, "id": "same"}])
    with pytest.warns(UserWarning, match="same"):
        result = neardup.passages(path, id_field="id")
    assert [(r["id_a"], r["id_b"]) for r in result.matches.to_pylist()] == [("same", "same")]


def test_a_table_and_its_id_column():
    table = pa.table({"body": ["a " + PASSAGE, "nothing", PASSAGE], "key": ["k0", "k1", "k2"]})
    (row,) = neardup.passages(table, text_field="body", id_field="key").matches.to_pylist()
    assert (row["id_a"], row["id_b"]) == ("k0", "k2")


def test_the_result_is_the_same_whatever_the_blocks_and_threads(tmp_path):
    rng = random.Random(5)
    words = [f"w{i}" for i in range(400)]
    passages = [" ".join(rng.choice(words) for _ in range(70)) for _ in range(4)]
    records = []
    for d in range(60):
        own = " ".join(rng.choice(words) for _ in range(rng.randint(20, 80)))
        records.append({"text": own + " " + passages[d % 4] + " " + own if d % 3 else own})
    path = tmp_path / "many.jsonl"
    write_jsonl(path, records)
    whole = neardup.passages(path)
    assert whole.matches.num_rows > 20
    for keywords in ({"block_mb": 0.001}, {"n_jobs": 1}, {"block_mb": 0.002, "n_jobs": 2}):
        assert neardup.passages(path, **keywords).matches.equals(whole.matches)
    assert (
        neardup.passages([r["text"] for r in records])
        .matches.drop_columns(["id_a", "id_b"])
        .equals(whole.matches.drop_columns(["id_a", "id_b"]))
    )


def test_options_are_given_once():
    options = PassageOptions(min_words=20)
    with pytest.raises(TypeError, match="min_words"):
        neardup.passages(["text"], options, min_words=30)
    with pytest.raises(TypeError):
        neardup.passages(["text"], min_word=30)
    short = " ".join(f"s{i}" for i in range(25))
    assert neardup.passages([short, short], options).matches.num_rows == 1
    assert neardup.passages([short, short], min_words=20).matches.num_rows == 1
    assert neardup.passages([short, short]).matches.num_rows == 0


def test_nothing_to_read():
    result = neardup.passages([])
    assert result.matches.column_names == list(MATCH_COLUMNS) and result.matches.num_rows == 0
    assert result.common.column_names == list(COMMON_COLUMNS) and result.common.num_rows == 0
    assert (result.documents, result.words, result.bytes) == (0, 0, 0)
    assert neardup.passages(["", "   ", "a b c"]).matches.num_rows == 0


# --- The result ---------------------------------------------------------------------------


FOOTER = " ".join(f"foot{i}" for i in range(60))
TEXTS = ["Café " + PASSAGE, "ünrelated", PASSAGE + " é"] + [
    f"page {d} — {unique_words(f'p{d}x', 10)} {FOOTER}" for d in range(5)
]


@pytest.fixture(scope="module")
def result():
    found = neardup.passages(TEXTS, common_docs=5)
    assert found.matches.num_rows == 1 and found.common.num_rows == 1
    return found


def test_summary_says_what_was_read_and_found(result):
    assert result.summary() == (
        f"read 8 documents ({sum(len(naive_words(t)) for t in TEXTS):,} words, 0.0 MiB)\n"
        "1 shared passages between 1 pairs of documents\n"
        "1 common passages, each in 5 documents (listed once, not as pairs)"
    )
    assert result.bytes == sum(len(t.encode()) for t in TEXTS)


def read_table(path) -> pa.Table:
    name = path.name
    if name.endswith(".parquet"):
        return pq.read_table(path)
    if name.endswith(".jsonl"):
        return pa.Table.from_pylist([json.loads(line) for line in path.read_text().splitlines()])
    delimiter = "\t" if name.endswith(".tsv") else ","
    return pa_csv.read_csv(path, parse_options=pa_csv.ParseOptions(delimiter=delimiter))


@pytest.mark.parametrize("suffix", [".tsv", ".csv", ".jsonl", ".parquet"])
def test_write_by_suffix(result, tmp_path, suffix):
    result.write(tmp_path / f"shared{suffix}", common=tmp_path / f"common{suffix}")
    for table, name in ((result.matches, "shared"), (result.common, "common")):
        written = read_table(tmp_path / f"{name}{suffix}")
        assert written.column_names == table.column_names
        assert written.to_pylist() == table.to_pylist()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([f"shared{suffix}", f"common{suffix}"])


def test_write_one_table_or_none(result, tmp_path):
    result.write(common=tmp_path / "common.tsv")
    result.write()
    assert [p.name for p in tmp_path.iterdir()] == ["common.tsv"]


@pytest.mark.parametrize("name", ["shared.tsv.gz", "shared.jsonl.zst", "shared.txt", "shared"])
def test_write_refuses_compressed_or_unknown_suffixes_and_writes_nothing(result, tmp_path, name):
    (tmp_path / "common.tsv").write_text("old\n")
    with pytest.raises(ConfigError, match=r"by its suffix, uncompressed: \.parquet, \.csv, \.tsv, \.jsonl"):
        result.write(tmp_path / name)
    with pytest.raises(ConfigError):
        result.write(tmp_path / "fine.tsv", common=tmp_path / name)
    with pytest.raises(ConfigError):
        result.write(tmp_path / name, common=tmp_path / "common.tsv")
    assert [p.name for p in tmp_path.iterdir()] == ["common.tsv"]  # no file, no temporary left
    assert (tmp_path / "common.tsv").read_text() == "old\n"


def test_write_replaces_a_file_whole(result, tmp_path, monkeypatch):
    path = tmp_path / "shared.csv"
    path.write_text("old\n")
    result.write(path)
    assert read_table(path).to_pylist() == result.matches.to_pylist()

    def broken(table, sink, fmt):
        with open(sink, "w") as f:
            f.write("half a ta")
        raise OSError("disk full")

    monkeypatch.setattr(result_module, "write_table", broken)
    with pytest.raises(OSError, match="disk full"):
        result.write(path)
    assert read_table(path).to_pylist() == result.matches.to_pylist()
    assert [p.name for p in tmp_path.iterdir()] == ["shared.csv"]
