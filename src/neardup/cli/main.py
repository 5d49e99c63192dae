"""The ``neardup`` parser and ``main``: each command is defined and run by its own module.

Command handlers import the library, so ``neardup --help`` and ``neardup --version`` never
import numba or pyarrow. A command's ``check`` (its parser's default, where it has one) refuses
what the arguments alone show to be wrong before the kernels compile: a usage error is told
at once, not after a first run's minute of compiling.

Exit status: 0 done; 1 an error in what was asked or in the inputs (neardup's own errors, a
file that cannot be opened or written, an address ``serve`` cannot listen on, a missing
optional dependency), shown as one line
``ErrorName: message``; 2 a usage error (argparse's); 70 (``EX_SOFTWARE``) a bug in neardup,
shown with its traceback; 130 interrupted. ``--debug`` shows the traceback of any error.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import traceback

from .._config import FINGERPRINT_VERSION
from .._errors import NeardupError
from .._extras import extra_of, missing
from .._version import __version__
from . import client, dedup, explain, fingerprint, index, logs, pairs, passages, report, serve, warmup
from .options import check_config_args

COMMANDS = (fingerprint, pairs, index, dedup, passages, logs, report, explain, serve, client, warmup)
"""The command modules, in the order ``--help`` lists them; each has ``add_command``."""

EX_SOFTWARE = 70
"""The exit status of a bug (BSD's sysexits.h), apart from 1, a bad input or setting."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``neardup`` and its subcommands."""
    parser = argparse.ArgumentParser(
        prog="neardup",
        description="Find near-duplicate documents with SimHash fingerprints (Charikar 2002; "
        "Manku, Jain & Das Sarma 2007).",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"neardup {__version__} (fingerprint spec v{FINGERPRINT_VERSION})",
    )
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_command(commands)
    return parser


def run() -> None:
    """The ``neardup`` program, its console script and ``python -m neardup``: :func:`main` in
    a process of its own. numba and numpy leave about a million objects that live as long as
    the process; frozen (``gc.freeze``), the garbage collector passes them over, where it
    walked them at each full collection of a run and again at the exit: 0.3-0.4 s of a
    1M-line ``neardup logs``, a fifth of it. :func:`main` leaves a caller's process as it is."""
    status = main(own_process=True)
    gc.freeze()  # what the command made, too: the exit need not walk it
    raise SystemExit(status)


def main(argv: list[str] | None = None, *, own_process: bool = False) -> int:
    """Run ``neardup`` with ``argv`` (default: the process's); returns the exit status.
    ``own_process``: the process is the command's alone (see :func:`run`)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if hasattr(args, "idf"):
        check_config_args(args.command_parser, args)
    try:
        if (check := getattr(args, "check", None)) is not None:
            check(args)
        args.compile_seconds = warmup.compile_once(args)
        if own_process:
            gc.freeze()  # numba's and numpy's objects, imported now
        status: int = args.handler(args)
        return status
    except KeyboardInterrupt:
        print("neardup: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`neardup ... | head`): stop quietly, and keep Python from
        # complaining again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as e:
        if args.debug:
            raise
        shown = for_people(e, f"neardup {args.command}")
        if shown is None:
            traceback.print_exception(type(e), e, e.__traceback__)
            print(
                f"neardup: this is a bug in neardup {__version__}, not in your input; please report it "
                f"with the traceback above and the output of `neardup --version`",
                file=sys.stderr,
            )
            return EX_SOFTWARE
        print(shown, file=sys.stderr)
        return 1


def for_people(error: Exception, command: str) -> str | None:
    """``error`` as one line for the person who ran ``command``, or None if it is a bug.

    Only errors raised on purpose qualify: neardup's own (a ConfigError or FormatError is a
    ValueError, but a plain ValueError or TypeError is not ours: it gets a traceback), the
    operating system's about a file, and a missing optional dependency."""
    if isinstance(error, ModuleNotFoundError) and (extra := extra_of(error)):
        error = missing(extra, error, command)
    if isinstance(error, NeardupError):
        return f"{type(error).__name__}: {error}"
    if isinstance(error, OSError):
        return f"{type(error).__name__}: {_os_message(error)}"
    if isinstance(error, MemoryError):
        return f"MemoryError: out of memory{f' ({error})' if str(error) else ''}"
    return None


def _os_message(error: OSError) -> str:
    """``PATH: reason`` where the error names a file ("[Errno 2] No such file or directory:
    'x'" says the same, less readably); else the error's own message."""
    if error.filename is None or not error.strerror:
        return str(error)
    where = os.fsdecode(error.filename)
    if error.filename2 is not None:
        where += f" -> {os.fsdecode(error.filename2)}"
    return f"{where}: {error.strerror}"
