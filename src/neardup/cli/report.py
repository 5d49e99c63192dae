"""``neardup report`` and ``neardup explain``: look into what a dedup found."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .options import add_config_arguments, config_from_args


def add_report_commands(commands: Any) -> None:
    report = commands.add_parser(
        "report",
        help="plots and an HTML page of a dedup's clusters and pairs",
        description="Write PNG plots (pair distances, cluster sizes, distances to the "
        "representative) and one self-contained index.html with the largest clusters.",
    )
    report.set_defaults(handler=run_report)
    report.add_argument("--clusters", metavar="FILE", help="from `neardup dedup --clusters`")
    report.add_argument("--pairs", metavar="FILE", help="from `neardup dedup --pairs`")
    report.add_argument("-o", "--output", metavar="DIR", required=True, help="folder to write")
    report.add_argument(
        "--top", type=int, default=10, metavar="N", help="largest clusters shown (default: %(default)s)"
    )
    _add_corpus_arguments(report, "show sample texts of the largest clusters from the deduplicated INPUTs")

    explain = commands.add_parser(
        "explain",
        help="why two documents are (not) near-duplicates",
        description="Compare two texts (or, with --corpus, two document ids): fingerprints, "
        "Hamming distance, estimated and exact similarity, and the features whose "
        "weights differ most.",
    )
    explain.set_defaults(handler=run_explain, command_parser=explain)
    explain.add_argument("a", metavar="A", help="a text, or an id with --corpus")
    explain.add_argument("b", metavar="B", help="another text, or id")
    explain.add_argument(
        "--top", type=int, default=10, metavar="N", help="features to list (default: %(default)s)"
    )
    explain.add_argument("--json", action="store_true", help="print JSON instead of text")
    _add_corpus_arguments(explain, "A and B are ids of documents in these INPUTs")
    add_config_arguments(explain)


def _add_corpus_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    corpus = parser.add_argument_group("corpus")
    corpus.add_argument("--corpus", nargs="+", metavar="INPUT", help=what)
    corpus.add_argument("--text-field", default="text", metavar="NAME", help="(default: %(default)s)")
    corpus.add_argument("--id-field", metavar="NAME", help="as given to `neardup dedup`")
    corpus.add_argument("--lines", action="store_true", help="as given to `neardup dedup`")


def _texts(args: argparse.Namespace, wanted: set) -> dict:
    from pathlib import Path

    from ..io.batch import ReadOptions
    from ..pipeline.corpus import open_corpus, texts_by_id

    options = ReadOptions(text_field=args.text_field, id_field=args.id_field)
    corpus = open_corpus(
        [Path(p) for p in args.corpus],
        text_field=args.text_field,
        id_field=args.id_field,
        options=options,
        lines=args.lines,
    )
    return texts_by_id(corpus, wanted)


def run_report(args: argparse.Namespace) -> int:
    from ..report.html import write_report

    if args.clusters is None and args.pairs is None:
        raise ValueError("give --clusters FILE and/or --pairs FILE, outputs of `neardup dedup`")
    texts = None
    if args.corpus:
        import pyarrow.csv as pa_csv
        import pyarrow.parquet as pq

        source = args.clusters or args.pairs
        if source.endswith(".parquet"):
            table = pq.read_table(source)
        else:
            delimiter = "\t" if source.endswith(".tsv") else ","
            table = pa_csv.read_csv(source, parse_options=pa_csv.ParseOptions(delimiter=delimiter))
        wanted = set()
        for column in ("id", "id_a", "id_b", "representative"):
            if column in table.column_names:
                wanted.update(str(v) for v in table.column(column).to_pylist())
        texts = _texts(args, wanted)
    print(write_report(args.output, clusters=args.clusters, pairs=args.pairs, texts=texts, top=args.top))
    return 0


def run_explain(args: argparse.Namespace) -> int:
    from ..report.explain import explain

    a, b = args.a, args.b
    if args.corpus:
        texts = _texts(args, {a, b})
        missing = [doc_id for doc_id in (a, b) if doc_id not in texts]
        if missing:
            raise KeyError(
                f"no document with id {missing[0]!r} in {' '.join(args.corpus)}; ids are "
                f"--id-field's values, else FILE:LINE or FILE:ROW"
            )
        a, b = texts[a], texts[b]
    result = explain(a, b, config_from_args(args), top=args.top)
    print(json.dumps(result.to_dict(), ensure_ascii=False, indent=2) if args.json else result)
    return 0
