"""A first run compiles the groups of kernels its command needs and says so in one line, wherever
stderr goes, unless --quiet; ``neardup warmup`` compiles every group. In this process the
kernels' cache is the real one, with markers of their own names (``cold``) standing in for the
ones other runs share; the process test has a cache of its own, empty."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import numba
import pytest
from cli_helpers import COMPILE_NOTICE

from neardup._kernels import _jit
from neardup.cli import warmup
from neardup.cli.main import build_parser, main


@pytest.fixture
def cold(monkeypatch, tmp_path):
    """The cache as a first run finds it: no group marked compiled."""
    if _jit.cache_dir() is None:
        pytest.skip("kernel caching is off (NEARDUP_NUMBA_CACHE)")
    monkeypatch.setattr(_jit, "_MARKERS", f"neardup-kernels.{{group}}.warm-test-{tmp_path.name}")
    monkeypatch.chdir(tmp_path)  # with the inputs the tests name: a missing one compiles nothing
    for name in ("x.txt", "x.jsonl"):
        Path(name).write_text('{"text": "a document"}\n')
    yield _jit.cache_dir()
    for marker in _jit.cache_dir().glob(f"neardup-kernels.*.warm-test-{tmp_path.name}"):
        marker.unlink()


@pytest.fixture
def compiled(monkeypatch):
    """Every group compiles at once, and the list of groups compiled grows."""
    done: list[str] = []
    names = list(warmup.groups())
    monkeypatch.setattr(
        warmup, "groups", lambda: {name: lambda name=name: done.append(name) for name in names}
    )
    return done


def needs(*argv: str) -> list[str]:
    return warmup.needs(build_parser().parse_args(list(argv)))


def test_each_command_needs_its_groups():
    assert needs("fingerprint", "x.txt") == ["read", "fingerprint"]
    assert needs("dedup", "x.jsonl", "-o", "y.jsonl") == ["read", "fingerprint", "join", "dedup"]
    assert "minhash" in needs("dedup", "x.jsonl", "-o", "y.jsonl", "--jaccard", "0.8")
    assert "verify" in needs("dedup", "x.jsonl", "-o", "y.jsonl", "--cosine", "0.98")
    assert "snapshot" in needs("dedup", "x.jsonl", "-o", "y.jsonl", "--against", "seen.idx")
    assert "index" in needs("dedup", "x.jsonl", "--save-index", "seen.idx")
    assert needs("pairs", "x.fp") == ["read", "fingerprint", "join"]
    assert needs("dedup", "--jaccard", "0.5", "--explain-plan") == []
    assert needs("index", "query", "x.idx", "--text", "a") == ["fingerprint", "snapshot"]
    assert needs("index", "info", "x.idx") == []
    assert needs("report", "-o", "out") == []
    assert set(needs("serve", "--data", "d")) == {"fingerprint", "service"}
    assert needs("logs", "app.log") == ["read", "logs"]
    code = needs("dedup", "src", "-o", "kept.txt", "--features", "code")
    assert code[-1] == "code" and {"minhash", "verify"} <= set(code)  # its bands, or a radius checked
    assert "code" not in needs("dedup", "src", "-o", "kept.txt")


def test_every_group_a_command_needs_exists():
    every_option = Namespace(
        action="build", explain_plan=False, engine="local", jaccard=0.8, cosine=0.9, verify=None
    )
    every_option.against = every_option.save_index = "x.idx"
    for command, of in warmup.NEEDS.items():
        assert set(of(every_option)) <= set(warmup.groups()), command


def test_each_group_has_a_marker_of_its_own(cold):
    assert not _jit.is_warm("index")
    _jit.mark_warm("index")
    assert _jit.is_warm("index") and not _jit.is_warm("fingerprint")
    assert (cold / _jit._MARKERS.format(group="index")).read_text() == _jit._warm_key()


def test_the_marker_belongs_to_one_numba_and_one_set_of_sources(cold, monkeypatch):
    markers = _jit._MARKERS
    _jit.mark_warm("fingerprint")
    assert _jit.is_warm("fingerprint")
    monkeypatch.setattr(numba, "__version__", "0.0.0")
    assert not _jit.is_warm("fingerprint")
    monkeypatch.undo()
    monkeypatch.setattr(_jit, "_MARKERS", markers)
    monkeypatch.setattr(_jit, "_sources_digest", lambda: "an edited kernel")
    assert not _jit.is_warm("fingerprint")


def test_an_edited_kernel_drops_every_marker(tmp_path, monkeypatch):
    markers = [tmp_path / "neardup-kernels.warm", tmp_path / "neardup-kernels.index.warm"]
    for marker in markers:
        marker.write_text("warm")
    monkeypatch.setattr(_jit, "_sources_digest", lambda: "an edited kernel")
    _jit._drop_stale_cache(tmp_path)
    assert not any(marker.exists() for marker in markers)
    assert (tmp_path / "neardup-kernels.sha256").read_text() == "an edited kernel"


def test_a_first_run_compiles_what_it_needs_and_says_so_once(cold, compiled, capsys):
    args = build_parser().parse_args(["fingerprint", "x.txt"])
    seconds = warmup.compile_once(args)
    assert seconds is not None and compiled == ["read", "fingerprint"]
    assert COMPILE_NOTICE.fullmatch(capsys.readouterr().err)  # stderr is no terminal here
    assert warmup.compile_once(args) is None and compiled == ["read", "fingerprint"]
    assert capsys.readouterr().err == ""


def test_quiet_compiles_without_a_word(cold, compiled, capsys):
    args = build_parser().parse_args(["dedup", "x.jsonl", "-o", "y.jsonl", "-q"])
    assert warmup.compile_once(args) is not None
    assert compiled == ["read", "fingerprint", "join", "dedup"] and capsys.readouterr().err == ""


def test_a_compile_cut_short_ends_its_line(cold, monkeypatch, capsys):
    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(warmup, "groups", lambda: {"read": interrupted})
    with pytest.raises(KeyboardInterrupt):
        warmup.compile_once(build_parser().parse_args(["fingerprint", "x.txt"]))
    assert capsys.readouterr().err.endswith("... stopped\n")


def test_a_missing_input_fails_at_once_compiling_nothing(cold, compiled, tmp_path, capsys):
    missing = str(tmp_path / "nosuch.jsonl")
    for argv in (
        ["dedup", missing, "-o", str(tmp_path / "k.jsonl")],
        ["logs", missing],
        ["passages", missing],
    ):
        assert main(argv) == 1
        assert "nosuch.jsonl" in capsys.readouterr().err
    assert compiled == []
    (tmp_path / "there.txt").write_text("a document\n")
    assert main(["fingerprint", str(tmp_path / "there.txt"), "-o", str(tmp_path / "there.fp")]) == 0
    assert compiled == ["read", "fingerprint"]


def test_what_the_arguments_alone_refuse_is_refused_before_compiling(cold, compiled, capsys):
    """A usage error, or a file given as a folder, is told at once: not after a first run's
    minute of compiling the kernels the command would have needed."""
    for argv in (
        ["fingerprint", "x.txt", "--example"],
        ["dedup", "x.jsonl"],  # nothing to write
        ["logs", "x.txt", "--min-values", "1"],
    ):
        with pytest.raises(SystemExit) as stopped:
            main(argv)
        assert stopped.value.code == 2 and "usage: neardup" in capsys.readouterr().err
    assert main(["serve", "--data", "x.txt"]) == 1  # x.txt is a file
    assert capsys.readouterr().err.startswith("ConfigError: --data x.txt is a file, not a folder;")
    assert main(["passages", "x.txt", "-o", "passages.zzz"]) == 1
    assert "name the table's format by its suffix" in capsys.readouterr().err
    assert compiled == []


def test_commands_without_kernels_never_compile(cold, compiled, tmp_path, capsys):
    assert main(["report", "-o", str(tmp_path / "report")]) == 1
    assert capsys.readouterr().err.startswith("ConfigError: ")
    assert compiled == []


def test_the_summary_counts_the_compilation_as_a_stage(cold, compiled, capsys):
    assert main(["dedup", "--example"]) == 0
    err = capsys.readouterr().err
    assert COMPILE_NOTICE.match(err)
    assert re.search(r"\nneardup: time: compile [\d.]+ s, read \+ fingerprint", err)


@pytest.mark.slow
def test_a_first_process_says_it_compiles_once_through_a_pipe(tmp_path):
    """The cheapest command, on an empty cache of its own: the notice once, then never."""
    if _jit.cache_dir() is None:
        pytest.skip("kernel caching is off (NEARDUP_NUMBA_CACHE or NUMBA_DISABLE_JIT)")
    (tmp_path / "docs.txt").write_text("one text\nanother text\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "NEARDUP_NUMBA_CACHE": "1"}

    def fingerprint() -> str:
        done = subprocess.run(
            [sys.executable, "-m", "neardup", "fingerprint", "docs.txt"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
        return done.stderr

    assert COMPILE_NOTICE.fullmatch(fingerprint())
    assert fingerprint() == ""


@pytest.mark.slow
def test_the_warmup_command_compiles_every_group(cold, capsys):
    assert main(["warmup"]) == 0
    err = capsys.readouterr().err
    assert re.fullmatch(
        rf"neardup: every kernel compiled into {re.escape(str(_jit.cache_dir()))} \(\d+ s\)\n", err
    )
    assert all(_jit.is_warm(group) for group in warmup.groups())


def test_the_command_line_loads_numba_without_scipy_linalg(tmp_path):
    """numba's probe for BLAS would import all of scipy.linalg before the first kernel (0.3 s
    of each start, where scipy is installed); the command line loads numba's numpy support
    without it, kernels run, and scipy.linalg can still be imported afterwards."""
    log = tmp_path / "app.log"
    log.write_text("disk 1 full\ndisk 2 full\n", encoding="utf-8")
    script = (
        "import importlib.util, sys\n"
        "from neardup.cli.main import main\n"
        f"assert main(['logs', {str(log)!r}, '-q', '--templates', {str(tmp_path / 't.csv')!r}]) == 0\n"
        "assert 'numba.np.arraymath' in sys.modules\n"
        "assert 'scipy.linalg' not in sys.modules, 'numba probed scipy.linalg'\n"
        "if importlib.util.find_spec('scipy') is not None:\n"
        "    import scipy.linalg\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
