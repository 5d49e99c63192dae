"""What ``neardup fingerprint``, ``pairs`` and ``index build`` read: every input ``neardup dedup``
reads (through ``neardup.io``), with its options and its messages, on files in tmp_path;
expected fingerprints come from the library, or from the same texts in a plain file."""

from __future__ import annotations

import gzip
import json

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest
from cli_helpers import check_ok, expected_rows, lines_of, parse

import neardup

TEXTS = [
    "the first document, about a fox and a dog",
    "a second document: café, naïve, ünïcode",
    "the third one is short",
    "and a fourth, the last of them",
]


def _hex_column(output: str) -> list[str]:
    return [hex_ for _, hex_ in parse(output)[1]]


def _write_zst_jsonl(path, records):
    with pa.CompressedOutputStream(str(path), "zstd") as out:
        out.write("".join(json.dumps(r) + "\n" for r in records).encode())


def test_parquet_and_zst_jsonl_give_the_fingerprints_of_a_plain_file(tmp_path, run):
    (tmp_path / "plain.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    pq.write_table(pa.table({"url": ["u1", "u2", "u3", "u4"], "body": TEXTS}), tmp_path / "docs.parquet")
    _write_zst_jsonl(tmp_path / "docs.jsonl.zst", [{"text": t} for t in TEXTS])

    plain = run("fingerprint", "plain.txt", cwd=tmp_path)
    check_ok(plain, lines_of("plain.txt", 1, 2, 3, 4), TEXTS)
    parquet = run("fingerprint", "docs.parquet", "--text-field", "body", "--id-field", "url", cwd=tmp_path)
    check_ok(parquet, ["u1", "u2", "u3", "u4"], TEXTS)
    zst = run("fingerprint", "docs.jsonl.zst", cwd=tmp_path)
    check_ok(zst, lines_of("docs.jsonl.zst", 1, 2, 3, 4), TEXTS)
    assert _hex_column(parquet.stdout) == _hex_column(zst.stdout) == _hex_column(plain.stdout)


def test_folder_of_mixed_formats_and_several_inputs(tmp_path, run):
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    (corpus / "a.csv").write_text('text,n\n"first, in a CSV",1\nsecond in a CSV,2\n', encoding="utf-8")
    (corpus / "sub" / "b.jsonl.gz").write_bytes(gzip.compress(b'{"text": "from gzip JSONL"}\n'))
    (corpus / "sub" / "c.txt").write_bytes(b"one whole file\nof two lines")
    (tmp_path / "more.txt").write_text("a line\nanother line\n", encoding="utf-8")

    folder = run("fingerprint", "corpus", cwd=tmp_path)
    texts = ["first, in a CSV", "second in a CSV", "from gzip JSONL", b"one whole file\nof two lines"]
    check_ok(
        folder, ["corpus/a.csv:1", "corpus/a.csv:2", "corpus/sub/b.jsonl.gz:1", "corpus/sub/c.txt"], texts
    )

    several = run("fingerprint", "corpus/sub", "more.txt", cwd=tmp_path)
    ids = ["corpus/sub/b.jsonl.gz:1", "corpus/sub/c.txt", "more.txt:1", "more.txt:2"]
    check_ok(several, ids, ["from gzip JSONL", b"one whole file\nof two lines", "a line", "another line"])

    as_lines = run("fingerprint", "corpus/sub", "--lines", "--input-format", "lines", cwd=tmp_path)
    check_ok(
        as_lines,
        ["corpus/sub/b.jsonl.gz:1", "corpus/sub/c.txt:1", "corpus/sub/c.txt:2"],
        ['{"text": "from gzip JSONL"}', "one whole file", "of two lines"],
    )


def test_a_folder_gives_fingerprint_and_dedup_the_same_documents(tmp_path, run):
    files = {
        "a.txt": b"a plain page of text\nover two lines\n",
        "marked.txt": b"\xef\xbb\xbfa page saved with a byte-order mark",
        "sub/c.txt.gz": gzip.compress("a compressed page, café".encode()),
        "empty.txt": b"",
        "bad.txt": b"not UTF-8 \xff here",
        "wide.txt": "a page saved as UTF-16".encode("utf-16"),
        ".hidden.txt": b"a hidden file",
        "_SUCCESS": b"",
        ".git/config": b"[core]",
    }
    for name, data in files.items():
        (tmp_path / "corpus" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "corpus" / name).write_bytes(data)
    skip = ("--on-error", "skip")
    fingerprint = run("fingerprint", "corpus", *skip, cwd=tmp_path)
    dedup = run("dedup", "corpus", "-o", "kept.jsonl", "-k", "0", *skip, cwd=tmp_path)
    assert dedup.returncode == 0, dedup.stderr
    kept = [json.loads(line) for line in (tmp_path / "kept.jsonl").read_text(encoding="utf-8").splitlines()]
    ids, texts = [r["id"] for r in kept], [r["text"] for r in kept]
    assert ids == ["corpus/a.txt", "corpus/marked.txt", "corpus/sub/c.txt.gz"]
    assert texts == [
        "a plain page of text\nover two lines\n",
        "a page saved with a byte-order mark",
        "a compressed page, café",
    ]
    check_ok(fingerprint, ids, texts)
    for command in (fingerprint, dedup):
        skipped = [
            name for name in ("empty.txt", "bad.txt", "wide.txt") if f"corpus/{name}" in command.stderr
        ]
        assert skipped == ["empty.txt", "bad.txt", "wide.txt"], command.stderr


def test_format_for_the_input_is_deprecated_for_input_format(tmp_path, run):
    (tmp_path / "docs.data").write_text('{"text": "json in a file without a suffix"}\n')
    warning = (
        "neardup: DeprecationWarning: --format for the input is now --input-format; "
        "--format names the output format"
    )
    new = run("fingerprint", "docs.data", "--input-format", "jsonl", cwd=tmp_path)
    check_ok(new, ["docs.data:1"], ["json in a file without a suffix"])
    assert warning not in new.stderr
    old = run("fingerprint", "docs.data", "--format", "jsonl", cwd=tmp_path)
    check_ok(old, ["docs.data:1"], ["json in a file without a suffix"])
    assert old.stdout == new.stdout and warning in old.stderr.splitlines()
    both = run("fingerprint", "docs.data", "--format", "jsonl", "--input-format", "jsonl", cwd=tmp_path)
    assert both.returncode == 2 and "--format for the input is now --input-format" in both.stderr
    files = run("fingerprint", "docs.data", "--format", "files", cwd=tmp_path)  # never released
    assert files.returncode == 2 and "invalid choice: 'files'" in files.stderr


def test_format_names_the_output_format_of_dedup(tmp_path, run):
    (tmp_path / "in.jsonl").write_text('{"text": "one page of words"}\n')
    result = run("dedup", "in.jsonl", "-o", "kept.data", "--format", "csv", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "kept.data").read_text().splitlines() == ['"text"', '"one page of words"']
    assert "DeprecationWarning" not in result.stderr


def test_compressed_stdin(tmp_path, run):
    data = gzip.compress(("\n".join(json.dumps({"body": t}) for t in TEXTS)).encode())
    result = run(
        "fingerprint",
        "-",
        "--input-format",
        "jsonl",
        "--compression",
        "gzip",
        "--text-field",
        "body",
        cwd=tmp_path,
        stdin=data,
    )
    check_ok(result, lines_of("<stdin>", 1, 2, 3, 4), TEXTS)


def test_on_error_skip_in_a_parquet_file(tmp_path, run):
    pq.write_table(pa.table({"text": ["kept", None, "kept too"]}), tmp_path / "gaps.parquet")
    failed = run("fingerprint", "gaps.parquet", cwd=tmp_path)
    assert failed.returncode == 1 and failed.stdout == ""
    assert failed.stderr.startswith("FormatError: gaps.parquet:row 2: column 'text' is empty (null)")
    skipped = run("fingerprint", "gaps.parquet", "--on-error", "skip", cwd=tmp_path)
    check_ok(skipped, lines_of("gaps.parquet", 1, 3), ["kept", "kept too"])
    assert "skipped 1 row that could not be read as documents" in skipped.stderr
    assert "gaps.parquet:row 2" in skipped.stderr


def test_too_long_line_is_a_bad_record(tmp_path, run):
    (tmp_path / "docs.txt").write_text("short\n" + "x" * 3000 + "\nshort again\n")
    mb = str(2000 / 2**20)
    failed = run("fingerprint", "docs.txt", "--max-document-mb", mb, cwd=tmp_path)
    assert failed.returncode == 1 and failed.stderr.startswith("FormatError: docs.txt:2: a line of")
    skipped = run("fingerprint", "docs.txt", "--max-document-mb", mb, "--on-error", "skip", cwd=tmp_path)
    check_ok(skipped, lines_of("docs.txt", 1, 3), ["short", "short again"])


def test_malformed_jsonl_gives_the_message_dedup_gives(tmp_path, run):
    (tmp_path / "bad.jsonl").write_text('{"text": "a good line"}\n\n{"text": "cut short\n')
    fingerprint = run("fingerprint", "bad.jsonl", cwd=tmp_path)
    dedup = run("dedup", "bad.jsonl", "-o", "kept.jsonl", cwd=tmp_path)
    assert fingerprint.returncode == dedup.returncode == 1
    message = fingerprint.stderr.splitlines()[0]
    assert message.startswith("FormatError: bad.jsonl:3: not valid JSON")
    assert message == dedup.stderr.splitlines()[0]


def test_an_id_a_fingerprint_file_cannot_hold_is_a_bad_record(tmp_path, run):
    (tmp_path / "ids.jsonl").write_text('{"id": "a\\tb", "text": "x"}\n{"id": "c", "text": "y"}\n')
    failed = run("fingerprint", "ids.jsonl", "--id-field", "id", cwd=tmp_path)
    assert failed.returncode == 1
    assert failed.stderr.startswith("FormatError: ids.jsonl:1: the id 'a\\tb' holds a tab or line break")
    skipped = run("fingerprint", "ids.jsonl", "--id-field", "id", "--on-error", "skip", cwd=tmp_path)
    check_ok(skipped, ["c"], ["y"])


def test_missing_input_and_bad_stdin_format(tmp_path, run):
    missing = run("fingerprint", "nope.jsonl", cwd=tmp_path)
    assert missing.returncode == 1 and "nope.jsonl: no such file or folder" in missing.stderr
    stdin_csv = run("fingerprint", "-", "--input-format", "csv", cwd=tmp_path, stdin=b"text\nx\n")
    assert stdin_csv.returncode == 1 and "stdin ('-') is read as lines or jsonl" in stdin_csv.stderr


@pytest.mark.parametrize("name", ["docs.csv", "docs.parquet"])
def test_index_build_reads_documents(tmp_path, name, run):
    texts = [f"document number {i} has words {' '.join(str(i * j) for j in range(12))}" for i in range(20)]
    table = pa.table({"body": texts, "n": list(range(20))})
    if name.endswith(".csv"):
        pa_csv.write_csv(table, tmp_path / name)
    else:
        pq.write_table(table, tmp_path / name)
    args = ("index", "build", name, "--text-field", "body", "--bits", "128", "-o", "docs.idx")
    built = run(*args, cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert "indexed 20 fingerprints (their ids in docs.idx.ids)" in built.stderr
    index = neardup.HammingIndex.open(tmp_path / "docs.idx")
    assert len(index) == 20 and index.bits == 128
    assert index.fingerprint_config == neardup.FingerprintConfig(bits=128).to_dict()
    found = run("index", "query", "docs.idx", "--text", texts[6], "-k", "0", cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines()[0] == f"{name}:7\t0"  # FILE:ROW, rows from 1


def test_pairs_of_documents_equal_pairs_of_their_fingerprint_file(tmp_path, run):
    base = " ".join(f"word{i}" for i in range(80))
    texts = [base, base.replace("word79", "changed"), "an unrelated text entirely"]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    assert run("fingerprint", "docs.jsonl", "-o", "docs.fp", cwd=tmp_path).returncode == 0
    from_file = run("pairs", "docs.fp", "-k", "8", cwd=tmp_path)
    from_documents = run("pairs", "docs.jsonl", "-k", "8", cwd=tmp_path)
    assert from_file.returncode == from_documents.returncode == 0, from_documents.stderr
    assert from_file.stdout.splitlines()[1:] == from_documents.stdout.splitlines()[1:]
    rows = expected_rows(lines_of("docs.jsonl", 1, 2), texts[:2])
    distance = neardup.hamming(int(rows[0][1], 16), int(rows[1][1], 16))
    assert distance <= 8
    assert from_documents.stdout.splitlines()[1:] == [f"docs.jsonl:1\tdocs.jsonl:2\t{distance}"]
