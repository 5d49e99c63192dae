"""Atomic file writes: write to a temporary file beside the target, fsync, rename.

A temporary name carries its writer's process id (``.kept.jsonl.<pid>.<random>.tmp``), so that
the next write of the same target can tell one a killed writer left (its process gone) from
one a live writer is filling, and remove only the first.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "wb") -> Iterator[IO]:
    """Open a temporary file that replaces ``path`` only once the block ends without error.

    Readers see the old file or the whole new one, never a part; on error the temporary file is
    removed and ``path`` is untouched."""
    with atomic_path(path) as tmp, open(tmp, mode) as f:
        yield f


def _create(target: Path, make: Callable[[Path], None]) -> Path:
    """A new, unused temporary path beside ``target``, made by ``make``, once the temporaries
    that dead writers left beside it are removed.

    Not ``tempfile.mkstemp``/``mkdtemp``: they create mode 0600/0700, which the rename keeps,
    so an output would be unreadable to the other users and services a plain ``open()`` serves.
    Created with 0666/0777, the process's umask applies as it does to any new file."""
    _remove_stale(target)
    for _ in range(100):
        tmp = target.parent / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            make(tmp)
        except FileExistsError:
            continue
        return tmp
    raise FileExistsError(f"no unused temporary name beside {target}")


def _remove_stale(target: Path) -> None:
    """Remove the temporary files and folders of ``target`` whose writer is dead: a SIGKILL
    or a power cut mid-write leaves one as large as the output, which nothing else removes.
    Only names of ``target``'s own pattern are touched, and only those whose process is gone
    (a live one, this process included, may be writing)."""
    pattern = re.compile(rf"\.{re.escape(target.name)}\.([0-9]+)\.[0-9a-f]{{8}}\.tmp")
    try:
        entries = list(os.scandir(target.parent))
    except OSError:  # a missing or unreadable folder: the write itself will say so
        return
    for entry in entries:
        found = pattern.fullmatch(entry.name)
        if found is None or _alive(int(found.group(1))):
            continue
        with contextlib.suppress(OSError):  # gone meanwhile, or not ours to remove
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` may still be writing: it runs on this machine (another user's
    counts), or ``pid`` is no process id to ask about (0 would ask for this process group)."""
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)  # signal 0: only asks
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def fsync_file(path: str | os.PathLike) -> None:
    """Waits until the file at ``path`` is on disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # not every platform can fsync a directory
        dir_fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside ``path`` for a writer that opens files by name (pyarrow's);
    once the block ends without error the file there is fsynced and renamed to ``path``,
    else removed."""
    target = Path(path)
    tmp = _create(target, lambda name: os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)))
    try:
        yield tmp
        fsync_file(tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)


def folder_taken(path: Path) -> bool:
    """Whether ``path`` exists and is not an empty folder: where :func:`atomic_dir` writes a
    new folder only with ``replace``."""
    return path.exists() and (not path.is_dir() or any(path.iterdir()))


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike, *, replace: bool = False) -> Iterator[Path]:
    """A temporary folder beside ``path``, renamed to ``path`` once the block ends without
    error (else removed with its contents).

    ``path`` must not exist, or be an empty folder: a folder of one document per file may be
    the user's own. With ``replace``, for a folder that stands for one output file (Spark's
    folder of part files, which ``-o kept.parquet`` names), an existing one is replaced as a
    file would be: swapped out only once the new one is complete."""
    target = Path(path)
    if not replace and folder_taken(target):
        raise FileExistsError(f"{target} exists and is not an empty folder; remove it or write elsewhere")
    tmp = _create(target, lambda name: os.mkdir(name, 0o777))
    try:
        yield tmp
        if replace and os.path.lexists(target):
            old = _create(target, lambda name: os.mkdir(name, 0o777))
            os.replace(target, old / target.name)
            os.replace(tmp, target)
            shutil.rmtree(old)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _fsync_dir(target.parent)
