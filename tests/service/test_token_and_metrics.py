"""With ``--token``, the OpenAPI schema needs it too, and its scheme ``Bearer`` may be in any
case; ``/metrics`` keeps one label for every path no route serves. Against real ``neardup
serve`` processes."""

from __future__ import annotations

import httpx
import pytest

from neardup.service.app import create_app
from neardup.service.metrics import route_label
from neardup.service.store import Store

UNKNOWN = 300


@pytest.mark.slow
def test_the_schema_needs_the_token_and_unknown_paths_share_a_label(server_factory):
    server = server_factory(token="s3cret")
    with server.client() as client:
        assert "/documents" in client.get("/openapi.json").json()["paths"]
        size = len(client.get("/metrics").content)
        for i in range(UNKNOWN // 2):
            assert client.get(f"/no/such/route/{i}").status_code == 404
            assert httpx.get(f"{server.url}/probe-{i}?q={i}").status_code == 404  # no token
        metrics = client.get("/metrics").text
    assert f'neardup_requests_total{{route="other",status="404"}} {float(UNKNOWN)}' in metrics
    assert "probe" not in metrics and "no/such" not in metrics
    assert len(metrics) - size < 4096  # one label's worth, not one per path (~2 KB each)
    for path in ("/openapi.json", "/docs", "/redoc"):
        for given in ({}, {"authorization": "Bearer wrong"}):
            refused = httpx.get(f"{server.url}{path}", headers=given)
            assert refused.status_code in (401, 404), (path, refused.status_code)
            assert "paths" not in refused.text and "swagger" not in refused.text.lower()


@pytest.mark.slow
def test_without_a_token_the_schema_and_its_pages_answer(server_factory):
    server = server_factory()
    for path, words in (("/openapi.json", '"/documents"'), ("/docs", "swagger"), ("/redoc", "redoc")):
        answer = httpx.get(f"{server.url}{path}")
        assert answer.status_code == 200 and words in answer.text.lower(), path


def test_every_route_of_the_app_has_a_label_of_its_own(tmp_path):
    store = Store(tmp_path / "data")
    try:
        for token in (None, "t"):
            paths = [route.path for route in create_app(store, token=token).routes]
            assert "/documents/{doc_id:path}" in paths
            assert [p for p in paths if route_label(p) == "other"] == []
    finally:
        store.close()
    assert {route_label(p) for p in ("/", "/x", "/documentsx", "//documents", "")} == {"other"}


@pytest.mark.slow
def test_the_bearer_scheme_is_in_any_case(server_factory):
    server = server_factory(token="s3cret")
    body = {"documents": [{"text": "x"}]}
    # /query is answered by asgi.Lane, /stats by FastAPI's route: one check for both.
    for given in ("bearer s3cret", "BEARER s3cret", "bEaReR s3cret", "Bearer  s3cret"):
        headers = {"authorization": given}
        assert httpx.post(f"{server.url}/query", json=body, headers=headers).status_code == 200, given
        assert httpx.get(f"{server.url}/stats", headers=headers).status_code == 200, given
    for given in ("Basic s3cret", "bearer", "bearers3cret", "bearer S3CRET", "bearer s3cret2", "s3cret"):
        headers = {"authorization": given}
        assert httpx.post(f"{server.url}/query", json=body, headers=headers).status_code == 401, given
        assert httpx.get(f"{server.url}/stats", headers=headers).status_code == 401, given
