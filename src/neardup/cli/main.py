"""The ``neardup`` parser and ``main``: each command is defined and run by its own module.

Command handlers import the library, so ``neardup --help`` and ``neardup --version`` never
import numba or pyarrow.
"""

from __future__ import annotations

import argparse
import os
import sys

from .._config import FINGERPRINT_VERSION
from .._version import __version__
from . import client, dedup, explain, fingerprint, index, pairs, report, serve
from .options import check_config_args

COMMANDS = (fingerprint, pairs, index, dedup, report, explain, serve, client)
"""The command modules, in the order ``--help`` lists them; each has ``add_command``."""


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


def main(argv: list[str] | None = None) -> int:
    """Run ``neardup`` with ``argv`` (default: the process's); returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if hasattr(args, "idf"):
        check_config_args(args.command_parser, args)
    try:
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
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return 1
