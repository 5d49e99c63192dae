"""No request body makes ``neardup serve`` answer 500: hypothesis sends arbitrary JSON and
near-valid documents to a real server process, in each mode and to each route that reads a
body, and every answer is a 2xx or a 4xx."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_process import Server

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
FIELD = st.sampled_from(["id", "text", "fingerprint", "metadata", "extra"])
DOCUMENT = st.dictionaries(FIELD, JSON | st.text(max_size=40), max_size=4)
BODY = st.fixed_dictionaries(
    {"documents": st.lists(DOCUMENT, max_size=4)},
    optional={"store": JSON, "skip_if_duplicate": JSON, "max_distance": JSON, "bits": JSON},
)


@pytest.fixture(
    scope="module", params=[(), ("--jaccard", "0.8"), ("--passages",)], ids=["simhash", "jaccard", "passages"]
)
def server(request, tmp_path_factory):
    running = Server(tmp_path_factory.mktemp("fuzz") / "data", "--max-batch", "3", *request.param).start()
    yield running
    running.stop()


@pytest.mark.slow  # a real server and 150 drawn bodies
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=BODY | JSON, route=st.sampled_from(["/documents", "/query", "/passages"]))
def test_no_body_gets_a_500(server, body, route):
    with server.client() as client:
        response = client.post(
            route, content=json.dumps(body, allow_nan=True), headers={"content-type": "application/json"}
        )
    assert response.status_code < 500, (body, response.text)
