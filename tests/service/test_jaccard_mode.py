"""``neardup serve --jaccard T`` for real: answers held to a brute-force reference (pure-Python
shingles from ``naive.py``, exact Jaccard of Python sets over every stored text), precision 1
always and recall on a planted corpus; the mode fixed by the folder; 4xx for what the mode
cannot answer; the client's view of the new fields."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_process import Server

import neardup
from naive import naive_features
from neardup.cli.main import main

T = 0.5  # low enough that drawn texts land on both sides of it


def reference(query: str, stored: dict[str, str], threshold: float) -> dict[str, float]:
    """Every stored id at least ``threshold`` Jaccard similar to ``query``, with the value:
    sets of word 3-shingle hashes, two empty sets being identical (as the batch job has it)."""
    mine = set(naive_features(query))
    out = {}
    for doc_id, text in stored.items():
        theirs = set(naive_features(text))
        union = len(mine | theirs)
        similarity = len(mine & theirs) / union if union else 1.0
        if similarity >= threshold:
            out[doc_id] = similarity
    return out


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = Server(tmp_path_factory.mktemp("jaccard") / "data", "--jaccard", str(T)).start()
    yield running
    running.stop()


STORED: dict[str, str] = {}
"""What the module's server holds, across examples."""

WORDS = st.sampled_from(["red", "green", "blue", "cat", "dog", "sun", "moon", "tree", "river", "stone"])
TEXT = st.lists(WORDS, min_size=3, max_size=12)


def edits(words: list[str], rng: random.Random, n: int) -> str:
    words = list(words)
    for _ in range(n):
        at = rng.randrange(len(words))
        words[at] = rng.choice(["Red", "owl", "fox", "sky", words[at].upper()])  # upper: the same word
    return " ".join(words)


@pytest.mark.slow  # a real server, and 25 drawn corpora
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base=TEXT, seed=st.integers(0, 2**16), copies=st.integers(1, 6))
def test_every_answer_is_exactly_what_the_reference_says(server, base, seed, copies):
    rng = random.Random(seed)
    texts = [edits(base, rng, rng.randrange(3)) for _ in range(copies)]
    documents = [{"id": f"{len(STORED) + n}", "text": text} for n, text in enumerate(texts)]
    with neardup.Client(server.url) as client:
        added = client.add(documents)
        before = dict(STORED)
        STORED.update({d["id"]: d["text"] for d in documents})
        answers = client.query([{"text": text} for text in texts])
    for document, result in zip(documents, added):  # against what was stored before the batch
        want = reference(document["text"], before, T)
        _check_precision(result["duplicates"], want)
    for text, result in zip(texts, answers):
        want = reference(text, STORED, T)
        _check_precision(result["duplicates"], want)
        assert result["duplicates"][0]["similarity"] == 1.0  # itself, stored: every band agrees


def _check_precision(duplicates: list[dict], want: dict[str, float]) -> None:
    """Every answer is one the reference lists, with its exact value, most similar first."""
    for duplicate in duplicates:
        assert duplicate["id"] in want, (duplicate, want)
        assert duplicate["similarity"] == want[duplicate["id"]] >= T
    values = [d["similarity"] for d in duplicates]
    assert values == sorted(values, reverse=True)


@pytest.mark.slow
def test_recall_on_a_planted_corpus_and_the_mode_is_the_folders(server_factory, tmp_path):
    """200 texts of 60 words; queries are copies with 0 to 3 words changed (Jaccard about 1.0,
    0.90, 0.81, 0.73 against their original). The banding finds a pair at 0.8 with probability
    at least 0.95, and a more similar one more often: recall is held to 0.95 of the ~450 pairs
    at or above 0.8 the reference finds, and every answer to be one of them (precision 1)."""
    rng = random.Random(3)
    vocabulary = [f"w{i}" for i in range(2000)]
    originals = {f"o{i}": [rng.choice(vocabulary) for _ in range(60)] for i in range(200)}
    queries = []
    for words in originals.values():
        for changed in range(4):
            copy = list(words)
            for at in rng.sample(range(60), changed):
                copy[at] = rng.choice(vocabulary)
            queries.append(" ".join(copy))
    stored = {doc_id: " ".join(words) for doc_id, words in originals.items()}
    data = tmp_path / "data"
    server = server_factory("--jaccard", "0.8", data=data)
    with neardup.Client(server.url, batch_size=100) as client:
        client.add({"id": doc_id, "text": text} for doc_id, text in stored.items())
        answers = client.query({"text": q} for q in queries)
        assert client.stats()["mode"] == "jaccard" and client.stats()["jaccard"] == 0.8
    found = wanted = 0
    for query, result in zip(queries, answers):
        want = reference(query, stored, 0.8)
        for duplicate in result["duplicates"]:
            assert duplicate["similarity"] == want[duplicate["id"]]
        found += len(result["duplicates"])
        wanted += len(want)
    assert wanted > 400 and found / wanted >= 0.95, (found, wanted)

    server.stop()
    for options, asked in ((("--jaccard", "0.7"), "--jaccard 0.7"), (("-k", "3"), "-k 3")):
        with pytest.raises(RuntimeError, match=rf"created in jaccard mode \(--jaccard 0.8\).*\({asked}\)"):
            server_factory(*options, data=data)
    again = server_factory(data=data)  # no mode given: the folder's
    with neardup.Client(again.url) as client:
        assert client.query([{"text": queries[0]}])[0]["duplicates"][0] == {"id": "o0", "similarity": 1.0}


@pytest.mark.slow
def test_what_jaccard_mode_cannot_answer_is_a_4xx(server):
    with server.client() as client:
        by_hex = client.post("/query", json={"documents": [{"fingerprint": "915f8f9b73972f23"}]})
        assert by_hex.status_code == 422 and "send the text" in by_hex.json()["detail"]
        radius = client.post("/query", json={"documents": [{"text": "a b c"}], "max_distance": 2})
        assert radius.status_code == 409 and "leave max_distance out" in radius.json()["detail"]
        stored = client.post("/documents", json={"documents": [{"id": "x", "fingerprint": "00"}]})
        assert stored.status_code == 422


@pytest.mark.slow
def test_copies_of_one_text_are_capped_not_quadratic(server_factory, capsys):
    """A text stored 3,000 times: each query checks at most 1,000 candidates, lists those and
    says the answer was truncated; a query the cap did not cut says it was not."""
    server = server_factory("--jaccard", "0.9")
    text = "one text that a careless crawler stores again and again under new addresses"
    with neardup.Client(server.url, batch_size=1000) as client:
        client.add({"id": f"copy{i}", "text": text} for i in range(3000))
        answer, other = client.query([{"text": text}, {"text": "another text about something else"}])
        assert len(answer["duplicates"]) == 1000 and answer["truncated"] is True  # 2,000 left out
        assert {d["similarity"] for d in answer["duplicates"]} == {1.0}
        assert other == {**other, "duplicates": [], "truncated": False}
        skipped = client.add([{"id": "one more", "text": text}], skip_if_duplicate=True)[0]
        assert not skipped["stored"] and len(skipped["duplicates"]) == 1000
    assert main(["client", "query", text, "--url", server.url]) == 0
    assert json.loads(capsys.readouterr().out)["truncated"] is True  # the command says so too
