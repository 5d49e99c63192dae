"""``neardup serve``'s HTTP API: "have I seen a near-duplicate of this page? If not, remember it."

FastAPI over a :class:`Store` (SQLite, the record of truth) and an in-memory
:class:`HammingIndex` rebuilt from it at start. A write is answered only once its batch is
committed (on disk); then the index learns it. The OpenAPI document is at ``/openapi.json``.

Requests are checked by pydantic models that forbid unknown fields: a malformed body, an unknown
field or a wrong type is a 422 naming the field's path, never a 500. Limits (body bytes, batch
size, text bytes) are 413 or 422 naming the limit. With a token, every request but ``/healthz``
needs ``Authorization: Bearer TOKEN``.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .._errors import FormatError
from ..fingerprint.fingerprinter import Fingerprinter
from ..index.hamming_index import HammingIndex
from ..io.fingerprint_files import format_hex, parse_hex
from .store import Settings, Store

SNAPSHOT = "index.idx"
"""The index snapshot beside the store, saved at every clean stop."""


class Limits(BaseModel):
    """What one request may hold."""

    max_body_bytes: int = 32 * 2**20
    max_batch: int = 1000
    max_text_bytes: int = 4 * 2**20


class DocumentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, min_length=1, max_length=1024)
    text: str | None = None
    fingerprint: str | None = Field(default=None, description="hex, instead of text")
    metadata: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_source(self) -> DocumentIn:
        if (self.text is None) == (self.fingerprint is None):
            raise ValueError("give exactly one of text and fingerprint")
        if self.id is not None and not _utf8(self.id):
            raise ValueError("id is not valid UTF-8 text (it holds a lone surrogate)")
        return self


class Batch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    documents: list[DocumentIn] = Field(min_length=1)

    @model_validator(mode="after")
    def _distinct_ids(self) -> Batch:
        seen: dict[str, int] = {}
        for p, d in enumerate(self.documents):
            if d.id is not None:
                if d.id in seen:
                    raise ValueError(f"documents[{p}].id repeats documents[{seen[d.id]}].id ({d.id!r})")
                seen[d.id] = p
        return self

    store: bool = True
    skip_if_duplicate: bool = False
    max_distance: int | None = Field(default=None, ge=0)
    bits: int | None = Field(default=None, description="if given, must be the folder's")


class Duplicate(BaseModel):
    id: str
    distance: int


class Result(BaseModel):
    id: str | None
    fingerprint: str
    duplicates: list[Duplicate]
    stored: bool


class Results(BaseModel):
    results: list[Result]


class Service:
    """The state behind the app: the store (the record of truth) and the index of what it holds.

    Readers never wait for writers. Writers take turns (``write_lock``): a batch is looked up,
    committed to the store (the fsync, the slow part), and only then made visible by swapping
    in a changed :meth:`HammingIndex.copy` of the index: one reference assignment, so a reader
    sees the index before the batch or after it, never half of it, and never waits for a
    commit. Lookups read ids through the store's per-thread read connections (SQLite WAL:
    readers proceed during a commit). When the index's delta grows past its compaction size, a
    copy is compacted on a background thread while reads and writes go on, saved as the
    snapshot (so a restart after a crash reads only the rows since), and swapped in once the
    writes made meanwhile are replayed onto it.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.settings = store.settings
        self.fingerprinter = Fingerprinter(self.settings.config)
        self.snapshot_path = store.folder / SNAPSHOT
        restored = self._restored()
        self.started_from = "snapshot" if restored is not None else "store"
        self.index = restored if restored is not None else self._loaded()
        self.index.auto_compact = False  # compaction runs in the background (compact_soon)
        self.write_lock = threading.RLock()
        self._snapshot_lock = threading.Lock()
        # The changes made while a copy is compacted, to replay onto it; None when none is.
        self._replay: list[tuple[str, np.ndarray, np.ndarray | None]] | None = None
        self._compactor: threading.Thread | None = None
        self.compactions = 0

    def change(
        self,
        removed: np.ndarray | None = None,
        added: np.ndarray | None = None,
        keys: np.ndarray | None = None,
    ) -> None:
        """Make a committed change visible: ``removed`` keys leave the index, ``added``
        fingerprints with ``keys`` join it. Call with ``write_lock`` held."""
        index = self.index.copy()
        if removed is not None and removed.size:
            index.remove(removed)
        if added is not None and added.shape[0]:
            index.add(added, ids=keys)
        self.index = index  # the swap: readers see the change whole
        if self._replay is not None:
            if removed is not None and removed.size:
                self._replay.append(("remove", removed, None))
            if added is not None and added.shape[0]:
                self._replay.append(("add", added, keys))
        elif index.compaction_due:
            self.compact_soon()

    def compact_soon(self) -> None:
        """Compact a copy of the index on a background thread (unless one is running)."""
        with self.write_lock:
            if self._replay is not None:
                return
            self._replay = []
            base, marks = self.index.copy(), self.store.marks()
            self._compactor = threading.Thread(
                target=self._compact, args=(base, marks), name="neardup-compact", daemon=True
            )
            self._compactor.start()

    def _compact(self, base: HammingIndex, marks: tuple[int, int]) -> None:
        try:
            base.compact()  # seconds at 10M: reads and writes go on meanwhile
            # Also the snapshot a crash restarts from: it then reads only the rows since.
            self._save(base, marks)
        except BaseException:
            with self.write_lock:
                self._replay = None  # the live index still holds everything; a later change retries
            raise
        with self.write_lock:
            assert self._replay is not None
            for operation, values, keys in self._replay:
                if operation == "remove":
                    base.remove(values)
                else:
                    base.add(values, ids=keys)
            self.index = base
            self._replay = None
            self.compactions += 1

    def wait_for_compaction(self, timeout: float | None = None) -> None:
        """Block until a background compaction, if one is running, has been swapped in."""
        thread = self._compactor
        if thread is not None:
            thread.join(timeout)

    def _loaded(self) -> HammingIndex:
        """The index of every stored row."""
        index = HammingIndex(
            bits=self.settings.config.bits,
            max_distance=self.settings.max_distance,
            fingerprint_config=self.settings.config.to_dict(),  # recorded in the snapshot
        )
        keys, fps = self.store.load()
        if keys.size:
            index.add(fps, ids=keys)
            index.compact()
        return index

    def _restored(self) -> HammingIndex | None:
        """The last snapshot (memory-mapped) plus the rows added and removed since; None when
        there is no usable snapshot."""
        marks = self.store.snapshot()
        if marks is None or not self.snapshot_path.exists():
            return None
        try:
            index = HammingIndex.open(self.snapshot_path, fingerprint_config=self.settings.config.to_dict())
        except (FormatError, OSError) as error:
            # A damaged or foreign snapshot: the store holds everything.
            logging.getLogger("neardup.serve").warning(
                "not using %s (%s); loading every row", self.snapshot_path, error
            )
            return None
        # The snapshot file is written before its marks, so it may be newer than they say (a
        # crash between the two): keys are never reused, so remove the removed keys it still
        # holds and add the later rows it lacks.
        gone = np.unique(self.store.removed_after(marks["seq"]))
        keys, fps = self.store.load(after=marks["key"])
        held = index.ids if gone.size or keys.size else np.zeros(0, np.int64)
        gone = gone[np.isin(gone, held)]
        if gone.size:
            index.remove(gone)
        new = ~np.isin(keys, held)
        if new.any():
            index.add(fps[new], ids=keys[new])
        return index

    def snapshot(self) -> None:
        """Save the index beside the store (atomically) and record where it stands, so the next
        start reads only what came after (a clean stop)."""
        with self.write_lock:
            self._save(self.index, self.store.marks())

    def _save(self, index: HammingIndex, marks: tuple[int, int]) -> None:
        """Write ``index`` (the store's state at ``marks``) as the snapshot: the file first,
        then its marks, one save at a time."""
        with self._snapshot_lock:
            index.save(self.snapshot_path)
            self.store.set_snapshot(*marks)

    def fingerprints(self, documents: list[DocumentIn], limits: Limits) -> np.ndarray:
        bits = self.settings.config.bits
        words = bits // 64
        out = np.zeros((len(documents), words), dtype=np.uint64)
        texts = [(p, d.text) for p, d in enumerate(documents) if d.text is not None]
        for p, text in texts:
            if len(text.encode("utf-8", "surrogatepass")) > limits.max_text_bytes:
                raise HTTPException(
                    413, f"documents[{p}].text is over the limit of {limits.max_text_bytes:,} bytes"
                )
        if texts:
            fps = self.fingerprinter.fingerprint_batch([t for _, t in texts], n_jobs=1)
            out[[p for p, _ in texts]] = fps.reshape(len(texts), words)
        for p, d in enumerate(documents):
            if d.fingerprint is not None:
                out[p] = _parse_hex(d.fingerprint, bits, f"documents[{p}].fingerprint")
        return out

    def add(self, batch: Batch, fps: np.ndarray, k: int) -> tuple[list[list[dict[str, Any]]], list[bool]]:
        """Look each fingerprint up, then store the documents the batch asks to store: (each
        one's near-duplicates, whether it was stored), answered once on disk."""
        with self.write_lock:
            found = self.lookup(fps, k)
            keep = [batch.store and not (batch.skip_if_duplicate and dups) for dups in found]
            chosen = [p for p, ok in enumerate(keep) if ok]
            new = [(str(batch.documents[p].id), _words(fps[p]), batch.documents[p].metadata) for p in chosen]
            if new:
                keys, replaced = self.store.add(new)  # committed: on disk from here
                rows = fps[chosen]
                self.change(
                    np.array(replaced, dtype=np.int64),
                    rows if rows.shape[1] == 2 else rows[:, 0],
                    np.array(keys, dtype=np.int64),
                )
        return found, keep

    def delete(self, doc_id: str) -> bool:
        """Remove a document from the store, then from the index; False when there was none."""
        with self.write_lock:
            key = self.store.delete(doc_id)
            if key is None:
                return False
            self.change(removed=np.array([key], dtype=np.int64))
        return True

    def lookup(
        self, fps: np.ndarray, k: int, index: HammingIndex | None = None
    ) -> list[list[dict[str, Any]]]:
        """Each fingerprint's stored near-duplicates (id, distance), nearest first, in ``index``
        (default the one visible now; a reader takes no lock)."""
        index = self.index if index is None else index
        query = fps if fps.shape[1] == 2 else fps[:, 0]
        offsets, found, distance = index.query_batch(np.ascontiguousarray(query), max_distance=k)
        names = self.store.by_keys(sorted(set(found.tolist())))
        found_ids, found_distances = found.tolist(), distance.tolist()
        return [
            [{"id": names[f], "distance": d} for f, d in zip(found_ids[a:b], found_distances[a:b])]
            for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())
        ]


def create_app(store: Store, *, token: str | None = None, limits: Limits | None = None) -> FastAPI:
    """The ASGI app over ``store``; ``token`` guards every route but ``/healthz``."""
    limits = limits or Limits()
    service = Service(store)
    registry = CollectorRegistry()
    requests = Counter("neardup_requests", "HTTP requests", ["route", "status"], registry=registry)
    stored = Counter("neardup_documents_stored", "documents stored", registry=registry)
    queried = Counter("neardup_documents_looked_up", "documents looked up", registry=registry)
    size = Gauge("neardup_documents", "documents stored now", registry=registry)
    latency = Histogram("neardup_request_seconds", "request latency", ["route"], registry=registry)
    size.set(len(service.index))

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        service.snapshot()  # a clean stop: the next start reads the snapshot, not every row

    app = FastAPI(
        title="neardup",
        description="Near-duplicate lookup and storage (SimHash, Hamming radius).",
        lifespan=lifespan,
    )

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> Response:
        """422 naming each field's path and what is wrong, without echoing the input (a body
        may be megabytes, or hold a lone surrogate that JSON cannot carry as UTF-8)."""
        return Response(_invalid(error.errors()), status_code=422, media_type="application/json")

    async def authorized(request: Request) -> None:  # async: no thread hop per request
        if token is None:
            return
        if not _token_ok(request.headers.get("authorization", ""), token):
            raise HTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})

    def radius(batch: Batch) -> int:
        settings: Settings = service.settings
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

    @app.post("/documents", response_model=Results, dependencies=[Depends(authorized)])
    def add(batch: Batch) -> Response:
        """Look each document up, then store it (unless ``store`` is false, or
        ``skip_if_duplicate`` and a near-duplicate was found); answered once on disk."""
        k = radius(batch)
        for p, d in enumerate(batch.documents):
            if d.id is None and batch.store:
                raise HTTPException(422, f"documents[{p}].id is required to store a document")
        fps = service.fingerprints(batch.documents, limits)
        found, keep = service.add(batch, fps, k)
        stored.inc(sum(keep))
        queried.inc(len(fps))
        size.set(len(service.index))
        return Response(_results(batch, fps, found, keep), media_type="application/json")

    def answer_query(batch: Batch) -> bytes:
        """The answer to ``POST /query``: the same lookup as ``/documents``, storing nothing."""
        k = radius(batch)
        fps = service.fingerprints(batch.documents, limits)
        found = service.lookup(fps, k)  # no lock: a reader never waits for a writer
        queried.inc(len(fps))
        return _results(batch, fps, found, [False] * len(fps))

    @app.post("/query", response_model=Results, dependencies=[Depends(authorized)])
    async def query(batch: Batch) -> Response:
        """The same lookup, storing nothing."""
        # Requests are answered by _QueryLane; this route describes /query in the OpenAPI
        # document and answers the same where the lane is bypassed.
        return Response(await run_in_threadpool(answer_query, batch), media_type="application/json")

    app.add_middleware(_QueryLane, answer=answer_query, token=token, limits=limits)
    app.add_middleware(_Measured, limits=limits, requests=requests, latency=latency)  # outermost

    @app.get("/documents/{doc_id}", dependencies=[Depends(authorized)])
    def get(doc_id: str) -> dict[str, Any]:
        row = service.store.get(doc_id)
        if row is None:
            raise HTTPException(404, f"no document {doc_id!r}")
        words = np.array(row.words, dtype=np.int64).view(np.uint64)
        return {"id": row.id, "fingerprint": _hex(words), "metadata": row.metadata}

    @app.delete("/documents/{doc_id}", dependencies=[Depends(authorized)])
    def delete(doc_id: str) -> dict[str, Any]:
        if not service.delete(doc_id):
            raise HTTPException(404, f"no document {doc_id!r}")
        size.set(len(service.index))
        return {"id": doc_id, "deleted": True}

    @app.get("/stats", dependencies=[Depends(authorized)])
    def stats() -> dict[str, Any]:
        settings = service.settings
        return {
            "documents": len(service.index),
            "bits": settings.config.bits,
            "max_distance": settings.max_distance,
            "config": settings.config.to_dict(),
            "index_bytes": service.index.nbytes,
            "started_from": service.started_from,
        }

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/metrics", dependencies=[Depends(authorized)])
    def metrics() -> PlainTextResponse:
        return PlainTextResponse(generate_latest(registry).decode(), media_type=CONTENT_TYPE_LATEST)

    return app


_CHEAP_DOCUMENTS, _CHEAP_TEXT_BYTES = 16, 16 * 1024
"""A query at most this large is answered on the event loop (a thread hop costs more)."""


def _cheap(batch: Batch) -> bool:
    if len(batch.documents) > _CHEAP_DOCUMENTS:
        return False
    return sum(len(d.text) for d in batch.documents if d.text is not None) <= _CHEAP_TEXT_BYTES


def _results(batch: Batch, fps: np.ndarray, found: list[list[dict[str, Any]]], stored: list[bool]) -> bytes:
    """The answer to a batch, in order: the ``Results`` schema, serialised directly."""
    results = [
        {"id": d.id, "fingerprint": _hex(fps[p]), "duplicates": found[p], "stored": stored[p]}
        for p, d in enumerate(batch.documents)
    ]
    return json.dumps({"results": results}, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _body_too_large(limits: Limits) -> str:
    return f"the body is over the limit of {limits.max_body_bytes:,} bytes"


def _token_ok(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())


def _invalid(errors: Any, prefix: tuple[str, ...] = ()) -> str:
    """A 422's body naming each field's path and what is wrong, without echoing the input (a
    body may be megabytes, or hold a lone surrogate that JSON cannot carry as UTF-8)."""
    detail = [{"loc": [*prefix, *e["loc"]], "msg": e["msg"], "type": e["type"]} for e in errors]
    return json.dumps({"detail": detail}, default=str)  # ASCII: any character survives


class _QueryLane:
    """``POST /query``, the crawler's hot path, answered straight from ASGI: the body checked
    by the same pydantic model straight from its bytes, the same token, limits and answers as
    the routes (measured: about 3x the requests a second of FastAPI's request handling, which
    costs most of a one-fingerprint lookup). Every other request passes through."""

    def __init__(self, app: Any, answer: Any, token: str | None, limits: Limits) -> None:
        self.app, self.answer, self.token, self.limits = app, answer, token, limits

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != "/query":
            await self.app(scope, receive, send)
            return
        if self.token is not None:
            given = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            if not _token_ok(given, self.token):
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
            await _send(send, 422, _invalid(error.errors(), ("body",)).encode())
            return
        try:
            # A few fingerprints or short texts: microseconds, answered on the event loop.
            payload = self.answer(batch) if _cheap(batch) else await run_in_threadpool(self.answer, batch)
        except HTTPException as error:
            await _send(send, error.status_code, json.dumps({"detail": error.detail}).encode())
            return
        await _send(send, 200, payload)


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


class _Measured:
    """ASGI middleware: bodies over the limit answered 413 before they are read, and every
    request counted and timed for ``/metrics`` (a plain ASGI wrapper: Starlette's
    ``BaseHTTPMiddleware`` costs a task and a stream per request)."""

    def __init__(self, app: Any, limits: Limits, requests: Counter, latency: Histogram) -> None:
        self.app, self.limits, self.requests, self.latency = app, limits, requests, latency

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        route = scope["path"].split("/")[1] or "/"
        length = dict(scope["headers"]).get(b"content-length", b"")
        if length.isdigit() and int(length) > self.limits.max_body_bytes:
            message = _body_too_large(self.limits)
            await JSONResponse({"detail": message}, status_code=413)(scope, receive, send)
            self.requests.labels(route, "413").inc()
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
            self.latency.labels(route).observe(time.perf_counter() - started)
            self.requests.labels(route, str(status)).inc()


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _words(fp: np.ndarray) -> tuple[int, ...]:
    return tuple(int(w) for w in fp.view(np.int64))


def _hex(fp: np.ndarray) -> str:
    """A fingerprint's hex, as ``neardup fingerprint`` writes it (high word first)."""
    return format_hex(
        fp.astype(np.uint64).reshape(1, -1) if fp.shape[-1] == 2 else fp.astype(np.uint64).reshape(-1)
    )[0]


def _parse_hex(text: str, bits: int, where: str) -> np.ndarray:
    if any(c not in "0123456789abcdefABCDEF" for c in text):
        raise HTTPException(422, f"{where} must be hex digits (a {bits}-bit fingerprint)")
    try:
        return parse_hex(text, bits)
    except ValueError as error:
        raise HTTPException(422, f"{where}: {error}") from None
