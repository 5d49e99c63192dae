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
from collections.abc import AsyncIterator

from fastapi import FastAPI

from .asgi import Measured, QueryLane
from .metrics import Metrics
from .models import Limits
from .routes import add_routes, answer_query
from .state import Service
from .store import Store


def create_app(store: Store, *, token: str | None = None, limits: Limits | None = None) -> FastAPI:
    """The ASGI app over ``store``; ``token`` guards every route but ``/healthz``."""
    limits = limits or Limits()
    service = Service(store)
    metrics = Metrics()
    metrics.size.set(len(service.index))

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        service.snapshot()  # a clean stop: the next start reads the snapshot, not every row

    app = FastAPI(
        title="neardup",
        description="Near-duplicate lookup and storage (SimHash, Hamming radius).",
        lifespan=lifespan,
        openapi_url=None if token else "/openapi.json",  # with a token, add_routes guards it
    )
    add_routes(app, service, metrics, limits, token)
    answer = functools.partial(answer_query, service, metrics, limits)
    app.add_middleware(QueryLane, answer=answer, token=token, limits=limits)
    app.add_middleware(Measured, limits=limits, metrics=metrics)  # outermost
    return app
