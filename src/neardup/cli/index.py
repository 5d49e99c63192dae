"""``neardup index build|query|info``: a saved HammingIndex."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .._config import FingerprintConfig
from .fingerprint import FINGERPRINTS_HELP, add_document_arguments, load_fingerprints


def add_command(commands: Any) -> None:
    index = commands.add_parser(
        "index",
        help="build, query and describe a saved Hamming index",
        description="A saved HammingIndex over the fingerprints of documents.",
    )
    actions = index.add_subparsers(dest="action", required=True, metavar="ACTION")
    build = actions.add_parser(
        "build",
        help="index the fingerprints of INPUTs",
        description="Index the fingerprints of INPUTs (a fingerprint file from `neardup "
        "fingerprint`, or documents, fingerprinted as it would) and save the index. Ids are "
        "the documents' ids when all are integers, else the row numbers (0-based).",
        epilog=FINGERPRINTS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    build.set_defaults(handler=run_build, command_parser=build)
    build.add_argument(
        "inputs", nargs="+", metavar="INPUT", help="a fingerprint file, or files and folders of documents"
    )
    build.add_argument("-o", "--output", metavar="INDEX", required=True, help="the index file to write")
    build.add_argument(
        "-k",
        "--max-distance",
        type=int,
        default=3,
        metavar="K",
        help="the largest radius the index serves, in bits (default: %(default)s)",
    )
    build.add_argument(
        "--plan",
        default="auto",
        help="table layout: auto, compact, balanced, fast, mih (default: %(default)s)",
    )
    add_document_arguments(build)

    query = actions.add_parser("query", help="find indexed fingerprints near a fingerprint or text")
    query.set_defaults(handler=run_query)
    query.add_argument("index", metavar="INDEX", help="an index file from `neardup index build`")
    given = query.add_mutually_exclusive_group(required=True)
    given.add_argument("--fingerprint", metavar="HEX", help="a fingerprint in hex")
    given.add_argument("--text", help="a text, fingerprinted with the index's own config")
    query.add_argument(
        "-k",
        "--max-distance",
        type=int,
        default=None,
        metavar="K",
        help="search radius (default: the index's)",
    )

    info = actions.add_parser("info", help="describe an index file")
    info.set_defaults(handler=run_info)
    info.add_argument("index", metavar="INDEX", help="an index file")


def run_build(args: argparse.Namespace) -> int:
    import numpy as np

    from ..index.hamming_index import HammingIndex

    data = load_fingerprints(args)
    numeric = all(doc_id.lstrip("-").isdigit() for doc_id in data.ids)
    ids = np.array([int(doc_id) for doc_id in data.ids], dtype=np.int64) if numeric else None
    index = HammingIndex(
        bits=data.bits, max_distance=args.max_distance, plan=args.plan, fingerprint_config=data.config
    )
    index.add(data.fingerprints, ids=ids)
    index.save(args.output)
    print(
        f"neardup: indexed {len(index)} fingerprints ({'their ids' if numeric else 'ids = row numbers'}); "
        f"{index.plan.describe(len(index))}",
        file=sys.stderr,
    )
    return 0


def run_query(args: argparse.Namespace) -> int:
    from ..index.hamming_index import HammingIndex
    from ..io.fingerprint_files import parse_hex

    index = HammingIndex.open(args.index)
    if args.text is not None:
        if index.fingerprint_config is None:
            from .._errors import ConfigError

            raise ConfigError(
                f"{args.index} does not record the fingerprint config it was built "
                f"with; query it with --fingerprint HEX"
            )
        from ..fingerprint.fingerprinter import Fingerprinter

        config = FingerprintConfig.from_dict(index.fingerprint_config)
        query = Fingerprinter(config).fingerprint(args.text)
        fingerprint = parse_hex(f"{query:0{index.bits // 4}x}", index.bits)
    else:
        fingerprint = parse_hex(args.fingerprint.lower().removeprefix("0x"), index.bits)
    found, distances = index.query(fingerprint, max_distance=args.max_distance)
    sys.stdout.write("".join(f"{i}\t{d}\n" for i, d in zip(found.tolist(), distances.tolist())))
    return 0


def run_info(args: argparse.Namespace) -> int:
    from ..index.hamming_index import HammingIndex

    index = HammingIndex.open(args.index)
    print(
        f"file: {args.index}\nfingerprints: {len(index)}\nbits: {index.bits}\n"
        f"max_distance: {index.max_distance}\nplan: {index.plan.describe(len(index))}\n"
        f"bytes: {index.nbytes}\nfingerprint config: {json.dumps(index.fingerprint_config)}"
    )
    return 0
