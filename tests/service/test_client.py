"""neardup.Client against a real ``neardup serve``: batches, lookups equal to the server's
routes, and errors raised with the server's reason."""

from __future__ import annotations

import pytest

import neardup


def test_client_adds_in_batches_queries_gets_and_deletes(server_factory):
    server = server_factory(token="t0ken")
    texts = [f"page {i} of a crawl about gardens and rivers and the weather" for i in range(7)]
    with neardup.Client(server.url, token="t0ken", batch_size=3) as client:  # 3 requests
        added = client.add({"id": f"u{i}", "text": t, "metadata": {"i": i}} for i, t in enumerate(texts))
        assert [r["id"] for r in added] == [f"u{i}" for i in range(7)] and all(r["stored"] for r in added)
        assert client.stats()["documents"] == 7
        found = client.query([{"text": texts[2]}])[0]["duplicates"]
        assert found[0] == {"id": "u2", "distance": 0}
        assert client.get("u5")["metadata"] == {"i": 5} and client.get("nope") is None
        assert client.delete("u5") and not client.delete("u5")
        again = client.add([{"id": "dup", "text": texts[0]}], skip_if_duplicate=True)[0]
        assert not again["stored"]
    with (
        neardup.Client(server.url, token="wrong") as client,
        pytest.raises(neardup.ServiceError, match="401"),
    ):
        client.stats()


@pytest.mark.slow
def test_client_commands_add_a_file_and_query_texts(server_factory, tmp_path):
    import json
    import subprocess
    import sys

    server = server_factory()
    rows = [{"url": f"u{i}", "body": f"text number {i} of a small file about birds"} for i in range(12)]
    rows.append({"url": "copy", "body": rows[0]["body"]})
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    def neardup_cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "neardup", "client", *args, "--url", server.url],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    added = neardup_cli("add", str(tmp_path / "docs.jsonl"), "--text-field", "body", "--id-field", "url",
                        "--batch-size", "5", "--skip-if-duplicate")  # fmt: skip
    assert added.returncode == 0, added.stderr
    lines = [json.loads(line) for line in added.stdout.splitlines()]
    assert [r["id"] for r in lines] == [r["url"] for r in rows]
    assert lines[-1]["stored"] is False and lines[-1]["duplicates"][0]["id"] == "u0"
    assert "stored 12 documents" in added.stderr
    asked = neardup_cli("query", rows[3]["body"])
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["duplicates"][0] == {"id": "u3", "distance": 0}
