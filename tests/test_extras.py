"""A missing optional dependency names the pip extra that installs it: the check itself
(``neardup._extras``), and each place that needs an extra, run as a user would."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from neardup import NeardupError
from neardup._errors import MissingExtraError
from neardup._extras import EXTRAS, extra_of, require
from neardup.cli.main import for_people, main


def hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Makes ``import module`` (and its submodules) fail as if it were not installed."""
    for name in [m for m in sys.modules if m.split(".")[0] in modules]:
        monkeypatch.delitem(sys.modules, name)
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)


def forget_neardup_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """Makes the next ``import neardup.spark`` run again (an earlier test may have imported it)."""
    for name in [m for m in sys.modules if m == "neardup.spark" or m.startswith("neardup.spark.")]:
        monkeypatch.delitem(sys.modules, name)


def test_require_names_the_extra_and_the_missing_module(monkeypatch):
    pytest.importorskip("fastapi", reason="checked before uvicorn, so it must be installed here")
    hide(monkeypatch, "uvicorn")
    with pytest.raises(MissingExtraError) as raised:
        require("serve", "fastapi", "uvicorn", needed_by="neardup serve")
    assert str(raised.value) == (
        'neardup serve needs the "serve" extra (uvicorn is not installed): pip install "neardup[serve]", or '
        'pip install ".[serve]" in a checkout of neardup'
    )
    assert isinstance(raised.value, ImportError) and isinstance(raised.value, NeardupError)
    assert isinstance(raised.value.__cause__, ModuleNotFoundError)


def test_require_passes_when_installed():
    pytest.importorskip("numpy")
    assert require("report", "numpy", needed_by="a test") is None


def test_a_broken_install_keeps_its_own_message(tmp_path, monkeypatch):
    (tmp_path / "broken_extra_module.py").write_text("raise ImportError('needs libfoo.so.3')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MissingExtraError, match=r'\(needs libfoo\.so\.3\): pip install "neardup\[spark\]"'):
        require("spark", "broken_extra_module", needed_by="neardup.spark")


def test_extra_of_knows_the_optional_modules_only():
    assert extra_of(ModuleNotFoundError("No module named 'pyspark.sql'", name="pyspark.sql")) == "spark"
    assert extra_of(ModuleNotFoundError("No module named 'py4j'", name="py4j")) == "spark"
    assert extra_of(ModuleNotFoundError("No module named 'httpx'", name="httpx")) == "serve"
    assert extra_of(ModuleNotFoundError("No module named 'neardup.nope'", name="neardup.nope")) is None
    assert extra_of(ModuleNotFoundError("no name")) is None


def test_the_extras_are_those_pyproject_declares():
    tomllib = pytest.importorskip("tomllib")
    pyproject = Path(__file__).parents[1] / "pyproject.toml"
    declared = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
    assert set(EXTRAS) <= set(declared)
    for extra, modules in EXTRAS.items():
        names = " ".join(declared[extra])
        # A distribution spells "_" as "-" (prometheus-client); py4j comes with pyspark.
        listed = [module.replace("_", "-") in names for module in modules if module != "py4j"]
        assert all(listed), (extra, modules)


def test_serve_without_uvicorn(tmp_path, monkeypatch, capsys):
    pytest.importorskip("fastapi", reason="checked before uvicorn, so it must be installed here")
    hide(monkeypatch, "uvicorn")
    assert main(["serve", "--data", str(tmp_path / "data")]) == 1
    assert capsys.readouterr().err == (
        'MissingExtraError: neardup serve needs the "serve" extra (uvicorn is not installed): '
        'pip install "neardup[serve]", or pip install ".[serve]" in a checkout of neardup\n'
    )
    assert not (tmp_path / "data").exists()  # checked before anything is made


def test_client_without_httpx(monkeypatch, capsys):
    hide(monkeypatch, "httpx")
    assert main(["client", "query", "some text"]) == 1
    assert capsys.readouterr().err == (
        'MissingExtraError: neardup client needs the "serve" extra (httpx is not installed): '
        'pip install "neardup[serve]", or pip install ".[serve]" in a checkout of neardup\n'
    )


def test_report_without_matplotlib(tmp_path, monkeypatch, capsys):
    clusters = tmp_path / "clusters.csv"
    clusters.write_text("id,cluster,representative,distance\na,0,a,0\nb,0,a,2\n")
    hide(monkeypatch, "matplotlib")
    assert main(["report", "--clusters", str(clusters), "-o", str(tmp_path / "report")]) == 1
    assert capsys.readouterr().err == (
        'MissingExtraError: the report (neardup report, neardup.write_report) needs the "report" extra '
        '(matplotlib is not installed): pip install "neardup[report]", or '
        'pip install ".[report]" in a checkout of neardup\n'
    )


def test_import_neardup_spark_without_pyspark(monkeypatch):
    hide(monkeypatch, "pyspark", "py4j")
    forget_neardup_spark(monkeypatch)
    with pytest.raises(MissingExtraError) as raised:
        import neardup.spark  # noqa: F401
    assert str(raised.value) == (
        'neardup.spark needs the "spark" extra (pyspark is not installed): pip install "neardup[spark]", or '
        'pip install ".[spark]" in a checkout of neardup'
    )


def test_dedup_on_spark_without_pyspark(tmp_path, monkeypatch, capsys):
    (tmp_path / "docs.jsonl").write_text('{"text": "one small document"}\n')
    hide(monkeypatch, "pyspark", "py4j")
    forget_neardup_spark(monkeypatch)
    argv = ["dedup", str(tmp_path / "docs.jsonl"), "-o", str(tmp_path / "kept.jsonl"), "--engine", "spark"]
    assert main(argv) == 1
    assert capsys.readouterr().err == (
        'MissingExtraError: neardup.spark needs the "spark" extra (pyspark is not installed): '
        'pip install "neardup[spark]", or pip install ".[spark]" in a checkout of neardup\n'
    )
    assert not (tmp_path / "kept.jsonl").exists()


def test_the_cli_names_the_extra_of_an_optional_import_anywhere():
    # An import of an optional module outside require() (a new code path) still names its extra.
    error = ModuleNotFoundError("No module named 'pyspark.sql'", name="pyspark.sql")
    assert for_people(error, "neardup dedup") == (
        'MissingExtraError: neardup dedup needs the "spark" extra (pyspark is not installed): '
        'pip install "neardup[spark]", or pip install ".[spark]" in a checkout of neardup'
    )
    assert for_people(ModuleNotFoundError("No module named 'nope'", name="nope"), "neardup dedup") is None
