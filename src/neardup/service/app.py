"""``neardup serve``'s HTTP API: "have I seen a near-duplicate of this page? If not, remember it."

FastAPI over a :class:`Store` (SQLite, the record of truth) and an in-memory
:class:`HammingIndex` rebuilt from it at start. A write is answered only once its batch is
committed (on disk); then the index learns it. The OpenAPI document is at ``/openapi.json``.

Requests are checked by pydantic models that forbid unknown fields: a malformed body, an unknown
field or a wrong type is a 422 naming the field's path, never a 500. Limits (body bytes, batch
size, text bytes) are 413 or 422 naming the limit. With a token, every request but ``/healthz``
needs ``Authorization: Bearer TOKEN``.

This module puts the app together: the schemas are in ``models.py``, the state (store, index,
locks) in ``state.py``, the routes in ``routes.py``, the ASGI middleware in ``asgi.py`` and the
Prometheus counters in ``metrics.py``.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import sys
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute

from .asgi import AccessLog, Lane, Measured
from .metrics import Metrics
from .models import Limits
from .modes import service_for
from .routes import add_routes, answer_add, answer_add_soon, answer_query
from .state import COMMIT_DELAY
from .store import Store

LOG = logging.getLogger("neardup.serve")


def create_app(
    store: Store,
    *,
    token: str | None = None,
    limits: Limits | None = None,
    body_timeout: float = 60.0,
    commit_delay: float = COMMIT_DELAY,
    access_log: bool = False,
) -> FastAPI:
    """The ASGI app over ``store``; ``token`` guards every route but ``/healthz``.

    Its lifespan owns the store: at start it loads or compiles every kernel a request runs
    (:meth:`Service.warm`; uvicorn listens only after that), and at a clean stop it saves the
    index snapshot and closes the store. A request's body must arrive whole within
    ``body_timeout`` seconds. A group commit waits up to ``commit_delay`` seconds for as
    many writers as the last groups held (:class:`Service`). With ``access_log``, each request
    is logged to stdout in uvicorn's format (:class:`AccessLog`)."""
    limits = limits or Limits()
    log = AccessLog(sys.stdout) if access_log else None
    service = service_for(store, commit_delay)
    metrics = Metrics()
    metrics.size.set(len(service.index))

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        started = time.perf_counter()
        LOG.info("Loading the kernels ...")
        service.warm()  # nothing listens yet: blocking here stalls no one
        LOG.info(
            "Ready in %.1f s: %s documents (from the %s)",
            time.perf_counter() - started,
            f"{len(service.index):,}",
            service.started_from,
        )
        yield
        if log is not None:
            log.flush()
        # A clean stop: the next start reads the snapshot, not every row. Here, not after
        # uvicorn.run: on SIGTERM uvicorn re-raises the signal.
        service.close()
        LOG.info("Saved the index snapshot and closed the store in %s", store.folder)

    app = _App(
        title="neardup",
        description="Near-duplicate lookup and storage (SimHash, Hamming radius).",
        lifespan=lifespan,
        openapi_url=None if token else "/openapi.json",  # with a token, add_routes guards it
    )
    add_routes(app, service, metrics, limits, token)
    query = functools.partial(answer_query, service, metrics, limits)
    add = functools.partial(answer_add, service, metrics, limits)
    add_soon = functools.partial(answer_add_soon, service, metrics, limits)
    lane = Lane(app.fastapi, query=query, add=add, add_soon=add_soon, token=token, limits=limits)
    app.front = Measured(
        lane,
        limits=limits,
        metrics=metrics,
        body_timeout=body_timeout,
        access_log=log,
        takes_json=_takes_json(app),
    )
    return app


def _takes_json(app: FastAPI) -> Callable[[str, str], bool]:
    """Whether a request (method, path) goes to a route of ``app`` that reads a JSON body: one
    rule, in ``asgi.Measured``, for the routes ``asgi.Lane`` answers and FastAPI's alike."""
    routes = [
        (route.methods or set(), route.path_regex)
        for route in app.routes
        if isinstance(route, APIRoute) and route.body_field is not None
    ]
    return lambda method, path: any(method in methods and regex.match(path) for methods, regex in routes)


class _App(FastAPI):
    """FastAPI behind the service's own ASGI layers: ``front`` (``asgi.Measured``, then
    ``asgi.Lane``) sees every request first, and the hot paths never reach FastAPI's own
    per-request work (its middleware stack, and a telemetry check that reads the environment:
    with the lighter deadline and counters of ``Measured``, a one-fingerprint lookup went from
    52 to 33 us of the event loop's time, measured in process). Every other request goes on to
    FastAPI, as it would without them."""

    front: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.front(scope, receive, send)

    async def fastapi(self, scope: Any, receive: Any, send: Any) -> None:
        await super().__call__(scope, receive, send)
