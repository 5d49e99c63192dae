"""``neardup pairs``: every pair of documents whose fingerprints differ in at most K bits."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .fingerprint import FINGERPRINTS_HELP, add_document_arguments, load_fingerprints
from .options import open_output


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
    add_document_arguments(pairs)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ..index.self_join import self_join

    data = load_fingerprints(args)
    total = 0
    with open_output(args.output) as out:
        out.write(f"# neardup pairs k={args.max_distance} of {' '.join(args.inputs)}\n".encode())
        # One table at a time, pairs in bounded chunks, however many: rows, named by id_of.
        for first, second, distances in self_join(data.fingerprints, args.max_distance):
            order = np.lexsort((second, first))
            name = data.id_of
            rows = "".join(
                f"{name(i)}\t{name(j)}\t{d}\n"
                for i, j, d in zip(first[order].tolist(), second[order].tolist(), distances[order].tolist())
            )
            out.write(rows.encode("utf-8", "surrogateescape"))
            total += len(first)
    print(
        f"neardup: {total} pairs within {args.max_distance} bits among {len(data.fingerprints)} fingerprints",
        file=sys.stderr,
    )
    return 0
