"""``skip_if_duplicate`` sees the near-duplicates within one batch too, against a real
``neardup serve``: a batch is decided as if its documents came one at a time, in order."""

from __future__ import annotations

import numpy as np
import pytest

from neardup.service import batch_duplicates


def hexed(value: int) -> str:
    return f"{value:016x}"


BASE, OTHER, SEEN = 0x915F8F9B73972F23, 0x06E8042460965306, 0x7A41C0DE55AA0F0F


@pytest.fixture
def http(server_factory):
    with server_factory().client() as client:
        stored = client.post("/documents", json={"documents": [{"id": "seen", "fingerprint": hexed(SEEN)}]})
        assert stored.status_code == 200
        yield client


BATCH = [
    {"id": "first", "fingerprint": hexed(BASE)},
    {"id": "near", "fingerprint": hexed(BASE ^ 0b101)},  # 2 bits from "first"
    {"id": "other", "fingerprint": hexed(OTHER)},
    {"id": "same", "fingerprint": hexed(OTHER)},  # identical to "other"
    {"id": "seen-again", "fingerprint": hexed(SEEN ^ 1 << 40)},  # 1 bit from the stored "seen"
    {"id": "far", "fingerprint": hexed(BASE ^ 0xF0F0)},  # 8 bits from "first": not a duplicate
]


@pytest.mark.slow
def test_skip_if_duplicate_skips_near_copies_within_the_batch(http):
    body = {"documents": BATCH, "skip_if_duplicate": True}
    results = http.post("/documents", json=body).json()["results"]
    assert {r["id"]: r["stored"] for r in results} == {
        "first": True,
        "near": False,
        "other": True,
        "same": False,
        "seen-again": False,
        "far": True,
    }
    duplicates = {r["id"]: r["duplicates"] for r in results}
    assert duplicates["near"] == [{"id": "first", "distance": 2}]
    assert duplicates["same"] == [{"id": "other", "distance": 0}]
    assert duplicates["seen-again"] == [{"id": "seen", "distance": 1}]
    assert duplicates["first"] == duplicates["far"] == []
    for doc_id, status in (("first", 200), ("near", 404), ("other", 200), ("same", 404), ("far", 200)):
        assert http.get(f"/documents/{doc_id}").status_code == status, doc_id
    assert http.get("/stats").json()["documents"] == 4


@pytest.mark.slow
def test_a_smaller_radius_and_plain_stores_are_as_before(http):
    body = {"documents": BATCH[:2], "skip_if_duplicate": True, "max_distance": 1}
    assert [r["stored"] for r in http.post("/documents", json=body).json()["results"]] == [True, True]
    plain = {
        "documents": [{"id": "a", "fingerprint": hexed(OTHER)}, {"id": "b", "fingerprint": hexed(OTHER)}]
    }
    assert [r["stored"] for r in http.post("/documents", json=plain).json()["results"]] == [True, True]
    unstored = {
        "documents": [{"id": "c", "fingerprint": hexed(OTHER)}],
        "store": False,
        "skip_if_duplicate": True,
    }
    assert not http.post("/documents", json=unstored).json()["results"][0]["stored"]
    assert http.get("/stats").json()["documents"] == 5


@pytest.mark.parametrize("bits", [64, 128])
def test_both_ways_of_finding_pairs_equal_a_scan(bits, monkeypatch):
    rng = np.random.default_rng(bits)
    base = rng.integers(0, 2**63, size=(200, bits // 64), dtype=np.int64).view(np.uint64)
    flips = np.uint64(1) << rng.integers(0, 64, size=base.shape).astype(np.uint64)
    fps = np.ascontiguousarray(rng.permutation(np.concatenate([base, base ^ flips, base[:30]])))
    want = sorted(
        (q, p, d)
        for p in range(len(fps))
        for q in range(p)
        if (d := sum(bin(int(x) ^ int(y)).count("1") for x, y in zip(fps[q], fps[p]))) <= 3
    )
    assert len(want) >= 200 + 2 * 30
    found = {}
    for scan_max in (batch_duplicates.SCAN_MAX, 0):  # numpy's table, then the HammingIndex
        monkeypatch.setattr(batch_duplicates, "SCAN_MAX", scan_max)
        pairs = batch_duplicates._pairs(fps, 3, bits, 3)
        found[scan_max] = sorted(zip(*(column.tolist() for column in pairs)))
    assert list(found.values()) == [want, want]
