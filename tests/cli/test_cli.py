"""The ``neardup`` command on files in tmp_path, run in this process by the ``run`` fixture; the
version, a real stdin and the traceback of ``--debug`` in a process of its own.

Expected fingerprints come from the library on the same texts, never from constants: the
kernels may change their bits, the CLI must follow them.
"""

from __future__ import annotations

import gc
import gzip
import json
import re

import numpy as np
import pytest
from cli_helpers import check_ok, expected_rows, lines_of, parse, run_process, run_python

import neardup
from neardup.cli.fingerprint import EXAMPLE_DOCUMENTS


def test_version(tmp_path):
    result = run_process("--version", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.strip() == f"neardup {neardup.__version__} (fingerprint spec v1)"


def test_help_and_version_do_not_import_numba_or_pyarrow(tmp_path):
    code = (
        "import sys\n"
        "from neardup import cli\n"
        "for argv in (['--help'], ['--version'], ['fingerprint', '--help'], ['pairs', '--help'],\n"
        "             ['index', 'build', '--help'], ['dedup', '--help']):\n"
        "    try:\n"
        "        cli.main(argv)\n"
        "    except SystemExit as e:\n"
        "        assert e.code == 0, (argv, e.code)\n"
        "print('pyarrow imported:', 'pyarrow' in sys.modules)\n"
        "print('numba imported:', 'numba' in sys.modules)\n"
    )
    printed = run_python(code, tmp_path)
    assert "fingerprint" in printed and "--text-field" in printed
    assert printed.splitlines()[-2:] == ["pyarrow imported: False", "numba imported: False"]


@pytest.mark.parametrize("args", [["fingerprint"], ["fingerprint", "x.txt", "--batch-size", "0"]])
def test_usage_errors_exit_2(tmp_path, args, run):
    result = run(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert "usage: neardup" in result.stderr


def test_lines_file(tmp_path, run):
    (tmp_path / "docs.txt").write_bytes(
        "first line of text\r\nSecond  line, café au lait\n\nfourth line without a newline".encode()
    )
    texts = ["first line of text", "Second  line, café au lait", "fourth line without a newline"]
    result = run("fingerprint", "docs.txt", "--batch-size", "3", cwd=tmp_path)
    check_ok(result, lines_of("docs.txt", 1, 2, 4), texts)  # the blank line is no document


def test_fingerprint_options(tmp_path, run):
    texts = ["Ünïcode and  spaces\t here", "the CAT sat on the mat", "x"]
    (tmp_path / "docs.text").write_text("\r\n".join(texts) + "\r\n", encoding="utf-8", newline="")
    result = run(
        "fingerprint",
        "docs.text",
        "--features",
        "char-ngrams",
        "--ngram-size",
        "4",
        "--no-normalize",
        "--weighting",
        "sublinear",
        "--seed",
        "7",
        "--n-jobs",
        "1",
        cwd=tmp_path,
    )
    check_ok(
        result,
        lines_of("docs.text", 1, 2, 3),
        texts,
        features="char-ngrams",
        ngram_size=4,
        normalize=False,
        weighting="sublinear",
        seed=7,
    )


def test_128_bits(tmp_path, run):
    texts = ["a long enough sentence to have several shingles", "another one, quite different"]
    (tmp_path / "docs.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    result = run("fingerprint", "docs.txt", "--bits", "128", cwd=tmp_path)
    check_ok(result, lines_of("docs.txt", 1, 2), texts, bits=128)
    assert all(re.fullmatch("[0-9a-f]{32}", hex_) for _, hex_ in parse(result.stdout)[1])


def test_jsonl_text_and_id_fields(tmp_path, run):
    records = [
        {"url": "https://a.example/x", "body": "the first page of the site", "n": 1},
        {"url": 17, "body": "an ünicode page, the second"},
    ]
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    (tmp_path / "pages.ndjson").write_text(lines[0] + "\n\n" + lines[1] + "\n", encoding="utf-8")
    result = run(
        "fingerprint",
        "pages.ndjson",
        "--text-field",
        "body",
        "--id-field",
        "url",
        "--shingle-size",
        "2",
        cwd=tmp_path,
    )
    check_ok(result, ["https://a.example/x", "17"], [r["body"] for r in records], shingle_size=2)


def test_gzip_jsonl(tmp_path, run):
    texts = ["a document inside a gzip file", "and a second document", "third"]
    with gzip.open(tmp_path / "docs.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(json.dumps({"text": t}) + "\n" for t in texts)
    result = run("fingerprint", "docs.jsonl.gz", "--features", "words", cwd=tmp_path)
    check_ok(result, lines_of("docs.jsonl.gz", 1, 2, 3), texts, features="words")


def test_folder(tmp_path, run):
    corpus = tmp_path / "corpus"
    # z.txt sorts after sub/, where a folder walk would list it before.
    files = {
        "z.txt": b"the last id",
        "a.txt": b"plain text file\nwith two lines",
        "B.txt": b"capital name sorts first",
        "sub/b.txt": b"a nested file",
        "sub/deeper/marked.txt": b"\xef\xbb\xbfa byte-order mark is not text",
        "sub/deeper/z.txt.gz": b"gzip in a folder is read decompressed",
    }
    for name, data in files.items():
        path = corpus / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    (corpus / ".hidden").write_bytes(b"left out")
    (corpus / "_SUCCESS").write_bytes(b"")
    result = run("fingerprint", "corpus", cwd=tmp_path)
    ids = sorted(files)
    texts = [files[i].removeprefix(b"\xef\xbb\xbf") for i in ids]
    check_ok(result, [f"corpus/{i}" for i in ids], texts)


def test_an_empty_file_in_a_folder_is_a_bad_record(tmp_path, run):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "a.txt").write_bytes(b"a page of text")
    (tmp_path / "corpus" / "empty.txt").write_bytes(b"")
    failed = run("fingerprint", "corpus", cwd=tmp_path)
    assert failed.returncode == 1 and failed.stderr.startswith("FormatError: corpus/empty.txt: an empty file")
    skipped = run("fingerprint", "corpus", "--on-error", "skip", cwd=tmp_path)
    check_ok(skipped, ["corpus/a.txt"], [b"a page of text"])
    assert "skipped 1 file that could not be read as documents" in skipped.stderr


@pytest.mark.slow
def test_stdin(tmp_path):
    texts = ["read from standard input", "line two", "line three, the last"]
    result = run_process("fingerprint", "-", cwd=tmp_path, stdin="\n".join(texts).encode())
    check_ok(result, lines_of("<stdin>", 1, 2, 3), texts)


def test_output_file_replaces_atomically(tmp_path, run):
    texts = ["written to a file", "not to stdout"]
    (tmp_path / "docs.txt").write_text("\n".join(texts), encoding="utf-8")
    (tmp_path / "out.tsv").write_text("old contents\n")
    result = run("fingerprint", "docs.txt", "-o", "out.tsv", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    _config, rows = parse((tmp_path / "out.tsv").read_text())
    assert rows == expected_rows(lines_of("docs.txt", 1, 2), texts)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.txt", "out.tsv"]


def test_failed_run_leaves_output_untouched(tmp_path, run):
    (tmp_path / "bad.jsonl").write_text('{"text": "fine"}\n{"text": "fine too"}\n{"text": oops}\n')
    (tmp_path / "out.tsv").write_text("old contents\n")
    # One document per batch, so rows reach the temporary file before line 3 fails.
    result = run("fingerprint", "bad.jsonl", "-o", "out.tsv", "--batch-size", "1", cwd=tmp_path)
    assert result.returncode == 1
    assert "bad.jsonl:3" in result.stderr
    assert (tmp_path / "out.tsv").read_text() == "old contents\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "out.tsv"]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"text": "unterminated', "not valid JSON"),
        ('{"body": "no text field"}', "no field 'text'"),
        ('{"text": 42}', "field 'text' is a JSON number, not a string"),
        ('["an", "array"]', "a JSON array, not an object"),
    ],
)
def test_bad_jsonl_line_names_file_and_line(tmp_path, line, problem, run):
    (tmp_path / "bad.jsonl").write_text('{"text": "a good first line"}\n' + line + "\n")
    result = run("fingerprint", "bad.jsonl", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("FormatError: bad.jsonl:2: ")
    assert problem in result.stderr
    assert "--on-error skip" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


@pytest.mark.slow
def test_debug_shows_traceback(tmp_path):
    (tmp_path / "bad.jsonl").write_text("not json\n")
    result = run_process("--debug", "fingerprint", "bad.jsonl", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" in result.stderr and "FormatError: bad.jsonl:1" in result.stderr


def test_on_error_skip(tmp_path, run):
    lines = [
        '{"text": "kept one"}',
        "{broken",
        '{"other": 1}',
        '{"text": null}',
        "",
        '{"text": "kept two"}',
        '{"text": "kept three"}',
    ]
    (tmp_path / "mixed.jsonl").write_text("\n".join(lines) + "\n")
    result = run("fingerprint", "mixed.jsonl", "--on-error", "skip", cwd=tmp_path)
    check_ok(result, lines_of("mixed.jsonl", 1, 6, 7), ["kept one", "kept two", "kept three"])
    assert "skipped 3 lines" in result.stderr
    assert "mixed.jsonl:2" in result.stderr


def test_idf_model(tmp_path, run):
    texts = ["the common words and a rare one", "the common words again", "the common zebra"]
    model = neardup.fit_idf(texts, features="words")
    model.save(tmp_path / "idf.npz")
    (tmp_path / "docs.txt").write_text("\n".join(texts), encoding="utf-8")
    result = run("fingerprint", "docs.txt", "--features", "words", "--idf", "idf.npz", cwd=tmp_path)
    check_ok(
        result,
        lines_of("docs.txt", 1, 2, 3),
        texts,
        features="words",
        weighting="tfidf",
        idf=neardup.IdfModel.load(tmp_path / "idf.npz"),
    )
    assert parse(result.stdout)[0]["idf"] == model.digest


def test_example_reports_its_near_duplicates(tmp_path, run):
    result = run("fingerprint", "--example", cwd=tmp_path)
    ids = [str(i) for i in range(1, len(EXAMPLE_DOCUMENTS) + 1)]
    check_ok(result, ids, list(EXAMPLE_DOCUMENTS))
    reported = {
        (int(a), int(b), int(d))
        for a, b, d in re.findall(r"^  (\d+) ~ (\d+): distance (\d+),", result.stderr, flags=re.MULTILINE)
    }
    distances = neardup.hamming_pairwise(neardup.Fingerprinter().fingerprint_batch(list(EXAMPLE_DOCUMENTS)))
    close = np.argwhere(np.triu(distances <= 10, k=1))
    assert reported == {(i + 1, j + 1, int(distances[i, j])) for i, j in close}
    # Copies that differ only in case and punctuation are the same text once normalised.
    assert {(1, 2, 0), (10, 11, 0)} <= reported


def test_explain_json_gives_fingerprints_as_hex(tmp_path, run):
    a, b = "the cat sat on the mat today", "the cat sat on a mat today"
    shown = run("explain", a, b, "--json", "--bits", "128", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    answer = json.loads(shown.stdout)
    fingerprinter = neardup.Fingerprinter(bits=128)
    assert answer["fingerprint_a"] == f"{fingerprinter.fingerprint(a):032x}"
    assert answer["fingerprint_b"] == f"{fingerprinter.fingerprint(b):032x}"
    assert all(isinstance(f["hash"], str) and len(f["hash"]) == 16 for f in answer["differing"])


def test_serve_help_says_the_real_defaults(tmp_path, run):
    # serve's fingerprint options default to None, so that a data folder's recorded ones win.
    shown = run("serve", "--help", cwd=tmp_path)
    text = " ".join(shown.stdout.split())
    assert shown.returncode == 0 and "None" not in text
    for said in (
        "fingerprint width (default: 64, or the data folder's)",
        "words per shingle, for word-shingles, or tokens, for code "
        "(default: 3; 4 for code, or the data folder's)",
        "feature weights (default: tf, or tfidf with --idf, or the data folder's)",
        "0 <= seed < 2**64 (default: 0, or the data folder's)",
    ):
        assert said in text, said
    assert "fingerprint width (default: 64)" in " ".join(run("dedup", "--help", cwd=tmp_path).stdout.split())


def test_the_program_freezes_its_imports_and_main_leaves_a_callers_gc_alone(tmp_path, run):
    # The program (console script, python -m neardup) freezes what it imported, out of the
    # garbage collector's way; main(), called by a caller, must not freeze the caller's objects.
    (tmp_path / "app.log").write_text("started job 1\nstarted job 2\n")
    code = (
        "import atexit, gc, sys\n"
        "from neardup.cli import run\n"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count()))\n"
        "sys.argv = ['neardup', 'logs', 'app.log', '-q', '--templates', 't.csv']\n"
        "run()\n"
    )
    assert int(run_python(code, tmp_path).split()[-1]) > 100_000  # numba's and numpy's objects
    before = gc.get_freeze_count()
    assert run("logs", "app.log", "-q", "--templates", "t.csv", cwd=tmp_path).returncode == 0
    assert gc.get_freeze_count() == before
