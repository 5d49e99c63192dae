"""``passages_with_first`` (the service's query against its candidates) finds exactly the
pairs with document 0 that ``find_passages`` (the offline job) finds over the same documents,
when no seed is common: drawn corpora with planted, edited passages, and a phrase repeated
often enough that only each document's first occurrence of its seeds pairs."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.decision.passage_matching import (
    Matches,
    PassageOptions,
    Seeds,
    find_passages,
    passages_with_first,
)
from neardup.decision.passage_words import CorpusWords

VOCABULARY = [f"w{i}" for i in range(3000)]


def both(texts: list[str]) -> tuple[Matches, Matches]:
    """(the job's matches with document 0, ``passages_with_first``'s)."""
    words = CorpusWords()
    hashes, offsets = words.add(texts)
    seeds = Seeds(PassageOptions().min_words)
    seeds.add(hashes, offsets, 0)
    words.freeze()
    job, _ = find_passages(words.hashes, words.offsets, seeds, PassageOptions())
    first = job.doc_a == 0
    job = Matches(*(getattr(job, name)[first] for name in Matches.__dataclass_fields__))
    return job, passages_with_first(words.hashes, words.offsets, PassageOptions())


def rows(m: Matches) -> list[tuple[int, ...]]:
    return list(zip(*(getattr(m, name).tolist() for name in Matches.__dataclass_fields__)))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), documents=st.integers(1, 8), planted=st.integers(0, 4))
def test_pairs_with_the_first_document_equal_the_jobs(seed, documents, planted):
    rng = random.Random(seed)
    texts = [[rng.choice(VOCABULARY) for _ in range(rng.randrange(20, 150))] for _ in range(documents)]
    for _ in range(planted):
        passage = [rng.choice(VOCABULARY) for _ in range(rng.randrange(40, 100))]
        for d in rng.sample(range(documents), rng.randrange(1, documents + 1)):
            copy = list(passage)
            for _ in range(rng.randrange(len(copy) // 8 + 1)):
                copy[rng.randrange(len(copy))] = rng.choice(VOCABULARY)
            at = rng.randrange(len(texts[d]) + 1)
            texts[d][at:at] = copy
    job, service = both([" ".join(words) for words in texts])
    assert rows(service) == rows(job)
    assert (service.doc_a == 0).all()


@pytest.mark.parametrize("repeats", [50, 250])  # 250: over 4 * common_docs occurrences of a seed
def test_a_phrase_repeated_in_the_query_and_a_candidate(repeats):
    rng = random.Random(repeats)
    phrase = "one two three four five"
    texts = [
        " ".join(rng.choice(VOCABULARY) for _ in range(30)) + f" {phrase}" * repeats,
        f"{phrase} " * repeats + " ".join(rng.choice(VOCABULARY) for _ in range(30)),
        " ".join(rng.choice(VOCABULARY) for _ in range(80)),
    ]
    job, service = both(texts)
    assert rows(service) == rows(job)
    assert len(job) or repeats == 250
    assert np.array_equal(service.doc_b, job.doc_b)
