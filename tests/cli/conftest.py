"""The CLI tests run ``neardup`` in this process: ``main(argv)`` with its output captured, which
spares each run an interpreter and a load of the compiled kernels. The few tests that need a
process of their own use ``cli_helpers.run_process``."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import Ran, without_compile_notice

from neardup.cli import main


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., Ran]:
    """``run(*args, cwd=folder, stdin=b"...")``: ``neardup ARGS`` run in ``cwd``, as a ``Ran``."""

    def run(*args: str, cwd: Path, stdin: bytes | None = None) -> Ran:
        monkeypatch.chdir(cwd)
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
        capsys.readouterr()  # what came before this run is not its output
        try:
            status = main(list(args))
        except SystemExit as stopped:  # argparse: --version, --help and usage errors
            code = stopped.code
            status = code if isinstance(code, int) else 0 if code is None else 1
        out, err = capsys.readouterr()
        return Ran(status, out, without_compile_notice(err))

    return run
