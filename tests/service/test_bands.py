"""The band index of Jaccard mode equals the obvious dictionary of live documents through any
sequence of adds and removes (and the merges of runs they cause), and caps its candidates."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.service.bands import BandIndex

BANDS = 3
KEY = st.integers(0, 6)  # few distinct keys: buckets shared often
STEP = st.one_of(
    st.tuples(
        st.just("add"), st.lists(st.lists(KEY, min_size=BANDS, max_size=BANDS), min_size=1, max_size=5)
    ),
    st.tuples(st.just("remove"), st.integers(0, 2**16)),
)


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(STEP, max_size=25), query=st.lists(KEY, min_size=BANDS, max_size=BANDS))
def test_candidates_equal_a_scan_of_the_live_documents(steps, query):
    index, live, next_key = BandIndex(), {}, 0
    for operation, value in steps:
        if operation == "add":
            keys = np.arange(next_key, next_key + len(value), dtype=np.int64)
            index = index.added(keys, np.array(value, dtype=np.uint64))
            live.update(zip(keys.tolist(), value))
            next_key += len(value)
        elif live:
            gone = sorted(live)[value % len(live)]
            index = index.without(np.array([gone], dtype=np.int64))
            del live[gone]
        assert len(index) == len(live)
    want = sorted(key for key, bands in live.items() if set(bands) & set(query))
    found = index.candidates(np.array(query, dtype=np.uint64), 1000)
    assert found.keys.tolist() == want and not found.truncated


def test_a_bucket_of_many_copies_gives_at_most_the_cap_those_sharing_most_first():
    copies = np.tile(np.array([1, 2, 3], dtype=np.uint64), (5000, 1))  # one text stored 5,000 times
    index = BandIndex.of(np.arange(5000, dtype=np.int64), copies)
    index = index.added(np.array([9000], dtype=np.int64), np.array([[1, 8, 9]], dtype=np.uint64))
    found = index.candidates(np.array([1, 2, 3], dtype=np.uint64), 100)
    assert found.keys.tolist() == list(range(100))  # each shares every band; the first stored first
    assert found.truncated
    assert not index.candidates(np.array([7, 8, 9], dtype=np.uint64), 100).truncated  # 9000 alone


def test_truncated_says_which_cap_cut_the_candidates():
    """The cap of one bucket, the cap of the documents found across buckets, or neither."""
    index = BandIndex.of(
        np.arange(4, dtype=np.int64), np.array([[1, 2], [1, 3], [4, 5], [6, 5]], dtype=np.uint64)
    )
    at_the_cap = index.candidates(np.array([1, 0], dtype=np.uint64), 2)
    assert at_the_cap.keys.tolist() == [0, 1] and not at_the_cap.truncated
    one_bucket = index.candidates(np.array([1, 0], dtype=np.uint64), 1)
    assert one_bucket.keys.tolist() == [0] and one_bucket.truncated
    across = index.candidates(np.array([2, 4], dtype=np.uint64), 1)  # buckets of one each, two documents
    assert across.keys.size == 1 and across.truncated


@settings(max_examples=100, deadline=None)
@given(
    documents=st.lists(st.lists(KEY, max_size=6), min_size=1, max_size=8),
    removed=st.integers(0, 7),
    query=st.lists(KEY, min_size=1, max_size=4, unique=True),
    most=st.integers(1, 4),
)
def test_any_number_of_keys_a_document_and_the_cut_said(documents, removed, query, most):
    """Passage seeds: a document has any number of keys (none for a short text); a cut
    candidate list says so."""
    keys = np.arange(len(documents), dtype=np.int64)
    flat = np.array([k for doc in documents for k in doc], dtype=np.uint64)
    index = BandIndex().added_entries(flat, np.repeat(keys, [len(doc) for doc in documents]), len(documents))
    gone = removed % len(documents)
    index = index.without(np.array([gone], dtype=np.int64))
    assert len(index) == len(documents) - 1
    want = [d for d, doc in enumerate(documents) if d != gone and set(doc) & set(query)]
    found, cut = index.candidates(np.array(query, dtype=np.uint64), most)
    # Removed documents hold their bucket's places until a merge drops them: fewer may come
    # back than the cap, and then the cut is said.
    assert set(found.tolist()) <= set(want) and len(found) <= min(len(want), most)
    if len(found) < len(want):
        assert cut
    everything, cut = index.candidates(np.array(query, dtype=np.uint64), 1000)
    assert everything.tolist() == want and not cut
