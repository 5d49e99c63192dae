"""The fingerprint options shared by the commands that make fingerprints."""

from __future__ import annotations

import argparse

from .._config import BITS, FEATURES, WEIGHTINGS, FingerprintConfig

_DEFAULTS = FingerprintConfig()


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``FingerprintConfig``, as a group of ``parser``; the parser must set
    ``command_parser`` so that ``check_config_args`` can report misuse."""
    config = parser.add_argument_group("fingerprint (see FingerprintConfig)")
    config.add_argument(
        "--bits",
        type=int,
        choices=BITS,
        default=_DEFAULTS.bits,
        help="fingerprint width (default: %(default)s)",
    )
    config.add_argument(
        "--features",
        choices=FEATURES,
        default=_DEFAULTS.features,
        help="what a text is made of (default: %(default)s)",
    )
    config.add_argument(
        "--shingle-size",
        type=int,
        default=_DEFAULTS.shingle_size,
        metavar="N",
        help="words per shingle, for word-shingles (default: %(default)s)",
    )
    config.add_argument(
        "--ngram-size",
        type=int,
        default=_DEFAULTS.ngram_size,
        metavar="N",
        help="code points per n-gram, for char-ngrams (default: %(default)s)",
    )
    config.add_argument(
        "--no-normalize",
        dest="normalize",
        action="store_false",
        help="do not NFKC-normalise and casefold texts",
    )
    config.add_argument(
        "--weighting",
        choices=WEIGHTINGS,
        default=None,
        help=f"feature weights (default: {_DEFAULTS.weighting}, or tfidf with --idf)",
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
        help="seed of the feature hash, 0 <= seed < 2**64 (default: %(default)s)",
    )


def check_config_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit with a usage error for combinations no config allows."""
    if args.weighting == "tfidf" and args.idf is None:
        parser.error("--weighting tfidf needs --idf FILE, a model saved with neardup.fit_idf(...).save(FILE)")
    if args.idf is not None and args.weighting not in (None, "tfidf"):
        parser.error(f"--idf is used only with --weighting tfidf, not {args.weighting}")


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
    )
