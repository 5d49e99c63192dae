"""End-to-end speed of ``neardup dedup`` on JSONL and Parquet, with datasketch's MinHash LSH on
the same corpus and a recall figure for each.

Corpus: N documents of ~2 KB of English-like text (Zipf-Mandelbrot over a generated vocabulary
of 30,000 words, in sentences and paragraphs), deterministic from ``--seed``; 10% of them are
near-duplicates planted as edited copies of an earlier original (each copy's words substituted,
deleted or inserted at a rate drawn from 0.5%, 1%, 2%, 3% or 5%). Written once as JSONL and as
Parquet (columns id, url, text, n = words) and cached under ``--workdir`` by N, seed and
generator version. Generation is numpy throughout (no Python loop per word).

In the same run:

* compile time: a tiny corpus is deduplicated in child processes, first with an empty
  ``NUMBA_CACHE_DIR`` (with ``--quick``: the usual cache, as found) and then again warm; every
  later child uses that warm cache;
* ``neardup dedup corpus.jsonl -o kept.jsonl --clusters clusters.parquet`` and
  ``neardup dedup corpus.parquet -o kept.parquet``, each in its own child process: wall time,
  MB/s of the input file, docs/s, CPU time, time per stage (parsed from the summary's
  ``neardup: time:`` line), peak RSS (the child's VmHWM), duplicates removed, and recall of the
  planted near-duplicates (removed, and in the same cluster as their original), by edit rate;
* the skewed shapes of real crawls (``--shapes``), each deduplicated as the JSONL run is:
  N copies of one page, N documents in groups of 1,000 copies, and N/10 pages of one
  template differing in a date, a number and a word; time as a ratio to the JSONL run, peak RSS;
* datasketch ``MinHash`` (128 permutations) + ``MinHashLSH`` (threshold 0.8) in Python, on the
  first ``--peer-docs`` documents (lowercased ``\\w+`` words, 3-shingles): docs/s, time
  extrapolated to N, and recall on the same subsample beside neardup's.

    python benchmarks/bench_dedup.py --quick          # N = 20k (~40 MB); under a minute, warm cache
    python benchmarks/bench_dedup.py --json out.json  # N = 1M (~2 GB JSONL); ~5 min, +1.5 min generating

MB is 10**6 bytes. The last stdout line is ``RESULT {json}`` with every figure.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fingerprint import vocabulary

from _common import finish, machine_info

MB = 1e6
GEN_VERSION = 1  # bump when the corpus changes, so cached corpora are made again
SIZES = {
    "quick": dict(docs=20_000, peer_docs=5_000),
    "full": dict(docs=1_000_000, peer_docs=50_000),
}
TINY_DOCS = 300
CHUNK_DOCS = 10_000  # documents generated, and Parquet rows per row group, at a time
VOCAB_SIZE = 30_000
MEAN_DOC_BYTES = 2048
DUP_FRACTION = 0.10
EDIT_RATES = (0.005, 0.01, 0.02, 0.03, 0.05)
NUM_PERM = 128
LSH_THRESHOLD = 0.8
SHINGLE = 3
WORD_RE = re.compile(r"\w+")
FORMATS = ("jsonl", "parquet")

# The targets, on 2 cores.
TARGET_JSONL_MB_S = 100.0
TARGET_PEAK_BYTES = 2e9
TARGET_PEAK_DOCS = 1_000_000  # the memory target is set for the 1M-document run


# ---------------------------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------------------------


class Vocabulary:
    """The words (most frequent first) and a table of rendered tokens: token
    ``(word + size * capital) * 5 + sep`` is the word, capitalised or not, then its separator
    (" ", ", ", ". ", a paragraph break, or the final "."), as one byte buffer with offsets."""

    SEPS = (" ", ", ", ". ", ".\n\n", ".")
    SPACE, COMMA, PERIOD, PARAGRAPH, END = range(5)
    LUT_BITS = 22

    def __init__(self, seed: int) -> None:
        words = vocabulary(VOCAB_SIZE, random.Random(seed))
        self.size = len(words)
        encoded = [
            (w + sep).encode("ascii")
            for w in words + [w[:1].upper() + w[1:] for w in words]
            for sep in self.SEPS
        ]
        self.lengths = np.array([len(t) for t in encoded], dtype=np.int32)
        self.offsets = np.concatenate(([0], np.cumsum(self.lengths)[:-1])).astype(np.int32)
        self.data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        # Zipf-Mandelbrot, p(rank) ~ 1 / (rank + 2.7) (Mandelbrot's fit to English), drawn
        # through a table of the inverse CDF at 2**22 points (the rarest word still has ~14):
        # several times faster than searchsorted on every draw.
        p = 1.0 / (np.arange(self.size) + 2.7)
        p /= p.sum()
        points = (np.arange(1 << self.LUT_BITS) + 0.5) / (1 << self.LUT_BITS)
        self.inverse_cdf = np.minimum(np.searchsorted(np.cumsum(p), points), self.size - 1).astype(np.int32)
        self.mean_token_bytes = float(np.dot(p, [len(w) for w in words])) + 1.2  # + a separator

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` Zipf-distributed word ids, int32."""
        return self.inverse_cdf[rng.integers(0, 1 << self.LUT_BITS, n)]


class Docs:
    """Documents as words: ``words`` (int32 word ids) and ``seps`` (int8, the separator after
    each word), document d being ``[bounds[d], bounds[d + 1])``."""

    def __init__(self, words: np.ndarray, seps: np.ndarray, bounds: np.ndarray) -> None:
        self.words, self.seps, self.bounds = words, seps, bounds

    def __len__(self) -> int:
        return len(self.bounds) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.bounds)

    def take(self, order: np.ndarray) -> Docs:
        """The documents at ``order``, in that order."""
        idx, bounds = _ranges(self.bounds[:-1][order], self.lengths[order])
        return Docs(self.words[idx], self.seps[idx], bounds)

    @staticmethod
    def concat(parts: list[Docs]) -> Docs:
        bounds = np.concatenate(([0], np.cumsum(np.concatenate([p.lengths for p in parts]))))
        return Docs(np.concatenate([p.words for p in parts]), np.concatenate([p.seps for p in parts]), bounds)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated ``arange(s, s + n)`` for each (s, n), and the bounds of each in the result."""
    bounds = np.concatenate(([0], np.cumsum(lengths)))
    idx = np.repeat(starts - bounds[:-1], lengths) + np.arange(bounds[-1])
    return idx, bounds


def _end_documents(seps: np.ndarray, bounds: np.ndarray) -> None:
    """Every document ends with the final period, and only there."""
    seps[seps == Vocabulary.END] = Vocabulary.PERIOD
    seps[bounds[1:] - 1] = Vocabulary.END


def originals(rng: np.random.Generator, n: int, vocab: Vocabulary) -> Docs:
    """``n`` documents of log-normal length around MEAN_DOC_BYTES, sentences of ~14 words, one
    in five sentences ending a paragraph."""
    sigma = 0.35
    mean_words = MEAN_DOC_BYTES / vocab.mean_token_bytes
    lengths = np.clip(rng.lognormal(np.log(mean_words) - sigma**2 / 2, sigma, n), 60, 1500).astype(np.int64)
    bounds = np.concatenate(([0], np.cumsum(lengths)))
    total = int(bounds[-1])
    words = vocab.draw(rng, total)
    u = rng.random(total)
    seps = np.where(
        u < 1 / 14, Vocabulary.PERIOD, np.where(u < 1 / 14 + 0.06, Vocabulary.COMMA, Vocabulary.SPACE)
    ).astype(np.int8)
    seps[(seps == Vocabulary.PERIOD) & (rng.random(total) < 0.2)] = Vocabulary.PARAGRAPH
    _end_documents(seps, bounds)
    return Docs(words, seps, bounds)


def edit(
    docs: Docs, rates: np.ndarray, rng: np.random.Generator, vocab: Vocabulary
) -> tuple[Docs, np.ndarray]:
    """Copies of ``docs`` with max(1, floor(rate * words)) distinct words of each edited, each
    edit a substitution, a deletion or an insertion (of a Zipf-drawn word before it), chosen
    evenly. Returns the copies and the number of edits of each."""
    n, lengths = len(docs), docs.lengths
    total = int(docs.bounds[-1])
    doc_of = np.repeat(np.arange(n), lengths)
    edits = np.maximum(1, np.floor(rates * lengths)).astype(np.int64)
    order = np.lexsort((rng.random(total), doc_of))  # a random order of the words of each document
    rank = np.empty(total, dtype=np.int64)
    rank[order] = np.arange(total) - docs.bounds[doc_of[order]]
    edited = rank < edits[doc_of]
    op = rng.integers(0, 3, total)
    words, seps = docs.words.copy(), docs.seps.copy()
    substitute = edited & (op == 0)
    words[substitute] = vocab.draw(rng, int(substitute.sum()))
    keep = ~(edited & (op == 1))
    at = np.flatnonzero(edited & (op == 2))
    words = np.insert(words, at, vocab.draw(rng, len(at)))
    seps = np.insert(seps, at, np.int8(Vocabulary.SPACE))
    doc_of = np.insert(doc_of, at, doc_of[at])
    keep = np.insert(keep, at, True)
    words, seps, doc_of = words[keep], seps[keep], doc_of[keep]
    bounds = np.concatenate(([0], np.cumsum(np.bincount(doc_of, minlength=n))))
    _end_documents(seps, bounds)
    return Docs(words, seps, bounds), edits


def render(docs: Docs, vocab: Vocabulary) -> tuple[np.ndarray, np.ndarray]:
    """(UTF-8 bytes, int64 offsets (n + 1,)) of the documents' texts, a sentence starting with
    a capital: one gather of the token table, no Python per word.

    The gather index is built as a running sum of steps (1 inside a token, a jump between
    tokens) in one reused int32 buffer: fresh large arrays cost more in page faults than the
    arithmetic on them."""
    previous = np.empty(len(docs.words), dtype=np.int8)
    previous[0] = Vocabulary.END
    previous[1:] = docs.seps[:-1]
    capital = previous >= Vocabulary.PERIOD
    capital[docs.bounds[:-1]] = True
    tokens = (docs.words + vocab.size * capital) * len(Vocabulary.SEPS) + docs.seps
    lengths = vocab.lengths[tokens]
    starts = vocab.offsets[tokens]
    ends = np.cumsum(lengths, dtype=np.int64)
    total = int(ends[-1])
    gather = _scratch(total)
    gather.fill(1)
    gather[0] = starts[0]
    gather[ends[:-1]] = starts[1:] - starts[:-1] - lengths[:-1] + 1
    np.cumsum(gather, out=gather)
    return vocab.data[gather], np.concatenate(([0], ends[docs.bounds[1:] - 1]))


_SCRATCH = np.zeros(0, dtype=np.int32)


def _scratch(n: int) -> np.ndarray:
    global _SCRATCH  # noqa: PLW0603 - one scratch buffer reused across calls, grown on demand
    if _SCRATCH.shape[0] < n:
        _SCRATCH = np.empty(int(n * 1.25), dtype=np.int32)
    return _SCRATCH[:n]


def _json_escape_newlines(docs: Docs, data: np.ndarray, offsets: np.ndarray) -> tuple[bytes, np.ndarray]:
    """The texts as JSON string contents, and their offsets: the only characters needing
    escapes are the paragraph breaks' two newlines (the vocabulary has no quote, backslash or
    other control character)."""
    paragraphs = np.add.reduceat((docs.seps == Vocabulary.PARAGRAPH).astype(np.int64), docs.bounds[:-1])
    return data.tobytes().replace(b"\n", b"\\n"), offsets + 2 * np.concatenate(([0], np.cumsum(paragraphs)))


def plan_duplicates(n: int, seed: int) -> dict[str, np.ndarray]:
    """Which positions are near-duplicates, of which earlier original, at which edit rate."""
    rng = np.random.default_rng([seed, 1])
    is_dup = rng.random(n) < DUP_FRACTION
    is_dup[0] = False
    originals_at = np.flatnonzero(~is_dup)
    source = np.full(n, -1, dtype=np.int64)
    dups = np.flatnonzero(is_dup)
    before = np.searchsorted(originals_at, dups)  # originals earlier than each duplicate (>= 1)
    source[dups] = originals_at[(rng.random(len(dups)) * before).astype(np.int64)]
    rate = np.zeros(n, dtype=np.float64)
    rate[dups] = rng.choice(EDIT_RATES, len(dups))
    return {"is_dup": is_dup, "source": source, "rate": rate}


def generate(n: int, seed: int, folder: Path) -> dict[str, Any]:
    """Write corpus.jsonl, corpus.parquet and truth.npz into ``folder``; meta.json last."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    vocab = Vocabulary(seed)
    plan = plan_duplicates(n, seed)
    is_dup, source, rate = plan["is_dup"], plan["source"], plan["rate"]
    edits = np.zeros(n, dtype=np.int64)
    needed = np.zeros(n, dtype=bool)
    needed[source[is_dup]] = True
    last_use = np.full(n, -1, dtype=np.int64)
    np.maximum.at(last_use, source[is_dup], np.flatnonzero(is_dup))
    store: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    schema = pa.schema([("id", pa.int64()), ("url", pa.string()), ("text", pa.string()), ("n", pa.int64())])
    jsonl_tmp, parquet_tmp = folder / "corpus.jsonl.tmp", folder / "corpus.parquet.tmp"
    text_bytes = 0
    with open(jsonl_tmp, "wb") as jsonl, pq.ParquetWriter(parquet_tmp, schema) as parquet:
        for chunk, start in enumerate(range(0, n, CHUNK_DOCS)):
            stop = min(start + CHUNK_DOCS, n)
            rng = np.random.default_rng([seed, 2, chunk])
            positions = np.arange(start, stop)
            orig_at = positions[~is_dup[start:stop]]
            dup_at = positions[is_dup[start:stop]]
            made = originals(rng, len(orig_at), vocab)
            for i in np.flatnonzero(needed[orig_at]).tolist():
                a, b = made.bounds[i], made.bounds[i + 1]
                store[int(orig_at[i])] = (made.words[a:b].copy(), made.seps[a:b].copy())
            parts = [made]
            if len(dup_at):
                sources = [store[s] for s in source[dup_at].tolist()]
                copies = Docs(
                    np.concatenate([w for w, _ in sources]),
                    np.concatenate([s for _, s in sources]),
                    np.concatenate(([0], np.cumsum([len(w) for w, _ in sources]))),
                )
                edited, edits[dup_at] = edit(copies, rate[dup_at], rng, vocab)
                parts.append(edited)
                for s in np.unique(source[dup_at]).tolist():
                    if last_use[s] < stop:
                        del store[s]
            docs = Docs.concat(parts).take(np.argsort(np.concatenate([orig_at, dup_at]), kind="stable"))
            data, offsets = render(docs, vocab)
            text_bytes += int(offsets[-1])
            escaped, json_offsets = _json_escape_newlines(docs, data, offsets)
            view = memoryview(escaped)
            n_words = docs.lengths.tolist()
            lines = []
            for i, (a, b) in enumerate(zip(json_offsets[:-1].tolist(), json_offsets[1:].tolist())):
                p = start + i
                lines += (
                    f'{{"id": {p}, "url": "{_url(p)}", "text": "'.encode(),
                    view[a:b],
                    f'", "n": {n_words[i]}}}\n'.encode(),
                )
            jsonl.write(b"".join(lines))
            texts = pa.StringArray.from_buffers(
                len(docs), pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)
            )
            urls = [_url(p) for p in positions.tolist()]
            parquet.write_table(
                pa.table(
                    {
                        "id": pa.array(positions),
                        "url": urls,
                        "text": texts,
                        "n": pa.array(n_words, pa.int64()),
                    },
                    schema=schema,
                )
            )
    os.replace(jsonl_tmp, folder / "corpus.jsonl")
    os.replace(parquet_tmp, folder / "corpus.parquet")
    np.savez(folder / "truth.npz", is_dup=is_dup, source=source, rate=rate, edits=edits)
    meta = {
        "docs": n,
        "seed": seed,
        "version": GEN_VERSION,
        "text_bytes": text_bytes,
        "jsonl_bytes": (folder / "corpus.jsonl").stat().st_size,
        "parquet_bytes": (folder / "corpus.parquet").stat().st_size,
        "planted": int(is_dup.sum()),
        "generate_s": time.perf_counter() - t,
    }
    (folder / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return meta


SHAPES = ("identical", "groups", "family")
GROUP_SIZE = 1000


def skewed_corpus(shape: str, n: int, seed: int, workdir: Path) -> tuple[Path, dict[str, Any]]:
    """A JSONL corpus of the skewed shapes real crawls have, cached like the main one:

    * ``identical``: ``n`` copies of one page;
    * ``groups``: ``n`` documents in ``n / 1000`` groups of 1,000 copies, interleaved;
    * ``family``: ``n`` pages of one template that differ in a date, a visitor number and a
      headline word (near-identical: few distinct bits apart, many distinct fingerprints).

    Pages are the main corpus's kind of text (~2 KB). Columns id, text."""
    folder = workdir / f"dedup-{shape}-n{n}-seed{seed}-v{GEN_VERSION}"
    meta_path = folder / "meta.json"
    if meta_path.exists():
        return folder, json.loads(meta_path.read_text())
    t = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    vocab = Vocabulary(seed)
    rng = np.random.default_rng([seed, 3, SHAPES.index(shape)])
    pages = 1 if shape != "groups" else max(1, n // GROUP_SIZE)
    data, offsets = render(originals(rng, pages, vocab), vocab)
    texts = [bytes(data[a:b]).decode() for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]
    escaped = [json.dumps(text) for text in texts]
    headline = ["News", "Update", "Notice", "Report", "Bulletin", "Digest", "Review", "Brief"]
    tmp = folder / "corpus.jsonl.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for start in range(0, n, CHUNK_DOCS):
            lines = []
            for p in range(start, min(n, start + CHUNK_DOCS)):
                if shape == "family":
                    date = f"{2000 + p // 336 % 27}-{1 + p // 28 % 12:02d}-{1 + p % 28:02d}"
                    text = json.dumps(
                        f"{headline[p % len(headline)]} of {date}. {texts[0]} You are visitor {p}."
                    )
                else:
                    text = escaped[p % len(escaped)]
                lines.append(f'{{"id": {p}, "text": {text}}}\n')
            f.write("".join(lines))
    os.replace(tmp, folder / "corpus.jsonl")
    meta = {
        "shape": shape,
        "docs": n,
        "jsonl_bytes": (folder / "corpus.jsonl").stat().st_size,
        "generate_s": time.perf_counter() - t,
    }
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    return folder, meta


def bench_shape(
    shape: str, n: int, seed: int, workdir: Path, env: dict[str, str], extra: list[str]
) -> dict[str, Any]:
    """``neardup dedup`` on a skewed corpus with the main JSONL run's options."""
    folder, meta = skewed_corpus(shape, n, seed, workdir)
    out = workdir / f"out-{shape}-n{n}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    argv = ["dedup", str(folder / "corpus.jsonl"), "-o", str(out / "kept.jsonl")]
    argv += ["--clusters", str(out / "clusters.parquet"), *extra]
    print(f"   neardup {' '.join(argv)}", flush=True)
    r = run_dedup(argv, env, out / "report.json")
    with open(out / "kept.jsonl", "rb") as f:
        kept = sum(1 for _ in f)
    shutil.rmtree(out, ignore_errors=True)
    return {
        "shape": shape,
        "docs": n,
        "input_bytes": meta["jsonl_bytes"],
        "process_s": r["process_s"],
        "peak_rss_mib": (r["peak_rss_kib"] or 0) / 1024,
        "stages": r["stages"],
        "kept": kept,
        "summary": {k: r.get(k) for k in _COUNTS},
        "stderr_tail": r["stderr"].strip().splitlines()[-6:],
    }


def _url(position: int) -> str:
    return f"https://www.site{position % 9973}.example.com/page/{position}.html"


def corpus(n: int, seed: int, workdir: Path, regenerate: bool = False) -> tuple[Path, dict[str, Any], bool]:
    """The cached corpus folder for (n, seed), generated if missing; (folder, meta, cached)."""
    folder = workdir / f"dedup-corpus-n{n}-seed{seed}-v{GEN_VERSION}"
    meta_path = folder / "meta.json"
    if meta_path.exists() and not regenerate:
        meta = json.loads(meta_path.read_text())
        if (
            all((folder / f).exists() for f in ("corpus.jsonl", "corpus.parquet", "truth.npz"))
            and (folder / "corpus.jsonl").stat().st_size == meta["jsonl_bytes"]
        ):
            return folder, meta, True
    meta_path.unlink(missing_ok=True)
    return folder, generate(n, seed, folder), False


def load_truth(folder: Path) -> dict[str, np.ndarray]:
    with np.load(folder / "truth.npz") as f:
        return {k: f[k] for k in f.files}


# ---------------------------------------------------------------------------------------------
# neardup dedup, one child process per run
# ---------------------------------------------------------------------------------------------

# VmHWM, not ru_maxrss: Linux carries the parent's RSS across exec into the child's ru_maxrss,
# so ru_maxrss would read at least this benchmark's own RSS (see bench_fingerprint.py).
_CHILD = r"""
import json, resource, sys, time
started = time.perf_counter()
from neardup.cli import main
status = main(sys.argv[2:])
wall = time.perf_counter() - started
peak_kb = None
with open("/proc/self/status") as f:
    for line in f:
        if line.startswith("VmHWM:"):
            peak_kb = int(line.split()[1])
usage = resource.getrusage(resource.RUSAGE_SELF)
with open(sys.argv[1], "w") as f:
    json.dump({"status": status, "in_process_s": wall, "peak_rss_kib": peak_kb,
               "ru_maxrss_kib": usage.ru_maxrss, "user_s": usage.ru_utime, "sys_s": usage.ru_stime}, f)
sys.exit(status)
"""


def run_dedup(argv: list[str], env: dict[str, str], report: Path, timeout: float = 3600) -> dict[str, Any]:
    """Run ``neardup`` with ``argv`` in a child; its figures, stderr summary and stage times."""
    t = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(report), *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    wall = time.perf_counter() - t
    if done.returncode != 0:
        raise RuntimeError(
            f"neardup {' '.join(argv)} failed (exit {done.returncode}):\n{done.stderr[-3000:]}"
        )
    out = json.loads(report.read_text())
    out["process_s"] = wall
    out["stderr"] = done.stderr
    out.update(parse_summary(done.stderr))
    return out


_STAGES = re.compile(r"^neardup: time: (.*)$", re.M)
_COUNTS = {
    "documents": re.compile(r"^neardup: read ([\d,]+) documents", re.M),
    "pairs": re.compile(r"([\d,]+) pairs between distinct fingerprints", re.M),
    "clusters": re.compile(r"^neardup: ([\d,]+) clusters of near-duplicates", re.M),
    "duplicates": re.compile(r"^neardup: removed ([\d,]+) near-duplicates", re.M),
}


def parse_summary(stderr: str) -> dict[str, Any]:
    """Counts and ``{stage: seconds}`` from the summary ``neardup dedup`` prints to stderr."""
    out: dict[str, Any] = {}
    for key, pattern in _COUNTS.items():
        if found := pattern.search(stderr):
            out[key] = int(found.group(1).replace(",", ""))
    stages: dict[str, float] = {}
    if found := _STAGES.findall(stderr):
        for part in found[-1].split(", "):
            name, seconds, unit = part.rsplit(" ", 2)
            if unit == "s":
                stages[name] = float(seconds)
    out["stages"] = stages
    return out


def dedup_argv(fmt: str, folder: Path, out: Path) -> list[str]:
    if fmt == "jsonl":
        return [
            "dedup",
            str(folder / "corpus.jsonl"),
            "-o",
            str(out / "kept.jsonl"),
            "--clusters",
            str(out / "clusters.parquet"),
        ]
    return ["dedup", str(folder / "corpus.parquet"), "-o", str(out / "kept.parquet")]


def measure_compile(
    tiny: Path, env: dict[str, str], workdir: Path, empty_cache: bool, extra: list[str]
) -> dict[str, Any]:
    """Dedup the tiny corpus in both formats twice, in child processes: the first round
    compiles (from an empty ``NUMBA_CACHE_DIR`` with ``empty_cache``; else with the usual cache,
    which compiles only what is stale or missing), the second loads the kernels from the cache.
    The difference is the compile time; the second round is the warm start-up cost."""
    out: dict[str, Any] = {"cache": "empty NUMBA_CACHE_DIR" if empty_cache else "the usual cache, as found"}
    if empty_cache:
        shutil.rmtree(env["NUMBA_CACHE_DIR"], ignore_errors=True)
    for label in ("first", "warm"):
        runs = {}
        for fmt in FORMATS:
            outdir = workdir / "tiny-out"
            shutil.rmtree(outdir, ignore_errors=True)
            outdir.mkdir(parents=True)
            r = run_dedup(dedup_argv(fmt, tiny, outdir) + extra, env, outdir / "report.json")
            runs[fmt] = {
                "process_s": r["process_s"],
                "in_process_s": r["in_process_s"],
                "stages": r["stages"],
            }
            shutil.rmtree(outdir, ignore_errors=True)
        out[label] = runs
    out["compile_s"] = sum(out["first"][f]["process_s"] - out["warm"][f]["process_s"] for f in FORMATS)
    return out


def kept_ids(fmt: str, out: Path) -> np.ndarray:
    """The ``id`` field of every kept document, read back from the output."""
    import pyarrow as pa
    import pyarrow.json as pa_json
    import pyarrow.parquet as pq

    if fmt == "parquet":
        return pq.read_table(out / "kept.parquet", columns=["id"]).column(0).to_numpy()
    reader = pa_json.open_json(
        out / "kept.jsonl",
        read_options=pa_json.ReadOptions(block_size=16 << 20),
        parse_options=pa_json.ParseOptions(
            explicit_schema=pa.schema([("id", pa.int64())]), unexpected_field_behavior="ignore"
        ),
    )
    return np.concatenate([b.column(0).to_numpy() for b in reader] or [np.zeros(0, np.int64)])


def cluster_labels(path: Path, n: int) -> np.ndarray:
    """Each document's cluster from the clusters file (-1 for a document in none); its ids are
    ``FILE:LINE``, 1-based, and the corpus has no blank lines."""
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=["id", "cluster"])
    lines = np.array([int(s.rsplit(":", 1)[1]) for s in table.column("id").to_pylist()], dtype=np.int64)
    labels = np.full(n, -1, dtype=np.int64)
    labels[lines - 1] = table.column("cluster").to_numpy()
    return labels


def recall(
    truth: dict[str, np.ndarray],
    removed: np.ndarray,
    paired: np.ndarray | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """Planted near-duplicates removed (and, given ``paired``, bool per document: matched to
    their own original), overall and by edit rate; originals removed (false positives).
    ``limit``: the first documents only."""
    n = len(removed) if limit is None else limit
    is_dup, rate = truth["is_dup"][:n], truth["rate"][:n]
    dups = np.flatnonzero(is_dup)
    removed = removed[:n]
    out: dict[str, Any] = {
        "planted": len(dups),
        "removed": int(removed.sum()),
        "recall": float(removed[dups].mean()) if len(dups) else None,
        "originals_removed": int((removed & ~is_dup).sum()),
    }
    out["precision"] = float(removed[dups].sum() / max(out["removed"], 1))
    if paired is not None:
        out["pair_recall"] = float(paired[dups].mean()) if len(dups) else None
    by_rate = {}
    for r in EDIT_RATES:
        at = dups[rate[dups] == r]
        entry = {"planted": len(at), "recall": float(removed[at].mean()) if len(at) else None}
        if paired is not None:
            entry["pair_recall"] = float(paired[at].mean()) if len(at) else None
        by_rate[f"{r:g}"] = entry
    out["by_edit_rate"] = by_rate
    return out


def bench_neardup(
    fmt: str,
    folder: Path,
    meta: dict[str, Any],
    truth: dict[str, np.ndarray],
    env: dict[str, str],
    workdir: Path,
    cpus: int,
    keep_outputs: bool,
    extra: list[str],
) -> dict[str, Any]:
    out = workdir / f"out-n{meta['docs']}-{fmt}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    argv = dedup_argv(fmt, folder, out) + extra
    load = os.getloadavg()[0]
    print(f"   neardup {' '.join(argv)}", flush=True)
    r = run_dedup(argv, env, out / "report.json")
    n = meta["docs"]
    input_bytes = meta[f"{fmt}_bytes"]
    removed = np.ones(n, dtype=bool)
    removed[kept_ids(fmt, out)] = False
    paired = None
    if fmt == "jsonl":
        labels = cluster_labels(out / "clusters.parquet", n)
        paired = (labels >= 0) & (labels == labels[np.maximum(truth["source"], 0)])
    cpu_s = r["user_s"] + r["sys_s"]
    row = {
        "format": fmt,
        "command": "neardup " + " ".join(argv),
        "docs": n,
        "input_bytes": input_bytes,
        "text_bytes": meta["text_bytes"],
        "process_s": r["process_s"],
        "in_process_s": r["in_process_s"],
        "mb_s": input_bytes / MB / r["process_s"],
        "text_mb_s": meta["text_bytes"] / MB / r["process_s"],
        "docs_s": n / r["process_s"],
        "docs_s_per_core": n / r["process_s"] / cpus,
        "cpu_s": cpu_s,
        "cores_busy": cpu_s / r["process_s"],
        "peak_rss_mib": (r["peak_rss_kib"] or 0) / 1024,
        "stages": r["stages"],
        "load_average_before": load,
        "summary": {k: r.get(k) for k in _COUNTS},
        "output_bytes": sum(p.stat().st_size for p in out.iterdir() if p.name != "report.json"),
        "quality": recall(truth, removed, paired),
    }
    row["removed_by_output"] = int(removed.sum())
    row["removed_matches_summary"] = row["removed_by_output"] == r.get("duplicates")
    row["_removed"] = removed
    if not keep_outputs:
        shutil.rmtree(out, ignore_errors=True)
    return row


# ---------------------------------------------------------------------------------------------
# datasketch MinHash LSH on a prefix of the corpus
# ---------------------------------------------------------------------------------------------


def bench_datasketch(folder: Path, m: int, truth: dict[str, np.ndarray]) -> dict[str, Any]:
    import pyarrow.parquet as pq
    from datasketch import MinHash, MinHashLSH

    texts: list[str] = []
    parquet = pq.ParquetFile(folder / "corpus.parquet", pre_buffer=False)
    for batch in parquet.iter_batches(batch_size=CHUNK_DOCS, columns=["text"]):
        texts += batch.column(0).to_pylist()[: m - len(texts)]
        if len(texts) >= m:
            break
    text_bytes = sum(len(t.encode("utf-8")) for t in texts)
    lsh = MinHashLSH(threshold=LSH_THRESHOLD, num_perm=NUM_PERM)
    base = MinHash(num_perm=NUM_PERM)
    removed = np.zeros(len(truth["is_dup"]), dtype=bool)
    paired = np.zeros(len(truth["is_dup"]), dtype=bool)
    source = truth["source"]
    t_shingle = t_minhash = t_lsh = 0.0
    for i, text in enumerate(texts):
        t0 = time.perf_counter()
        words = WORD_RE.findall(text.lower())
        shingles = {
            " ".join(words[j : j + SHINGLE]).encode() for j in range(max(1, len(words) - SHINGLE + 1))
        }
        t1 = time.perf_counter()
        mh = base.copy()
        mh.update_batch(shingles)
        t2 = time.perf_counter()
        found = lsh.query(mh)  # earlier documents only: each is queried before it is inserted
        lsh.insert(i, mh)
        t3 = time.perf_counter()
        t_shingle, t_minhash, t_lsh = t_shingle + t1 - t0, t_minhash + t2 - t1, t_lsh + t3 - t2
        if found:
            removed[i] = True
            paired[i] = int(source[i]) in found
    total = t_shingle + t_minhash + t_lsh
    n = len(texts)
    return {
        "docs": n,
        "text_bytes": text_bytes,
        "seconds": total,
        "stages": {"shingle": t_shingle, "minhash": t_minhash, "lsh query+insert": t_lsh},
        "docs_s": n / total,
        "text_mb_s": text_bytes / MB / total,
        "quality": recall(truth, removed, paired, limit=n),
    }


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------


def _print_neardup(r: dict[str, Any]) -> None:
    q = r["quality"]
    print(
        f"   {r['format']:<8} {r['input_bytes'] / MB:>9.1f} MB in {r['process_s']:7.2f} s: "
        f"{r['mb_s']:7.1f} MB/s, {r['docs_s']:>9,.0f} docs/s ({r['docs_s_per_core']:,.0f}/core), "
        f"CPU {r['cpu_s']:.1f} s ({r['cores_busy']:.2f} cores busy), peak RSS {r['peak_rss_mib']:,.0f} MiB; "
        f"load average before {r['load_average_before']:.1f}"
    )
    stages = r["stages"]
    total = sum(stages.values()) or 1.0
    print(
        "            stages: "
        + ", ".join(f"{k} {v:.2f} s ({v / total:.0%})" for k, v in stages.items())
        + f"; process start + import + exit {r['process_s'] - total:.2f} s"
    )
    line = (
        f"            removed {q['removed']:,} of {r['docs']:,} (planted {q['planted']:,}): recall "
        f"{q['recall']:.3f}"
    )
    if "pair_recall" in q:
        line += f", in original's cluster {q['pair_recall']:.3f}"
    line += f"; originals removed {q['originals_removed']:,}"
    print(line)
    print(
        "            recall by edit rate: "
        + ", ".join(
            f"{k}: {v['recall']:.3f}" for k, v in q["by_edit_rate"].items() if v["recall"] is not None
        )
    )


def _print_shape(r: dict[str, Any]) -> None:
    ratio = f" ({r['time_vs_distinct']:.2f}x the distinct corpus)" if "time_vs_distinct" in r else ""
    print(
        f"   {r['shape']:<9} {r['docs']:>9,} docs, {r['input_bytes'] / MB:>8.1f} MB in "
        f"{r['process_s']:7.2f} s{ratio}, peak RSS {r['peak_rss_mib']:,.0f} MiB, kept {r['kept']:,}"
    )
    print("            stages: " + ", ".join(f"{k} {v:.2f} s" for k, v in r["stages"].items()))


def _print_footer(results: dict[str, Any]) -> None:
    c = results["compile"]
    print(f"\n== start-up ({TINY_DOCS} docs, child processes; first round with {c['cache']}) ==")
    for label in ("first", "warm"):
        print(f"   {label:<6} " + ", ".join(f"{fmt} {v['process_s']:.2f} s" for fmt, v in c[label].items()))
    print(
        f"   compile time (first minus warm, both formats): {c['compile_s']:.2f} s"
        + (
            ""
            if c["cache"].startswith("empty")
            else " (0 when the usual cache was already warm; "
            "without --quick it is measured from an empty cache)"
        )
    )
    ds = results.get("datasketch")
    if ds:
        q = ds["quality"]
        print(
            f"\n== datasketch MinHash(num_perm={NUM_PERM}) + MinHashLSH(threshold={LSH_THRESHOLD}), "
            f"1 thread, first {ds['docs']:,} docs, texts in memory =="
        )
        print(
            f"   {ds['seconds']:.2f} s: {ds['docs_s']:,.0f} docs/s, {ds['text_mb_s']:.2f} MB/s of text; "
            + ", ".join(f"{k} {v:.2f} s" for k, v in ds["stages"].items())
        )
        print(
            f"   extrapolated to {results['docs']:,} docs: {ds['extrapolated_s']:,.0f} s "
            f"({ds['extrapolated_s'] / 3600:.2f} h), linear in N"
        )
        print(
            f"   recall {q['recall']:.3f} (in original's cluster {q['pair_recall']:.3f}) of "
            f"{q['planted']:,} planted; originals removed {q['originals_removed']:,}; by edit rate: "
            + ", ".join(
                f"{k}: {v['recall']:.3f}" for k, v in q["by_edit_rate"].items() if v["recall"] is not None
            )
        )
        for fmt, v in results["neardup_on_peer_docs"].items():
            print(
                f"   neardup ({fmt} run) on the same {ds['docs']:,} docs: recall {v['recall']:.3f}; by "
                "edit rate: "
                + ", ".join(
                    f"{k}: {e['recall']:.3f}" for k, e in v["by_edit_rate"].items() if e["recall"] is not None
                )
            )
        print(
            "   neardup / datasketch, docs/s: "
            + ", ".join(f"{k} {v:,.1f}x" for k, v in results["ratios"].items())
        )
    m = results["machine"]
    print(
        f"\n== machine == {m.get('cpu_model')}; {m['cpus_available']} CPUs; numba {m['numba']} "
        f"({m['numba_threads']} threads); pyarrow {m['pyarrow']}; Python {m['python']}; input files "
        f"are in the page cache (just written or read); load average {results['load_average_at_start']:.1f} "
        f"at the start, {os.getloadavg()[0]:.1f} now"
        + (
            " (above the CPU count: other work shared the CPUs)"
            if max(results["load_average_at_start"], os.getloadavg()[0]) > m["cpus_available"]
            else ""
        )
    )
    print("\n== targets (issue, 2 cores) ==")
    for key, v in results["targets"].items():
        print(f"   {key:<44} {v['value']:>10.1f}  {'PASS' if v['met'] else 'MISS'}{v.get('note', '')}")
    print(
        f"\nthis process's peak RSS {results['parent_peak_rss_mib']:,.0f} MiB; wall {results['wall_s']:.1f} s"
    )


def targets(results: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    rows = {r["format"]: r for r in results["neardup"]}
    if "jsonl" in rows:
        v = rows["jsonl"]["mb_s"]
        entry = {"value": v, "met": v >= TARGET_JSONL_MB_S}
        if rows["jsonl"]["docs"] < TARGET_PEAK_DOCS:
            entry["note"] = " (start-up, ~2 s, weighs on a small corpus; the target is for a large one)"
        out[f"jsonl end to end MB/s >= {TARGET_JSONL_MB_S:g}"] = entry
    for fmt, r in rows.items():
        v = r["peak_rss_mib"]
        entry = {"value": v, "met": v * 2**20 <= TARGET_PEAK_BYTES}
        if r["docs"] < TARGET_PEAK_DOCS:
            entry["note"] = f" (the target is for {TARGET_PEAK_DOCS:,} docs; this run has {r['docs']:,})"
        out[f"{fmt} peak RSS MiB <= {TARGET_PEAK_BYTES / 2**20:,.0f} (2 GB)"] = entry
    for r in results.get("shapes", []):
        if "time_vs_distinct" in r:
            out[f"{r['shape']}: time / distinct corpus's <= 2"] = {
                "value": r["time_vs_distinct"],
                "met": r["time_vs_distinct"] <= 2,
            }
        out[f"{r['shape']}: peak RSS MiB <= {TARGET_PEAK_BYTES / 2**20:,.0f}"] = {
            "value": r["peak_rss_mib"],
            "met": r["peak_rss_mib"] * 2**20 <= TARGET_PEAK_BYTES,
        }
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="CI size: N = 20,000, datasketch on 5,000")
    parser.add_argument("--docs", type=int, help="N, the documents of the corpus (default 1,000,000)")
    parser.add_argument(
        "--peer-docs", type=int, help="documents given to datasketch (default min(N, 50,000))"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the corpus")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path(__file__).resolve().parent / "results",
        help="where corpora are cached and outputs written (default benchmarks/results)",
    )
    parser.add_argument("--formats", default=",".join(FORMATS), help="inputs to run: jsonl,parquet")
    parser.add_argument("--json", metavar="FILE", help="also write the results JSON to FILE")
    parser.add_argument("--regenerate", action="store_true", help="make the corpus again even if cached")
    parser.add_argument("--keep-outputs", action="store_true", help="keep kept.* and clusters.parquet")
    parser.add_argument("--no-peers", action="store_true", help="skip datasketch")
    parser.add_argument(
        "--no-compile",
        action="store_true",
        help="use the usual numba cache (compile only what is stale) instead of an empty "
        "one; the default with --quick, where compiling from scratch takes too long",
    )
    parser.add_argument(
        "--compile",
        action="store_true",
        help="with --quick: measure compile time from an empty cache all the same",
    )
    parser.add_argument(
        "--shapes",
        default=",".join(SHAPES),
        help="skewed corpora to run beside the main one: identical (N copies of one page), groups "
        "(N in groups of 1,000 copies), family (N/10 near-identical pages); '' for none",
    )
    parser.add_argument(
        "--neardup-args",
        default="",
        metavar="ARGS",
        help="more options for every neardup dedup run, e.g. '-k 6' or '--bits 128 -k 24'",
    )
    args = parser.parse_args(argv)
    size = dict(SIZES["quick" if args.quick else "full"])
    if args.docs is not None:
        size["docs"] = args.docs
    size["peer_docs"] = min(size["docs"], args.peer_docs if args.peer_docs is not None else size["peer_docs"])
    formats = [f for f in args.formats.split(",") if f]
    extra = shlex.split(args.neardup_args)
    if unknown := set(formats) - set(FORMATS):
        parser.error(f"--formats: unknown {sorted(unknown)}; choose from {', '.join(FORMATS)}")

    started = time.perf_counter()
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    n = size["docs"]
    results: dict[str, Any] = {
        "benchmark": "dedup",
        "quick": args.quick,
        "seed": args.seed,
        "docs": n,
        "peer_docs": size["peer_docs"],
        "mb_unit_bytes": int(MB),
        "corpus_spec": {
            "vocabulary": VOCAB_SIZE,
            "mean_doc_bytes": MEAN_DOC_BYTES,
            "planted_fraction": DUP_FRACTION,
            "edit_rates": EDIT_RATES,
        },
    }
    results["machine"] = machine_info(("pyarrow", "datasketch"))
    results["load_average_at_start"] = os.getloadavg()[0]
    cpus = results["machine"]["cpus_available"]

    print(f"corpus of {n:,} docs (seed {args.seed}) in {workdir} ...", flush=True)
    folder, meta, cached = corpus(n, args.seed, workdir, args.regenerate)
    tiny, _, _ = corpus(TINY_DOCS, args.seed, workdir)
    results["corpus"] = {**meta, "cached": cached, "folder": str(folder)}
    print(
        f"   {'cached' if cached else 'generated in {:.1f} s'.format(meta['generate_s'])}: JSONL "
        f"{meta['jsonl_bytes'] / MB:,.1f} MB, Parquet {meta['parquet_bytes'] / MB:,.1f} MB, text "
        f"{meta['text_bytes'] / MB:,.1f} MB ({meta['text_bytes'] / n:,.0f} B/doc), "
        f"{meta['planted']:,} planted near-duplicates",
        flush=True,
    )
    truth = load_truth(folder)

    env = dict(os.environ)
    empty_cache = args.compile or not (args.no_compile or args.quick)
    if empty_cache:
        env["NUMBA_CACHE_DIR"] = str(workdir / "numba-cache")
    print(
        f"compile and warm-up on a tiny corpus in child processes ({'empty' if empty_cache else 'usual'} "
        "numba cache) ...",
        flush=True,
    )
    results["compile"] = measure_compile(tiny, env, workdir, empty_cache, extra)

    print(
        f"\n== neardup dedup, end to end, one child process each ({results['machine']['numba_threads']} "
        "threads) ==",
        flush=True,
    )
    rows = []
    for fmt in formats:
        gc.collect()
        rows.append(bench_neardup(fmt, folder, meta, truth, env, workdir, cpus, args.keep_outputs, extra))
        _print_neardup(rows[-1])
    results["neardup"] = rows

    shapes = [s for s in args.shapes.split(",") if s]
    if unknown := set(shapes) - set(SHAPES):
        parser.error(f"--shapes: unknown {sorted(unknown)}; choose from {', '.join(SHAPES)}")
    if shapes:
        print("\n== skewed corpora, neardup dedup with the JSONL run's options ==", flush=True)
    results["shapes"] = []
    base = next((r for r in rows if r["format"] == "jsonl"), None)
    for shape in shapes:
        gc.collect()
        row = bench_shape(shape, n // 10 if shape == "family" else n, args.seed, workdir, env, extra)
        if base is not None:
            row["time_vs_distinct"] = row["process_s"] / base["process_s"]
        results["shapes"].append(row)
        _print_shape(row)

    results["ratios"] = {}
    if not args.no_peers:
        m = size["peer_docs"]
        print(f"\ndatasketch on the first {m:,} docs ...", flush=True)
        ds = bench_datasketch(folder, m, truth)
        ds["extrapolated_s"] = n / ds["docs_s"]
        results["datasketch"] = ds
        results["neardup_on_peer_docs"] = {r["format"]: recall(truth, r["_removed"], limit=m) for r in rows}
        for r in rows:
            results["ratios"][f"{r['format']} end to end, all cores"] = r["docs_s"] / ds["docs_s"]
            results["ratios"][f"{r['format']} per core"] = r["docs_s_per_core"] / ds["docs_s"]
    for r in rows:
        del r["_removed"]
    results["targets"] = targets(results)
    return finish(results, started, args.json, _print_footer)


if __name__ == "__main__":
    main()
