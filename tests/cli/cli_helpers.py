"""What the CLI tests share: a run's outcome, the subprocess runner of the smoke tests, and the
fingerprint lines the CLI should print, computed by the library on the same texts."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import neardup

HEADER = "# neardup fingerprints v1 "

COMPILE_NOTICE = re.compile(
    r"neardup: compiling the kernels this command needs \(first run only, about \d+ s\) \.\.\. "
    r"done in \d+ s\n"
)
"""The line a run prints while it compiles the kernels it needs, on a cold cache only."""


def without_compile_notice(stderr: str) -> str:
    """``stderr`` without the compile notice: whether a run compiles depends on the tests
    before it, not on what it is meant to show."""
    return COMPILE_NOTICE.sub("", stderr, count=1)


class Ran(NamedTuple):
    """One ``neardup`` run: its exit status and what it printed, decoded as UTF-8."""

    returncode: int
    stdout: str
    stderr: str


def run_process(*args: str, cwd: Path, stdin: bytes | None = None) -> Ran:
    """``python -m neardup ARGS`` in a process of its own: for what only a process shows (the
    interpreter's exit, a real stdin, what ``--help`` imports). Other tests use the ``run``
    fixture, which calls ``main`` in this process."""
    done = subprocess.run(
        [sys.executable, "-m", "neardup", *args], cwd=cwd, input=stdin, capture_output=True, timeout=300
    )
    return Ran(
        done.returncode, done.stdout.decode("utf-8"), without_compile_notice(done.stderr.decode("utf-8"))
    )


def run_python(code: str, cwd: Path) -> str:
    """``code`` run by a Python of its own in ``cwd``, for what only a fresh process shows (what
    it imported, its garbage collector): what it printed, once it ended well."""
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def parse(output: str) -> tuple[dict, list[tuple[str, str]]]:
    """The config in the header line, and the (id, hex) rows."""
    header, *rows = output.splitlines()
    assert header.startswith(HEADER), header
    return json.loads(header[len(HEADER) :]), [tuple(row.split("\t")) for row in rows]


def lines_of(name: str, *numbers: int) -> list[str]:
    """The default ids of the documents on lines (or rows) ``numbers`` of the input ``name``:
    ``name:LINE``, as every command gives them."""
    return [f"{name}:{n}" for n in numbers]


def expected_rows(ids: list[str], texts: list, **options) -> list[tuple[str, str]]:
    """(id, hex) as the CLI should print them, from Fingerprinter.fingerprint_batch."""
    fingerprints = neardup.Fingerprinter(**options).fingerprint_batch(texts)
    if fingerprints.ndim == 1:
        values = [int(v) for v in fingerprints]
    else:  # column 0 holds bits 0-63
        values = [int(low) | (int(high) << 64) for low, high in fingerprints]
    digits = fingerprints.itemsize * 2 * (1 if fingerprints.ndim == 1 else 2)
    return [(doc_id, format(value, f"0{digits}x")) for doc_id, value in zip(ids, values)]


def check_ok(result: Ran, ids: list[str], texts: list, **options) -> None:
    """The run succeeded and printed the library's fingerprints of ``texts`` under ``ids``."""
    assert result.returncode == 0, result.stderr
    config, rows = parse(result.stdout)
    assert config == neardup.FingerprintConfig(**options).to_dict()
    assert rows == expected_rows(ids, texts, **options)
