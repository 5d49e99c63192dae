"""The ids of a saved index whose documents' ids are not integers (``FILE:LINE``, URLs).

A :class:`~neardup.HammingIndex` holds int64 ids. ``neardup index build`` keeps integer ids
as they are; any others it numbers from 0 and writes, in that order, to ``INDEX.ids`` beside
the index, where ``index query`` and ``index info`` find them:

    # neardup ids v1 COUNT
    ID                          (one line per document: line k + 2 names the number k)

Written atomically before the index, so an index never stands beside the ids of another
build; read back only when COUNT is the index's size.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .._atomic import atomic_write
from .._errors import FormatError

_HEADER = "# neardup ids v1 "
_INT64 = range(-(2**63), 2**63)


def id_list_path(index_path: str | os.PathLike) -> str:
    """Where the ids of the index at ``index_path`` are written."""
    return f"{os.fspath(index_path)}.ids"


def integer_ids(ids: list[str]) -> np.ndarray | None:
    """``ids`` as int64 when every one is an integer written plainly (``17``, ``-3``, no
    ``+``, spaces or leading zeros, which would not read back as written), else None."""
    numbers = []
    for doc_id in ids:
        digits = doc_id.removeprefix("-")
        if not digits.isascii() or not digits.isdigit() or (digits != "0" and digits[0] == "0"):
            return None
        number = int(doc_id)
        if number not in _INT64 or doc_id == "-0":
            return None
        numbers.append(number)
    return np.array(numbers, dtype=np.int64)


def write_id_list(index_path: str | os.PathLike, ids: list[str]) -> None:
    """Write ``ids`` (no line breaks in any) as the id list of the index at ``index_path``."""
    with atomic_write(id_list_path(index_path), "w") as f:
        f.write(f"{_HEADER}{len(ids)}\n")
        f.writelines(f"{doc_id}\n" for doc_id in ids)


def remove_id_list(index_path: str | os.PathLike) -> None:
    """Remove the id list of an earlier build of ``index_path``, if there is one."""
    Path(id_list_path(index_path)).unlink(missing_ok=True)


def read_id_list(index_path: str | os.PathLike, count: int) -> list[str] | None:
    """The ids of the index at ``index_path`` (``count`` fingerprints), or None when it has
    no id list (its ids are integers)."""
    path = id_list_path(index_path)
    try:
        with open(path, encoding="utf-8", newline="\n") as f:
            header = f.readline()
            ids = f.read().split("\n")
    except FileNotFoundError:
        return None
    if not header.startswith(_HEADER) or not header[len(_HEADER) :].strip().isdigit():
        raise FormatError(
            f"{path}: not an id list of `neardup index build` (its first line is {header[:80]!r})"
        )
    written = int(header[len(_HEADER) :])
    ids.pop()  # after the last line break
    if written != len(ids) or written != count:
        raise FormatError(
            f"{path}: holds {len(ids):,} ids (its header says {written:,}) where "
            f"{os.fspath(index_path)} holds {count:,} fingerprints; the two are of different "
            f"builds: build the index again with `neardup index build`"
        )
    return ids
