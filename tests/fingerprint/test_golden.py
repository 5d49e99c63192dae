"""Golden vectors pin fingerprint spec version 1: not a single bit may change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import neardup

VECTORS = [
    json.loads(line) for line in (Path(__file__).parent / "golden_vectors.jsonl").read_text().splitlines()
]
CONFIGS = sorted({json.dumps(v["config"], sort_keys=True) for v in VECTORS})


def test_vectors_cover_every_feature_kind_weighting_and_width():
    configs = [json.loads(c) for c in CONFIGS]
    assert {c.get("features", "word-shingles") for c in configs} == set(neardup._config.FEATURES)
    assert {c.get("weighting", "tf") for c in configs} >= {"uniform", "tf", "sublinear"}
    assert {c.get("bits", 64) for c in configs} == {64, 128}
    assert len(VECTORS) > 200


def test_vectors_are_of_this_version():
    assert {v["version"] for v in VECTORS} == {neardup.FINGERPRINT_VERSION}


@pytest.mark.parametrize("config_json", CONFIGS)
def test_single_and_batch_fingerprints_match_golden_vectors(config_json):
    config = json.loads(config_json)
    vectors = [v for v in VECTORS if json.dumps(v["config"], sort_keys=True) == config_json]
    fingerprinter = neardup.Fingerprinter(**config)
    expected = [int(v["fingerprint"], 16) for v in vectors]
    texts = [v["text"] for v in vectors]
    assert [fingerprinter.fingerprint(t) for t in texts] == expected
    batch = fingerprinter.fingerprint_batch(texts)
    if fingerprinter.config.bits == 64:
        assert [int(x) for x in batch] == expected
    else:
        assert [int(lo) | (int(hi) << 64) for lo, hi in batch] == expected
