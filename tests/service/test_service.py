"""``neardup serve`` for real: a server process on 127.0.0.1, answers equal to the library's
HammingIndex on the same data, writes that survive SIGKILL, and clear 4xx answers to bad
requests (never a 500)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import neardup
from neardup.planted.generator import planted_corpus


@pytest.fixture(scope="module")
def documents():
    docs = planted_corpus(
        25, variants_per_original=2, edit_rates=(0.0, 0.01, 0.02), scripts=("en", "ru"), seed=9
    )
    return [(d.id, d.text) for d in docs]


def expected_duplicates(
    texts: list[str], stored: list[int], queries: list[str], k: int = 3
) -> list[list[tuple]]:
    """What the library says: for each query, the stored positions within k, nearest first."""
    fp = neardup.Fingerprinter()
    index = neardup.HammingIndex(bits=64, max_distance=k)
    index.add(fp.fingerprint_batch([texts[p] for p in stored]), ids=np.array(stored, dtype=np.int64))
    offsets, found, distance = index.query_batch(fp.fingerprint_batch(queries))
    return [
        list(zip(found[a:b].tolist(), distance[a:b].tolist()))
        for a, b in itertools.pairwise(offsets.tolist())
    ]


def test_lookups_equal_the_library_and_writes_survive_sigkill(server_factory, documents, tmp_path):
    server = server_factory()
    ids = [d for d, _ in documents]
    texts = [t for _, t in documents]
    half = len(texts) // 2
    with server.client() as client:
        body = {"documents": [{"id": ids[p], "text": texts[p], "metadata": {"n": p}} for p in range(half)]}
        first = client.post("/documents", json=body)
        assert first.status_code == 200, first.text
        assert all(r["stored"] for r in first.json()["results"])
        answer = client.post("/query", json={"documents": [{"text": t} for t in texts]}).json()["results"]
    want = expected_duplicates(texts, list(range(half)), texts)
    got = [[(ids.index(d["id"]), d["distance"]) for d in r["duplicates"]] for r in answer]
    assert got == want and any(len(w) > 1 for w in want)
    server.kill()  # acknowledged writes are on disk: nothing to flush
    again = server_factory(data=tmp_path / "data")
    with again.client() as client:
        assert client.get("/stats").json()["documents"] == half
        assert client.get(f"/documents/{ids[3]}").json()["metadata"] == {"n": 3}
        answer = client.post("/query", json={"documents": [{"text": t} for t in texts]}).json()["results"]
        assert [[(ids.index(d["id"]), d["distance"]) for d in r["duplicates"]] for r in answer] == want
        skipped = client.post(
            "/documents", json={"documents": [{"id": "copy", "text": texts[0]}], "skip_if_duplicate": True}
        ).json()["results"][0]
        assert not skipped["stored"] and skipped["duplicates"][0]["id"] == ids[0]
        assert client.delete(f"/documents/{ids[0]}").json()["deleted"]
        assert client.get(f"/documents/{ids[0]}").status_code == 404
        assert client.post("/query", json={"documents": [{"text": texts[0]}]}).json()["results"][0][
            "duplicates"
        ][:1] != [{"id": ids[0], "distance": 0}]
        hexed = client.get(f"/documents/{ids[1]}").json()["fingerprint"]
        by_hex = client.post("/query", json={"documents": [{"fingerprint": hexed}]}).json()["results"][0]
        assert by_hex["duplicates"][0] == {"id": ids[1], "distance": 0}


@pytest.mark.slow
@pytest.mark.parametrize(
    "body, status, words",
    [
        ("{not json", 422, "json"),
        ({"documents": [{"id": "a", "text": "x", "colour": 1}]}, 422, "colour"),
        ({"documents": [{"id": "a", "text": 7}]}, 422, "text"),
        ({"documents": [{"id": "a"}]}, 422, "exactly one of text and fingerprint"),
        ({"documents": []}, 422, "documents"),
        ({"documents": [{"text": "no id"}]}, 422, "documents[0].id is required"),
        ({"documents": [{"id": "a", "fingerprint": "xyz"}]}, 422, "hex"),
        ({"documents": [{"id": "a", "text": "x"}], "bits": 128}, 409, "64-bit"),
        ({"documents": [{"id": "a", "text": "x"}], "max_distance": 9}, 409, "3 at most"),
        ({"documents": [{"id": str(i), "text": "x"} for i in range(6)]}, 413, "batch limit is 5"),
        ({"documents": [{"id": "a", "text": "x" * 3000}]}, 413, "limit of"),
    ],
)
def test_bad_requests_get_a_clear_4xx(server_factory, body, status, words):
    server = server_factory("--max-batch", "5", "--max-body-mb", "0.002")
    # /query is answered by its own lane (_QueryLane): the same checks, the same answers.
    routes = ["/documents"] if "id is required" in words else ["/documents", "/query"]
    with server.client() as client:
        for route in routes:
            if isinstance(body, str):
                response = client.post(route, content=body, headers={"content-type": "application/json"})
            else:
                response = client.post(route, json=body)
            assert response.status_code == status, (route, response.text)
            assert words.lower() in response.text.lower(), route


@pytest.mark.slow
def test_booleans_are_not_numbers_nor_numbers_booleans(server_factory):
    server = server_factory()
    document = {"documents": [{"id": "a", "text": "x"}]}
    wrong = [
        ("max_distance", True, "valid integer"),
        ("max_distance", "1", "valid integer"),
        ("bits", True, "valid integer"),
        ("store", 1, "valid boolean"),
        ("skip_if_duplicate", "yes", "valid boolean"),
    ]
    with server.client() as client:
        for route in ("/documents", "/query"):
            for field, value, words in wrong:
                answer = client.post(route, json={**document, field: value})
                assert answer.status_code == 422, (route, field, value, answer.text)
                detail = answer.json()["detail"][0]
                assert detail["loc"] == ["body", field] and words in detail["msg"], detail
        assert client.get("/stats").json()["documents"] == 0


@pytest.mark.slow
def test_token_settings_metrics_and_openapi(server_factory, tmp_path):
    server = server_factory("--bits", "128", "-k", "10", token="s3cret")
    with server.client() as client:
        assert (
            client.post(
                "/documents", json={"documents": [{"id": "a", "text": "one two three four"}]}
            ).status_code
            == 200
        )
        stats = client.get("/stats").json()
        assert stats["bits"] == 128 and stats["max_distance"] == 10 and stats["documents"] == 1
        assert "neardup_documents_stored_total 1.0" in client.get("/metrics").text
        paths = client.get("/openapi.json").json()["paths"]
        assert "/documents" in paths and "/query" in paths
        found = client.post("/query", json={"documents": [{"text": "one two three four"}]}).json()
        assert found["results"][0]["duplicates"] == [{"id": "a", "distance": 0}]
        assert 'neardup_requests_total{route="query",status="200"} 1.0' in client.get("/metrics").text
    import httpx

    assert httpx.get(f"{server.url}/stats").status_code == 401
    for given in ({}, {"authorization": "Bearer wrong"}):
        refused = httpx.post(f"{server.url}/query", json={"documents": [{"text": "x"}]}, headers=given)
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
    assert httpx.get(f"{server.url}/healthz").status_code == 200
    server.stop()
    with pytest.raises(RuntimeError, match=r"was created in simhash mode \(-k 10\) with"):
        server_factory("--bits", "64", data=tmp_path / "data")


@pytest.mark.slow
def test_restart_from_the_snapshot_plus_what_came_after(server_factory, tmp_path):
    data = tmp_path / "data"
    texts = {f"d{i}": f"a page about item {i} in {i % 5} colours" for i in range(200)}
    server = server_factory(data=data)
    with server.client() as client:
        client.post("/documents", json={"documents": [{"id": k, "text": t} for k, t in texts.items()]})
    server.stop()  # a clean stop saves the snapshot
    assert (data / "index.idx").exists()
    server = server_factory(data=data)
    with server.client() as client:
        assert client.get("/stats").json()["started_from"] == "snapshot"  # not every row again
        more = {f"e{i}": f"another page, number {i}" for i in range(50)}
        client.post("/documents", json={"documents": [{"id": k, "text": t} for k, t in more.items()]})
        for k in ("d1", "d2", "e3"):
            assert client.delete(f"/documents/{k}").status_code == 200
        client.post("/documents", json={"documents": [{"id": "d7", "text": "d7 is now another text"}]})
    server.kill()  # after the snapshot: adds, deletes and a replaced id, none in it
    texts.update(more)
    for k in ("d1", "d2", "e3"):
        del texts[k]
    texts["d7"] = "d7 is now another text"
    server = server_factory(data=data)
    ids = sorted(texts)
    with server.client() as client:
        stats = client.get("/stats").json()
        assert stats["documents"] == len(ids) and stats["started_from"] == "snapshot"
        answer = client.post("/query", json={"documents": [{"text": texts[k]} for k in ids]}).json()[
            "results"
        ]
    fp = neardup.Fingerprinter()
    index = neardup.HammingIndex(bits=64, max_distance=3)
    index.add(fp.fingerprint_batch([texts[k] for k in ids]), ids=np.arange(len(ids)))
    offsets, found, distance = index.query_batch(fp.fingerprint_batch([texts[k] for k in ids]))
    for q, result in enumerate(answer):
        want = sorted((distance[e], ids[found[e]]) for e in range(offsets[q], offsets[q + 1]))
        assert sorted((d["distance"], d["id"]) for d in result["duplicates"]) == want


@pytest.mark.slow
def test_pipelined_requests_are_answered_in_order_each_whole(server_factory):
    """Responses go out through one write each (head and body together): requests sent at
    once on one connection are still answered in order, each head with its own body."""
    import json
    import socket

    server = server_factory()

    def request(path: str, documents: list[dict]) -> bytes:
        body = json.dumps({"documents": documents}).encode()
        head = f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        return f"{head}content-length: {len(body)}\r\n\r\n".encode() + body

    sent = [
        request("/documents", [{"id": "a", "text": "the same page"}]),
        request("/documents", [{"id": "b", "text": "the same page"}]),
        request("/query", [{"text": "the same page"}]),
        b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
    ]
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as connection:
        connection.sendall(b"".join(sent))
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
    bodies = []
    for answer in received.split(b"HTTP/1.1 ")[1:]:
        head, body = answer.split(b"\r\n\r\n", 1)
        assert head.startswith(b"200 OK"), answer
        bodies.append(json.loads(body))
    assert [[d["id"] for d in r["duplicates"]] for b in bodies[:3] for r in b["results"]] == [
        [],
        ["a"],
        ["a", "b"],
    ]
    assert bodies[3] == {"status": "ok"}
