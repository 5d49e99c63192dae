"""What ``neardup`` shows when something fails, run in-process (``main(argv)``): an error in
what was asked or in the inputs is one line ``ErrorName: message`` and status 1; a bug is its
traceback, a request to report it, and status 70; ``--debug`` raises either."""

from __future__ import annotations

import numpy as np
import pytest
from cli_helpers import without_compile_notice

import neardup
from neardup.cli.main import EX_SOFTWARE, for_people, main
from neardup.index.hamming_index import HammingIndex


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = without_compile_notice(capsys.readouterr().err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.rstrip("\n")


@pytest.fixture
def saved_index(tmp_path):
    index = HammingIndex(bits=64, max_distance=3)
    index.add(np.arange(1, 20, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    path = tmp_path / "some.idx"
    index.save(path)
    return path


@pytest.mark.parametrize(
    "bug", [ValueError("a bug"), TypeError("a bug"), KeyError("a bug"), IndexError("a bug")]
)
def test_a_bug_shows_its_traceback_and_asks_for_a_report(monkeypatch, capsys, bug):
    def explain(*args, **kwargs):
        raise bug

    monkeypatch.setattr("neardup.report.explain.explain", explain)
    # The bug is in the command: its kernels' warm-up, which calls explain too, is not run.
    monkeypatch.setattr("neardup.cli.warmup.compile_once", lambda args: None)
    assert main(["explain", "one text", "another text"]) == EX_SOFTWARE == 70
    err = without_compile_notice(capsys.readouterr().err)
    assert err.startswith("Traceback (most recent call last):")
    assert f"\n{type(bug).__name__}: " in err and "in explain" in err
    assert err.rstrip().splitlines()[-1] == (
        f"neardup: this is a bug in neardup {neardup.__version__}, not in your input; please report it "
        "with the traceback above and the output of `neardup --version`"
    )


def test_debug_raises_a_bug_and_a_user_error(monkeypatch, tmp_path):
    def explain(*args, **kwargs):
        raise TypeError("a bug")

    monkeypatch.setattr("neardup.report.explain.explain", explain)
    with pytest.raises(TypeError, match="a bug"):
        main(["--debug", "explain", "one text", "another text"])
    with pytest.raises(FileNotFoundError, match=r"nope\.jsonl: no such file or folder"):
        main(["--debug", "fingerprint", str(tmp_path / "nope.jsonl")])


def test_format_error_is_one_line(tmp_path, capsys):
    (tmp_path / "bad.idx").write_bytes(b"not an index")
    assert main(["index", "info", str(tmp_path / "bad.idx")]) == 1
    assert one_line(capsys).startswith(f"FormatError: {tmp_path / 'bad.idx'}: not a neardup index file")


@pytest.mark.parametrize(
    ("fingerprint", "message"),
    [
        ("zz", "ConfigError: 'zz' has 2 hex digits; a 64-bit fingerprint has 16"),
        ("0123456789abcdeg", "ConfigError: '0123456789abcdeg' is not a fingerprint: it holds characters"),
        ("01234567_9abcdef", "ConfigError: '01234567_9abcdef' is not a fingerprint: it holds characters"),
    ],
)
def test_a_bad_fingerprint_to_query_is_a_config_error(saved_index, capsys, fingerprint, message):
    assert main(["index", "query", str(saved_index), "--fingerprint", fingerprint]) == 1
    assert one_line(capsys).startswith(message)


def test_settings_checked_by_the_library_are_config_errors(tmp_path, capsys):
    (tmp_path / "docs.jsonl").write_text('{"text": "one small document"}\n')
    assert main(["fingerprint", str(tmp_path / "docs.jsonl"), "--n-jobs", "0"]) == 1
    assert one_line(capsys) == "ConfigError: n_jobs=0 must be a positive integer, -1 or None (all cores)"
    assert main(["explain", "one text", "another text", "--top", "-1"]) == 1
    assert one_line(capsys) == "ConfigError: top=-1 must be an integer >= 0"
    assert main(["report", "-o", str(tmp_path / "report")]) == 1
    assert (
        one_line(capsys)
        == "ConfigError: give --clusters FILE and/or --pairs FILE, outputs of `neardup dedup`"
    )


def test_an_id_not_in_the_corpus_is_a_config_error(tmp_path, capsys):
    (tmp_path / "docs.jsonl").write_text('{"id": "a", "text": "one"}\n{"id": "b", "text": "two"}\n')
    corpus = str(tmp_path / "docs.jsonl")
    assert main(["explain", "a", "nope", "--corpus", corpus, "--id-field", "id"]) == 1
    assert one_line(capsys).startswith(f"ConfigError: no document with id 'nope' in {corpus}; ids are")


def test_an_index_without_its_config_asks_for_a_fingerprint(saved_index, capsys):
    assert main(["index", "query", str(saved_index), "--text", "some text"]) == 1
    assert one_line(capsys) == (
        f"ConfigError: {saved_index} does not record the fingerprint config it was built with; "
        "query it with --fingerprint HEX"
    )


def test_a_missing_input_names_it(tmp_path, capsys):
    assert main(["fingerprint", str(tmp_path / "nope.jsonl")]) == 1
    assert one_line(capsys) == f"FileNotFoundError: {tmp_path / 'nope.jsonl'}: no such file or folder"


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (
            FileNotFoundError(2, "No such file or directory", "in.jsonl"),
            "FileNotFoundError: in.jsonl: No such file or directory",
        ),
        (
            PermissionError(13, "Permission denied", "out/kept.jsonl"),
            "PermissionError: out/kept.jsonl: Permission denied",
        ),
        (
            IsADirectoryError(21, "Is a directory", "a", None, "b"),
            "IsADirectoryError: a -> b: Is a directory",
        ),
        (OSError(28, "No space left on device"), "OSError: [Errno 28] No space left on device"),
        (MemoryError(), "MemoryError: out of memory"),
        (neardup.TooManyPairsError("too many"), "TooManyPairsError: too many"),
    ],
)
def test_errors_of_the_system_are_one_line(error, line):
    assert for_people(error, "neardup dedup") == line


@pytest.mark.parametrize(
    "bug", [ValueError("x"), TypeError("x"), KeyError("x"), AttributeError("x"), ImportError("x")]
)
def test_builtin_errors_are_bugs(bug):
    assert for_people(bug, "neardup dedup") is None


def test_a_service_that_does_not_answer_is_named(capsys):
    pytest.importorskip("httpx")
    url = "http://127.0.0.1:1"  # port 1: nothing listens there
    assert main(["client", "query", "some text", "--url", url]) == 1
    line = one_line(capsys)
    assert line.startswith(f"ConnectionError: {url}: no `neardup serve` answered there (")
    assert line.endswith("start one (neardup serve --data DIR) or give its address with --url")


def test_serve_on_a_file_names_it(tmp_path, capsys):
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    (tmp_path / "data").write_text("a file, not a folder")
    assert main(["serve", "--data", str(tmp_path / "data")]) == 1
    assert one_line(capsys).startswith(f"ConfigError: --data {tmp_path / 'data'} is a file, not a folder;")


def test_interrupted_is_status_130(monkeypatch, capsys):
    def explain(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("neardup.report.explain.explain", explain)
    assert main(["explain", "one", "two"]) == 130
    assert without_compile_notice(capsys.readouterr().err) == "neardup: interrupted\n"
