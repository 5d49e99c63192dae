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
        _check_found(wanted, texts, source, args)
    print(write_report(args.output, clusters=args.clusters, pairs=args.pairs, texts=texts, top=args.top))
    return 0


def _check_found(wanted: set[str], texts: dict[str, str], source: str, args: argparse.Namespace) -> None:
    """Refuse a corpus none of whose ids are those of ``source`` (the report would say
    "(no text)" on every row), and warn of ids it lacks."""
    import sys

    missing = sorted(wanted - texts.keys())
    if not missing:
        return
    example = f"e.g. {missing[0]!r}"
    how = (
        f"--id-field {args.id_field}'s values"
        if args.id_field
        else "FILE:LINE, FILE:ROW or FILE, as no --id-field is given"
    )
    if len(missing) == len(wanted):
        from .._errors import ConfigError

        raise ConfigError(
            f"no id of {source} ({example}) is the id of a document of --corpus "
            f"{' '.join(args.corpus)}, whose ids are {how}; give the --id-field (and "
            f"--text-field, --lines) the clusters were made with"
        )
    print(
        f"neardup: warning: {len(missing):,} of the {len(wanted):,} ids of {source} are not in "
        f"--corpus ({example}); their rows show no text",
        file=sys.stderr,
    )
