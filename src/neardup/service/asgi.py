"""The service's plain ASGI layer, in front of FastAPI: ``POST /query`` answered straight from
ASGI (the crawler's hot path), bodies over the limit refused before they are read, every request
counted and timed, and the bodies of the errors both layers send."""

from __future__ import annotations

import hmac
import json
import time
from collections.abc import Callable
from typing import Any

from fastapi import HTTPException
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from .metrics import Metrics, route_label
from .models import Batch, Limits

_CHEAP_DOCUMENTS, _CHEAP_TEXT_BYTES = 16, 16 * 1024
"""A query at most this large is answered on the event loop (a thread hop costs more)."""


class QueryLane:
    """``POST /query``, the crawler's hot path, answered straight from ASGI: the body checked
    by the same pydantic model straight from its bytes, the same token, limits and answers as
    the routes (measured: about 3x the requests a second of FastAPI's request handling, which
    costs most of a one-fingerprint lookup). Every other request passes through."""

    def __init__(self, app: Any, answer: Callable[[Batch], bytes], token: str | None, limits: Limits) -> None:
        self.app, self.answer, self.token, self.limits = app, answer, token, limits

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != "/query":
            await self.app(scope, receive, send)
            return
        if self.token is not None:
            given = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            if not token_ok(given, self.token):
                detail = json.dumps({"detail": "missing or wrong bearer token"})
                await _send(send, 401, detail.encode(), [(b"www-authenticate", b"Bearer")])
                return
        body = bytearray()
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > self.limits.max_body_bytes:
                detail = json.dumps({"detail": _body_too_large(self.limits)})
                await _send(send, 413, detail.encode())
                return
            if not message.get("more_body"):
                break
        try:
            batch = Batch.model_validate_json(bytes(body))
        except ValidationError as error:
            await _send(send, 422, invalid_json(error.errors(), ("body",)).encode())
            return
        try:
            # A few fingerprints or short texts: microseconds, answered on the event loop.
            payload = self.answer(batch) if _cheap(batch) else await run_in_threadpool(self.answer, batch)
        except HTTPException as error:
            await _send(send, error.status_code, json.dumps({"detail": error.detail}).encode())
            return
        await _send(send, 200, payload)


class Measured:
    """ASGI middleware: bodies over the limit answered 413 before they are read, and every
    request counted and timed for ``/metrics`` (a plain ASGI wrapper: Starlette's
    ``BaseHTTPMiddleware`` costs a task and a stream per request)."""

    def __init__(self, app: Any, limits: Limits, metrics: Metrics) -> None:
        self.app, self.limits, self.metrics = app, limits, metrics

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        route = route_label(scope["path"])  # unknown paths share one label
        length = dict(scope["headers"]).get(b"content-length", b"")
        if length.isdigit() and int(length) > self.limits.max_body_bytes:
            message = _body_too_large(self.limits)
            await JSONResponse({"detail": message}, status_code=413)(scope, receive, send)
            self.metrics.requests.labels(route, "413").inc()
            return
        status = 500

        async def sent(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        started = time.perf_counter()
        try:
            await self.app(scope, receive, sent)
        finally:
            self.metrics.latency.labels(route).observe(time.perf_counter() - started)
            self.metrics.requests.labels(route, str(status)).inc()


def token_ok(given: str, token: str) -> bool:
    """Whether an ``Authorization`` header carries the bearer ``token`` (in constant time)."""
    return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())


def invalid_json(errors: Any, prefix: tuple[str, ...] = ()) -> str:
    """A 422's body naming each field's path and what is wrong, without echoing the input (a
    body may be megabytes, or hold a lone surrogate that JSON cannot carry as UTF-8)."""
    detail = [{"loc": [*prefix, *e["loc"]], "msg": e["msg"], "type": e["type"]} for e in errors]
    return json.dumps({"detail": detail}, default=str)  # ASCII: any character survives


def _cheap(batch: Batch) -> bool:
    if len(batch.documents) > _CHEAP_DOCUMENTS:
        return False
    return sum(len(d.text) for d in batch.documents if d.text is not None) <= _CHEAP_TEXT_BYTES


def _body_too_large(limits: Limits) -> str:
    return f"the body is over the limit of {limits.max_body_bytes:,} bytes"


async def _send(
    send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    head = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *(headers or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})
