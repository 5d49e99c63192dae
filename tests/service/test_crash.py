"""Crash test: writers stream batches while the server is killed with SIGKILL at random
moments, again and again. After each restart every acknowledged document is there, no batch is
half there, and lookups still equal the library's index over what is stored (in Jaccard mode,
the exact Jaccard of every stored text; in passages mode, the offline passages job over them).
One test has a writer of batches of 20, in each mode; the other eight concurrent writers of
one or three documents, whose batches share commits (group commit)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

import httpx
import numpy as np
import pytest

import neardup
from naive import naive_features

BATCH = 20


def text(i: int) -> str:
    return f"document {i} about {i % 7} and {i % 13}"


def long_text(i: int) -> str:
    """``text(i)`` and a passage of 60 words that documents ``i`` and ``i ^ 1`` alone share
    (passages mode: a text under 50 words holds none)."""
    rng = random.Random(i // 2)
    return f"{text(i)} " + " ".join(f"w{rng.randrange(10**6)}" for _ in range(60))


def writer(
    url: str,
    start: int,
    attempted: list[int],
    acknowledged: list[int],
    stop: threading.Event,
    size: int = BATCH,
    make_text: Callable[[int], str] = text,
) -> None:
    """Posts batches of ``size`` documents (ids start, start + 1, ...) until stopped or the
    server is gone; records the first id of each batch sent and of each acknowledged."""
    batch = start
    with httpx.Client(base_url=url, timeout=10) as client:
        while not stop.is_set():
            documents = [{"id": str(batch + i), "text": make_text(batch + i)} for i in range(size)]
            attempted.append(batch)
            try:
                response = client.post("/documents", json={"documents": documents})
            except httpx.TransportError:
                return  # the server is gone
            if response.status_code == 200:
                acknowledged.append(batch)
            batch += size


MODES = {"simhash": (), "jaccard": ("--jaccard", "0.8"), "passages": ("--passages",)}
"""The options of the first start in each mode; later starts give none (the folder's mode)."""


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_acknowledged_batches_survive_sigkill_whole(server_factory, tmp_path, mode):
    rng = random.Random(5)
    attempted: list[int] = []
    acknowledged: list[int] = []
    sizes: dict[int, int] = {}
    next_id = 0
    for round_ in range(5):
        server = server_factory(*(MODES[mode] if round_ == 0 else ()), data=tmp_path / "data")
        stop = threading.Event()
        make_text = long_text if mode == "passages" else text
        thread = threading.Thread(
            target=writer, args=(server.url, next_id, attempted, acknowledged, stop, BATCH, make_text)
        )
        sizes[next_id] = BATCH
        thread.start()
        time.sleep(rng.uniform(0.2, 1.0))
        server.kill()
        stop.set()
        thread.join(timeout=30)
        next_id += 1_000_000  # the next writer's ids
    assert len(acknowledged) >= 5  # batches got through between kills
    _check_after_crashes(server_factory, tmp_path, rng, attempted, acknowledged, sizes, mode)


@pytest.mark.slow
def test_acknowledged_single_documents_survive_sigkill(server_factory, tmp_path):
    # Eight writers of one or three documents a request: their batches share commits, and a
    # kill lands in the middle of a group as often as not.
    rng = random.Random(7)
    attempted: list[int] = []
    acknowledged: list[int] = []
    sizes: dict[int, int] = {}
    next_id = 0
    for _ in range(4):
        server = server_factory(data=tmp_path / "data")
        stop = threading.Event()
        threads = []
        for w in range(8):
            size = 1 if w % 2 == 0 else 3
            sizes[next_id] = size
            threads.append(
                threading.Thread(
                    target=writer, args=(server.url, next_id, attempted, acknowledged, stop, size)
                )
            )
            next_id += 1_000_000
        for thread in threads:
            thread.start()
        time.sleep(rng.uniform(0.5, 1.5))
        server.kill()
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    assert len(acknowledged) >= 40
    _check_after_crashes(server_factory, tmp_path, rng, attempted, acknowledged, sizes)


def _check_after_crashes(
    server_factory,
    tmp_path,
    rng: random.Random,
    attempted: list[int],
    acknowledged: list[int],
    sizes: dict[int, int],
    mode: str = "simhash",
) -> None:
    """Every acknowledged batch is there whole, no batch is half there, and lookups equal the
    library's index over what is stored. ``sizes``: each writer's first id -> its batch size."""
    server = server_factory(data=tmp_path / "data")
    done = set(acknowledged)
    with server.client() as client:
        stored = []
        for first in attempted:
            size = sizes[first - first % 1_000_000]
            present = [client.get(f"/documents/{first + i}").status_code == 200 for i in range(size)]
            assert all(present) or not any(present), f"batch {first} is half there"
            assert all(present) or first not in done, f"acknowledged batch {first} is lost"
            stored += [first + i for i in range(size)] if all(present) else []
        assert client.get("/stats").json()["documents"] == len(stored)
        assert client.get("/stats").json()["mode"] == mode
        if mode == "passages":
            _check_passages(client, rng, stored)
            return
        sample = rng.sample(stored, 30) + [500_000_000 + i for i in range(10)]  # stored and new texts
        answer = client.post("/query", json={"documents": [{"text": text(i)} for i in sample]}).json()[
            "results"
        ]
    if mode == "jaccard":  # against the exact Jaccard of every stored text
        features = {i: set(naive_features(text(i))) for i in stored}
        for q, result in zip(sample, answer):
            mine = set(naive_features(text(q)))
            exact = {i: len(mine & f) / len(mine | f) for i, f in features.items()}
            want = sorted((-s, i) for i, s in exact.items() if s >= 0.8)
            assert [(-d["similarity"], int(d["id"])) for d in result["duplicates"]] == want
        return
    fp = neardup.Fingerprinter()
    index = neardup.HammingIndex(bits=64, max_distance=3)
    index.add(fp.fingerprint_batch([text(i) for i in stored]), ids=np.array(stored, dtype=np.int64))
    offsets, found, distance = index.query_batch(fp.fingerprint_batch([text(i) for i in sample]))
    for q, result in enumerate(answer):
        want = list(
            zip(found[offsets[q] : offsets[q + 1]].tolist(), distance[offsets[q] : offsets[q + 1]].tolist())
        )
        assert [(int(d["id"]), d["distance"]) for d in result["duplicates"]] == want


def _check_passages(client: httpx.Client, rng: random.Random, stored: list[int]) -> None:
    """Each sampled stored text shares its passage with itself and its partner, if stored, as
    the offline job finds it between the text and every stored text; a new text with none."""
    texts = {i: long_text(i) for i in stored}
    every = list(texts.values())
    position = {i: n for n, i in enumerate(texts)}
    for q in [*rng.sample(stored, 10), 500_000_001]:
        (answer,) = client.post("/passages", json={"documents": [{"text": long_text(q)}]}).json()["results"]
        result = neardup.passages([long_text(q), *every])
        want = [
            (int(stored[row["id_b"] - 1]), row["start_a"], row["end_a"], row["start_b"], row["end_b"])
            for row in result.matches.to_pylist()
            if row["id_a"] == 0
        ]
        got = [
            (int(r["id_b"]), r["start_a"], r["end_a"], r["start_b"], r["end_b"]) for r in answer["passages"]
        ]
        assert got == sorted(want, key=lambda row: position[row[0]])
        partners = {q, q ^ 1} & set(texts)
        assert {row[0] for row in got} == partners
