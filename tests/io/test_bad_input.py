"""Inputs a new user hands neardup by mistake get an error that says what the file is and what
to do; nothing already accepted is lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import neardup
from neardup.io.encoding import foreign_encoding

RECORDS = [{"id": 1, "text": "the first page about rivers"}, {"id": 2, "text": "a second page on hills"}]


def _jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


@pytest.mark.parametrize("encoding, name", [("utf-16", "UTF-16"), ("utf-32", "UTF-32")])
@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".txt"])
def test_utf16_and_utf32_files_are_named_as_such(tmp_path, encoding, name, suffix):
    contents = {".jsonl": _jsonl(RECORDS), ".csv": "id,text\n1,hello there\n", ".txt": "one document"}
    path = tmp_path / f"wide{suffix}"
    path.write_text(contents[suffix], encoding=encoding)  # Python writes the byte-order mark
    with pytest.raises(neardup.FormatError) as raised:
        neardup.dedup(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: the file is {name}")
    assert "neardup reads UTF-8" in message and f"iconv -f {name} -t UTF-8" in message
    assert "JSON" not in message and "line 2" not in message


def test_a_utf16_file_is_skipped_whole_and_the_others_kept(tmp_path):
    (tmp_path / "wide.jsonl").write_text(_jsonl(RECORDS), encoding="utf-16")
    (tmp_path / "good.jsonl").write_text(_jsonl(RECORDS))
    result = neardup.dedup([tmp_path / "wide.jsonl", tmp_path / "good.jsonl"], errors="skip")
    assert result.stats.documents == 2 and result.stats.skipped == 1
    assert "not UTF-8 (UTF-16 or UTF-32)" in result.stats.skip_summary


def test_a_utf8_byte_order_mark_is_not_foreign():
    assert foreign_encoding(b"\xef\xbb\xbf{") is None
    assert foreign_encoding(b"{}") is None
    assert foreign_encoding(b"\xff\xfe{\x00") == "UTF-16"
    assert foreign_encoding(b"\xff\xfe\x00\x00") == "UTF-32"


def test_one_document_per_file_to_a_lines_file_is_refused_with_the_fix(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("a page\nwith two lines\n")
    (docs / "b.txt").write_text("another page entirely\n")
    result = neardup.dedup(docs)
    with pytest.raises(neardup.ConfigError) as raised:
        result.write(tmp_path / "kept.txt")
    message = str(raised.value)
    assert "one document per file" in message and "-o kept/" in message and "kept.jsonl" in message
    assert ".tmp" not in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"]  # nothing written
    result.write(tmp_path / "kept")  # the fix: a folder, one file per document
    assert sorted(p.name for p in (tmp_path / "kept").iterdir()) == ["a.txt", "b.txt"]


def test_a_line_break_in_a_kept_text_names_the_output_not_a_temporary_file(tmp_path):
    result = neardup.dedup(["a page\nwith a line break", "another page entirely"])
    with pytest.raises(neardup.FormatError) as raised:
        result.write(tmp_path / "kept.txt")
    assert "write kept.txt as JSONL" in str(raised.value) and ".tmp" not in str(raised.value)
    assert list(tmp_path.iterdir()) == []


def test_a_nul_character_is_not_a_line_break(tmp_path):
    path = tmp_path / "nul.jsonl"
    path.write_text(_jsonl([{"id": 1, "text": "before\x00after the nul"}, {"id": 2, "text": "plain"}]))
    neardup.dedup(path).write(tmp_path / "kept.txt")
    assert (tmp_path / "kept.txt").read_bytes() == b"before\x00after the nul\nplain\n"
    again = neardup.dedup(tmp_path / "kept.txt", lines=True)
    assert again.stats.documents == 2


def test_texts_from_memory_written_to_txt_are_lines(tmp_path):
    neardup.dedup(["one page", "another page"]).write(tmp_path / "kept.txt")
    assert Path(tmp_path / "kept.txt").read_text() == "one page\nanother page\n"
