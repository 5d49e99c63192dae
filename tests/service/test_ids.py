"""Ids of any characters through every route of a real ``neardup serve``: URLs (``/``), ``?``,
``#``, dot segments, spaces and other scripts, by ``neardup.Client`` and by raw HTTP."""

from __future__ import annotations

import httpx
import pytest
from server_process import Server

import neardup
from neardup.service.client import document_path

URL_ID = "https://a.example/1"
ODD_IDS = [
    URL_ID,
    "https://a.example/search?q=trains&page=2#results",
    "a?b",
    "x#frag",
    "../stats",
    "..",
    ".",
    "a/../b",
    "a//b/",
    "/leading",
    "%2F already encoded",
    "with space and caf\u00e9 \u4f60\u597d",
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    started = Server(tmp_path_factory.mktemp("ids") / "data").start()
    yield started
    started.stop()


TOPICS = ["trains", "rivers", "gardens", "birds"]


def text_of(p: int) -> str:
    return f"page number {p} about {TOPICS[p % 4]} and its many neighbours {p * 7}"


def test_ids_of_any_characters_round_trip_through_the_client(server):
    with neardup.Client(server.url) as client:
        added = client.add({"id": i, "text": text_of(p), "metadata": {"p": p}} for p, i in enumerate(ODD_IDS))
        assert [r["id"] for r in added] == ODD_IDS and all(r["stored"] for r in added)
        for p, doc_id in enumerate(ODD_IDS):
            got = client.get(doc_id)
            assert got is not None, doc_id
            assert got["id"] == doc_id and got["metadata"] == {"p": p}
            (found,) = client.query([{"text": text_of(p)}])
            assert found["duplicates"][0] == {"id": doc_id, "distance": 0}
        for doc_id in ODD_IDS:
            assert client.delete(doc_id), doc_id
            assert client.get(doc_id) is None and not client.delete(doc_id)
        assert client.stats()["documents"] == 0


def test_the_client_never_reaches_another_document_or_route(server):
    with neardup.Client(server.url) as client:
        client.add([{"id": i, "text": text_of(p)} for p, i in enumerate(["x", "a", "stats", "b"])])
        assert not client.delete("x#frag")  # not "x" with a fragment
        assert client.get("x") is not None
        assert client.get("a?b") is None  # not "a" with a query
        assert client.get("../stats") is None  # not the stats route
        assert client.get("..") is None and client.get(".") is None
        assert client.get("a/../b") is None  # not "b"
        assert client.get("stats")["id"] == "stats"
        for doc_id in ("x", "a", "stats", "b"):
            assert client.delete(doc_id)


@pytest.mark.parametrize(
    "path",
    [
        "/documents/https://a.example/1",  # the id as it is: a path parameter takes slashes
        "/documents/https%3A%2F%2Fa.example%2F1",  # percent-encoded as one segment
        "/documents/https:%2F%2Fa.example/1",
    ],
)
def test_raw_http_reads_and_deletes_a_url_id(server, path):
    with httpx.Client(base_url=server.url) as http:
        body = {"documents": [{"id": URL_ID, "text": text_of(1), "metadata": {"site": "a"}}]}
        assert http.post("/documents", json=body).status_code == 200
        got = http.get(path)
        assert got.status_code == 200, got.text
        assert got.json()["id"] == URL_ID and got.json()["metadata"] == {"site": "a"}
        assert http.delete(path).json() == {"id": URL_ID, "deleted": True}
        assert http.get(path).status_code == 404


def test_document_path_encodes_an_id_as_one_segment():
    assert document_path(URL_ID) == "/documents/https%3A%2F%2Fa.example%2F1"
    assert document_path("x#frag") == "/documents/x%23frag"
    assert document_path("..") == "/documents/%2E%2E"
    request = httpx.Client(base_url="http://127.0.0.1:1").build_request("GET", document_path("."))
    assert request.url.raw_path == b"/documents/%2E"
