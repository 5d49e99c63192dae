"""``neardup serve``: the online near-duplicate service (``neardup.service``) on uvicorn."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import TYPE_CHECKING, Any

from .options import add_config_arguments, config_from_args, non_negative_float, positive_float

if TYPE_CHECKING:
    from ..service.store import Settings

_CONFIG_OPTIONS = (
    "bits",
    "features",
    "shingle_size",
    "ngram_size",
    "normalize",
    "weighting",
    "idf",
    "seed",
    "language",
    "code_normalize",
)


def add_command(commands: Any) -> None:
    serve = commands.add_parser(
        "serve",
        help="an HTTP service: have I seen a near-duplicate of this page? (pip install 'neardup[serve]')",
        description="Serve near-duplicate lookups and durable storage over HTTP (JSON; OpenAPI at "
        "/openapi.json). The mode (-k, --jaccard or --passages) and the fingerprint options are fixed when "
        "--data is created and recorded there; a later start with other ones is refused.",
    )
    serve.set_defaults(handler=run, check=check, command_parser=serve)
    serve.add_argument("--data", required=True, metavar="DIR", help="the data folder (created if missing)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s)")
    serve.add_argument("--port", type=int, default=8000, help="port (default: %(default)s)")
    serve.add_argument(
        "--token",
        default=os.environ.get("NEARDUP_TOKEN"),
        help="require 'Authorization: Bearer TOKEN' on every request but /healthz (default: $NEARDUP_TOKEN)",
    )
    serve.add_argument(
        "-k",
        "--max-distance",
        type=int,
        metavar="K",
        help="the radius, for a new folder (default: 3 per 64 bits)",
    )
    serve.add_argument(
        "--jaccard",
        type=float,
        metavar="T",
        help="Jaccard mode, for a new folder: answer with the stored documents whose word "
        "3-shingle Jaccard index is at least T, candidates from MinHash-LSH banded for T as "
        "`neardup dedup --jaccard` bands them, each checked exactly (default: SimHash mode, -k)",
    )
    serve.add_argument(
        "--passages",
        action="store_true",
        default=None,
        help="passages mode, for a new folder: keep each text's passage seeds and text, and "
        "answer POST /passages with the passages stored documents share with a text, as "
        "`neardup passages` finds them (/query and /documents still answer SimHash lookups)",
    )
    serve.add_argument(
        "--max-batch", type=int, default=1000, help="documents per request (default: %(default)s)"
    )
    serve.add_argument(
        "--max-body-mb",
        type=float,
        default=32,
        help="bytes of one request body, in MiB (default: %(default)s)",
    )
    serve.add_argument(
        "--no-access-log",
        dest="access_log",
        action="store_false",
        help="do not log each request (on stdout, in uvicorn's access log format)",
    )
    serve.add_argument(
        "--header-timeout",
        type=positive_float,
        default=10,
        metavar="S",
        help="seconds a request's headers may take to arrive, from the connection's start or the "
        "previous answer; then 408 and the connection closed (default: %(default)s)",
    )
    serve.add_argument(
        "--body-timeout",
        type=positive_float,
        default=60,
        metavar="S",
        help="seconds a request's body may take to arrive whole; then 408 (default: %(default)s)",
    )
    serve.add_argument(
        "--keep-alive",
        type=int,
        default=5,
        metavar="S",
        help="seconds an idle connection is kept open between requests (default: %(default)s)",
    )
    serve.add_argument(
        "--max-connections",
        type=int,
        metavar="N",
        help="open connections and requests in progress beyond which a request is answered 503 "
        "(default: no limit)",
    )
    serve.add_argument(
        "--commit-delay",
        type=non_negative_float,
        default=2.0,
        metavar="MS",
        help="milliseconds a group commit waits, at most, for as many writers as the last groups "
        "held, as PostgreSQL's commit_delay (0: never; a lone writer never waits; default: "
        "%(default)s)",
    )
    add_config_arguments(serve, or_else="the data folder's")
    # None marks an option not given: a start on an existing folder compares only what was given.
    serve.set_defaults(**dict.fromkeys(_CONFIG_OPTIONS))


def check(args: argparse.Namespace) -> None:
    """What the arguments alone refuse, before the kernels compile: a ``--data`` that is a
    file, options a new folder could not be made with or an existing one was not, and an
    address that cannot be had (taken here, in ``args.sockets``: a busy port fails at once,
    not after a first compile)."""
    from .._errors import ConfigError
    from .._extras import require

    if os.path.exists(args.data) and not os.path.isdir(args.data):
        raise ConfigError(
            f"--data {args.data} is a file, not a folder; give the service's data folder (created "
            f"if missing), or move the file away"
        )
    from ..service.store import check_asked, recorded_settings

    check_asked(args.data, recorded_settings(args.data), _settings(args))
    require("serve", "fastapi", "uvicorn", "httptools", needed_by="neardup serve")

    from ..service import server

    args.sockets = server.bind(args.host, args.port)


def run(args: argparse.Namespace) -> int:
    from ..service import server
    from ..service.app import Limits, create_app
    from ..service.store import Store

    sockets = args.sockets  # taken by check, before anything compiled or loaded
    if not args.token and not server.loopback(sockets):
        where = server.url(args.host, sockets[0].getsockname()[1])
        print(
            f"neardup: warning: {where} is reachable from other machines and no --token is set: "
            "anyone who reaches it can read, store and delete documents; set --token (or "
            "$NEARDUP_TOKEN)",
            file=sys.stderr,
        )
    with contextlib.ExitStack() as stack:
        # Each closed at the end: after a clean stop, closed already (a no-op).
        for sock in sockets:
            stack.enter_context(sock)
        store = stack.enter_context(contextlib.closing(Store(args.data, _settings(args))))
        app = create_app(
            store,
            token=args.token or None,
            limits=Limits(max_batch=args.max_batch, max_body_bytes=int(args.max_body_mb * 2**20)),
            body_timeout=args.body_timeout,
            commit_delay=args.commit_delay / 1000,
            access_log=args.access_log,
        )
        # The app's lifespan warms the kernels before uvicorn listens, and closes the store at
        # the end (uvicorn re-raises SIGTERM once it has stopped: nothing after this line runs).
        server.run(
            app,
            sockets,
            host=args.host,
            header_timeout=args.header_timeout,
            keep_alive_timeout=args.keep_alive,
            max_connections=args.max_connections,
        )
    return 0


def _settings(args: argparse.Namespace) -> Settings | None:
    """The settings of a new data folder the options give; None when they give none (a
    folder's recorded settings, or the defaults for a new one)."""
    from .._config import FingerprintConfig
    from ..service.store import Settings

    given = {name: getattr(args, name) for name in _CONFIG_OPTIONS if getattr(args, name) is not None}
    if not given and args.max_distance is None and args.jaccard is None and not args.passages:
        return None
    if args.passages and args.jaccard is not None:
        from .._errors import ConfigError

        raise ConfigError("--passages and --jaccard are two modes of a data folder; give one")
    defaults = FingerprintConfig()
    full = argparse.Namespace(**{name: getattr(defaults, name, None) for name in _CONFIG_OPTIONS})
    full.weighting = None if "idf" in given else defaults.weighting
    full.shingle_size = full.language = None  # the feature kind's default shingle size
    vars(full).update(given)
    config = config_from_args(full)
    if args.jaccard is not None:
        # The batch job's rules: a threshold in (0, 1] without a radius, features it can check.
        from ..decision.options import check_threshold

        check_threshold("jaccard", args.jaccard, args.max_distance, None, None)
    k = args.max_distance if args.max_distance is not None else 3 * config.bits // 64
    return Settings(config, k, args.jaccard, bool(args.passages))
