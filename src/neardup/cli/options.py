"""The options shared by several commands, defined once: how to read documents (``dedup``,
``fingerprint``, ``pairs``, ``index build``; ``--corpus`` of ``report`` and ``explain``) and
how to fingerprint them.

Light: nothing here imports numpy, numba or pyarrow until a handler asks.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING

from .._config import (
    BITS,
    CODE_NORMALIZATIONS,
    DEFAULT_SHINGLE_SIZE,
    DEFAULT_SHINGLE_SIZES,
    FEATURES,
    WEIGHTINGS,
    FingerprintConfig,
)
from ..io.formats import COMPRESSIONS, INPUT_FORMATS
from ..io.rejects import ERRORS

if TYPE_CHECKING:
    from ..io.batch import ReadOptions

_DEFAULTS = FingerprintConfig()
_SHINGLE_DEFAULTS = f"{DEFAULT_SHINGLE_SIZE}; {DEFAULT_SHINGLE_SIZES['code']} for code"

STDOUT = "-"
"""``-o -``: write to stdout."""


def positive_int(value: str) -> int:
    """An argparse type: an integer >= 1."""
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive integer")
    return number


def positive_float(value: str) -> float:
    """An argparse type: a number > 0."""
    number = float(value)
    if not number > 0:  # NaN too
        raise argparse.ArgumentTypeError(f"{value} is not a positive number")
    return number


def non_negative_float(value: str) -> float:
    """An argparse type: a finite number >= 0."""
    number = float(value)
    if not 0 <= number < float("inf"):  # NaN too
        raise argparse.ArgumentTypeError(f"{value} is not a number >= 0")
    return number


def fraction(value: str) -> float:
    """An argparse type: a number in [0, 1]."""
    number = float(value)
    if not 0 <= number <= 1:  # NaN too
        raise argparse.ArgumentTypeError(f"{value} is not a fraction in [0, 1] (0.01 is 1%)")
    return number


_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def byte_size(value: str) -> int:
    """An argparse type: a number of bytes, with K, M, G or T (powers of 1024; "8G", "512M",
    "1.5GiB")."""
    text = value.strip().upper().removesuffix("IB").removesuffix("B")
    unit = text[-1:] if text[-1:] in _UNITS else ""
    try:
        number = float(text[: len(text) - len(unit)])
    except ValueError:
        number = float("nan")
    if not number > 0 or number * _UNITS[unit] < 1:  # NaN too
        raise argparse.ArgumentTypeError(f"{value} is not a size in bytes (8G, 512M, 1048576)")
    return int(number * _UNITS[unit])


def add_memory_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup, memory_help: str) -> None:
    """``--memory SIZE`` (``memory_help`` says what it bounds) and ``--work-dir``: ``neardup
    pairs`` and ``neardup dedup`` bound their joins alike."""
    parser.add_argument("--memory", type=byte_size, metavar="SIZE", help=memory_help)
    parser.add_argument(
        "--work-dir",
        metavar="DIR",
        help="where a join past --memory writes its files, removed as it goes (default: the "
        "system's temporary folder); it needs about 32 bytes a fingerprint free, checked "
        "before it starts",
    )


def check_memory_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A usage error for ``--work-dir`` without ``--memory``, which it would not change."""
    if args.work_dir is not None and args.memory is None:
        parser.error("--work-dir is where a join past --memory writes: give --memory SIZE too")


def add_input_arguments(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """The options of reading documents, as the group ``input`` of ``parser`` (returned, for
    a command's own additions); :func:`read_options` turns them into ``ReadOptions``."""
    read = parser.add_argument_group("input")
    read.add_argument(
        "--text-field",
        default="text",
        metavar="NAME",
        help="field (JSONL) or column (CSV, TSV, Parquet) holding the text (default: %(default)s)",
    )
    read.add_argument(
        "--id-field", metavar="NAME", help="field or column holding the id (default: see inputs below)"
    )
    read.add_argument(
        "--input-format",
        choices=INPUT_FORMATS,
        help="the format of every input (default: from each file's name)",
    )
    read.add_argument(
        "--compression",
        choices=COMPRESSIONS,
        help="the compression of every input (default: from each file's name)",
    )
    read.add_argument(
        "--lines", action="store_true", help="text files hold one document per line, not one per file"
    )
    read.add_argument(
        "--on-error",
        choices=ERRORS,
        default="raise",
        help="a bad record (malformed, no text, too large, ...): stop with an error naming "
        "its file and line (raise, the default) or leave it out and count it (skip)",
    )
    read.add_argument(
        "--max-skipped",
        type=fraction,
        metavar="FRACTION",
        help="with --on-error skip: fail, writing nothing, when more than this share of the "
        "records is skipped (default: fail only when every record is)",
    )
    read.add_argument(
        "--max-document-mb",
        type=positive_float,
        default=32,
        metavar="MB",
        help="a longer text is a bad record (default: %(default)s)",
    )
    read.add_argument(
        "--block-mb",
        type=positive_float,
        default=16,
        metavar="MB",
        help="input read at a time; bounds memory (default: %(default)s)",
    )
    read.add_argument(
        "--n-jobs", type=int, default=None, metavar="N", help="threads to use (default: all cores)"
    )
    return read


def read_options(args: argparse.Namespace) -> ReadOptions:
    """The ``ReadOptions`` of the input options (:func:`add_input_arguments`), built once."""
    from ..io.batch import ReadOptions

    return ReadOptions.from_keywords(
        text_field=args.text_field,
        id_field=args.id_field,
        errors=args.on_error,
        max_skipped=args.max_skipped,
        input_format=args.input_format,
        compression=args.compression,
        lines=args.lines,
        max_document_mb=args.max_document_mb,
        block_mb=args.block_mb,
    )


def add_corpus_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """``--corpus INPUT...`` and how to read it, as ``neardup dedup`` was told."""
    corpus = parser.add_argument_group("corpus")
    corpus.add_argument("--corpus", nargs="+", metavar="INPUT", help=what)
    corpus.add_argument("--text-field", default="text", metavar="NAME", help="(default: %(default)s)")
    corpus.add_argument("--id-field", metavar="NAME", help="as given to `neardup dedup`")
    corpus.add_argument("--input-format", choices=INPUT_FORMATS, help="as given to `neardup dedup`")
    corpus.add_argument("--compression", choices=COMPRESSIONS, help="as given to `neardup dedup`")
    corpus.add_argument("--lines", action="store_true", help="as given to `neardup dedup`")


def corpus_texts(args: argparse.Namespace, wanted: set[str]) -> dict[str, str]:
    """The texts of the documents of ``--corpus`` whose ids are in ``wanted``."""
    from pathlib import Path

    from ..io.batch import ReadOptions
    from ..io.corpus import open_corpus, texts_by_id

    options = ReadOptions(text_field=args.text_field, id_field=args.id_field)
    corpus = open_corpus(
        [Path(p) for p in args.corpus],
        text_field=args.text_field,
        id_field=args.id_field,
        options=options,
        input_format=args.input_format,
        compression=args.compression,
        lines=args.lines,
    )
    return texts_by_id(corpus, wanted)


@contextlib.contextmanager
def open_output(path: str | None) -> Iterator[IO[bytes]]:
    """``path`` written atomically (all or nothing), or stdout for None or ``-``."""
    if path is None or path == STDOUT:
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    from .._atomic import atomic_write

    with atomic_write(path, "wb") as f:
        yield f


def add_config_arguments(parser: argparse.ArgumentParser, or_else: str = "") -> None:
    """The options of ``FingerprintConfig``, as a group of ``parser``; the parser must set
    ``command_parser`` so that ``check_config_args`` can report misuse. ``or_else`` names what
    wins over a default where the command keeps one (``serve``: "the data folder's"), said
    after each default in the help."""
    config = parser.add_argument_group("fingerprint (see FingerprintConfig)")

    def default(value: object) -> str:
        return f"(default: {value}{f', or {or_else}' if or_else else ''})"

    config.add_argument(
        "--bits",
        type=int,
        choices=BITS,
        default=_DEFAULTS.bits,
        help=f"fingerprint width {default(_DEFAULTS.bits)}",
    )
    config.add_argument(
        "--features",
        choices=FEATURES,
        default=_DEFAULTS.features,
        help=f"what a text is made of {default(_DEFAULTS.features)}",
    )
    config.add_argument(
        "--shingle-size",
        type=int,
        default=None,
        metavar="N",
        help=f"words per shingle, for word-shingles, or tokens, for code {default(_SHINGLE_DEFAULTS)}",
    )
    config.add_argument(
        "--ngram-size",
        type=int,
        default=_DEFAULTS.ngram_size,
        metavar="N",
        help=f"code points per n-gram, for char-ngrams {default(_DEFAULTS.ngram_size)}",
    )
    config.add_argument(
        "--no-normalize",
        dest="normalize",
        action="store_false",
        help="do not NFKC-normalise and casefold texts" + (f" {default('normalised')}" if or_else else ""),
    )
    add_code_arguments(config, or_else)
    config.add_argument(
        "--weighting",
        choices=WEIGHTINGS,
        default=None,
        help=f"feature weights {default(f'{_DEFAULTS.weighting}, or tfidf with --idf')}",
    )
    config.add_argument(
        "--idf",
        metavar="FILE",
        help="IDF model for tfidf weighting, saved with neardup.fit_idf(...).save(FILE)",
    )
    config.add_argument(
        "--seed",
        type=int,
        default=_DEFAULTS.seed,
        help=f"seed of the feature hash, 0 <= seed < 2**64 {default(_DEFAULTS.seed)}",
    )


def add_code_arguments(group: argparse._ArgumentGroup, or_else: str = "") -> None:
    """``--language`` and ``--code-normalize``, the settings of ``--features code``, as
    fingerprints and passages take them; ``check_code_args`` refuses them without it."""
    group.add_argument(
        "--language",
        metavar="NAME",
        help="for --features code: the language of every document, a pygments lexer name "
        "(python, java, c, cpp, javascript, go, ...) (default: from each file's name, "
        "src/app.py: python" + (f", or {or_else}" if or_else else "") + ")",
    )
    group.add_argument(
        "--code-normalize",
        choices=CODE_NORMALIZATIONS,
        default=None,
        help="for --features code: identifiers makes every name one token and every literal one "
        "per kind (finds copies with renamed variables); none keeps tokens as written "
        f"(default: {_DEFAULTS.code_normalize}{f', or {or_else}' if or_else else ''})",
    )


def check_config_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit with a usage error for combinations no config allows."""
    if args.weighting == "tfidf" and args.idf is None:
        parser.error("--weighting tfidf needs --idf FILE, a model saved with neardup.fit_idf(...).save(FILE)")
    if args.idf is not None and args.weighting not in (None, "tfidf"):
        parser.error(f"--idf is used only with --weighting tfidf, not {args.weighting}")
    check_code_args(parser, args)


def check_code_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A usage error for ``--language`` or ``--code-normalize`` without ``--features code``."""
    if args.features != "code":
        given = [
            flag
            for flag, value in (("--language", args.language), ("--code-normalize", args.code_normalize))
            if value
        ]
        if given:
            verb = "are settings" if len(given) > 1 else "is a setting"
            parser.error(f"{' and '.join(given)} {verb} of --features code, not --features {args.features}")


def config_from_args(args: argparse.Namespace) -> FingerprintConfig:
    """The ``FingerprintConfig`` the options describe (loading the IDF model if named)."""
    idf = None
    if args.idf is not None:
        from ..fingerprint.idf import IdfModel

        idf = IdfModel.load(args.idf)
    weighting = args.weighting or ("tfidf" if idf is not None else _DEFAULTS.weighting)
    return FingerprintConfig(
        bits=args.bits,
        features=args.features,
        shingle_size=args.shingle_size,
        ngram_size=args.ngram_size,
        normalize=args.normalize,
        weighting=weighting,
        idf=idf,
        seed=args.seed,
        language=args.language,
        code_normalize=code_normalize(args),
    )


def code_normalize(args: argparse.Namespace) -> str:
    """``--code-normalize``, or its default."""
    return args.code_normalize or _DEFAULTS.code_normalize
