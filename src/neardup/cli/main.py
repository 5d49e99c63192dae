"""The ``neardup`` command: parse arguments, read documents, call the library, print.

    neardup fingerprint corpus.jsonl.gz --text-field body -o corpus.fp
    neardup fingerprint --example

The library is imported inside the command handlers, so ``neardup --help`` and
``neardup --version`` never import numba.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterable, Iterator
from itertools import chain, islice
from typing import IO, Any

from .._config import FINGERPRINT_VERSION, FingerprintConfig
from .._version import __version__
from ..io.fingerprint_files import FORMAT, FORMAT_VERSION, format_header, format_rows
from ._input import ERRORS, FORMATS, STDIN, Document, DocumentReader, example_documents
from .dedup import add_dedup_command
from .options import add_config_arguments, check_config_args, config_from_args
from .report import add_report_commands

EXAMPLE_MAX_DISTANCE = 10
"""Hamming radius (bits, for 64-bit fingerprints; doubled for 128) at which ``--example``
reports pairs: an estimated cosine of about 0.88 (Charikar 2002)."""

_FINGERPRINT_EPILOG = f"""\
input formats:
  lines   one document per line (the line ending is not part of it); id = line number
  jsonl   one JSON object per line; text from --text-field, id from --id-field or the line
          number; blank lines are skipped
  files   every regular file in a folder, recursively, sorted; id = its relative path
  A name ending in .jsonl or .ndjson is jsonl, a folder is files, anything else (and '-',
  stdin) is lines; --format overrides. A .gz file (or a .gz file in a folder) is decompressed.

output:
  a header line '# {FORMAT} v{FORMAT_VERSION} {{config as JSON}}', then one line per
  document 'ID<TAB>HEX', HEX the fingerprint in lowercase hex (16 digits for 64 bits, 32 for
  128). Fingerprints follow spec version {FINGERPRINT_VERSION} (docs/fingerprint-spec.md).
"""


def _positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive integer")
    return number


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

    fp = commands.add_parser(
        "fingerprint",
        help="compute the fingerprint of every document of INPUT",
        description="Compute the SimHash fingerprint of every document of INPUT.",
        epilog=_FINGERPRINT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    fp.set_defaults(handler=_fingerprint, command_parser=fp)
    fp.add_argument(
        "input",
        nargs="?",
        metavar="INPUT",
        help="a text or JSONL file (optionally .gz), a folder, or '-' for stdin",
    )
    fp.add_argument("-o", "--output", metavar="FILE", help="write here, atomically (default: stdout)")
    fp.add_argument(
        "--example",
        action="store_true",
        help="fingerprint a small built-in corpus instead of INPUT and show its near-duplicate pairs",
    )
    fp.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show the traceback of an error"
    )

    read = fp.add_argument_group("input")
    read.add_argument("--format", choices=FORMATS, help="the format of INPUT (default: from its name)")
    read.add_argument(
        "--text-field",
        default="text",
        metavar="NAME",
        help="JSONL field holding the text (default: %(default)s)",
    )
    read.add_argument(
        "--id-field", metavar="NAME", help="JSONL field holding the id (default: the line number)"
    )
    read.add_argument(
        "--on-error",
        choices=ERRORS,
        default="raise",
        help="a malformed line or one without text: stop with an error (raise, the "
        "default) or leave it out and count it (skip)",
    )
    read.add_argument(
        "--batch-size",
        type=_positive_int,
        default=10_000,
        metavar="N",
        help="documents fingerprinted at a time; bounds memory (default: %(default)s)",
    )
    read.add_argument(
        "--n-jobs", type=int, default=None, metavar="N", help="threads to use (default: all cores)"
    )

    add_config_arguments(fp)
    _add_index_commands(commands)
    add_dedup_command(commands)
    add_report_commands(commands)
    return parser


def _add_index_commands(commands: Any) -> None:
    pairs = commands.add_parser(
        "pairs",
        help="every pair of fingerprints within a Hamming distance (self-join)",
        description="Write every pair of documents of FPFILE (from `neardup fingerprint`) whose "
        "fingerprints differ in at most K bits, exactly once, as ID_A<TAB>ID_B<TAB>DISTANCE.",
    )
    pairs.set_defaults(handler=_pairs)
    pairs.add_argument("fpfile", metavar="FPFILE", help="a fingerprint file")
    pairs.add_argument(
        "-k",
        "--max-distance",
        type=int,
        default=3,
        metavar="K",
        help="the largest Hamming distance, in bits (default: %(default)s)",
    )
    pairs.add_argument("-o", "--output", metavar="FILE", help="write here, atomically (default: stdout)")

    index = commands.add_parser(
        "index",
        help="build, query and describe a saved Hamming index",
        description="A saved HammingIndex over the fingerprints of a file.",
    )
    actions = index.add_subparsers(dest="action", required=True, metavar="ACTION")
    build = actions.add_parser(
        "build",
        help="index the fingerprints of FPFILE",
        description="Index the fingerprints of FPFILE and save the index. "
        "Ids are the file's ids when all are integers, else "
        "the row numbers (0-based).",
    )
    build.set_defaults(handler=_index_build)
    build.add_argument("fpfile", metavar="FPFILE", help="a fingerprint file")
    build.add_argument("-o", "--output", metavar="INDEX", required=True, help="the index file to write")
    build.add_argument(
        "-k",
        "--max-distance",
        type=int,
        default=3,
        metavar="K",
        help="the largest radius the index serves, in bits (default: %(default)s)",
    )
    build.add_argument(
        "--plan",
        default="auto",
        help="table layout: auto, compact, balanced, fast, mih (default: %(default)s)",
    )

    query = actions.add_parser("query", help="find indexed fingerprints near a fingerprint or text")
    query.set_defaults(handler=_index_query)
    query.add_argument("index", metavar="INDEX", help="an index file from `neardup index build`")
    given = query.add_mutually_exclusive_group(required=True)
    given.add_argument("--fingerprint", metavar="HEX", help="a fingerprint in hex")
    given.add_argument("--text", help="a text, fingerprinted with the index's own config")
    query.add_argument(
        "-k",
        "--max-distance",
        type=int,
        default=None,
        metavar="K",
        help="search radius (default: the index's)",
    )

    info = actions.add_parser("info", help="describe an index file")
    info.set_defaults(handler=_index_info)
    info.add_argument("index", metavar="INDEX", help="an index file")


def main(argv: list[str] | None = None) -> int:
    """Run ``neardup`` with ``argv`` (default: the process's); returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "fingerprint":
        _check_fingerprint_args(args.command_parser, args)
    if hasattr(args, "idf"):
        check_config_args(args.command_parser, args)
    try:
        return args.handler(args)
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


def _check_fingerprint_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.example and args.input is not None:
        parser.error("--example fingerprints a built-in corpus; give it without INPUT")
    if not args.example and args.input is None:
        parser.error("INPUT is required (a file, a folder or '-'), unless --example is given")


def _fingerprint(args: argparse.Namespace) -> int:
    reader = None
    if args.example:
        documents: Iterable[Document] = example_documents()
    else:
        reader = DocumentReader(
            args.input,
            args.format,
            text_field=args.text_field,
            id_field=args.id_field,
            errors=args.on_error,
            stdin=sys.stdin.buffer,
        )
        documents = reader
    batches = _batches(documents, args.batch_size)
    first = next(batches, None)  # so an error on the first lines comes before any output

    from ..fingerprint.fingerprinter import Fingerprinter  # numba loads here, not for --help

    fingerprinter = Fingerprinter(config_from_args(args))
    kept: list[tuple[list[str], Any]] = []
    with _open_output(args.output) as out:
        out.write(format_header(fingerprinter.config))
        for batch in chain([first] if first else [], batches):
            ids = [doc_id for doc_id, _ in batch]
            fingerprints = fingerprinter.fingerprint_batch([text for _, text in batch], n_jobs=args.n_jobs)
            out.write(format_rows(ids, fingerprints))
            if args.example:
                kept.append((ids, fingerprints))
    if reader is not None and reader.skipped:
        unit = "file" if reader.format == "files" else "line"
        print(
            f"neardup: skipped {reader.skipped} {unit}{'s' * (reader.skipped > 1)} that could not "
            f"be read as documents; the first: {reader.first_skip}",
            file=sys.stderr,
        )
    if args.example:
        _report_example_pairs(kept, fingerprinter.config.bits)
    return 0


def _pairs(args: argparse.Namespace) -> int:
    from ..index.hamming_index import HammingIndex
    from ..io.fingerprint_files import read_fingerprints

    data = read_fingerprints(args.fpfile)
    index = HammingIndex(bits=data.bits, max_distance=args.max_distance)
    index.add(data.fingerprints)  # ids are row numbers
    first, second, distances = index.pairs()
    with _open_output(args.output) as out:
        out.write(f"# neardup pairs k={args.max_distance} of {args.fpfile}\n".encode())
        rows = "".join(
            f"{data.ids[i]}\t{data.ids[j]}\t{d}\n"
            for i, j, d in zip(first.tolist(), second.tolist(), distances.tolist())
        )
        out.write(rows.encode("utf-8", "surrogateescape"))
    print(
        f"neardup: {len(first)} pairs within {args.max_distance} bits among {len(data.ids)} fingerprints",
        file=sys.stderr,
    )
    return 0


def _index_build(args: argparse.Namespace) -> int:
    import numpy as np

    from ..index.hamming_index import HammingIndex
    from ..io.fingerprint_files import read_fingerprints

    data = read_fingerprints(args.fpfile)
    numeric = all(doc_id.lstrip("-").isdigit() for doc_id in data.ids)
    ids = np.array([int(doc_id) for doc_id in data.ids], dtype=np.int64) if numeric else None
    index = HammingIndex(
        bits=data.bits, max_distance=args.max_distance, plan=args.plan, fingerprint_config=data.config
    )
    index.add(data.fingerprints, ids=ids)
    index.save(args.output)
    print(
        f"neardup: indexed {len(index)} fingerprints ({'their ids' if numeric else 'ids = row numbers'}); "
        f"{index.plan.describe(len(index))}",
        file=sys.stderr,
    )
    return 0


def _index_query(args: argparse.Namespace) -> int:
    from ..index.hamming_index import HammingIndex
    from ..io.fingerprint_files import parse_hex

    index = HammingIndex.open(args.index)
    if args.text is not None:
        if index.fingerprint_config is None:
            raise ValueError(
                f"{args.index} does not record the fingerprint config it was built "
                f"with; query it with --fingerprint HEX"
            )
        from ..fingerprint.fingerprinter import Fingerprinter

        config = FingerprintConfig.from_dict(index.fingerprint_config)
        query = Fingerprinter(config).fingerprint(args.text)
        fingerprint = parse_hex(f"{query:0{index.bits // 4}x}", index.bits)
    else:
        fingerprint = parse_hex(args.fingerprint.lower().removeprefix("0x"), index.bits)
    found, distances = index.query(fingerprint, max_distance=args.max_distance)
    sys.stdout.write("".join(f"{i}\t{d}\n" for i, d in zip(found.tolist(), distances.tolist())))
    return 0


def _index_info(args: argparse.Namespace) -> int:
    from ..index.hamming_index import HammingIndex

    index = HammingIndex.open(args.index)
    print(
        f"file: {args.index}\nfingerprints: {len(index)}\nbits: {index.bits}\n"
        f"max_distance: {index.max_distance}\nplan: {index.plan.describe(len(index))}\n"
        f"bytes: {index.nbytes}\nfingerprint config: {json.dumps(index.fingerprint_config)}"
    )
    return 0


@contextlib.contextmanager
def _open_output(path: str | None) -> Iterator[IO[bytes]]:
    if path is None or path == STDIN:
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    from .._atomic import atomic_write

    with atomic_write(path, "wb") as f:
        yield f


def _batches(documents: Iterable[Document], size: int) -> Iterator[list[Document]]:
    iterator = iter(documents)
    while batch := list(islice(iterator, size)):
        yield batch


def _report_example_pairs(kept: list[tuple[list[str], Any]], bits: int) -> None:
    import numpy as np

    from ..index.hamming import estimate_cosine, hamming_pairwise

    ids = [doc_id for batch_ids, _ in kept for doc_id in batch_ids]
    fingerprints = np.concatenate([fps for _, fps in kept])
    texts = dict(example_documents())
    radius = EXAMPLE_MAX_DISTANCE * bits // 64
    distances = hamming_pairwise(fingerprints)
    first, second = np.nonzero(np.triu(distances <= radius, k=1))
    lines = [
        f"neardup: {len(first)} pairs of example documents within Hamming distance {radius} "
        f"of {bits} bits (estimated cosine >= {estimate_cosine(radius, bits):.2f}):"
    ]
    for i, j in zip(first.tolist(), second.tolist()):
        d = int(distances[i, j])
        lines.append(f"  {ids[i]} ~ {ids[j]}: distance {d}, estimated cosine {estimate_cosine(d, bits):.2f}")
        lines.append(f"    {ids[i]}: {texts[ids[i]]}")
        lines.append(f"    {ids[j]}: {texts[ids[j]]}")
    print("\n".join(lines), file=sys.stderr)
