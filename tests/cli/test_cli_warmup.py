"""A first run on a terminal says it compiles the kernels, once; ``neardup warmup`` fills the
cache. The kernels' cache is the real one: warm-up loads what it holds in seconds, and a marker
of its own name (``_WARM``) stands in for the one other runs share."""

from __future__ import annotations

import re
import sys

import numba
import pytest

from neardup._kernels import _jit
from neardup.cli.main import main


@pytest.fixture
def cold(monkeypatch, tmp_path):
    """The cache as a first run finds it: no marker of a completed warm-up."""
    if _jit.cache_dir() is None:
        pytest.skip("kernel caching is off (NEARDUP_NUMBA_CACHE)")
    marker = f"neardup-kernels.warm-test-{tmp_path.name}"
    monkeypatch.setattr(_jit, "_WARM", marker)
    yield _jit.cache_dir() / marker
    (_jit.cache_dir() / marker).unlink(missing_ok=True)


def on_a_terminal(monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)


@pytest.mark.slow
def test_a_first_run_on_a_terminal_says_it_compiles_once(cold, monkeypatch, capsys):
    on_a_terminal(monkeypatch)
    assert not _jit.is_warm()
    assert main(["explain", "one text", "another text"]) == 0
    first = capsys.readouterr()
    assert re.fullmatch(
        r"neardup: compiling the kernels \(once; a few minutes\) \.\.\. done in \d+ s\n", first.err
    )
    assert first.out.startswith("config: 64 bits")
    assert cold.exists() and _jit.is_warm()
    assert main(["explain", "one text", "another text"]) == 0
    assert capsys.readouterr().err == ""


def test_pipes_and_logs_see_no_notice(cold, capsys):
    assert main(["explain", "one text", "another text"]) == 0
    assert capsys.readouterr().err == ""
    assert not cold.exists()


def test_commands_without_kernels_never_compile(cold, monkeypatch, tmp_path, capsys):
    on_a_terminal(monkeypatch)
    assert main(["report", "-o", str(tmp_path / "report")]) == 1
    assert capsys.readouterr().err.startswith("ConfigError: ")
    assert not cold.exists()


def test_the_marker_belongs_to_one_numba_and_one_set_of_sources(cold, monkeypatch):
    _jit.mark_warm()
    assert _jit.is_warm()
    monkeypatch.setattr(numba, "__version__", "0.0.0")
    assert not _jit.is_warm()
    monkeypatch.undo()
    monkeypatch.setattr(_jit, "_WARM", cold.name)
    monkeypatch.setattr(_jit, "_sources_digest", lambda: "an edited kernel")
    assert not _jit.is_warm()


@pytest.mark.slow
def test_the_warmup_command_fills_the_cache(cold, capsys):
    assert main(["warmup"]) == 0
    err = capsys.readouterr().err
    assert re.fullmatch(
        rf"neardup: every kernel compiled into {re.escape(str(_jit.cache_dir()))} \(\d+ s\)\n", err
    )
    assert _jit.is_warm()
