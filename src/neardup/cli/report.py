"""``neardup report``: plots and an HTML page of what a dedup found."""

from __future__ import annotations

import argparse
from typing import Any

from .options import add_corpus_arguments, corpus_texts


def add_command(commands: Any) -> None:
    report = commands.add_parser(
        "report",
        help="plots and an HTML page of a dedup's clusters and pairs",
        description="Write PNG plots (pair distances, cluster sizes, distances to the "
        "representative) and one self-contained index.html with the largest clusters.",
    )
    report.set_defaults(handler=run)
    report.add_argument("--clusters", metavar="FILE", help="from `neardup dedup --clusters`")
    report.add_argument("--pairs", metavar="FILE", help="from `neardup dedup --pairs`")
    report.add_argument("-o", "--output", metavar="DIR", required=True, help="folder to write")
    report.add_argument(
        "--top", type=int, default=10, metavar="N", help="largest clusters shown (default: %(default)s)"
    )
    add_corpus_arguments(report, "show sample texts of the largest clusters from the deduplicated INPUTs")


def run(args: argparse.Namespace) -> int:
    from ..report.html import write_report

    if args.clusters is None and args.pairs is None:
        from .._errors import ConfigError

        raise ConfigError("give --clusters FILE and/or --pairs FILE, outputs of `neardup dedup`")
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
        wanted: set[str] = set()
        for column in ("id", "id_a", "id_b", "representative"):
            if column in table.column_names:
                wanted.update(str(v) for v in table.column(column).to_pylist())
        texts = corpus_texts(args, wanted)
    print(write_report(args.output, clusters=args.clusters, pairs=args.pairs, texts=texts, top=args.top))
    return 0
