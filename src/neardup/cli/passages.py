"""``neardup passages``: the command-line face of :func:`neardup.passages`."""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
import warnings
from typing import Any

from ..decision.choices import KEEP, PASSAGE_FEATURES
from .options import (
    STDOUT,
    add_code_arguments,
    add_input_arguments,
    check_code_args,
    code_normalize,
    fraction,
    positive_int,
    read_options,
)

_EPILOG = """\
inputs:
  As `neardup dedup` reads them: files and folders of JSONL, Parquet, CSV/TSV or text
  (one document per line when named, per file in a folder), plain or .gz/.zst/.bz2, '-'
  for stdin. Ids are --id-field's values, else FILE:LINE, FILE:ROW or FILE.

outputs (each written atomically; the format by suffix: .tsv, .csv, .jsonl, .parquet):
  -o FILE     one row per passage two documents share (default: TSV on stdout):
              id_a, id_b       the two documents, a before b in the input
              start_a, end_a   where the passage lies in a, as character offsets
              start_b, end_b   (Python str indices: text[start:end] is the passage)
              line_a, end_line_a  with --features code: the lines (1-based, inclusive) of
              line_b, end_line_b  the passage's first and last token in a and in b
              words            the longer copy's length in words (tokens, for code)
              similarity       2 x matched words / words of both copies
  --common FILE   one row per passage held by --common-docs documents or more (a site's
              footer, a licence): passage, documents, and the id, start, end and words of
              its first copy. Such passages make no rows in -o: a footer in a million
              pages would be half a trillion pairs.
  --documents FILE   the documents again, every field as read, in the inputs' format or
              the one FILE's suffix names; with --strip, each without the passages an
              earlier document (in --keep order) holds (a quoted paragraph's second copy,
              a footer but for its first page); with --max-copied F, without the
              documents whose copied share of characters is F or more
  A summary goes to stderr.

what counts as a shared passage:
  At least --min-words words (default 50; the longer copy may hold one in ten fewer, since
  an edited word at either end is not aligned), aligned word by word with about one word in
  ten changed, inserted or deleted (--min-similarity 0.8). Words are compared
  case-insensitively; punctuation and spacing are ignored. See docs/passages.md for what it
  finds and what it misses.
  With --features code, the words are the tokens of source code as `--features code`
  fingerprints lex them (pygments; comments and layout left out, names and literals made
  placeholders unless --code-normalize none): a function copied with its variables renamed
  and its lines re-laid still matches. Each file's language is its name's (or --language);
  a file whose name says none is a bad record (--on-error). See docs/code.md.

examples:
  neardup passages pages.jsonl -o shared.tsv --common common.tsv
  neardup passages theses/ --min-words 30 -o shared.parquet
  neardup passages crawl/ --documents clean.jsonl --strip --max-copied 0.8
  neardup passages src/ --features code -o copied-code.tsv
"""


def add_command(commands: Any) -> None:
    parser = commands.add_parser(
        "passages",
        help="passages that documents share: partial copies, plagiarism, boilerplate",
        description="Find every passage of INPUTs' documents that another document holds too, "
        "near copies included, and where it lies in each.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(handler=run, check=check, command_parser=parser)
    parser.add_argument(
        "inputs", nargs="+", metavar="INPUT", help="files or folders of documents, or '-' for stdin"
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="the shared passages (default: TSV on stdout)")
    parser.add_argument("--common", metavar="FILE", help="the common passages, one row each")
    parser.add_argument("--documents", metavar="FILE", help="the documents again (see --strip, --max-copied)")
    parser.add_argument(
        "--strip", action="store_true", help="--documents without the passages an earlier document holds"
    )
    parser.add_argument(
        "--keep",
        choices=KEEP,
        default="first",
        help="which copy is the original, the one --strip leaves: the first in the input (the "
        "default), the longest or shortest document, or the lowest id",
    )
    parser.add_argument(
        "--max-copied",
        type=fraction,
        metavar="F",
        help="--documents without those whose copied share of characters is F or more",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress and no summary")
    found = parser.add_argument_group("passages")
    found.add_argument(
        "--min-words",
        type=positive_int,
        default=50,
        metavar="N",
        help="the shortest passage, in words (default: %(default)s; at least 8)",
    )
    found.add_argument(
        "--min-similarity",
        type=fraction,
        default=0.8,
        metavar="F",
        help="2 x matched words / words of both copies, at least (default: %(default)s)",
    )
    found.add_argument(
        "--common-docs",
        type=positive_int,
        default=100,
        metavar="N",
        help="a passage in this many documents or more is common: listed once in --common, "
        "not as pairs (default: %(default)s)",
    )
    found.add_argument(
        "--features",
        choices=PASSAGE_FEATURES,
        default="words",
        help="what a passage is made of: words of prose (the default), or the tokens of source "
        "code (the code extra), with line ranges in the output",
    )
    add_code_arguments(found)
    add_input_arguments(parser)


def check(args: argparse.Namespace) -> None:
    """Usage errors and output names that say no format, before any compile."""
    from ..io.writers import table_format

    if (args.strip or args.max_copied is not None) and args.documents is None:
        args.command_parser.error("--strip and --max-copied shape --documents FILE: name it")
    if args.max_copied == 0:
        args.command_parser.error("--max-copied 0 would leave out every document; give a share above 0")
    check_code_args(args.command_parser, args)
    for path in (args.output, args.common):
        if path is not None and path != STDOUT:
            table_format(path)


def run(args: argparse.Namespace) -> int:
    from .._progress import Progress
    from ..decision.passage_matching import PassageOptions
    from ..passage.job import run_job
    from .dedup import input_sources

    code = {"language": args.language, "code_normalize": code_normalize(args)}
    options = PassageOptions(
        min_words=args.min_words,
        min_similarity=args.min_similarity,
        common_docs=args.common_docs,
        features=args.features,
        **(code if args.features == "code" else {}),
    )
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:  # stdin, saved to a file, is read again for --documents
        sources = stack.enter_context(input_sources(args, lambda sources: _check_outputs(args, sources)))
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always", UserWarning)
            result = run_job(
                sources,
                options,
                read_options(args),
                n_jobs=args.n_jobs,
                progress=Progress(enabled=not args.quiet),
            )
        for warning in warned:
            print(f"neardup: warning: {warning.message}", file=sys.stderr)
        to_stdout = args.output in (None, STDOUT)
        result.write(None if to_stdout else args.output, args.common)
        written = None
        if args.documents is not None:
            written = result.write_documents(
                args.documents, strip=args.strip, max_copied=args.max_copied, keep=args.keep
            )
    if to_stdout:
        _write_stdout(result.matches)
    if not args.quiet:
        summary = result.summary()
        if written is not None:
            summary += f"\nwrote {written:,} documents to {args.documents}" + (
                f" ({result.documents - written:,} copied {args.max_copied:.0%} or more left out)"
                if args.max_copied is not None
                else ""
            )
        compiled = getattr(args, "compile_seconds", None)
        if compiled is not None:  # before ``started``: a stage of its own
            summary += f"\ncompiled the kernels in {compiled:.1f} s"
        summary += f"\nin {time.perf_counter() - started:.1f} s"
        print("neardup: " + summary.replace("\n", "\nneardup: "), file=sys.stderr)
    return 0


def _check_outputs(args: argparse.Namespace, sources: list[Any]) -> None:
    """Refuse, before anything is read, outputs that would replace an input or each other, or
    could not be written (:func:`neardup.io.sources.check_outputs`), and a --documents the
    inputs cannot fill."""
    from ..io.sources import check_outputs
    from ..io.writers import output_format

    check_outputs({"-o": args.output, "--common": args.common, "--documents": args.documents}, args.inputs)
    if args.documents is not None:
        output_format(args.documents, None, sources)


def _write_stdout(table: Any) -> None:
    import pyarrow as pa

    from ..io.writers import write_table

    sink = pa.BufferOutputStream()
    write_table(table, sink, "tsv")
    sys.stdout.buffer.write(sink.getvalue().to_pybytes())
    sys.stdout.flush()
