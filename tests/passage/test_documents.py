"""What each document copies: the copied share, the stripped texts, and the documents written
back in their own format (``--documents``, ``--strip``, ``--max-copied``)."""

from __future__ import annotations

import json
import random

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import neardup
from neardup.passage.documents import CopiedSpans

FOOTER = " ".join(f"footer{i}" for i in range(60))


def naive_copied(spans: list[tuple[int, int, int]], texts: list[str]) -> tuple[list[int], list[str]]:
    """Characters copied per document (overlaps once), and the texts without them."""
    marked = [[False] * len(t) for t in texts]
    for doc, start, end in spans:
        for i in range(start, end):
            marked[doc][i] = True
    kept = ["".join(c for c, m in zip(t, mark) if not m) for t, mark in zip(texts, marked)]
    return [sum(mark) for mark in marked], kept


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 30), st.integers(0, 12)), max_size=12))
def test_copied_spans_equal_a_character_mask(spans):
    texts = ["abcdefghijklmnopqrstuvwxyz0123456789abcdefghij"[: 20 + 7 * d] for d in range(4)]
    spans = [(d, s, min(s + n, len(texts[d]))) for d, s, n in spans]
    copied = CopiedSpans.of(
        *(np.array(column, dtype=np.int64).reshape(-1) for column in zip(*spans or [(0, 0, 0)]))
    )
    chars, kept = naive_copied(spans, texts)
    assert copied.copied_chars(4).tolist() == chars
    assert [copied.cut(d, t) for d, t in enumerate(texts)] == kept


def _pages(n: int = 12) -> tuple[list[dict], str]:
    rng = random.Random(5)
    vocabulary = [f"w{i}" for i in range(5000)]
    bodies = [[rng.choice(vocabulary) for _ in range(300)] for _ in range(n)]
    quote = " ".join(bodies[2][100:220])
    bodies[7] = bodies[7][:150] + quote.split() + bodies[7][150:]
    pages = [
        {"url": f"u{i}", "n": i, "text": " ".join(body) + "\n" + FOOTER} for i, body in enumerate(bodies)
    ]
    return pages, quote


def test_each_copy_is_cut_where_it_was_copied_and_kept_where_it_first_is():
    pages, quote = _pages()
    result = neardup.passages([p["text"] for p in pages], common_docs=10)
    stripped = result.stripped_texts()
    assert FOOTER in stripped[0] and not any(FOOTER.split()[30] in t for t in stripped[1:])
    assert quote in stripped[2] and quote.split()[60] not in stripped[7].split()
    # What is left of page 7 is its own words, whole: 300 of them.
    assert stripped[7].split() == pages[7]["text"].split()[:150] + pages[7]["text"].split()[270:420]
    share = result.copied_share()
    chars = np.array([len(p["text"]) for p in pages])
    assert share[0] == 0
    assert share[1] == pytest.approx(len(FOOTER) / chars[1], abs=0.01)
    assert share[7] == pytest.approx((len(FOOTER) + len(quote)) / chars[7], abs=0.01)


def test_documents_are_written_back_with_every_field(tmp_path):
    pages, _ = _pages()
    path = tmp_path / "pages.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in pages))
    result = neardup.passages(path, common_docs=10, id_field="url")
    assert result.write_documents(tmp_path / "clean.jsonl", max_copied=0.4) == 11
    written = [json.loads(line) for line in (tmp_path / "clean.jsonl").read_text().splitlines()]
    assert [w["url"] for w in written] == [f"u{i}" for i in range(12) if i != 7]  # 41% copied
    assert [w["n"] for w in written] == [int(w["url"][1:]) for w in written]
    assert written[0]["text"] == pages[0]["text"] and written[1]["text"] == pages[1]["text"].removesuffix(
        FOOTER
    )
    assert result.write_documents(tmp_path / "all.parquet", strip=False) == 12
    table = pq.read_table(tmp_path / "all.parquet")
    assert table.column_names == ["url", "n", "text"] and table.column("text").to_pylist() == [
        p["text"] for p in pages
    ]


def test_the_command_writes_the_stripped_documents(tmp_path, capsys):
    from neardup.cli import main

    pages, _ = _pages()
    (tmp_path / "pages.txt").write_text("".join(p["text"].replace("\n", " ") + "\n" for p in pages))
    status = main([
        "passages", str(tmp_path / "pages.txt"), "--common-docs", "10", "-q",
        "--documents", str(tmp_path / "clean.txt"), "--strip", "-o", str(tmp_path / "shared.tsv"),
    ])  # fmt: skip
    assert status == 0
    lines = (tmp_path / "clean.txt").read_text().splitlines()
    assert len(lines) == 12 and lines[0].endswith(FOOTER) and not lines[5].endswith(FOOTER.split()[-1])
    with pytest.raises(SystemExit):
        main(["passages", str(tmp_path / "pages.txt"), "--strip"])
    assert "--strip and --max-copied shape --documents FILE" in capsys.readouterr().err


def test_keep_says_which_copy_is_the_original():
    pages, quote = _pages()
    texts = [p["text"] for p in pages]
    result = neardup.passages(texts, common_docs=10)
    # Page 7 (quote + 300 words of its own) is longer than page 2 (300 + the quote inside):
    # kept first by length, it keeps the quote and page 2 loses it.
    first, longest = result.stripped_texts(), result.stripped_texts("longest")
    assert quote in first[2] and quote not in first[7]
    assert quote in longest[7] and quote.split()[60] not in longest[2].split()
    # The footer stays on the longest page of all, which is page 7.
    assert FOOTER in longest[7] and sum(FOOTER in t for t in longest) == 1
    shares = result.copied_share("longest")
    assert shares[7] == 0 and shares[2] > 0
    with pytest.raises(neardup.ConfigError, match="keep='oldest' is not known"):
        result.copied_share("oldest")
