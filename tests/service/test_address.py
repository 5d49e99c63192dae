"""What ``neardup serve`` refuses before anything is loaded: a busy address (it fails at once
and names itself), a data folder made in another mode, and bands of code shingles."""

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


def test_code_bands_are_refused_before_anything_compiles(tmp_path, capsys, monkeypatch):
    """The service bands texts with the prose kernels: ``--jaccard`` over code shingles is
    refused by name, before a compile or a data folder."""
    monkeypatch.setattr("neardup._kernels._jit.CACHE", True)
    monkeypatch.setattr("neardup._kernels._jit.is_warm", lambda group: False)
    data = tmp_path / "data"
    status = main(["serve", "--data", str(data), "--features", "code", "--jaccard", "0.8", "--port", "0"])
    assert status == 1
    err = capsys.readouterr().err
    assert "the service cannot band code shingles" in err, err
    assert "compiling" not in err
    assert not data.exists()
