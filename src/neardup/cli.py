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

from . import __version__
from ._cli_input import ERRORS, FORMATS, STDIN, Document, DocumentReader, example_documents
from ._config import BITS, FEATURES, FINGERPRINT_VERSION, WEIGHTINGS, FingerprintConfig

FINGERPRINTS_FORMAT = "neardup fingerprints"
FINGERPRINTS_FORMAT_VERSION = 1
"""The version of the ``ID<TAB>HEX`` text format ``neardup fingerprint`` writes."""

EXAMPLE_MAX_DISTANCE = 10
"""Hamming radius (bits, for 64-bit fingerprints; doubled for 128) at which ``--example``
reports pairs: an estimated cosine of about 0.88 (Charikar 2002)."""

_DEFAULTS = FingerprintConfig()

_FINGERPRINT_EPILOG = f"""\
input formats:
  lines   one document per line (the line ending is not part of it); id = line number
  jsonl   one JSON object per line; text from --text-field, id from --id-field or the line
          number; blank lines are skipped
  files   every regular file in a folder, recursively, sorted; id = its relative path
  A name ending in .jsonl or .ndjson is jsonl, a folder is files, anything else (and '-',
  stdin) is lines; --format overrides. A .gz file (or a .gz file in a folder) is decompressed.

output:
  a header line '# {FINGERPRINTS_FORMAT} v{FINGERPRINTS_FORMAT_VERSION} {{config as JSON}}', then one line per
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
                    "Manku, Jain & Das Sarma 2007).")
    parser.add_argument("--version", action="version",
                        version=f"neardup {__version__} (fingerprint spec v{FINGERPRINT_VERSION})")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    fp = commands.add_parser(
        "fingerprint", help="compute the fingerprint of every document of INPUT",
        description="Compute the SimHash fingerprint of every document of INPUT.",
        epilog=_FINGERPRINT_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    fp.set_defaults(handler=_fingerprint, command_parser=fp)
    fp.add_argument("input", nargs="?", metavar="INPUT",
                    help="a text or JSONL file (optionally .gz), a folder, or '-' for stdin")
    fp.add_argument("-o", "--output", metavar="FILE",
                    help="write here, atomically (default: stdout)")
    fp.add_argument("--example", action="store_true",
                    help="fingerprint a small built-in corpus instead of INPUT and show its "
                         "near-duplicate pairs")
    fp.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                    help="show the traceback of an error")

    read = fp.add_argument_group("input")
    read.add_argument("--format", choices=FORMATS, help="the format of INPUT (default: from its name)")
    read.add_argument("--text-field", default="text", metavar="NAME",
                      help="JSONL field holding the text (default: %(default)s)")
    read.add_argument("--id-field", metavar="NAME",
                      help="JSONL field holding the id (default: the line number)")
    read.add_argument("--on-error", choices=ERRORS, default="raise",
                      help="a malformed line or one without text: stop with an error (raise, the "
                           "default) or leave it out and count it (skip)")
    read.add_argument("--batch-size", type=_positive_int, default=10_000, metavar="N",
                      help="documents fingerprinted at a time; bounds memory (default: %(default)s)")
    read.add_argument("--n-jobs", type=int, default=None, metavar="N",
                      help="threads to use (default: all cores)")

    config = fp.add_argument_group("fingerprint (see FingerprintConfig)")
    config.add_argument("--bits", type=int, choices=BITS, default=_DEFAULTS.bits,
                        help="fingerprint width (default: %(default)s)")
    config.add_argument("--features", choices=FEATURES, default=_DEFAULTS.features,
                        help="what a text is made of (default: %(default)s)")
    config.add_argument("--shingle-size", type=int, default=_DEFAULTS.shingle_size, metavar="N",
                        help="words per shingle, for word-shingles (default: %(default)s)")
    config.add_argument("--ngram-size", type=int, default=_DEFAULTS.ngram_size, metavar="N",
                        help="code points per n-gram, for char-ngrams (default: %(default)s)")
    config.add_argument("--no-normalize", dest="normalize", action="store_false",
                        help="do not NFKC-normalise and casefold texts")
    config.add_argument("--weighting", choices=WEIGHTINGS, default=None,
                        help=f"feature weights (default: {_DEFAULTS.weighting}, or tfidf with --idf)")
    config.add_argument("--idf", metavar="FILE",
                        help="IDF model for tfidf weighting, saved with neardup.fit_idf(...).save(FILE)")
    config.add_argument("--seed", type=int, default=_DEFAULTS.seed,
                        help="seed of the feature hash, 0 <= seed < 2**64 (default: %(default)s)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``neardup`` with ``argv`` (default: the process's); returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "fingerprint":
        _check_fingerprint_args(args.command_parser, args)
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
    if args.weighting == "tfidf" and args.idf is None:
        parser.error("--weighting tfidf needs --idf FILE, a model saved with neardup.fit_idf(...).save(FILE)")
    if args.idf is not None and args.weighting not in (None, "tfidf"):
        parser.error(f"--idf is used only with --weighting tfidf, not {args.weighting}")


def _fingerprint(args: argparse.Namespace) -> int:
    reader = None
    if args.example:
        documents: Iterable[Document] = example_documents()
    else:
        reader = DocumentReader(args.input, args.format, text_field=args.text_field,
                                id_field=args.id_field, errors=args.on_error, stdin=sys.stdin.buffer)
        documents = reader
    batches = _batches(documents, args.batch_size)
    first = next(batches, None)  # so an error on the first lines comes before any output

    from .fingerprint import Fingerprinter  # numba loads here, not for --help

    fingerprinter = Fingerprinter(_config(args))
    kept: list[tuple[list[str], Any]] = []
    with _open_output(args.output) as out:
        out.write(_header(fingerprinter.config))
        for batch in chain([first] if first else [], batches):
            ids = [doc_id for doc_id, _ in batch]
            fingerprints = fingerprinter.fingerprint_batch([text for _, text in batch], n_jobs=args.n_jobs)
            out.write(_rows(ids, fingerprints))
            if args.example:
                kept.append((ids, fingerprints))
    if reader is not None and reader.skipped:
        unit = "file" if reader.format == "files" else "line"
        print(f"neardup: skipped {reader.skipped} {unit}{'s' * (reader.skipped > 1)} that could not "
              f"be read as documents; the first: {reader.first_skip}", file=sys.stderr)
    if args.example:
        _report_example_pairs(kept, fingerprinter.config.bits)
    return 0


def _config(args: argparse.Namespace) -> FingerprintConfig:
    idf = None
    if args.idf is not None:
        from .idf import IdfModel

        idf = IdfModel.load(args.idf)
    weighting = args.weighting or ("tfidf" if idf is not None else _DEFAULTS.weighting)
    return FingerprintConfig(bits=args.bits, features=args.features, shingle_size=args.shingle_size,
                             ngram_size=args.ngram_size, normalize=args.normalize, weighting=weighting,
                             idf=idf, seed=args.seed)


@contextlib.contextmanager
def _open_output(path: str | None) -> Iterator[IO[bytes]]:
    if path is None or path == STDIN:
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    from ._atomic import atomic_write

    with atomic_write(path, "wb") as f:
        yield f


def _batches(documents: Iterable[Document], size: int) -> Iterator[list[Document]]:
    iterator = iter(documents)
    while batch := list(islice(iterator, size)):
        yield batch


def _header(config: FingerprintConfig) -> bytes:
    description = json.dumps(config.to_dict())
    return f"# {FINGERPRINTS_FORMAT} v{FINGERPRINTS_FORMAT_VERSION} {description}\n".encode()


def _hex(fingerprints: Any) -> list[str]:
    """Zero-padded lowercase hex of uint64 fingerprints (n,) or (n, 2), column 0 the low bits."""
    if fingerprints.ndim == 1:
        return [f"{value:016x}" for value in fingerprints.tolist()]
    return [f"{high:016x}{low:016x}" for low, high in fingerprints.tolist()]


def _rows(ids: list[str], fingerprints: Any) -> bytes:
    text = "".join(f"{doc_id}\t{value}\n" for doc_id, value in zip(ids, _hex(fingerprints)))
    return text.encode("utf-8", "surrogateescape")  # file names keep their undecodable bytes


def _report_example_pairs(kept: list[tuple[list[str], Any]], bits: int) -> None:
    import numpy as np

    from .hamming import estimate_cosine, hamming_pairwise

    ids = [doc_id for batch_ids, _ in kept for doc_id in batch_ids]
    fingerprints = np.concatenate([fps for _, fps in kept])
    texts = dict(example_documents())
    radius = EXAMPLE_MAX_DISTANCE * bits // 64
    distances = hamming_pairwise(fingerprints)
    first, second = np.nonzero(np.triu(distances <= radius, k=1))
    lines = [f"neardup: {len(first)} pairs of example documents within Hamming distance {radius} "
             f"of {bits} bits (estimated cosine >= {estimate_cosine(radius, bits):.2f}):"]
    for i, j in zip(first.tolist(), second.tolist()):
        d = int(distances[i, j])
        lines.append(f"  {ids[i]} ~ {ids[j]}: distance {d}, estimated cosine {estimate_cosine(d, bits):.2f}")
        lines.append(f"    {ids[i]}: {texts[ids[i]]}")
        lines.append(f"    {ids[j]}: {texts[ids[j]]}")
    print("\n".join(lines), file=sys.stderr)
