"""A web page cannot write to a ``neardup serve`` on the user's machine: a page may send a form
or ``text/plain`` anywhere without asking first, but not JSON, and every body must be JSON. A
server reachable from other machines without a token says so when it starts."""

from __future__ import annotations

import re

import httpx
import pytest

DOCUMENT = b'{"documents": [{"id": "csrf", "text": "x"}]}'


@pytest.mark.slow
@pytest.mark.parametrize("route", ["/documents", "/query"])
def test_a_body_that_is_not_json_is_refused_unread(server_factory, route):
    server = server_factory()
    refused = {
        "text/plain": "'text/plain'",
        "application/x-www-form-urlencoded": "'application/x-www-form-urlencoded'",
        "multipart/form-data; boundary=x": "'multipart/form-data; boundary=x'",
        "text/json": "'text/json'",
        "application/jsonx": "'application/jsonx'",
        None: "none",
    }
    with httpx.Client(base_url=server.url, timeout=60) as client:
        for content_type, shown in refused.items():
            headers = {} if content_type is None else {"content-type": content_type}
            answer = client.post(route, content=DOCUMENT, headers=headers)
            assert answer.status_code == 415, (content_type, answer.text)
            assert answer.json()["detail"] == (
                f"the body must be JSON sent with content-type: application/json (got {shown})"
            )
        assert client.get("/documents/csrf").status_code == 404
        assert client.get("/stats").json()["documents"] == 0
        for content_type in ("application/json", "Application/JSON; charset=utf-8", "application/x+json"):
            answer = client.post(route, content=DOCUMENT, headers={"content-type": content_type})
            assert answer.status_code == 200, (content_type, answer.text)
        metrics = client.get("/metrics").text
    label = route.strip("/")
    assert f'neardup_requests_total{{route="{label}",status="415"}} 6.0' in metrics


def _warned(log: str) -> bool:
    return re.search(r"^neardup: warning: http://\S+ is reachable from other machines", log, re.M) is not None


@pytest.mark.slow
def test_serving_other_machines_without_a_token_warns(server_factory, tmp_path):
    everywhere = server_factory("--host", "0.0.0.0", data=tmp_path / "a")
    assert _warned(everywhere.log()), everywhere.log()
    assert "set --token (or $NEARDUP_TOKEN)" in everywhere.log()
    guarded = server_factory("--host", "0.0.0.0", data=tmp_path / "b", token="s3cret")
    local = server_factory(data=tmp_path / "c")
    assert not _warned(guarded.log()) and not _warned(local.log())
