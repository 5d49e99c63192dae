"""``neardup serve --features code --jaccard T`` for real: code's shingles banded and checked
as ``neardup dedup`` checks them, each answer's similarity the exact Jaccard of the spec's
code shingles (``naive_code_features``); a renamed copy finds its original."""

from __future__ import annotations

import pytest
from server_process import Server

import neardup
from code_lines import python_files
from naive import naive_code_features

pytest.importorskip("pygments", reason="code features need the code extra (pygments)")

T = 0.7


def _jaccard(a: str, b: str) -> float:
    first, second = (set(naive_code_features(t, "python", shingle_size=4)) for t in (a, b))
    union = first | second
    return len(first & second) / len(union) if union else 1.0


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("code") / "data"
    running = Server(data, "--features", "code", "--language", "python", "--jaccard", str(T)).start()
    yield running
    running.stop()


@pytest.mark.slow  # a real server
def test_renamed_copies_find_their_originals_at_their_exact_jaccard(server):
    originals = {f"m{i}": text for i, text in enumerate(python_files(10))}
    with neardup.Client(server.url) as client:
        client.add([{"id": doc_id, "text": text} for doc_id, text in originals.items()])
        copies = [text.replace("item", "thing") + "# renamed\n" for text in originals.values()]
        answers = client.query([{"text": copy} for copy in copies])
        assert client.stats()["mode"] == "jaccard"
    for doc_id, copy, answer in zip(originals, copies, answers):
        found = {d["id"]: d["similarity"] for d in answer["duplicates"]}
        assert found.get(doc_id) == 1.0, (doc_id, found)  # names are placeholders: the same shingles
        for other, similarity in found.items():  # precision: each the spec's exact value
            assert similarity == pytest.approx(_jaccard(copy, originals[other])) and similarity >= T
