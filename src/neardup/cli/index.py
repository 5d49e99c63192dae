"""``neardup index build|query|info``: a saved HammingIndex."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .._config import FingerprintConfig, check_same_lexers
from ..io.id_lists import id_list_path, integer_ids, read_id_list, remove_id_list, write_id_list
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
        "fingerprint`, or documents, fingerprinted as it would) and save the index. The index "
        "holds the documents' ids when all are integers; otherwise it numbers the documents "
        "from 0 and writes their ids beside it, to INDEX.ids, where `index query` finds them.",
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
    numbers: np.ndarray | None
    if data.ids is None:  # a NumPy array's: its rows
        numbers, where = np.arange(len(data.fingerprints)), "ids: their rows, from 0"
    else:
        numbers, where = integer_ids(data.ids), "their ids"
    index = HammingIndex(
        bits=data.bits, max_distance=args.max_distance, plan=args.plan, fingerprint_config=data.config
    )
    index.add(data.fingerprints, ids=numbers)
    # The ids go first: an index never stands beside the ids of another build.
    if numbers is None and data.ids is not None:
        write_id_list(args.output, data.ids)
        where = f"their ids in {id_list_path(args.output)}"
    else:
        remove_id_list(args.output)
    index.save(args.output)
    print(
        f"neardup: indexed {len(index)} fingerprints ({where}); {index.plan.describe(len(index))}",
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

        check_same_lexers(index.fingerprint_config, args.index)
        config = FingerprintConfig.from_dict(index.fingerprint_config)
        query = Fingerprinter(config).fingerprint(args.text)
        fingerprint = parse_hex(f"{query:0{index.bits // 4}x}", index.bits)
    else:
        fingerprint = parse_hex(args.fingerprint.lower().removeprefix("0x"), index.bits)
    names = read_id_list(args.index, len(index))
    found, distances = index.query(fingerprint, max_distance=args.max_distance)
    ids = found.tolist() if names is None else [names[i] for i in found.tolist()]
    sys.stdout.write("".join(f"{i}\t{d}\n" for i, d in zip(ids, distances.tolist())))
    return 0


def run_info(args: argparse.Namespace) -> int:
    from ..index.hamming_index import HammingIndex

    index = HammingIndex.open(args.index)
    names = read_id_list(args.index, len(index))
    ids = "integers" if names is None else f"numbers, named in {id_list_path(args.index)}"
    print(
        f"file: {args.index}\nids: {ids}\nfingerprints: {len(index)}\nbits: {index.bits}\n"
        f"max_distance: {index.max_distance}\nplan: {index.plan.describe(len(index))}\n"
        f"bytes: {index.nbytes}\nfingerprint config: {json.dumps(index.fingerprint_config)}"
    )
    return 0
