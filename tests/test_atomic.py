"""Atomic writes: all or nothing, outputs get the mode a plain ``open()`` would give, and what
a killed writer left is removed by the next write."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from neardup._atomic import atomic_dir, atomic_path, atomic_write


@pytest.fixture(params=[0o022, 0o077, 0o002])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_files_and_folders_get_the_mode_open_gives(tmp_path, umask):
    with open(tmp_path / "plain", "w"):
        pass
    with atomic_write(tmp_path / "out.bin") as f:
        f.write(b"data")
    with atomic_path(tmp_path / "out.parquet") as tmp:
        tmp.write_bytes(b"data")
    os.mkdir(tmp_path / "plain-dir")
    with atomic_dir(tmp_path / "kept") as folder:
        (folder / "a.txt").write_text("a")
    assert _mode(tmp_path / "out.bin") == _mode(tmp_path / "plain") == 0o666 & ~umask
    assert _mode(tmp_path / "out.parquet") == 0o666 & ~umask
    assert _mode(tmp_path / "kept") == _mode(tmp_path / "plain-dir") == 0o777 & ~umask


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    (tmp_path / "out").write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_write(tmp_path / "out") as f:
        f.write(b"new, half")
        raise RuntimeError("stop")
    assert (tmp_path / "out").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_temporary_names_do_not_collide(tmp_path):
    with atomic_path(tmp_path / "a") as first, atomic_path(tmp_path / "a") as second:
        assert first != second and first.exists() and second.exists()
        first.write_bytes(b"1")
        second.write_bytes(b"2")
    assert (tmp_path / "a").read_bytes() in (b"1", b"2")
    assert [p.name for p in tmp_path.iterdir()] == ["a"]


def test_a_write_removes_what_dead_writers_of_its_target_left(tmp_path):
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    stale = tmp_path / f".kept.parquet.{ended.pid}.0badf00d.tmp"  # a killed writer's folder
    stale.mkdir()
    (stale / "part-00000.parquet").write_bytes(b"half")
    live = tmp_path / f".kept.parquet.{os.getpid()}.1badf00d.tmp"  # a live writer's
    live.mkdir()
    with atomic_dir(tmp_path / "kept.parquet", replace=True) as folder:
        assert folder.name.startswith(f".kept.parquet.{os.getpid()}.")
        assert not stale.exists() and live.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [live.name, "kept.parquet"]
