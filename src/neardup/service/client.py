"""A small Python client of ``neardup serve``, over httpx.

>>> client = neardup.Client("http://127.0.0.1:8000", token="...")   # doctest: +SKIP
>>> client.add([{"id": "u1", "text": "the page"}])                  # doctest: +SKIP
[{'id': 'u1', 'fingerprint': '...', 'duplicates': [], 'stored': True}]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

import httpx

from .._errors import ServiceError


class Client:
    """Talks to a ``neardup serve`` at ``url``; documents go in batches of ``batch_size``.

    Each document is a dict: ``id``, and ``text`` or ``fingerprint`` (hex), optional
    ``metadata``. A 4xx or 5xx answer raises :class:`neardup.ServiceError` with the server's
    reason."""

    def __init__(
        self, url: str, token: str | None = None, *, batch_size: int = 500, timeout: float = 60
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout)
        self.batch_size = batch_size

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def add(
        self, documents: Iterable[dict[str, Any]], *, store: bool = True, skip_if_duplicate: bool = False
    ) -> list[dict[str, Any]]:
        """Look each document up and store it (see ``POST /documents``); one result each."""
        return self._batches(
            "/documents", documents, {"store": store, "skip_if_duplicate": skip_if_duplicate}
        )

    def query(
        self, documents: Iterable[dict[str, Any]], *, max_distance: int | None = None
    ) -> list[dict[str, Any]]:
        """Look each document up, storing nothing (``POST /query``)."""
        extra = {} if max_distance is None else {"max_distance": max_distance}
        return self._batches("/query", documents, extra)

    def passages(self, documents: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The passages stored documents share with each document (``POST /passages``, a
        ``--passages`` service): ``{"text": ...}`` or a stored ``{"id": ...}``; one result each."""
        return self._batches("/passages", documents, {})

    def get(self, doc_id: str) -> dict[str, Any] | None:
        """A stored document's id, fingerprint and metadata; None when there is none."""
        response = self._http.get(document_path(doc_id))
        if response.status_code == 404:
            return None
        return _checked(response)

    def delete(self, doc_id: str) -> bool:
        """Remove a stored document; False when there was none."""
        response = self._http.delete(document_path(doc_id))
        if response.status_code == 404:
            return False
        _checked(response)
        return True

    def stats(self) -> dict[str, Any]:
        return _checked(self._http.get("/stats"))

    def _batches(
        self, route: str, documents: Iterable[dict[str, Any]], extra: dict[str, Any]
    ) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []
        batch: list[dict[str, Any]] = []
        for document in documents:
            batch.append(document)
            if len(batch) == self.batch_size:
                results += _checked(self._http.post(route, json={"documents": batch, **extra}))["results"]
                batch = []
        if batch:
            results += _checked(self._http.post(route, json={"documents": batch, **extra}))["results"]
        return results


def document_path(doc_id: str) -> str:
    """The path of a stored document: its id percent-encoded as one segment, so that an id with
    ``/``, ``?`` or ``#`` names itself, never another route, a query or a fragment. ``.`` and
    ``..`` are encoded too: httpx (RFC 3986) would otherwise resolve them as dot segments."""
    if doc_id in (".", ".."):
        return "/documents/" + doc_id.replace(".", "%2E")
    return "/documents/" + quote(doc_id, safe="")


def _checked(response: httpx.Response) -> Any:
    if response.status_code >= 400:
        try:
            detail = response.json().get("detail", response.text)
        except ValueError:
            detail = response.text
        raise ServiceError(
            f"{response.request.method} {response.request.url.path}: {response.status_code} {detail}"
        )
    return response.json()
