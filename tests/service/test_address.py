"""What ``neardup serve`` refuses before anything is loaded: a busy address (it fails at once
and names itself), a data folder made in another mode, and code without its language."""

from __future__ import annotations

import socket

from neardup.cli.main import main


def test_a_busy_port_fails_at_once_naming_the_address(tmp_path, capsys, monkeypatch):
    # As on a first run, every kernel uncompiled: the address is refused before any compiles.
    monkeypatch.setattr("neardup._kernels._jit.CACHE", True)
    monkeypatch.setattr("neardup._kernels._jit.is_warm", lambda group: False)
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        status = main(["serve", "--data", str(tmp_path / "data"), "--port", str(port)])
    assert status == 1
    err = capsys.readouterr().err
    assert err.startswith(f"OSError: cannot listen on http://127.0.0.1:{port}: ") and "--port" in err, err
    assert "compiling" not in err
    assert not (tmp_path / "data").exists()  # refused before the data folder was opened


def test_a_folder_of_another_mode_is_refused_before_anything_compiles(tmp_path, capsys, monkeypatch):
    from neardup import FingerprintConfig
    from neardup.service.store import Settings, Store

    Store(tmp_path / "data", Settings(FingerprintConfig(), 3, 0.8)).close()  # a Jaccard folder
    monkeypatch.setattr("neardup._kernels._jit.CACHE", True)
    monkeypatch.setattr("neardup._kernels._jit.is_warm", lambda group: False)
    status = main(["serve", "--data", str(tmp_path / "data"), "--passages", "--port", "0"])
    assert status == 1
    err = capsys.readouterr().err
    assert "was created in jaccard mode" in err and "this start asks passages mode" in err, err
    assert "compiling" not in err


def test_code_without_a_language_is_refused_before_anything_compiles(tmp_path, capsys, monkeypatch):
    """A client's text has no file name to say its language: ``--features code`` needs
    ``--language``, said before a compile or a data folder, not a traceback at start-up."""
    monkeypatch.setattr("neardup._kernels._jit.CACHE", True)
    monkeypatch.setattr("neardup._kernels._jit.is_warm", lambda group: False)
    data = tmp_path / "data"
    status = main(["serve", "--data", str(data), "--features", "code", "--jaccard", "0.7", "--port", "0"])
    assert status == 1
    err = capsys.readouterr().err
    assert err.startswith("ConfigError: ") and "--language NAME" in err, err
    assert "compiling" not in err
    assert not data.exists()
