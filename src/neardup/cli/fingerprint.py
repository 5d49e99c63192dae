"""``neardup fingerprint``: the fingerprint of every document, one ``ID<TAB>HEX`` line each.

    neardup fingerprint corpus.jsonl.gz --text-field body -o corpus.fp
    neardup fingerprint --example

Also how ``pairs`` and ``index build`` turn documents into fingerprints (:func:`load_fingerprints`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import TYPE_CHECKING, Any

from .._config import FINGERPRINT_VERSION
from ..io.formats import INPUT_FORMATS
from ..io.sources import check_outputs
from .options import (
    add_config_arguments,
    add_input_arguments,
    config_from_args,
    open_output,
    positive_int,
    read_options,
)

if TYPE_CHECKING:
    import numpy as np

    from ..fingerprint.fingerprinter import Fingerprinter
    from ..io.documents import DocumentBatch, DocumentReader
    from ..io.fingerprint_files import FingerprintFile
    from ..io.rejects import Rejects

EXAMPLE_MAX_DISTANCE = 10
"""Hamming radius (bits, for 64-bit fingerprints; doubled for 128) at which ``--example``
reports pairs: an estimated cosine of about 0.88 (Charikar 2002)."""

EXAMPLE_DOCUMENTS = (
    "The quick brown fox jumps over the lazy dog while the farmer watches from the porch.",
    "the quick brown fox jumps over the lazy dog, while the farmer watches from the porch!",
    "A journey of a thousand miles begins with a single step, or so the old proverb says.",
    "Fresh bread is baked every morning at the small bakery on the corner of Elm Street.",
    "Fresh bread is baked every morning at the small bakery on the corner of Elm Road.",
    "The city council will vote on the new library budget at its meeting next Tuesday evening.",
    "The city council will vote on the new library budget at its meeting next Tuesday evening. Read more.",
    "Rain is expected across the northern valleys tomorrow, with clearing skies by the weekend.",
    "She planted tomatoes, basil and peppers in the raised beds behind the old stone cottage.",
    "Our store opens at nine in the morning and closes at six, Monday through Saturday.",
    "OUR STORE OPENS AT NINE IN THE MORNING AND CLOSES AT SIX, MONDAY THROUGH SATURDAY.",
    "The museum's new exhibit traces the history of printing from woodblocks to laser printers.",
    "Scientists have discovered a new species of frog in the cloud forests of Ecuador.",
    "Researchers have discovered a new species of frog in the cloud forests of Ecuador.",
    "The train to the coast leaves platform four at ten past eight every weekday morning.",
    "He learned to play the violin as a child and still practises for an hour every day.",
    "Click here to subscribe to our newsletter and never miss an update from our team.",
    "Click here to subscribe to our newsletter and never miss an update from our editors.",
    "The recipe calls for two cups of flour, one egg, a pinch of salt and warm milk.",
    "Mountain roads can be icy in winter, so drivers should carry chains and drive slowly.",
)
"""The corpus of ``neardup fingerprint --example``: short sentences, some of them edited copies
of another (re-cased, re-punctuated, a word changed or added), as a crawler finds them."""

FORMAT_MOVED = "--format for the input is now --input-format; --format names the output format"
"""What ``neardup fingerprint --format`` says: it named the input format, as ``--input-format``
does in every command, while ``--format`` names the output format (``dedup``). ``fingerprint``
has one output format, so its ``--format`` can only mean the input: it still works, with this
warning, for one release."""

INPUTS_HELP = """\
inputs:
  Read as `neardup dedup` reads them: files and folders (walked recursively, sorted) of
  JSONL (.jsonl, .ndjson, .json), Parquet (.parquet, .pq), CSV (.csv) or TSV (.tsv, .tab),
  optionally .gz, .zst or .bz2; '-' is stdin: lines, or JSONL with --input-format jsonl.
  Any other file named as INPUT holds one document per line (blank lines are not
  documents; a line not valid UTF-8 is a bad record); any other file in a folder is one
  document (its UTF-8 text, a byte-order mark left out; an empty file or one not UTF-8 is
  a bad record), or one per line with --lines. Files and folders named .* or _* in a
  folder are left out. --input-format and --compression override the names.
  Ids are --id-field's values, else, as in every command: FILE:LINE (JSONL, lines),
  FILE:ROW (CSV, TSV, Parquet) or FILE, FILE a folder's path joined with the file's path in
  it; stdin's lines are <stdin>:LINE.
"""

FINGERPRINTS_HELP = f"""\
{INPUTS_HELP}  INPUTs named .fp, or starting with the header line `neardup fingerprint` writes, are
  fingerprint files: their fingerprints are read as they are, and the fingerprint options
  are not used. One INPUT named .npy is a NumPy array of fingerprints made elsewhere
  (uint64, shape (n,), or (n, 2) for 128 bits, column 0 the low bits), named by their
  rows from 0.
"""
"""The epilog of the commands that take a fingerprint file or documents (``pairs``, ``index build``)."""

_EPILOG = f"""\
{INPUTS_HELP}  --format FORMAT, the input format, is deprecated: give --input-format FORMAT.

output:
  a header line '# neardup fingerprints v1 {{config as JSON}}', then one line per
  document 'ID<TAB>HEX', HEX the fingerprint in lowercase hex (16 digits for 64 bits, 32 for
  128). Fingerprints follow spec version {FINGERPRINT_VERSION} (docs/fingerprint-spec.md).
"""


def add_command(commands: Any) -> None:
    fp = commands.add_parser(
        "fingerprint",
        help="compute the fingerprint of every document of INPUTs",
        description="Compute the SimHash fingerprint of every document of INPUTs.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    fp.set_defaults(handler=run, check=check, command_parser=fp)
    fp.add_argument(
        "inputs",
        nargs="*",
        metavar="INPUT",
        help="files or folders of documents, or '-' for stdin",
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
    read = add_input_arguments(fp)
    read.add_argument(
        "--format", choices=INPUT_FORMATS, help="deprecated: the input format; give --input-format"
    )
    read.add_argument(
        "--batch-size",
        type=positive_int,
        default=10_000,
        metavar="N",
        help="documents fingerprinted at a time, at most (default: %(default)s)",
    )
    add_config_arguments(fp)


def add_document_arguments(parser: argparse.ArgumentParser) -> None:
    """The input and fingerprint options of a command that reads documents as
    ``neardup fingerprint`` does; ``parser`` must set ``command_parser``."""
    add_input_arguments(parser)
    add_config_arguments(parser)


def check(args: argparse.Namespace) -> None:
    """Usage errors, before any compile."""
    parser = args.command_parser
    if args.example and args.inputs:
        parser.error("--example fingerprints a built-in corpus; give it without INPUT")
    if not args.example and not args.inputs:
        parser.error("INPUT is required (a file, a folder or '-'), unless --example is given")
    if args.format is not None and args.input_format is not None:
        parser.error(f"{FORMAT_MOVED}; give --input-format alone")


def run(args: argparse.Namespace) -> int:
    if args.format is not None:
        print(f"neardup: DeprecationWarning: {FORMAT_MOVED}", file=sys.stderr)
        args.input_format = args.format

    from ..fingerprint.fingerprinter import Fingerprinter  # numba loads here, not for --help
    from ..io.documents import DocumentBatch
    from ..io.fingerprint_files import format_header, format_rows
    from ..io.rejects import Rejects

    fingerprinter = Fingerprinter(config_from_args(args))
    rejects = Rejects(args.on_error)
    reader = None
    check_outputs({"-o": args.output}, args.inputs)
    if args.example:
        ids = [str(i) for i in range(1, len(EXAMPLE_DOCUMENTS) + 1)]
        documents: Iterable[DocumentBatch] = [DocumentBatch(ids, list(EXAMPLE_DOCUMENTS))]
    else:
        reader = open_documents(args)
        documents = reader.batches(rejects)
    batches = fingerprint_batches(documents, fingerprinter, args.n_jobs, args.batch_size)
    first = next(batches, None)  # so that an error in the first block comes before any output
    kept: list[tuple[list[str], np.ndarray]] = []
    documents_read = 0
    with open_output(args.output) as out:
        out.write(format_header(fingerprinter.config))
        for ids, fingerprints in chain([first] if first else [], batches):
            out.write(format_rows(ids, fingerprints))
            documents_read += len(ids)
            if args.example:
                kept.append((ids, fingerprints))
        rejects.check_share(documents_read, args.max_skipped)  # before -o is renamed into place
    if reader is not None:
        report_skipped(reader, rejects)
    if args.example:
        _report_example_pairs(kept, fingerprinter.config.bits)
    return 0


def open_documents(args: argparse.Namespace) -> DocumentReader:
    """The reader of ``args.inputs`` as the input options say."""
    from ..io.documents import DocumentReader

    return DocumentReader(
        args.inputs,
        read_options(args),
        input_format=args.input_format,
        compression=args.compression,
        lines=args.lines,
        stdin=sys.stdin.buffer,
    )


def fingerprint_batches(
    documents: Iterable[DocumentBatch],
    fingerprinter: Fingerprinter,
    n_jobs: int | None,
    batch_size: int | None = None,
) -> Iterator[tuple[list[str], np.ndarray]]:
    """(ids, fingerprints) of the documents, ``batch_size`` documents at a time at most."""
    for batch in documents:
        step = batch_size or max(len(batch.ids), 1)
        for start in range(0, len(batch.ids), step):
            texts = batch.texts[start : start + step]
            ids = batch.ids[start : start + step]
            # A one-document file's id is its path: its suffix says the language of code.
            yield ids, fingerprinter.fingerprint_batch(texts, n_jobs=n_jobs, names=ids)


def report_skipped(reader: DocumentReader, rejects: Rejects) -> None:
    """Tell stderr what ``--on-error skip`` left out, if anything."""
    if not rejects.count:
        return
    unit = reader.unit + "s" * (rejects.count > 1)
    lines = [f"skipped {rejects.count} {unit} that could not be read as documents:", rejects.summary()]
    print("neardup: " + "\n".join(lines).replace("\n", "\nneardup: "), file=sys.stderr)


def load_fingerprints(args: argparse.Namespace) -> FingerprintFile:
    """The fingerprints of ``args.inputs``: a fingerprint file's (one INPUT, named ``.fp`` or
    starting with the header ``neardup fingerprint`` writes), else those of the documents,
    made as ``neardup fingerprint`` would with the same options."""
    import numpy as np

    from ..fingerprint.fingerprinter import Fingerprinter
    from ..io.fingerprint_files import FingerprintFile
    from ..io.ids import repeated_ids
    from ..io.rejects import Rejects

    check_outputs({"-o": args.output}, args.inputs)
    marked = [path for path in args.inputs if args.input_format is None and is_fingerprint_file(path)]
    if marked:
        return _read_fingerprint_files(args.inputs, marked)
    fingerprinter = Fingerprinter(config_from_args(args))
    reader = open_documents(args)
    rejects = Rejects(args.on_error)
    ids: list[str] = []
    parts = []
    for batch_ids, fingerprints in fingerprint_batches(reader.batches(rejects), fingerprinter, args.n_jobs):
        ids += batch_ids
        parts.append(fingerprints)
    report_skipped(reader, rejects)
    rejects.check_share(len(ids), args.max_skipped)
    if (repeated := repeated_ids(ids, args.id_field)) is not None:
        print(f"neardup: warning: {repeated}", file=sys.stderr)
    words = fingerprinter.config.bits // 64
    empty = np.zeros((0,) if words == 1 else (0, words), dtype=np.uint64)
    return FingerprintFile(fingerprinter.config.to_dict(), ids, np.concatenate(parts) if parts else empty)


def is_fingerprint_file(path: str) -> bool:
    """Whether ``path`` is a fingerprint file: named ``.fp`` or ``.npy``, or a file that
    starts with the header ``neardup fingerprint`` writes or NumPy's."""
    import os

    from ..io.documents import STDIN
    from ..io.fingerprint_files import FORMAT, NUMPY_MAGIC

    if path == STDIN or not os.path.isfile(path):
        return False
    if path.lower().endswith((".fp", ".npy")):
        return True
    header = f"# {FORMAT} v".encode()
    with open(path, "rb") as f:
        start = f.read(len(header))
    return start == header or start.startswith(NUMPY_MAGIC)


def _is_numpy_file(path: str) -> bool:
    from ..io.fingerprint_files import NUMPY_MAGIC

    with open(path, "rb") as f:
        return f.read(len(NUMPY_MAGIC)) == NUMPY_MAGIC


def _read_fingerprint_files(inputs: list[str], marked: list[str]) -> FingerprintFile:
    """The fingerprints of ``inputs``, all fingerprint files, in order; files of different
    configs, or documents among them, are refused."""
    import numpy as np

    from .._errors import ConfigError
    from ..io.fingerprint_files import FingerprintFile, read_fingerprints, read_numpy_fingerprints

    others = [path for path in inputs if path not in marked]
    if others:
        raise ConfigError(
            f"{marked[0]} is a fingerprint file but {others[0]} is not: give fingerprint files "
            f"or documents, not both (fingerprint the documents first with `neardup fingerprint`)"
        )
    arrays = [path for path in inputs if _is_numpy_file(path)]
    if arrays and len(inputs) > 1:
        raise ConfigError(
            f"{arrays[0]} is a NumPy array of fingerprints, named by their rows: give it alone "
            f"(join several arrays with numpy.concatenate first)"
        )
    if arrays:
        return read_numpy_fingerprints(arrays[0])
    files = [read_fingerprints(path) for path in inputs]
    first = files[0].config or {}
    for path, other in zip(inputs[1:], files[1:]):
        config = other.config or {}
        if config != first:
            differ = sorted(k for k in config.keys() | first.keys() if config.get(k) != first.get(k))
            raise ConfigError(
                f"{path} and {inputs[0]} hold fingerprints of different configs (they differ in "
                f"{', '.join(differ)}), which cannot be compared; fingerprint both alike"
            )
    ids = [doc_id for file in files for doc_id in file.ids or ()]
    return FingerprintFile(files[0].config, ids, np.concatenate([file.fingerprints for file in files]))


def _report_example_pairs(kept: list[tuple[list[str], np.ndarray]], bits: int) -> None:
    import numpy as np

    from ..index.hamming import estimate_cosine, hamming_pairwise

    ids = [doc_id for batch_ids, _ in kept for doc_id in batch_ids]
    fingerprints = np.concatenate([fps for _, fps in kept])
    texts = dict(zip(ids, EXAMPLE_DOCUMENTS))
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
