"""The HTTP API's routes: each one checks what the request asks against the service's settings
and limits, calls :class:`Service`, counts what it did and answers."""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Iterator
from typing import Any

import numpy as np
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from .asgi import invalid_json, token_ok
from .metrics import Metrics
from .models import Batch, Limits, PassageBatch, PassageResults, Results, fingerprint_hex, results_json
from .state import Service
from .store import StoreFullError


def add_routes(app: FastAPI, service: Service, metrics: Metrics, limits: Limits, token: str | None) -> None:
    """Every route of the API on ``app``; ``token`` guards every one but ``/healthz``."""

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> Response:
        """422 naming each field's path and what is wrong, without echoing the input."""
        return Response(invalid_json(error.errors()), status_code=422, media_type="application/json")

    async def authorized(request: Request) -> None:  # async: no thread hop per request
        if token is None:
            return
        if not token_ok(request.headers.get("authorization", ""), token):
            raise HTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})

    @app.post("/documents", response_model=Results, dependencies=[Depends(authorized)])
    def add(batch: Batch) -> Response:
        """Look each document up, then store it (unless ``store`` is false, or
        ``skip_if_duplicate`` and a near-duplicate was found); answered once on disk."""
        # Requests are answered by asgi.Lane (the body parsed off the event loop); this route
        # describes /documents in the OpenAPI document and answers the same where it is bypassed.
        return Response(answer_add(service, metrics, limits, batch), media_type="application/json")

    answer = functools.partial(answer_query, service, metrics, limits)

    @app.post("/query", response_model=Results, dependencies=[Depends(authorized)])
    async def query(batch: Batch) -> Response:
        """The same lookup, storing nothing."""
        # Requests are answered by asgi.QueryLane; this route describes /query in the OpenAPI
        # document and answers the same where the lane is bypassed.
        return Response(await run_in_threadpool(answer, batch), media_type="application/json")

    @app.post("/passages", response_model=PassageResults, dependencies=[Depends(authorized)])
    def passages(batch: PassageBatch) -> Response:
        """The passages stored documents share with each text (passages mode, --passages)."""
        if len(batch.documents) > limits.max_batch:
            raise HTTPException(
                413, f"{len(batch.documents):,} documents: the batch limit is {limits.max_batch:,}"
            )
        results = service.passages(batch.documents, limits)
        metrics.queried.inc(len(results))
        body = json.dumps({"results": results}, ensure_ascii=False, separators=(",", ":"))
        return Response(body.encode("utf-8"), media_type="application/json")

    # {doc_id:path}: an id may hold "/" (a URL). Clients percent-encode the id as one segment
    # ("?" and "#" would start a query or a fragment); the server decodes it before routing.
    @app.get("/documents/{doc_id:path}", dependencies=[Depends(authorized)])
    def get(doc_id: str) -> dict[str, Any]:
        row = service.store.get(doc_id)
        if row is None:
            raise HTTPException(404, f"no document {doc_id!r}")
        words = np.array(row.words, dtype=np.int64).view(np.uint64)
        return {"id": row.id, "fingerprint": fingerprint_hex(words), "metadata": row.metadata}

    @app.delete("/documents/{doc_id:path}", dependencies=[Depends(authorized)])
    def delete(doc_id: str) -> dict[str, Any]:
        with disk_full_is_507():
            deleted = service.delete(doc_id)
        if not deleted:
            raise HTTPException(404, f"no document {doc_id!r}")
        metrics.size.set(len(service.index))
        return {"id": doc_id, "deleted": True}

    @app.get("/stats", dependencies=[Depends(authorized)])
    def stats() -> dict[str, Any]:
        settings = service.settings
        return {
            "documents": len(service.index),
            "mode": settings.mode,
            "bits": settings.config.bits,
            "max_distance": settings.max_distance,
            "config": settings.config.to_dict(),
            "index_bytes": service.index.nbytes,
            "started_from": service.started_from,
            **service.stats(),
        }

    if token is not None:
        # The schema behind the token too. /docs and /redoc stay off: a browser's page cannot
        # send the bearer token with its own fetch of the schema.
        @app.get("/openapi.json", include_in_schema=False, dependencies=[Depends(authorized)])
        def openapi() -> JSONResponse:
            return JSONResponse(app.openapi())

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/metrics", dependencies=[Depends(authorized)])
    def metrics_text() -> PlainTextResponse:
        return PlainTextResponse(metrics.text(), media_type=CONTENT_TYPE_LATEST)


def answer_add(service: Service, metrics: Metrics, limits: Limits, batch: Batch) -> bytes:
    """The answer to ``POST /documents``: each document looked up, then stored as the batch
    asks, answered once on disk (call it off the event loop: it waits for the commit)."""
    k = add_radius(service, limits, batch)
    fps = service.fingerprints(batch.documents, limits)
    with disk_full_is_507():
        found, keep = service.add(batch, fps, k)
    return added(service, metrics, batch, fps, found, keep)


async def answer_add_soon(service: Service, metrics: Metrics, limits: Limits, batch: Batch) -> bytes:
    """:func:`answer_add` on the event loop, for a small batch: checked here, its texts
    fingerprinted by the committer with the rest of its group, and no thread waits for it."""
    k = add_radius(service, limits, batch)
    fps, texts = service.prepare(batch.documents, limits)
    with disk_full_is_507():
        found, keep = await service.add_soon(batch, fps, k, texts)
    return added(service, metrics, batch, fps, found, keep)


def add_radius(service: Service, limits: Limits, batch: Batch) -> int:
    """:func:`radius`, once every document to store has an id."""
    k = radius(service, limits, batch)
    for p, d in enumerate(batch.documents):
        if d.id is None and batch.store:
            raise HTTPException(422, f"documents[{p}].id is required to store a document")
    return k


def added(
    service: Service,
    metrics: Metrics,
    batch: Batch,
    fps: np.ndarray,
    found: list[list[dict[str, Any]]],
    keep: list[bool],
) -> bytes:
    """A committed write counted, and its answer."""
    metrics.stored.inc(sum(keep))
    metrics.queried.inc(len(fps))
    metrics.size.set(len(service.index))
    return results_json(batch, fps, found, keep)


def answer_query(service: Service, metrics: Metrics, limits: Limits, batch: Batch) -> bytes:
    """The answer to ``POST /query``: the same lookup as ``/documents``, storing nothing."""
    k = radius(service, limits, batch)
    fps, found, truncated = service.search(batch.documents, limits, k)  # no lock: never waits for a writer
    metrics.queried.inc(len(fps))
    return results_json(batch, fps, found, [False] * len(fps), truncated)


@contextlib.contextmanager
def disk_full_is_507() -> Iterator[None]:
    """A write that found the disk full: 507 Insufficient Storage naming the cause (the store
    has rolled it back), not a bare 500."""
    try:
        yield
    except StoreFullError as error:
        raise HTTPException(507, str(error)) from None


def radius(service: Service, limits: Limits, batch: Batch) -> int:
    """The Hamming radius ``batch`` asks for, once its bits, radius and size are allowed."""
    settings = service.settings
    if settings.jaccard is not None and batch.max_distance is not None:
        raise HTTPException(
            409,
            f"max_distance={batch.max_distance}: this service answers by word-shingle Jaccard "
            f"(--jaccard {settings.jaccard:g}), not by a Hamming radius; leave max_distance out",
        )
    if batch.bits is not None and batch.bits != settings.config.bits:
        raise HTTPException(
            409, f"bits={batch.bits}: this service stores {settings.config.bits}-bit fingerprints"
        )
    k = settings.max_distance if batch.max_distance is None else batch.max_distance
    if k > settings.max_distance:
        raise HTTPException(409, f"max_distance={k}: this service serves {settings.max_distance} at most")
    if len(batch.documents) > limits.max_batch:
        raise HTTPException(
            413, f"{len(batch.documents):,} documents: the batch limit is {limits.max_batch:,}"
        )
    return k
