"""``dedup(cosine=T)``: the radius from the binomial model, and the run it stands for."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

import neardup
from neardup._errors import ConfigError
from neardup.decision.cosine import cosine_radius, explain_cosine, lowest_served, within


def test_within_is_the_binomial_tail():
    for bits, similarity in ((64, 0.9), (128, 0.97), (128, 0.5)):
        p = math.acos(similarity) / math.pi
        rng = np.random.default_rng(1)
        draws = rng.binomial(bits, p, size=200_000)
        for k in (0, 4, 8, 16):
            assert abs(within(k, bits, similarity) - (draws <= k).mean()) < 0.005
    assert within(128, 128, 0.3) == pytest.approx(1.0)
    assert within(0, 64, 1.0) == 1.0


def test_cosine_radius_is_the_smallest_reaching_95_percent():
    for bits in (64, 128):
        for threshold in (0.965, 0.97, 0.98, 0.99, 0.999):
            k, chance = cosine_radius(threshold, bits)
            if chance >= 0.95:
                assert k == 0 or within(k - 1, bits, threshold) < 0.95
        served = lowest_served(bits)
        assert cosine_radius(served, bits)[1] >= 0.95 > cosine_radius(served - 0.002, bits)[1]


def _corpus() -> list[str]:
    rng = random.Random(3)
    vocabulary = [f"w{i}" for i in range(500)]
    texts = []
    for _ in range(60):
        words = [rng.choice(vocabulary) for _ in range(200)]
        texts.append(" ".join(words))
        for rate in (0.005, 0.01, 0.03):
            texts.append(" ".join(rng.choice(vocabulary) if rng.random() < rate else w for w in words))
    return texts


def test_dedup_by_cosine_is_the_radius_and_verification_it_names():
    texts = _corpus()
    result = neardup.dedup(texts, cosine=0.97, bits=128)
    k, _ = cosine_radius(0.97, 128)
    same = neardup.dedup(texts, max_distance=k, verify=("cosine", 0.97), bits=128)
    assert result.max_distance == k
    assert (result.representatives == same.representatives).all()
    assert result.stats.duplicates > 30
    assert f"SimHash radius {k} of 128 bits" in result.stats.format()
    assert all(s >= 0.97 for chunk in result.iter_pairs() for s in chunk.similarity)


def test_thresholds_the_index_cannot_serve_are_refused_with_what_to_do():
    with pytest.raises(ConfigError, match=r"threshold >= 0\.973 or bits=128.*jaccard=.*max_distance=8"):
        neardup.dedup(["a b c d"], cosine=0.9)
    with pytest.raises(ConfigError, match="not both"):
        neardup.dedup(["a b c d"], cosine=0.99, jaccard=0.8)
    with pytest.raises(ConfigError, match="leave out max_distance"):
        neardup.dedup(["a b c d"], cosine=0.99, max_distance=3)
    assert "dedup refuses" in explain_cosine(0.9, 128)
    assert "refuses" not in explain_cosine(0.98, 128)
