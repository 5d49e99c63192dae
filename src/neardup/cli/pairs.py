"""``neardup pairs``: every pair of documents whose fingerprints differ in at most K bits."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .fingerprint import FINGERPRINTS_HELP, add_document_arguments, load_fingerprints
from .options import add_memory_arguments, check_memory_arguments, open_output

WRITE_ROWS = 1 << 16
"""Pairs formatted and written at a time."""


def add_command(commands: Any) -> None:
    pairs = commands.add_parser(
        "pairs",
        help="every pair of fingerprints within a Hamming distance (self-join)",
        description="Write every pair of documents of INPUTs (a fingerprint file from `neardup "
        "fingerprint`, or documents, fingerprinted as it would) whose fingerprints differ in at "
        "most K bits, exactly once, as ID_A<TAB>ID_B<TAB>DISTANCE. The join holds one permuted "
        "table at a time and the pairs stream out in chunks of about 4 million, each sorted, so "
        "memory stays bounded however many there are.",
        epilog=FINGERPRINTS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pairs.set_defaults(handler=run, command_parser=pairs)
    pairs.add_argument(
        "inputs", nargs="+", metavar="INPUT", help="a fingerprint file, or files and folders of documents"
    )
    pairs.add_argument(
        "-k",
        "--max-distance",
        type=int,
        default=3,
        metavar="K",
        help="the largest Hamming distance, in bits (default: %(default)s)",
    )
    pairs.add_argument("-o", "--output", metavar="FILE", help="write here, atomically (default: stdout)")
    add_memory_arguments(
        pairs,
        "bound the join's memory (8G, 512M); past it each table is partitioned by key to "
        "--work-dir and joined a partition at a time (default: in memory, about 16 bytes a "
        "fingerprint)",
    )
    add_document_arguments(pairs)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ..index.self_join import self_join

    data = load_fingerprints(args)
    check_memory_arguments(args.command_parser, args)
    out_of_core = args.memory is not None and _announce_out_of_core(args, data.fingerprints)
    total = 0
    with open_output(args.output) as out:
        out.write(f"# neardup pairs k={args.max_distance} of {' '.join(args.inputs)}\n".encode())
        # One table at a time, pairs in bounded chunks, however many: rows, named by id_of.
        joined = self_join(
            data.fingerprints,
            args.max_distance,
            memory=args.memory,
            work_dir=args.work_dir,
            on_table=_table_done if out_of_core else None,
        )
        for first, second, distances in joined:
            order = np.lexsort((second, first))
            first, second, distances = first[order], second[order], distances[order]
            name = data.id_of
            # A slice at a time: as Python ints and strings a pair takes ~190 bytes, and a
            # chunk may hold the join's whole window (--memory / 384 pairs): --memory / 2 more.
            for at in range(0, len(first), WRITE_ROWS):
                rows = "".join(
                    f"{name(i)}\t{name(j)}\t{d}\n"
                    for i, j, d in zip(
                        first[at : at + WRITE_ROWS].tolist(),
                        second[at : at + WRITE_ROWS].tolist(),
                        distances[at : at + WRITE_ROWS].tolist(),
                    )
                )
                out.write(rows.encode("utf-8", "surrogateescape"))
            total += len(first)
    print(
        f"neardup: {total} pairs within {args.max_distance} bits among {len(data.fingerprints)} fingerprints",
        file=sys.stderr,
    )
    return 0


def _announce_out_of_core(args: argparse.Namespace, fingerprints: Any) -> bool:
    """Whether the join goes out of core; if it does, say where and how much disk it takes,
    and refuse (status 2) a work folder without that much free."""
    import shutil
    import tempfile

    from ..index.self_join import disk_bytes_needed, goes_out_of_core

    rows, words = fingerprints.shape[0], 1 if fingerprints.ndim == 1 else fingerprints.shape[1]
    if not goes_out_of_core(rows, words, args.memory):
        return False
    folder = args.work_dir if args.work_dir is not None else tempfile.gettempdir()
    needed, free = disk_bytes_needed(fingerprints), shutil.disk_usage(folder).free
    if needed > free:
        args.command_parser.error(
            f"the join of {rows:,} fingerprints in --memory {args.memory / 2**30:.2f} GiB needs up "
            f"to {needed / 2**30:.2f} GiB in {folder}, which has {free / 2**30:.2f} GiB free; give "
            f"--work-dir on a larger disk, or more --memory"
        )
    print(
        f"neardup: joining {rows:,} fingerprints out of core in {args.memory / 2**30:.2f} GiB of "
        f"memory: a table at a time, up to {needed / 2**30:.2f} GiB in {folder}",
        file=sys.stderr,
    )
    return True


def _table_done(table: int, tables: int, seconds: float, written: int) -> None:
    print(
        f"neardup: table {table + 1}/{tables} joined in {seconds:.1f} s ({written / 2**30:.2f} GiB written)",
        file=sys.stderr,
        flush=True,
    )
