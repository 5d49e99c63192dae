"""The service's plain ASGI layer, in front of FastAPI: every body read under a size limit and
a deadline, and refused unless it is JSON; ``POST /query`` and ``POST /documents`` answered
straight from ASGI (the crawler's hot paths, their bodies parsed off the event loop), every
request counted and timed, and the bodies of the errors both layers send."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import http
import json
import re
import sys
import time
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TextIO

import anyio
from fastapi import HTTPException
from fastapi.concurrency import run_in_threadpool
from pydantic import ValidationError

from .metrics import Metrics, route_label
from .models import Batch, Limits

_CHEAP_DOCUMENTS, _CHEAP_TEXT_BYTES = 16, 16 * 1024
"""A query at most this large is answered on the event loop (a thread hop costs more)."""

_CHEAP_BODY_BYTES = 16 * 1024
"""A body at most this large is parsed on the event loop (at most a few hundred documents:
microseconds); a larger one in a thread, so that a million tiny documents, refused once
counted, never stall the loop (measured: /healthz waited 3-4.5 s)."""

_JSON_MEDIA_TYPE = re.compile(r"application/([^/\s]+\+)?json", re.IGNORECASE)
"""``application/json``, or a type with RFC 6839's ``+json`` suffix (``application/merge-patch+json``)."""

_CLOSE = [(b"connection", b"close")]
"""On an answer sent before the body was read whole: the rest is not read, the connection goes."""


class Lane:
    """``POST /query`` and ``POST /documents``, the crawler's hot paths, answered straight from
    ASGI: the body checked by the same pydantic model straight from its bytes, the same token,
    limits and answers as the routes (measured: about 3x the requests a second of FastAPI's
    request handling, which costs most of a one-fingerprint lookup). A body over
    ``_CHEAP_BODY_BYTES`` is parsed in a thread. A small write is awaited on the event loop
    (``add_soon``: the committer thread answers a whole group with one call into the loop,
    where a thread per request cost a hand-off each way and a wake-up of every waiting
    writer); a larger one is answered from a thread. Every other request passes through."""

    def __init__(
        self,
        app: Any,
        query: Callable[[Batch], bytes],
        add: Callable[[Batch], bytes],
        add_soon: Callable[[Batch], Awaitable[bytes]],
        token: str | None,
        limits: Limits,
    ) -> None:
        self.app, self.token, self.limits = app, token, limits
        self.query, self.add, self.add_soon = query, add, add_soon

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope["path"] if scope["type"] == "http" else None
        if path not in ("/query", "/documents") or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        if self.token is not None:
            given = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            if not token_ok(given, self.token):
                detail = json.dumps({"detail": "missing or wrong bearer token"})
                await _send(send, 401, detail.encode(), [(b"www-authenticate", b"Bearer")])
                return
        message = await receive()  # Measured has read the body whole: one message
        body = message.get("body", b"")
        try:
            if len(body) > _CHEAP_BODY_BYTES:
                answer = self.query if path == "/query" else self.add
                payload = await run_in_threadpool(_parsed_then, answer, body)
            elif path == "/query":
                batch = Batch.model_validate_json(body)
                # A few fingerprints or short texts: microseconds, answered on the event loop.
                payload = self.query(batch) if _cheap(batch) else await run_in_threadpool(self.query, batch)
            else:
                batch = Batch.model_validate_json(body)
                payload = (
                    await self.add_soon(batch) if _cheap(batch) else await run_in_threadpool(self.add, batch)
                )
        except ValidationError as error:
            await _send(send, 422, invalid_json(error.errors(), ("body",)).encode())
            return
        except HTTPException as error:
            await _send(send, error.status_code, json.dumps({"detail": error.detail}).encode())
            return
        await _send(send, 200, payload)


class AccessLog:
    """A line a request on ``stream``, as uvicorn's access log writes it (``INFO:     CLIENT -
    "POST /documents HTTP/1.1" 200 OK``), flushed at most ``delay`` seconds after it is written
    and at a stop. uvicorn's own formats a copy of a logging record and flushes each line: a
    sixth of the event loop's time for single-document writes (measured on 2 cores, 8 writers:
    2,500 acknowledged adds a second with it, 2,930 with this, 2,810 with no log)."""

    def __init__(self, stream: TextIO, delay: float = 0.1) -> None:
        self.stream: TextIO | None = stream
        self.delay = delay
        self._flush_pending = False

    def request(self, scope: dict[str, Any], status: int) -> None:
        if self.stream is None:
            return
        client = scope.get("client")
        path = urllib.parse.quote(scope.get("root_path", "") + scope["path"])  # no line breaks
        if query := scope.get("query_string"):
            path += "?" + query.decode("ascii", "backslashreplace")
        try:
            self.stream.write(
                f"INFO:     {f'{client[0]}:{client[1]}' if client else '-'} - "
                f'"{scope["method"]} {path} HTTP/{scope["http_version"]}" {status} {_phrase(status)}\n'
            )
        except (OSError, ValueError):
            self._gone()
            return
        if not self._flush_pending:
            self._flush_pending = True
            asyncio.get_running_loop().call_later(self.delay, self.flush)

    def flush(self) -> None:
        self._flush_pending = False
        if self.stream is not None:
            try:
                self.stream.flush()
            except (OSError, ValueError):
                self._gone()

    def _gone(self) -> None:
        """The stream broke (a closed pipe, a full disk): the service goes on, unlogged."""
        self.stream = None


@functools.cache
def _phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


class Measured:
    """ASGI middleware, outermost: every request's body read whole before the app sees it, under
    the size limit (counted as it arrives, so a chunked body cannot pass it: 413) and the body
    deadline (408); and every request counted and timed for ``/metrics`` (a plain ASGI wrapper:
    Starlette's ``BaseHTTPMiddleware`` costs a task and a stream per request), and logged to
    ``access_log`` when one is given.

    A request to a route that reads a JSON body (``takes_json(method, path)``) whose content
    type is not JSON is refused (415) before its body is read: a web page can send a form or
    ``text/plain`` to another site without asking it first (a CORS "simple request"), but not
    JSON, so a page the user visits cannot store documents in a service on their machine."""

    def __init__(
        self,
        app: Any,
        limits: Limits,
        metrics: Metrics,
        body_timeout: float = 60.0,
        access_log: AccessLog | None = None,
        takes_json: Callable[[str, str], bool] = lambda method, path: False,
    ) -> None:
        self.app, self.limits, self.metrics, self.body_timeout = app, limits, metrics, body_timeout
        self.access_log, self.takes_json = access_log, takes_json

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        route = route_label(scope["path"])  # unknown paths share one label
        started = time.perf_counter()
        status = 500

        async def sent(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            if self.takes_json(scope["method"], scope["path"]):
                content_type = dict(scope["headers"]).get(b"content-type")
                if not json_media_type(content_type):
                    await _refuse(sent, 415, _not_json(content_type))
                    return
            body = await self._body(scope, receive, sent)
            if body is not None:
                await self.app(scope, _replay(body, receive), sent)
        finally:
            self.metrics.answered(route, status, time.perf_counter() - started)
            if self.access_log is not None:
                self.access_log.request(scope, status)

    async def _body(self, scope: dict[str, Any], receive: Any, send: Any) -> bytes | None:
        """The request's body, or None once it was refused (413 over the limit, 408 late, or the
        client gone)."""
        limit = self.limits.max_body_bytes
        length = dict(scope["headers"]).get(b"content-length", b"")
        if length.isdigit() and int(length) > limit:
            await _refuse(send, 413, _body_too_large(self.limits))
            return None
        chunks, size = [], 0
        try:
            async with _deadline(self.body_timeout):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return None
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > limit:
                        await _refuse(send, 413, _body_too_large(self.limits))
                        return None
                    chunks.append(chunk)
                    if not message.get("more_body"):
                        return b"".join(chunks)
        except TimeoutError:
            await _refuse(send, 408, f"the body did not arrive within {self.body_timeout:g} s")
            return None


if sys.version_info >= (3, 11):
    _deadline = asyncio.timeout  # a few microseconds a request; anyio's cancel scope costs ~15
else:

    @contextlib.asynccontextmanager
    async def _deadline(seconds: float) -> AsyncIterator[None]:
        with anyio.fail_after(seconds):
            yield


def _replay(body: bytes, receive: Any) -> Any:
    """A ``receive`` that hands the app the body read already, then waits on the client."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replayed() -> dict[str, Any]:
        return pending.pop() if pending else await receive()

    return replayed


def _parsed_then(answer: Callable[[Batch], bytes], body: bytes) -> bytes:
    return answer(Batch.model_validate_json(body))


def token_ok(given: str, token: str) -> bool:
    """Whether an ``Authorization`` header carries the bearer ``token`` (compared in constant
    time), its scheme in any case (RFC 7235, sec. 2.1: ``bearer`` is ``Bearer``)."""
    scheme, _, credentials = given.partition(" ")
    given_token = credentials.lstrip(" ")  # RFC 7235: one space or more
    return scheme.lower() == "bearer" and hmac.compare_digest(given_token.encode(), token.encode())


def json_media_type(content_type: bytes | None) -> bool:
    """Whether a ``content-type`` header says JSON, whatever its parameters (``; charset=utf-8``)."""
    media = (content_type or b"").split(b";", 1)[0].strip().decode("latin-1")
    return _JSON_MEDIA_TYPE.fullmatch(media) is not None


def _not_json(content_type: bytes | None) -> str:
    given = "none" if content_type is None else repr(content_type.decode("latin-1")[:100])
    return f"the body must be JSON sent with content-type: application/json (got {given})"


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


async def _refuse(send: Any, status: int, detail: str) -> None:
    """An error answered before the body was read whole: the connection closes after it."""
    await _send(send, status, json.dumps({"detail": detail}).encode(), _CLOSE)


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
