"""``neardup client add|query``: send documents to a ``neardup serve`` from scripts."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

from .options import add_input_arguments


def add_command(commands: Any) -> None:
    client = commands.add_parser(
        "client",
        help="send documents to a `neardup serve`: add files, query texts",
        description="Talk to a `neardup serve` (pip install 'neardup[serve]').",
    )
    actions = client.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = actions.add_parser(
        "add",
        help="store the documents of INPUTs (read as `neardup dedup` reads them), in batches",
        description="Look up and store every document of INPUTs; prints one JSON line per "
        "document: its id, whether it was stored, and its near-duplicates.",
    )
    add.set_defaults(handler=run_add, command_parser=add)
    add.add_argument("inputs", nargs="+", metavar="INPUT", help="files or folders of documents, or -")
    add.add_argument(
        "--skip-if-duplicate", action="store_true", help="store only documents with no near-duplicate"
    )
    add.add_argument(
        "--batch-size", type=int, default=500, help="documents per request (default: %(default)s)"
    )
    _add_server_arguments(add)
    add_input_arguments(add)
    query = actions.add_parser("query", help="look TEXTs up, storing nothing")
    query.set_defaults(handler=run_query, command_parser=query)
    query.add_argument("texts", nargs="+", metavar="TEXT", help="texts to look up")
    _add_server_arguments(query)


def _add_server_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the service (default: %(default)s)")
    parser.add_argument(
        "--token", default=os.environ.get("NEARDUP_TOKEN"), help="its bearer token (default: $NEARDUP_TOKEN)"
    )


@contextlib.contextmanager
def _connected(args: argparse.Namespace, **options: Any) -> Iterator[Any]:
    """A client of the service at ``--url``; httpx's failures to reach it become errors that say
    what to check."""
    from .._extras import require

    require("serve", "httpx", needed_by="neardup client")
    import httpx

    from .._errors import ConfigError
    from ..service.client import Client

    try:
        with Client(args.url, token=args.token, **options) as client:
            yield client
    except httpx.InvalidURL as e:
        raise ConfigError(
            f"--url {args.url!r} is not a URL ({e}); give one like http://127.0.0.1:8000"
        ) from e
    except httpx.TransportError as e:
        raise ConnectionError(
            f"{args.url}: no `neardup serve` answered there ({e}); start one (neardup serve --data DIR) "
            f"or give its address with --url"
        ) from e


def run_add(args: argparse.Namespace) -> int:
    from .._progress import Progress
    from ..io.rejects import Rejects
    from .fingerprint import open_documents, report_skipped

    reader = open_documents(args)
    rejects = Rejects(args.on_error)
    progress = Progress(enabled=sys.stderr.isatty())
    stored = sent = 0
    with (
        _connected(args, batch_size=args.batch_size) as client,
        progress.stage("add", unit="docs") as stage,
    ):
        for batch in reader.batches(rejects):
            texts = batch.texts.to_pylist()
            for start in range(0, len(texts), args.batch_size):
                documents = [
                    {"id": doc_id, "text": text}
                    for doc_id, text in zip(
                        batch.ids[start : start + args.batch_size], texts[start : start + args.batch_size]
                    )
                ]
                for result in client.add(documents, skip_if_duplicate=args.skip_if_duplicate):
                    stored += result["stored"]
                    print(json.dumps({k: result[k] for k in ("id", "stored", "duplicates")}))
                sent += len(documents)
                stage.update(sent, len(documents))
    report_skipped(reader, rejects)
    print(f"neardup: stored {stored:,} documents", file=sys.stderr)
    rejects.check_share(sent, args.max_skipped)
    return 0


def run_query(args: argparse.Namespace) -> int:
    with _connected(args) as client:
        for text, result in zip(args.texts, client.query([{"text": t} for t in args.texts])):
            line = {"text": text[:60], "duplicates": result["duplicates"]}
            if "truncated" in result:  # Jaccard mode: the answer may be incomplete
                line["truncated"] = result["truncated"]
            print(json.dumps(line, ensure_ascii=False))
    return 0
