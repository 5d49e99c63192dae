"""Long documents that share boilerplate, for ``bench_passages.py --long``: what a set of real
long documents (manuals, licensed sources, pages of one site) holds and the generated bench
of short hosts does not.

Every document is built from the pool's real paragraphs (``bench_passages.ParagraphPool``):

* boilerplate blocks, each its own run of real paragraphs: licences (300-1,500 words), headers
  and navigation (30-120 words), notices (60-200 words) and footers (40-150 words). Each block
  is held by a share of the documents drawn per block, from a few hundred to most of them
  (``BLOCK_SHARE``); a licence names its project and year (two words filled per document
  from ``VARIANTS`` values each), as real copyright lines do. A document holds its blocks in
  one order: headers, navigation, body, notice, licences, footers;
* a body of its own paragraphs, so that documents are 4-24 KB (log-uniform; ~13.5 KB mean);
* planted passages, as the bench's main corpus plants them (50-400 words at 0-10% word
  edits), each between two documents, both copies inside the bodies.

The truth kept: each planted passage's span in both documents, and each document's
boilerplate blocks' spans, so a reported row not planted is right when both its copies lie in
boilerplate both documents hold (a block below ``--common-docs`` copies, or a licence's
variant), else checked by word LCS as the main bench checks it.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

MB = 1e6
DOC_KB = (4.0, 24.0)  # log-uniform: ~13.5 KB mean with the boilerplate
# (kind, words low, words high, blocks of the kind); position in the document is the kind's order
BLOCK_KINDS = (
    ("header", 30, 80, 4),
    ("navigation", 50, 120, 4),
    ("notice", 60, 200, 4),
    ("licence", 300, 1500, 6),
    ("footer", 40, 150, 4),
)
BLOCK_SHARE = (0.05, 0.9)  # share of documents holding a block, log-uniform
MOST_SHARE = (0.6, 0.9)  # one block of each kind is held by most documents
VARIANTS = 20  # values of a licence's project and year words
LENGTHS = (50, 100, 200, 400)
EDIT_RATES = (0.0, 0.02, 0.05, 0.10)
SIZES = {"quick": dict(docs=600, per_cell=3), "full": dict(docs=3000, per_cell=25)}


@dataclass
class Block:
    kind: str
    text: str
    share: float
    slots: list[int] = field(default_factory=list)  # word numbers filled per document


@dataclass
class LongCorpus:
    texts: list[str]
    planted: list[Any]  # bench_passages.Planted
    boilerplate: list[list[tuple[int, int, int]]]  # per document: (block, start, end)
    blocks: list[Block]


def build(pool: Any, docs: int, per_cell: int, seed: int) -> LongCorpus:
    """``docs`` long documents with shared boilerplate and ``per_cell`` planted passages per
    (length, edit rate) cell, in a seeded order."""
    from bench_passages import WORD, Planted, _Paragraphs, edit, insert

    rng = np.random.default_rng([seed, 45])
    paragraphs = _Paragraphs(pool)
    vocabulary = WORD.findall(" ".join(paragraphs.take()[0] for _ in range(300)))
    blocks: list[Block] = []
    for kind, lo, hi, count in BLOCK_KINDS:
        for k in range(count):
            words = int(math.exp(rng.uniform(math.log(lo), math.log(hi))))
            share = rng.uniform(*MOST_SHARE) if k == 0 else math.exp(rng.uniform(*np.log(BLOCK_SHARE)))
            text = paragraphs.passage(words)
            slots = (
                sorted(rng.choice(min(words, 40), size=2, replace=False).tolist())
                if kind == "licence"
                else []
            )
            blocks.append(Block(kind, text, float(share), slots))
    values = [vocabulary[int(i)] for i in rng.choice(len(vocabulary), size=VARIANTS, replace=False)]
    holds = rng.random((docs, len(blocks))) < np.array([b.share for b in blocks])
    texts: list[str] = []
    boilerplate: list[list[tuple[int, int, int]]] = []
    bodies: list[tuple[int, int]] = []  # each document's body [start, end)
    for d in range(docs):
        size = math.exp(rng.uniform(*np.log(DOC_KB))) * 1000
        before: list[tuple[int, str]] = []
        after: list[tuple[int, str]] = []
        for b, block in enumerate(blocks):
            if holds[d, b]:
                text = _fill(block, values, rng) if block.slots else block.text
                (before if block.kind in ("header", "navigation") else after).append((b, text))
        body = _body(paragraphs, size - sum(len(t) for _, t in before + after))
        parts, spans, at = [], [], 0
        for b, text in [*before, (-1, body), *after]:
            if b >= 0:
                spans.append((b, at, at + len(text)))
            else:
                bodies.append((at, at + len(text)))
            parts.append(text)
            at += len(text) + 2
        texts.append("\n\n".join(parts))
        boilerplate.append(spans)
    planted: list[Any] = []
    chosen = rng.permutation(docs)
    used = 0
    for length in LENGTHS:
        for rate in EDIT_RATES:
            edits = math.floor(rate * length + 0.5)
            for _ in range(per_cell):
                source, copy = (int(x) for x in chosen[used : used + 2])
                used += 2
                original = paragraphs.passage(length)
                edited = edit(original, edits, rng, vocabulary)
                spans = []
                for d, passage in ((source, original), (copy, edited)):
                    start, end = bodies[d]
                    body, at = insert(texts[d][start:end], passage, rng)
                    texts[d] = texts[d][:start] + body + texts[d][end:]
                    grown = len(body) - (end - start)
                    boilerplate[d] = [
                        (b, s + grown, e + grown) if s >= end else (b, s, e) for b, s, e in boilerplate[d]
                    ]
                    bodies[d] = (start, end + grown)
                    spans.append((start + at, start + at + len(passage)))
                planted.append(Planted(length, rate, edits, False, source, copy, spans[0], spans[1]))
    return LongCorpus(texts, planted, boilerplate, blocks)


def _fill(block: Block, values: list[str], rng: np.random.Generator) -> str:
    """The block with its slot words replaced by values drawn for this document."""
    from bench_passages import WORD

    spans = [m.span() for m in WORD.finditer(block.text)]
    text = block.text
    for slot in reversed(block.slots):
        a, b = spans[slot]
        text = text[:a] + values[int(rng.integers(len(values)))] + text[b:]
    return text


def _body(paragraphs: Any, chars: float) -> str:
    parts: list[str] = []
    total = 0
    while total < max(chars, 1500):
        text, _ = paragraphs.take()
        parts.append(text)
        total += len(text) + 2
    return "\n\n".join(parts)


def run_cli(path: Path, folder: Path, repeats: int, options: dict[str, Any]) -> dict[str, Any]:
    """``neardup passages`` and ``neardup dedup`` on the JSONL file, each ``repeats`` times in
    turn (subprocesses; the kernels compiled and cached before): the best times and their
    ratio, and the passages' outputs of the last run."""
    passages = [
        *("passages", str(path), "--id-field", "id", "-q", "-o", str(folder / "shared.tsv")),
        *("--common", str(folder / "common.tsv")),
        *("--min-words", str(options["min_words"]), "--min-similarity", str(options["min_similarity"])),
    ]
    dedup = ["dedup", str(path), "--id-field", "id", "-q", "-o", str(folder / "kept.jsonl")]
    times: dict[str, list[float]] = {"passages": [], "dedup": []}
    for _ in range(repeats):
        for name, argv in (("dedup", dedup), ("passages", passages)):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "neardup", *argv], check=True)
            times[name].append(time.perf_counter() - t)
    best = {name: min(v) for name, v in times.items()}
    return {
        "times": times,
        **{f"{k}_s": v for k, v in best.items()},
        "ratio": best["passages"] / best["dedup"],
    }


def read_rows(folder: Path) -> tuple[Any, int]:
    """The found rows (``bench_passages.Found``) and the common passages' count."""
    import pyarrow.csv as pacsv
    from bench_passages import Found

    parse = pacsv.ParseOptions(delimiter="\t")
    shared = pacsv.read_csv(folder / "shared.tsv", parse_options=parse)
    common = pacsv.read_csv(folder / "common.tsv", parse_options=parse)
    columns = ("id_a", "id_b", "start_a", "end_a", "start_b", "end_b")
    return Found(*(shared.column(c).to_numpy().astype(np.int64) for c in columns)), common.num_rows


def score_long(corpus: LongCorpus, found: Any, options: dict[str, Any]) -> dict[str, Any]:
    """Recall as the main bench scores it; precision over reported document pairs: planted
    pairs, pairs each of whose rows lies in boilerplate both documents hold, and the first
    MAX_VERIFIED others checked by word LCS (the rest counted wrong)."""
    from bench_passages import MAX_VERIFIED, _natural_overlap, score

    recall = score(found, corpus.planted, corpus.texts, options)
    del recall["_hit"], recall["examples"]
    truth = {(min(p.source, p.copy), max(p.source, p.copy)) for p in corpus.planted}
    rows: dict[tuple[int, int], list[int]] = {}
    for r, pair in enumerate(zip(found.doc_a.tolist(), found.doc_b.tolist())):
        rows.setdefault(pair, []).append(r)
    boilerplate_pairs, unexplained = 0, []
    for pair, pair_rows in rows.items():
        if pair in truth:
            continue
        if all(_in_boilerplate(corpus, found, r) for r in pair_rows):
            boilerplate_pairs += 1
        else:
            unexplained.append(pair)
    checked = [
        all(_natural_overlap(corpus.texts, found, r, options)["similar"] for r in rows[p])
        for p in unexplained[:MAX_VERIFIED]
    ]
    wrong = len(unexplained) - sum(checked)
    return {
        "recall": recall["recall"],
        "cells": recall["cells"],
        "precision": (len(rows) - wrong) / len(rows) if rows else None,
        "pairs": len(rows),
        "rows": len(found.doc_a),
        "planted_pairs_found": len(set(rows) & truth),
        "boilerplate_pairs": boilerplate_pairs,
        "other_pairs": len(unexplained),
        "other_pairs_checked": len(checked),
        "wrong_pairs": wrong,
    }


def _in_boilerplate(corpus: LongCorpus, found: Any, r: int) -> bool:
    """Whether row ``r``'s copies each lie (90% of their characters or more) in blocks that
    both its documents hold."""
    a, b = int(found.doc_a[r]), int(found.doc_b[r])
    shared = {k for k, _, _ in corpus.boilerplate[a]} & {k for k, _, _ in corpus.boilerplate[b]}
    for doc, start, end in ((a, found.start_a[r], found.end_a[r]), (b, found.start_b[r], found.end_b[r])):
        inside = sum(
            max(0, min(end, e) - max(start, s)) for k, s, e in corpus.boilerplate[doc] if k in shared
        )
        if inside < 0.9 * (end - start):
            return False
    return True


def write_jsonl(texts: list[str], path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts))


def main_long(args: Any, pool: Any) -> dict[str, Any]:
    """The ``--long`` run: build, time both commands, score."""
    size = dict(SIZES["quick" if args.quick else "full"])
    if args.docs is not None:
        size["docs"] = args.docs
    if args.per_cell is not None:
        size["per_cell"] = args.per_cell
    options = {"min_words": args.min_words, "min_similarity": args.min_similarity}
    t = time.perf_counter()
    corpus = build(pool, size["docs"], size["per_cell"], args.seed)
    text_bytes = sum(len(x.encode()) for x in corpus.texts)
    holders = [
        sum(any(k == b for k, _, _ in spans) for spans in corpus.boilerplate)
        for b in range(len(corpus.blocks))
    ]
    results: dict[str, Any] = {
        "corpus": {
            "documents": len(corpus.texts),
            "text_bytes": text_bytes,
            "mean_kb": text_bytes / len(corpus.texts) / 1000,
            "planted": len(corpus.planted),
            "blocks": [
                {"kind": b.kind, "documents": h, "chars": len(b.text), "variant": bool(b.slots)}
                for b, h in zip(corpus.blocks, holders)
            ],
            "build_s": time.perf_counter() - t,
        }
    }
    c = results["corpus"]
    print(
        f"long documents: {c['documents']:,}, {text_bytes / MB:.1f} MB ({c['mean_kb']:.1f} KB each), "
        f"{c['planted']} planted; {len(corpus.blocks)} boilerplate blocks in "
        f"{min(holders)}-{max(holders)} documents each; built in {c['build_s']:.1f} s",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        path = folder / "long.jsonl"
        write_jsonl(corpus.texts, path)
        subprocess.run([sys.executable, "-m", "neardup", "warmup"], check=True, capture_output=True)
        timing = run_cli(path, folder, args.repeats or 2, options)
        found, common = read_rows(folder)
    results["cli"] = timing
    results["quality"] = score_long(corpus, found, options)
    results["common_passages"] = common
    q = results["quality"]
    print(
        f"   neardup passages {timing['passages_s']:.2f} s, neardup dedup {timing['dedup_s']:.2f} s "
        f"(best of {args.repeats or 2}): passages / dedup {timing['ratio']:.2f}x\n"
        f"   recall {q['recall']:.3f}, precision {_fmt(q['precision'])} over {q['pairs']:,} pairs "
        f"({q['rows']:,} rows; {q['planted_pairs_found']} planted, {q['boilerplate_pairs']:,} in shared "
        f"boilerplate, {q['other_pairs']} others of which {q['wrong_pairs']} wrong); "
        f"{common} common passages",
        flush=True,
    )
    for cell in q["cells"]:
        print(f"   {cell['length']:>4} words {cell['rate'] * 100:>3g}%: recall {cell['recall']:.3f}")
    return results


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.4f}"
