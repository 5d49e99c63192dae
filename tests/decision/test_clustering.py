"""clusters() against a plain-Python union-find (tests/naive_index.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive_index as naive
from neardup import ConfigError, HammingIndex, clusters


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=40, unique=True), st.data())
def test_clusters_equal_plain_union_find(ids, data):
    edge = st.tuples(st.sampled_from(ids), st.sampled_from(ids))
    edges = data.draw(st.lists(edge, max_size=60))
    i = [a for a, _ in edges]
    j = [b for _, b in edges]
    got = clusters(np.array(i, dtype=np.int64), np.array(j, dtype=np.int64), np.array(ids, dtype=np.int64))
    assert got.tolist() == naive.clusters(i, j, ids)


def test_count_form_and_singletons():
    assert clusters([4, 1, 2], [3, 2, 0], 6).tolist() == [0, 0, 0, 3, 3, 5]
    assert clusters([], [], 3).tolist() == [0, 1, 2]


def test_clusters_of_index_pairs():
    fps = np.array([0, 1, 3, 2**40 + 2**50, 2**40 + 2**41 + 2**50, 2**63 + 2**62 + 2**61], dtype=np.uint64)
    index = HammingIndex(max_distance=1)
    index.add(fps, ids=[50, 10, 30, 20, 40, 60])
    i, j, _ = index.pairs()
    assert clusters(i, j, index.ids).tolist() == [10, 10, 10, 20, 20, 60]


def test_bad_input():
    with pytest.raises(ValueError, match="not in ids"):
        clusters([0], [7], 3)
    with pytest.raises(ConfigError, match="repeat"):
        clusters([], [], [1, 1])
    with pytest.raises(ValueError, match="same shape"):
        clusters([0, 1], [1], 3)
    with pytest.raises(TypeError):
        clusters([0.5], [1.0], 3)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=30, unique=True),
    st.data(),
    st.sampled_from(["lowest-id", "first", "longest"]),
)
def test_representative_rules_equal_plain_python(ids, data, rule):
    edge = st.tuples(st.sampled_from(ids), st.sampled_from(ids))
    edges = data.draw(st.lists(edge, max_size=40))
    lengths = data.draw(st.lists(st.integers(0, 5), min_size=len(ids), max_size=len(ids)))
    i = [a for a, _ in edges]
    j = [b for _, b in edges]
    got = clusters(i, j, ids, representative=rule, lengths=lengths)
    assert got.tolist() == naive.representatives(i, j, ids, rule, lengths)
    # The labels do not depend on the order of the pairs.
    assert clusters(i[::-1], j[::-1], ids, representative=rule, lengths=lengths).tolist() == got.tolist()


def test_representative_errors():
    with pytest.raises(ConfigError, match="representative='biggest' is not allowed"):
        clusters([0], [1], 2, representative="biggest")
    with pytest.raises(ValueError, match="needs lengths"):
        clusters([0], [1], 2, representative="longest")
    with pytest.raises(ValueError, match="lengths has shape"):
        clusters([0], [1], 2, representative="longest", lengths=[1, 2, 3])
