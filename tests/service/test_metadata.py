"""Metadata that could not be sent back is refused when written (422 naming the place), against a
real ``neardup serve``; what is stored reads back equal."""

from __future__ import annotations

import re

import httpx
import pytest
from pydantic import ValidationError
from server_process import Server

from neardup.service.models import MAX_METADATA_DEPTH, Batch


@pytest.fixture(scope="module")
def http(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("metadata") / "data").start()
    with server.client() as client:
        yield client
    server.stop()


def nested(depth: int) -> str:
    """A metadata object nested ``depth`` levels deep (the object itself is level 1), as JSON."""
    return '{"v": ' * (depth - 1) + "[]" + "}" * (depth - 1)


def post(http: httpx.Client, metadata_json: str, doc_id: str = "doc") -> httpx.Response:
    body = f'{{"documents": [{{"id": "{doc_id}", "text": "a page", "metadata": {metadata_json}}}]}}'
    return http.post("/documents", content=body, headers={"content-type": "application/json"})


@pytest.mark.parametrize(
    "metadata, words",
    [
        ('{"v": NaN}', re.escape("metadata['v'] is nan")),
        ('{"v": [1, Infinity]}', re.escape("metadata['v'][1] is inf")),
        ('{"v": {"w": -Infinity}}', re.escape("metadata['v']['w'] is -inf")),
        ('{"v": 1e999}', re.escape("metadata['v'] is inf")),
        (nested(MAX_METADATA_DEPTH + 1), f"deeper than the limit of {MAX_METADATA_DEPTH} levels"),
        # Refused by the JSON parser itself (its words, with the column) or by the schema.
        (nested(300), "recursion limit|deeper than the limit"),
        ('{"v": "\\ud800"}', "hex escape|surrogate"),  # not UTF-8: never answerable
        ('{"\\udc00": 1}', "surrogate"),
    ],
)
def test_metadata_that_cannot_be_sent_back_is_refused(http, metadata, words):
    refused = post(http, metadata)
    assert refused.status_code == 422, refused.text
    assert re.search(words, refused.text), refused.text
    assert http.get("/documents/doc").status_code == 404  # nothing stored
    again = http.post("/query", content=refused.request.content, headers={"content-type": "application/json"})
    assert again.status_code == 422


def test_metadata_at_the_limits_reads_back_equal(http):
    deep = nested(MAX_METADATA_DEPTH)
    odd = '{"big": 1e308, "tiny": -5e-324, "long": 123456789012345678901234567890, "text": "\\ud83d\\ude00"}'
    for doc_id, metadata in (("deep", deep), ("odd", odd)):
        stored = post(http, metadata, doc_id)
        assert stored.status_code == 200, stored.text
        assert (
            http.get(f"/documents/{doc_id}").json()["metadata"]
            == httpx.Response(200, content=metadata).json()
        )


@pytest.mark.parametrize(
    "metadata, words",
    [
        ({"v": "\ud800"}, "metadata['v'] is not valid UTF-8"),
        ({"\udc00": [1]}, "metadata has a key that is not valid UTF-8"),
        ({"v": [float("nan")]}, "metadata['v'][0] is nan"),
        ({"v": int("9" * 4000) * 10**1000}, "integer too long"),
    ],
)
def test_the_model_refuses_what_json_parsers_let_through(metadata, words):
    # Python's json.loads (FastAPI's parser) reads "\ud800" as a lone surrogate and keeps huge
    # integers: the schema itself refuses them, whichever parser read the body.
    with pytest.raises(ValidationError, match=words.replace("[", r"\[").replace("]", r"\]")):
        Batch.model_validate({"documents": [{"id": "a", "text": "x", "metadata": metadata}]})
