"""Code lexed on several cores (``fingerprint/lexing.py``): worker processes give the tokens
one process gives, in the same order, skipped documents and errors included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import ConfigError, FingerprintConfig, Fingerprinter
from neardup.fingerprint import lexing
from neardup.fingerprint.code import code_token_buffer, token_buffer
from neardup.fingerprint.text_buffers import raw_buffers

pytest.importorskip("pygments", reason="code features need the code extra (pygments)")
pytest.importorskip("loky", reason="lexing on several cores needs the code extra (loky)")

SNIPPETS = (
    "def f{i}(a, b):\n    return a + b * {i}\n",
    "class C{i}:\n    x = '{i}'  # a comment\n",
    "for k in range({i}):\n    total += k\n",
    "while not done{i}:\n    done = step()\n",
)


def _sources(n: int) -> list[str]:
    return [
        "".join(SNIPPETS[(i + j) % len(SNIPPETS)].format(i=i) for j in range(i % 5 + 1)) for i in range(n)
    ]


def _equal(first: lexing.TokenBuffer, second: lexing.TokenBuffer) -> None:
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


@pytest.fixture
def pooled(monkeypatch):
    """Every buffer goes to the pool, however small (the threshold is the parent's choice)."""
    monkeypatch.setattr(lexing, "POOL_BYTES", 0)


def test_pooled_tokens_are_one_process_tokens(pooled):
    texts = _sources(300)
    texts[7] = b"\xff\xfe not text"  # bytes: decoded with replacement, as in one process
    names = [f"pkg/m{i}.py" for i in range(len(texts))]
    (buffer,) = raw_buffers(texts)
    for normalize in ("identifiers", "none"):
        config = FingerprintConfig(features="code", code_normalize=normalize)
        alone = code_token_buffer(buffer, names, config, workers=1)
        _equal(code_token_buffer(buffer, names, config, workers=2), alone)
        assert len(alone[2]) == len(texts) + 1 and alone[1][-1] == len(alone[0])


def test_skipped_documents_have_no_tokens_in_the_pool(pooled):
    texts = [*_sources(40), 12, *_sources(40)]
    (buffer,) = raw_buffers(texts, "skip")
    config = FingerprintConfig(features="code", language="python")
    tokens = code_token_buffer(buffer, None, config, workers=2)
    _equal(tokens, code_token_buffer(buffer, None, config, workers=1))
    assert tokens[2][41] == tokens[2][40]  # the skipped one


def test_fingerprint_batch_gives_the_same_bits_on_every_core_count(pooled):
    texts = _sources(200)
    fingerprinter = Fingerprinter(features="code", language="python", bits=128)
    one = fingerprinter.fingerprint_batch(texts, n_jobs=1)
    np.testing.assert_array_equal(fingerprinter.fingerprint_batch(texts, n_jobs=2), one)
    assert [fingerprinter.fingerprint(t) for t in texts[:5]] == [
        int(row[0]) | int(row[1]) << 64 for row in one[:5]
    ]


def test_a_worker_error_names_the_file(pooled):
    texts = _sources(50)
    names = [f"pkg/m{i}.py" for i in range(len(texts))]
    names[33] = "pkg/notes.unknown-suffix"
    with pytest.raises(ConfigError, match=r"pkg/notes\.unknown-suffix: no language is known"):
        Fingerprinter(features="code").fingerprint_batch(texts, n_jobs=2, names=names)


tokens = st.lists(st.text(st.characters(codec="utf-8"), max_size=4), max_size=4)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(tokens, max_size=4), max_size=4))
def test_joined_pieces_are_the_whole(pieces):
    """Each piece a list of documents' tokens: joined, their token buffers are the buffer of
    all the documents in turn."""
    whole = token_buffer([document for piece in pieces for document in piece])
    _equal(lexing.joined([token_buffer(piece) for piece in pieces]), whole)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=8), st.data())
def test_a_slice_is_the_subset_of_its_documents(texts, data):
    """What a worker is handed: documents lo..hi-1 in one piece, equal to picking them."""
    from neardup.fingerprint.text_buffers import TextBuffer

    raw = [text.encode("utf-8") for text in texts]
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in raw])]).astype(np.int64)
    data_bytes = np.frombuffer(b"".join(raw), dtype=np.uint8)
    buffer = TextBuffer(data_bytes, offsets, np.array([i % 3 == 0 for i in range(len(raw))], dtype=bool))
    lo = data.draw(st.integers(0, len(raw)))
    hi = data.draw(st.integers(lo, len(raw)))
    part, picked = buffer.slice(lo, hi), buffer.subset(np.arange(lo, hi))
    np.testing.assert_array_equal(part.data, picked.data)
    np.testing.assert_array_equal(part.offsets, picked.offsets)
    np.testing.assert_array_equal(part.skipped, picked.skipped)
