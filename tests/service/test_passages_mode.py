"""``neardup serve --passages`` for real: ``POST /passages`` answers exactly what the offline
``neardup.passages`` job finds between the query and the stored documents (the reference),
on drawn corpora with planted passages; a restart keeps everything; the mode is the folder's;
4xx for what the mode cannot answer; candidates capped, and said so."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_process import Server

import neardup

VOCABULARY = [f"w{i}" for i in range(5000)] + ["Straße", "文字", "café", "ÉCOLE"]


def reference(query: str, stored: dict[str, str], query_id: str | None = None) -> list[dict]:
    """The offline job's passages between ``query`` (first) and each stored text, as rows of
    ``POST /passages``: by stored document (in the order stored), then start in the query."""
    ids = list(stored)
    result = neardup.passages([query, *stored.values()])
    rows = []
    for row in result.matches.to_pylist():
        if row["id_a"] == 0:
            rows.append({**row, "id_a": query_id, "id_b": ids[row["id_b"] - 1]})
    return sorted(rows, key=lambda row: (ids.index(row["id_b"]), row["start_a"]))


def planted(rng: random.Random, documents: int, passages: int) -> list[str]:
    """Texts of 60 to 200 random words, with passages of 50 to 120 words planted in two to
    four of them, each copy with up to one word in ten changed, inserted or deleted."""
    texts = [[rng.choice(VOCABULARY) for _ in range(rng.randrange(60, 200))] for _ in range(documents)]
    for _ in range(passages):
        passage = [rng.choice(VOCABULARY) for _ in range(rng.randrange(50, 120))]
        for d in rng.sample(range(documents), rng.randrange(2, min(4, documents) + 1)):
            copy = list(passage)
            for _ in range(rng.randrange(len(copy) // 10 + 1)):
                at = rng.randrange(len(copy))
                edit = rng.randrange(3)
                if edit == 0:
                    copy[at] = rng.choice(VOCABULARY)
                elif edit == 1:
                    copy.insert(at, rng.choice(VOCABULARY))
                else:
                    del copy[at]
            at = rng.randrange(len(texts[d]) + 1)
            texts[d][at:at] = copy
    return [" ".join(words) for words in texts]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = Server(tmp_path_factory.mktemp("passages") / "data", "--passages").start()
    yield running
    running.stop()


STORED: dict[str, str] = {}
"""What the module's server holds, across examples."""


@pytest.mark.slow  # a real server, and 15 drawn corpora
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), documents=st.integers(2, 8), passages=st.integers(0, 4))
def test_answers_equal_the_offline_job(server, seed, documents, passages):
    rng = random.Random(seed)
    texts = planted(rng, documents, passages)
    queries, stored = texts[:2], texts[2:]
    new = {f"{len(STORED) + n}": text for n, text in enumerate(stored)}
    with server.client() as client:
        if new:
            documents = [{"id": i, "text": t} for i, t in new.items()]
            added = client.post("/documents", json={"documents": documents})
            assert added.status_code == 200, added.text
        STORED.update(new)
        body = {"documents": [{"id": "q0", "text": queries[0]}, {"text": queries[1]}]}
        answer = client.post("/passages", json=body)
    assert answer.status_code == 200, answer.text
    first, second = answer.json()["results"]
    assert first["passages"] == reference(queries[0], STORED, "q0")
    assert second["passages"] == reference(queries[1], STORED)
    assert (first["id"], second["id"], first["truncated"], second["truncated"]) == ("q0", None, False, False)


@pytest.mark.slow
def test_a_stored_document_by_its_id_and_a_restart_keeps_everything(server_factory, tmp_path):
    rng = random.Random(11)
    texts = planted(rng, 12, 8)
    stored = {f"doc/{n}": text for n, text in enumerate(texts)}
    data = tmp_path / "data"
    server = server_factory("--passages", data=data)
    with neardup.Client(server.url, batch_size=5) as client:
        client.add({"id": i, "text": t} for i, t in stored.items())
    with neardup.Client(server.url) as client:  # the Python client's passages()
        by_id = client.passages([{"id": "doc/0"}])
        stats = client.stats()
    others = {i: t for i, t in stored.items() if i != "doc/0"}
    want = reference(stored["doc/0"], others, "doc/0")
    assert want and by_id[0]["passages"] == want  # not itself: the others that share with it
    assert stats["mode"] == "passages" and stats["documents"] == 12 and stats["seed_index_bytes"] > 0
    assert stats["passages"] == {"min_words": 50, "min_similarity": 0.8}

    server.stop()
    for options, asked in ((("--jaccard", "0.8"), "--jaccard 0.8"), (("-k", "2"), "-k 2")):
        with pytest.raises(RuntimeError, match=rf"created in passages mode \(--passages -k 3\).*\({asked}\)"):
            server_factory(*options, data=data)
    again = server_factory(data=data)  # no mode given: the folder's
    with again.client() as client:
        assert client.post("/passages", json={"documents": [{"id": "doc/0"}]}).json()["results"] == by_id
        deleted = client.delete(f"/documents/{want[0]['id_b']}")
        assert deleted.status_code == 200
        after = client.post("/passages", json={"documents": [{"id": "doc/0"}]}).json()["results"][0]
    assert after["passages"] == [row for row in want if row["id_b"] != want[0]["id_b"]]


@pytest.mark.slow
def test_what_passages_mode_cannot_answer_is_a_4xx(server_factory):
    simhash = server_factory()
    with simhash.client() as client:
        refused = client.post("/passages", json={"documents": [{"text": "a b c"}]})
        assert refused.status_code == 409 and "--passages" in refused.json()["detail"]
    simhash.stop()
    server = server_factory("--passages", "--max-batch", "2", data=simhash.data.parent / "passages")
    with server.client() as client:
        for body, status, detail in (
            ({"documents": [{"fingerprint": "915f8f9b73972f23"}]}, 422, "extra_forbidden"),
            ({"documents": [{}]}, 422, "give text, or the id of a stored document"),
            ({"documents": []}, 422, "too_short"),
            ({"documents": [{"id": "nowhere"}]}, 404, "send its text"),
            ({"documents": [{"text": "a"}] * 3}, 413, "batch limit"),
            ({"documents": [{"text": "a " * (2 * 2**20 + 1)}]}, 413, "over the limit"),
        ):
            answer = client.post("/passages", json=body)
            assert answer.status_code == status and detail in answer.text, (body, answer.text)
        stored = client.post("/documents", json={"documents": [{"id": "x", "fingerprint": "00"}]})
        assert stored.status_code == 422 and "send the text" in stored.json()["detail"]


@pytest.mark.slow
def test_copies_of_one_text_are_capped_and_said_to_be(server_factory):
    """A text stored 1,500 times: a query of it compares 1,000 of its copies and lists those,
    with ``truncated``; one stored twice is not truncated."""
    server = server_factory("--passages")
    rng = random.Random(2)
    text = " ".join(rng.choice(VOCABULARY) for _ in range(60))
    rare = " ".join(rng.choice(VOCABULARY) for _ in range(60))
    with neardup.Client(server.url, batch_size=500) as client:
        client.add({"id": f"copy{i}", "text": text} for i in range(1500))
        client.add({"id": f"rare{i}", "text": rare} for i in range(2))
    with server.client() as client:
        (answer,) = client.post("/passages", json={"documents": [{"text": text}]}).json()["results"]
        (few,) = client.post("/passages", json={"documents": [{"text": rare}]}).json()["results"]
    assert answer["truncated"] and len(answer["passages"]) == 1000
    assert {(row["start_a"], row["words"], row["similarity"]) for row in answer["passages"]} == {(0, 60, 1.0)}
    assert not few["truncated"] and [row["id_b"] for row in few["passages"]] == ["rare0", "rare1"]
