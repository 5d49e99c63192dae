"""``neardup explain``: why two documents are (not) near-duplicates."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .options import add_config_arguments, add_corpus_arguments, config_from_args, corpus_texts


def add_command(commands: Any) -> None:
    explain = commands.add_parser(
        "explain",
        help="why two documents are (not) near-duplicates",
        description="Compare two texts (or, with --corpus, two document ids): fingerprints, "
        "Hamming distance, estimated and exact similarity, the features whose "
        "weights differ most, and the passages both hold.",
    )
    explain.set_defaults(handler=run, command_parser=explain)
    explain.add_argument("a", metavar="A", help="a text, or an id with --corpus")
    explain.add_argument("b", metavar="B", help="another text, or id")
    explain.add_argument(
        "--top", type=int, default=10, metavar="N", help="features to list (default: %(default)s)"
    )
    explain.add_argument(
        "--min-words",
        type=int,
        default=50,
        metavar="N",
        help="list the passages of N words or more both hold (default: %(default)s; see `neardup passages`)",
    )
    explain.add_argument("--json", action="store_true", help="print JSON instead of text")
    add_corpus_arguments(explain, "A and B are ids of documents in these INPUTs")
    add_config_arguments(explain)


def run(args: argparse.Namespace) -> int:
    from ..report.explain import explain

    a, b = args.a, args.b
    if args.corpus:
        texts = corpus_texts(args, {a, b})
        missing = [doc_id for doc_id in (a, b) if doc_id not in texts]
        if missing:
            from .._errors import ConfigError

            raise ConfigError(
                f"no document with id {missing[0]!r} in {' '.join(args.corpus)}; ids are "
                f"--id-field's values, else FILE:LINE or FILE:ROW"
            )
        a, b = texts[a], texts[b]
    result = explain(a, b, config_from_args(args), top=args.top, passage_words=args.min_words)
    print(json.dumps(result.to_dict(), ensure_ascii=False, indent=2) if args.json else result)
    return 0
