"""``neardup logs``: the templates of log lines (the command-line face of ``LogTemplates``)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any

from .options import STDOUT, add_input_arguments, positive_int, read_options

STATE_FILE = "templates.json"

_EPILOG = """\
inputs:
  Log files and folders of them, one line an event, plain or .gz/.zst/.bz2, '-' for stdin;
  or JSONL, CSV or Parquet records, the line in --text-field. Lines are named FILE:LINE,
  or by --id-field's values.

outputs (each written atomically; the format by suffix: .tsv, .csv, .jsonl, .parquet):
  --templates FILE  one row a template (default: TSV on stdout):
                    template_id, template (<*> where its lines differ), count (its lines,
                    this run's and, with --state, earlier runs'), first_line
  -o FILE           one row a line: line (FILE:LINE), template_id
  --state DIR       keeps the templates between runs: a later run gives its lines the
                    templates known (their ids unchanged) and adds new ones; saved
                    atomically at the end, so a run killed midway leaves the state before it
  A summary goes to stderr.

how lines are grouped:
  Variables are masked first: dates, sizes, paths and host names by patterns (--mask adds
  yours), then every word holding a digit (numbers, hex, IPs, ids, times). Lines alike
  after masking share a template; templates alike but for one word are merged with <*>
  there when --min-values of them differ there (user names, hosts). See docs/logs.md.

examples:
  neardup logs /var/log/app.log
  neardup logs logs/ --templates templates.tsv -o lines.parquet --state state/
  journalctl -o cat | neardup logs - --templates templates.csv
"""


def add_command(commands: Any) -> None:
    parser = commands.add_parser(
        "logs",
        help="log templates: group log lines by the message that made them",
        description="Give every line of INPUTs a template (the message with <*> where lines "
        "differ) and count the lines of each.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(handler=run, check=check, command_parser=parser)
    parser.add_argument(
        "inputs", nargs="+", metavar="INPUT", help="log files or folders of them, or '-' for stdin"
    )
    parser.add_argument("--templates", metavar="FILE", help="the templates (default: TSV on stdout)")
    parser.add_argument("-o", "--output", metavar="FILE", help="each line's template")
    parser.add_argument("--state", metavar="DIR", help="keep the templates here between runs")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress and no summary")
    mining = parser.add_argument_group("templates")
    mining.add_argument(
        "--mask",
        action="append",
        default=[],
        metavar="REGEX",
        help="also mask what REGEX matches (repeatable; Python's re syntax)",
    )
    mining.add_argument(
        "--no-default-masks",
        action="store_true",
        help="leave out the built-in patterns (dates, sizes, paths, hosts); the digit rule stays",
    )
    mining.add_argument(
        "--min-values",
        type=positive_int,
        default=5,
        metavar="N",
        help="a word differing between N templates alike elsewhere is a variable (default: %(default)s)",
    )
    mining.add_argument(
        "--min-constants",
        type=int,
        default=3,
        metavar="N",
        help="the constant words a template needs before a word of it is made a variable by "
        "--min-values (default: %(default)s)",
    )
    add_input_arguments(parser)


def check(args: argparse.Namespace) -> None:
    """Usage errors and output names that say no format, before any compile."""
    from ..io.writers import table_format

    if args.min_values < 2:
        args.command_parser.error("--min-values must be 2 or more")
    if args.min_constants < 0:
        args.command_parser.error("--min-constants must be 0 or more")
    for path in (args.output, args.templates):
        if path is not None and path != STDOUT:
            table_format(path)
    if args.output == STDOUT:
        args.command_parser.error("-o needs a file: stdout is where the templates go")


def run(args: argparse.Namespace) -> int:
    from .._progress import Progress
    from ..io.writers import table_format
    from ..logs.job import mine, write_templates
    from .dedup import input_sources

    templates, state = _templates(args)
    args.lines = True  # a log file is one event a line, in a folder too
    read = read_options(args)
    with contextlib.ExitStack() as stack:
        sources = stack.enter_context(input_sources(args, lambda sources: _check_outputs(args)))
        result = mine(
            sources,
            templates,
            read,
            lines_path=args.output,
            progress=Progress(enabled=not args.quiet),
        )
    if state is not None:
        state.parent.mkdir(exist_ok=True)
        templates.save(state)
    if args.templates in (None, STDOUT):
        import pyarrow as pa

        sink = pa.BufferOutputStream()
        write_templates(sink, templates, "tsv")
        sys.stdout.buffer.write(sink.getvalue().to_pybytes())
        sys.stdout.flush()
    else:
        write_templates(args.templates, templates, table_format(args.templates))
    if not args.quiet:
        print("neardup: " + result.summary().replace("\n", "\nneardup: "), file=sys.stderr)
    return 0


def _templates(args: argparse.Namespace) -> tuple[Any, Path | None]:
    """The templates to go on from (``--state``'s, or none yet) and where to save them."""
    from .._errors import ConfigError
    from ..logs.masking import DEFAULT_MASKS
    from ..logs.templates import LogTemplates

    masks = [] if args.no_default_masks else list(DEFAULT_MASKS)
    masks += [(f"mask {i + 1}", pattern) for i, pattern in enumerate(args.mask)]
    try:
        wanted = LogTemplates(masks, args.min_values, args.min_constants)
    except ValueError as e:
        raise ConfigError(f"--mask: {e}") from None
    if args.state is None:
        return wanted, None
    state = Path(args.state) / STATE_FILE
    if Path(args.state).exists() and not Path(args.state).is_dir():
        raise ConfigError(f"--state {args.state}: not a folder; name a folder (made if missing)")
    if not state.exists():
        return wanted, state
    try:
        kept = LogTemplates.load(state)
    except ValueError as e:
        raise ConfigError(f"--state: {e}") from None
    if kept.settings() != wanted.settings():
        raise ConfigError(
            f"--state {args.state} was made with other settings ({_differences(kept, wanted)}); "
            "give the same --mask, --no-default-masks, --min-values and --min-constants, or "
            "another --state"
        )
    return kept, state


def _differences(kept: Any, wanted: Any) -> str:
    ours, theirs = wanted.settings(), kept.settings()
    changed = [name for name in ours if ours[name] != theirs[name]]
    return ", ".join(f"{name}: {theirs[name]!r} there, {ours[name]!r} here" for name in changed)


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before anything is read, outputs that would replace an input or each other, or
    could not be written (:func:`neardup.io.sources.check_outputs`)."""
    from ..io.sources import check_outputs

    check_outputs({"-o": args.output, "--templates": args.templates}, args.inputs)
