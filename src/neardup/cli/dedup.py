"""``neardup dedup``: the command-line face of :func:`neardup.dedup`."""

from __future__ import annotations

import argparse
import contextlib
import functools
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._config import FEATURES
from ..decision.choices import CLUSTERINGS, FEATURELESS, KEEP
from ..io.formats import OUTPUT_FORMATS
from .options import (
    add_config_arguments,
    add_input_arguments,
    add_memory_arguments,
    check_memory_arguments,
    config_from_args,
    read_options,
)

if TYPE_CHECKING:
    from ..io.sources import Source

_EPILOG = """\
inputs:
  Files and folders (walked recursively) of JSONL (.jsonl, .ndjson, .json), Parquet
  (.parquet), CSV (.csv) or TSV (.tsv), optionally .gz, .zst or .bz2. Any other file named
  as INPUT holds one document per line (blank lines are not documents); one in a folder is
  one document, or one per line with --lines. --input-format text: every file one document.
  '-' is stdin: lines, or JSONL with --input-format jsonl (saved to a file under $TMPDIR
  while the run lasts, since the kept lines are copied in a second pass).
  Ids are --id-field's values, else FILE:LINE (JSONL, lines), FILE:ROW (CSV, Parquet) or
  FILE; stdin's lines are <stdin>:LINE.

outputs (each written atomically, all or none):
  -o FILE       the kept documents, every field as it was: in the inputs' format, or the
                one -o's suffix or --format names (a folder for one-document files)
  --clusters    id, cluster, representative, distance (Parquet, CSV or TSV by suffix)
  --pairs       id_a, id_b, distance (and similarity with --verify), streamed: the pairs
                that rebuild every cluster (each pair of distinct fingerprints within the
                radius, between their first members in --keep order, and each other copy's
                link to its fingerprint's first member, distance 0); --all-pairs: every pair
                of documents (n copies of one text make n(n-1)/2)
  A summary goes to stderr: documents, skipped (and why), clusters, removed, time per stage.

examples:
  neardup dedup crawl/ -o kept.jsonl.zst --text-field body --id-field url
  neardup dedup a.parquet b.parquet -o kept.parquet --clusters clusters.csv -k 4
  neardup dedup pages.jsonl -o kept.jsonl --jaccard 0.8
  neardup dedup --jaccard 0.5 --explain-plan
  neardup dedup pages.jsonl -o kept.jsonl --bits 128 --cosine 0.97
  neardup dedup new.jsonl -o fresh.jsonl --against seen.idx --save-index seen2.idx
  neardup dedup crawl/ -o kept.parquet --engine spark --master local[8] --id-field url
"""


def add_command(commands: Any) -> None:
    dedup = commands.add_parser(
        "dedup",
        help="remove near-duplicates from a corpus: keep one document per cluster",
        description="Find the near-duplicate documents of INPUTs and keep one of each cluster.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dedup.set_defaults(handler=run, check=check, command_parser=dedup)
    dedup.add_argument(
        "inputs", nargs="*", metavar="INPUT", help="files or folders of documents, or '-' for stdin"
    )
    dedup.add_argument("-o", "--output", metavar="PATH", help="where to write the kept documents")
    dedup.add_argument(
        "--example",
        action="store_true",
        help="deduplicate a small built-in corpus with planted near-duplicates and show what was found",
    )
    dedup.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show the traceback of an error"
    )
    dedup.add_argument("-q", "--quiet", action="store_true", help="no progress and no summary")

    add_input_arguments(dedup)

    match = _add_match_arguments(dedup)
    _add_output_arguments(dedup)
    add_memory_arguments(
        match,
        "bound the near-duplicate join's memory (8G, 512M): past SIZE the distinct "
        "fingerprints are joined out of core, a table at a time partitioned by key to "
        "--work-dir, and the pairs the greedy rule needs spill there too; the same answer "
        "(default: in memory, 16 bytes a distinct fingerprint and the pairs, or an index "
        "where a near-identical family makes more than 16M pairs)",
    )
    _add_engine_arguments(dedup)
    add_config_arguments(dedup)


def _add_match_arguments(dedup: argparse.ArgumentParser) -> Any:
    """What is near, and which document of a cluster stays: the "near-duplicates" group."""
    match = dedup.add_argument_group("near-duplicates")
    radius = match.add_mutually_exclusive_group()
    radius.add_argument(
        "-k",
        "--max-distance",
        type=int,
        metavar="K",
        help="Hamming radius in bits (default: 3 per 64 bits; code: --jaccard 0.7, or 8 per 64 "
        "with --verify)",
    )
    radius.add_argument(
        "--similarity",
        type=float,
        metavar="S",
        help="least estimated cosine similarity, turned into a radius",
    )
    radius.add_argument(
        "--jaccard",
        type=float,
        metavar="T",
        help="least Jaccard index of a near-duplicate pair, on --verify-features (default: word "
        "3-shingles; code's own shingles with --features code): candidates from MinHash-LSH "
        "banded for T, each verified exactly",
    )
    radius.add_argument(
        "--cosine",
        type=float,
        metavar="T",
        help="least cosine similarity of the weighted features: the radius that holds 95%% of "
        "the pairs at T (from the binomial model), each candidate verified exactly (T >= "
        "0.964 with --bits 128)",
    )
    match.add_argument(
        "--explain-plan",
        action="store_true",
        help="with --jaccard or --cosine: say how the pairs would be found and the recall to "
        "expect, then stop",
    )
    match.add_argument(
        "--keep",
        choices=KEEP,
        default="first",
        help="which document of a cluster to keep (default: %(default)s)",
    )
    match.add_argument(
        "--verify",
        nargs=2,
        metavar=("METRIC", "THRESHOLD"),
        help="recompute each candidate pair's exact similarity from the texts "
        "(jaccard or cosine) and keep pairs at least THRESHOLD similar",
    )
    match.add_argument(
        "--verify-features",
        choices=FEATURES,
        help="with --verify or --jaccard: the features compared (default: the fingerprint's own; "
        "word-shingles for --jaccard, but for code); a "
        "threshold stated in 3-shingle Jaccard is checked on 3-shingles whatever the "
        "fingerprint hashes",
    )
    match.add_argument(
        "--verify-size",
        type=int,
        metavar="N",
        help="with --verify-features: words per shingle (default 3) or characters per n-gram (5)",
    )
    match.add_argument(
        "--cluster",
        choices=CLUSTERINGS,
        default="greedy",
        help="greedy: in --keep order, a document is removed only when a kept one lies within "
        "the radius (and passes --verify); components: connected components of the pairs, "
        "one kept each, a removed one possibly far from it through others (default: %(default)s)",
    )
    match.add_argument(
        "--featureless",
        choices=FEATURELESS,
        default="keep",
        help="documents with no features (empty, blank, punctuation only), which all share "
        "fingerprint 0: keep each, compared with nothing; drop them; or compare them like "
        "any other (default: %(default)s)",
    )
    match.add_argument(
        "--against",
        metavar="INDEX",
        help="also drop documents near one in this index (from --save-index or `neardup index build`)",
    )

    return match


def _add_output_arguments(dedup: argparse.ArgumentParser) -> None:
    write = dedup.add_argument_group("output")
    write.add_argument(
        "--format", choices=OUTPUT_FORMATS, help="format of -o (default: its suffix, else the inputs')"
    )
    write.add_argument("--clusters", metavar="FILE", help="write the clusters here")
    write.add_argument("--pairs", metavar="FILE", help="write the near-duplicate pairs here")
    write.add_argument(
        "--all-pairs",
        action="store_true",
        help="with --pairs: every pair of documents, not just those that rebuild the clusters",
    )
    write.add_argument(
        "--save-index",
        metavar="INDEX",
        help="save an index of every document read (with --against: and of that "
        "index) for later --against runs",
    )


def _add_engine_arguments(dedup: argparse.ArgumentParser) -> None:
    engine = dedup.add_argument_group("engine")
    engine.add_argument(
        "--engine",
        choices=("local", "spark"),
        default="local",
        help="local: this machine; spark: Apache Spark (pip install 'neardup[spark]'), reading and "
        "writing JSONL, Parquet or CSV at any path Spark reaches (default: %(default)s)",
    )
    engine.add_argument(
        "--master",
        metavar="URL",
        help="with --engine spark: the Spark master (default: spark-submit's, else local[*]), or "
        "sc://HOST:PORT for a Spark Connect server (Databricks and other remote endpoints)",
    )
    engine.add_argument(
        "--driver-limit",
        type=int,
        metavar="N",
        help="with --engine spark: decide on the driver up to N documents, by the local engine's "
        "steps, and past it on the cluster (default: 2,000,000; as many as the driver's memory "
        "holds with --verify, --cosine, --jaccard or --against, and where only it can decide: "
        "--save-index, --all-pairs)",
    )


def check(args: argparse.Namespace) -> None:
    """Usage errors of the command line itself, before any compile; what the options allow
    together is ``DedupOptions``'s to say, for both engines and the library alike."""
    parser = args.command_parser
    if args.explain_plan:
        if args.jaccard is None and args.cosine is None:
            parser.error("--explain-plan explains a --jaccard or --cosine run; give one")
        return
    if args.example and args.inputs:
        parser.error("--example deduplicates a built-in corpus; give it without INPUTs")
    if not args.example and not args.inputs:
        parser.error("name INPUT files or folders, or give --example")
    if not args.example and not (args.output or args.clusters or args.pairs or args.save_index):
        parser.error("nothing to write: give -o OUTPUT (and/or --clusters, --pairs, --save-index)")
    if args.driver_limit is not None and (args.engine != "spark" or args.driver_limit < 0):
        parser.error("--driver-limit N (N >= 0) says where --engine spark decides; give it with that")
    check_memory_arguments(parser, args)
    if args.example and args.engine == "spark" and (args.clusters or args.pairs or args.save_index):
        parser.error("--example on --engine spark shows its clusters; give -o only, or run it locally")
    if args.all_pairs and not args.pairs:
        parser.error("--all-pairs says what --pairs FILE holds; give --pairs FILE too")
    _verify(args)


def _verify(args: argparse.Namespace) -> tuple[str, float] | None:
    """``--verify METRIC THRESHOLD`` with its threshold a number, or None."""
    if args.verify is None:
        return None
    metric, threshold = args.verify
    parser: argparse.ArgumentParser = args.command_parser
    try:
        return metric, float(threshold)
    except ValueError:
        parser.error(f"--verify {metric} {threshold}: the threshold must be a number in [0, 1]")


def _refuse_local_only(args: argparse.Namespace, engine: Any, read: Any) -> None:
    """What the Spark engine refuses (``SparkEngine.refuse_local_only``), as a usage error."""
    from .._errors import ConfigError

    try:
        engine.refuse_local_only(args.inputs, read, memory=args.memory, work_dir=args.work_dir)
    except ConfigError as error:
        args.command_parser.error(str(error))


def spark_engine(args: argparse.Namespace) -> Any:
    """The :class:`~neardup.spark.job.SparkEngine` of ``--master`` and ``--driver-limit``."""
    from ..spark.job import SparkEngine

    return SparkEngine(master=args.master, driver_limit=args.driver_limit)


def outputs_of(args: argparse.Namespace) -> Any:
    """The :class:`~neardup.io.outputs.Outputs` the flags ask for, for either engine."""
    from ..io.outputs import Outputs

    return Outputs(
        output=args.output,
        format=args.format,
        clusters=args.clusters,
        pairs=args.pairs,
        every_pair=args.all_pairs,
        save_index=args.save_index,
    )


def dedup_options(args: argparse.Namespace, verify: tuple[str, float] | None) -> Any:
    """The :class:`~neardup.DedupOptions` the flags ask for, checked once for either engine."""
    from ..decision.options import DedupOptions

    return DedupOptions(
        config=config_from_args(args),
        max_distance=args.max_distance,
        similarity=args.similarity,
        jaccard=args.jaccard,
        cosine=args.cosine,
        verify=verify,
        verify_features=args.verify_features,
        verify_size=args.verify_size,
        keep=args.keep,
        cluster=args.cluster,
        featureless=args.featureless,
        against=args.against,
    )


def run(args: argparse.Namespace) -> int:
    if args.explain_plan:
        if args.cosine is not None:
            from ..decision.cosine import explain_cosine

            print(explain_cosine(args.cosine, args.bits))
        else:
            from ..decision.lsh import explain_jaccard

            config = config_from_args(args)
            print(explain_jaccard(args.jaccard, args.verify_features, args.verify_size, config))
        return 0
    read, outputs = read_options(args), outputs_of(args)  # once, for either engine
    engine = spark_engine(args) if args.engine == "spark" else None
    if engine is not None:
        _refuse_local_only(args, engine, read)
    options = dedup_options(args, _verify(args))
    if engine is not None:  # the job checks its outputs, before the session starts
        if args.example:
            return _example_on_spark(args, options, engine)
        from ..spark.job import run_job

        _summarise(run_job(args.inputs, options, read, outputs, engine), args)
        return 0
    with contextlib.ExitStack() as stack:
        return _run_locally(args, options, read, outputs, stack)


def _example_on_spark(args: argparse.Namespace, options: Any, engine: Any) -> int:
    """``--example`` on Spark: the example corpus written as JSON lines for the job to read,
    its clusters read back and shown as the local engine shows them."""
    import json

    import numpy as np
    import pyarrow.parquet as pq

    from ..fingerprint.fingerprinter import Fingerprinter
    from ..io.batch import ReadOptions
    from ..io.outputs import Outputs
    from ..planted.example import example_corpus
    from ..spark.job import run_job

    documents = example_corpus()
    with tempfile.TemporaryDirectory(prefix="neardup-example-") as folder:
        corpus, clusters = Path(folder, "example.jsonl"), Path(folder, "clusters.parquet")
        corpus.write_text("".join(json.dumps({"id": d.id, "text": d.text}) + "\n" for d in documents))
        stats = run_job(
            [str(corpus)],
            options,
            ReadOptions(text_field="text", id_field="id"),
            Outputs(output=args.output, format=args.format, clusters=str(clusters)),
            engine,
        )
        members = pq.read_table(clusters).to_pylist()
    _summarise(stats, args)
    position = {d.id: p for p, d in enumerate(documents)}
    labels = np.arange(len(documents), dtype=np.int64)  # alone unless in a cluster of several
    kept = np.ones(len(documents), dtype=bool)
    for row in members:
        labels[position[row["id"]]] = len(documents) + row["cluster"]
        kept[position[row["id"]]] = row["kept"]
    fingerprints = Fingerprinter(options.config).fingerprint_batch([d.text for d in documents])
    from .example import show_example

    show_example(documents, labels, kept, fingerprints, options)
    return 0


def _run_locally(
    args: argparse.Namespace, options: Any, read: Any, outputs: Any, stack: contextlib.ExitStack
) -> int:
    import dataclasses

    from .._progress import Progress
    from ..pipeline.job import LocalEngine, run_job

    progress = Progress(enabled=not args.quiet)
    progress.record("compile", getattr(args, "compile_seconds", None))
    if args.example:
        from ..planted.example import example_corpus

        documents = example_corpus()
        data: Any = {"id": [d.id for d in documents], "text": [d.text for d in documents]}
        import pyarrow as pa

        data, read = pa.table(data), dataclasses.replace(read, id_field="id")
        _check_outputs(args, outputs, [])
    else:
        check = functools.partial(_check_outputs, args, outputs)
        data = stack.enter_context(input_sources(args, check))
    engine = LocalEngine(n_jobs=args.n_jobs, memory=args.memory, work_dir=args.work_dir)
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always", UserWarning)
        try:
            result = run_job(data, options, read, engine, outputs, progress)
        finally:
            for warning in warned:
                print(f"neardup: warning: {warning.message}", file=sys.stderr)
    _summarise(result.stats, args)
    if args.example:
        from .example import show_example

        show_example(documents, result.labels, result.kept, result.fingerprints, options)
    return 0


def _check_outputs(args: argparse.Namespace, outputs: Any, sources: list[Source]) -> None:
    """Refuse, before anything is read, outputs that would replace an input or each other, or
    could not be written (:meth:`neardup.io.outputs.Outputs.check`), an -o the inputs cannot
    fill, and a table whose name says no table format."""
    from .._errors import ConfigError
    from ..io.writers import output_format, table_format

    try:
        folder = args.output is not None and output_format(args.output, args.format, sources)[0] == "text"
    except ConfigError:  # said below, once -o is known not to replace an input
        folder = args.format == "text"
    outputs.check(args.inputs, folders=("-o",) if folder else ())
    if args.output is not None:
        output_format(args.output, args.format, sources)
    for table in (args.clusters, args.pairs):
        if table is not None:
            table_format(table)  # a name that says no table format is refused before the run


@contextlib.contextmanager
def input_sources(
    args: argparse.Namespace, check: Callable[[list[Source]], None] = lambda sources: None
) -> Iterator[list[Source]]:
    """The sources of ``args.inputs``, once ``check`` has passed them, before anything is
    read. ``-`` is stdin, saved to a temporary file (under ``$TMPDIR``, without a name where
    the system allows) for as long as the block runs, since the kept lines are copied from
    the input in a second pass."""
    from ..io.documents import STDIN, check_stdin_once, saved_stdin, stdin_source
    from ..io.sources import find_sources

    check_stdin_once(args.inputs)
    found = {
        given: find_sources([given], format=args.input_format, compression=args.compression, lines=args.lines)
        for given in args.inputs
        if given != STDIN
    }

    def in_order(stdin: list[Source]) -> list[Source]:
        return [source for given in args.inputs for source in found.get(given, stdin)]

    if STDIN not in args.inputs:
        check(in_order([]))
        yield in_order([])
        return
    check(in_order([stdin_source(args.input_format, args.compression)]))
    with saved_stdin(sys.stdin.buffer, args.input_format, args.compression) as saved:
        yield in_order([saved])


def _summarise(stats: Any, args: argparse.Namespace) -> None:
    """The run's summary on stderr, as both engines give it."""
    if not args.quiet:
        print("neardup: " + stats.format().replace("\n", "\nneardup: "), file=sys.stderr)
