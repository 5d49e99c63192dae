"""Fingerprint throughput, compile time, memory and quality, with peers on the same texts.

Two corpora for the targets: a generated English-like one (Zipf-distributed vocabulary,
sentences, ~2 KB documents, deterministic from ``--seed``, with planted near-duplicate pairs) and
a real one (the Python standard library's ``.py`` files, one document each); and beside them a
generated multilingual one (seven scripts, most documents needing Unicode normalisation). On
each, in the same run:

* neardup's default config at ``n_jobs=1`` and on all cores, and other configs on all cores, fed
  a Python list of ``str`` and a pyarrow string array; warm time is the best of ``--repeats``
  calls after one warm-up call;
* the ``simhash`` package (pure Python, so on a prefix of the corpus) and ``gaoya`` (Rust), if
  installed;
* a quality figure: mean Hamming distance of planted near-duplicate pairs against random pairs;
* peak memory of one fingerprint call, measured in a child process.

Compile time is measured apart, in child processes with a fresh ``NUMBA_CACHE_DIR``.

    python benchmarks/bench_fingerprint.py --quick          # CI size, well under a minute after compiling
    python benchmarks/bench_fingerprint.py --json out.json  # full size

MB is 10**6 bytes of UTF-8. The last stdout line is ``RESULT {json}`` with every figure.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import resource
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from _common import machine_info

MB = 1e6

# neardup configs timed on all cores, beside the default; labels are what the table prints.
CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "bits=128": {"bits": 128},
    "features=words": {"features": "words"},
    "features=char-ngrams": {"features": "char-ngrams"},
    "weighting=sublinear": {"weighting": "sublinear"},
}

# The targets for the default config, warm: per core, and against gaoya on all cores.
TARGET_MB_S_PER_CORE = 300.0
TARGET_GAOYA_RATIO = 5.0

GAOYA_ARGS = dict(
    hash_size=64, num_blocks=6, hamming_distance=3, analyzer="word", lowercase=True, ngram_range=(3, 3)
)
GAOYA_FEATURES = "lowercased word 3-shingles (its Rust word analyzer), 64 bits"
# What simhash.Simhash(text) does by default (simhash 2.1.2, Simhash._tokenize/_slide).
SIMHASH_FEATURES = (
    "lowercase, keep only [\\w\\u4e00-\\u9fcc] characters (spaces and punctuation "
    "dropped), overlapping 4-character windows, md5 feature hash, tf weights, 64 bits"
)

SIZES = {
    "quick": dict(
        gen_mb=2.0,
        stdlib_mb=2.0,
        multilingual_mb=1.0,
        simhash_mb=0.1,
        repeats=3,
        planted=50,
        random_pairs=2000,
    ),
    "full": dict(
        gen_mb=200.0,
        stdlib_mb=50.0,
        multilingual_mb=30.0,
        simhash_mb=1.0,
        repeats=5,
        planted=500,
        random_pairs=10000,
    ),
}
EDITS_PER_PLANTED_PAIR = 3
SIMHASH_QUALITY_PAIRS = 50


# ---------------------------------------------------------------------------------------------
# Corpora
# ---------------------------------------------------------------------------------------------

_COMMON_WORDS = [
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "that",
    "it",
    "was",
    "for",
    "on",
    "are",
    "with",
    "as",
    "I",
    "his",
    "they",
    "be",
    "at",
    "one",
    "have",
    "this",
    "from",
    "or",
    "had",
    "by",
    "not",
    "but",
    "what",
    "some",
    "we",
    "can",
    "out",
    "other",
    "were",
    "all",
    "there",
    "when",
    "up",
    "use",
    "your",
    "how",
    "said",
    "an",
    "each",
    "she",
    "which",
    "do",
    "their",
    "time",
    "if",
    "will",
    "way",
    "about",
    "many",
    "then",
    "them",
    "write",
    "would",
    "like",
    "so",
    "these",
    "her",
    "long",
    "make",
    "thing",
    "see",
    "him",
    "two",
    "has",
    "look",
    "more",
    "day",
    "could",
    "go",
    "come",
    "did",
    "number",
    "sound",
    "no",
    "most",
    "people",
    "my",
    "over",
    "know",
    "water",
    "than",
    "call",
    "first",
    "who",
    "may",
    "down",
    "side",
    "been",
    "now",
    "find",
    "any",
    "new",
    "work",
    "part",
    "take",
    "get",
    "place",
    "made",
    "live",
    "where",
    "after",
    "back",
    "little",
    "only",
    "round",
    "man",
    "year",
    "came",
    "show",
    "every",
    "good",
    "me",
    "give",
    "our",
    "under",
    "name",
    "very",
    "through",
    "just",
    "form",
    "sentence",
    "great",
    "think",
    "say",
    "help",
    "low",
    "line",
    "differ",
    "turn",
    "cause",
    "much",
    "mean",
    "before",
    "move",
    "right",
    "boy",
    "old",
    "too",
    "same",
    "tell",
    "does",
    "set",
    "three",
    "want",
    "air",
    "well",
    "also",
    "play",
    "small",
    "end",
    "put",
    "home",
    "read",
    "hand",
    "port",
    "large",
    "spell",
    "add",
    "even",
    "land",
    "here",
    "must",
    "big",
    "high",
    "such",
    "follow",
    "act",
    "why",
    "ask",
    "men",
    "change",
    "went",
    "light",
    "kind",
    "off",
    "need",
    "house",
    "picture",
    "try",
    "us",
    "again",
    "animal",
    "point",
    "mother",
    "world",
    "near",
    "build",
    "self",
    "earth",
    "father",
]
_ONSETS = (
    "",
    "",
    "",
    "b",
    "c",
    "d",
    "f",
    "g",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "w",
    "y",
    "z",
    "b",
    "c",
    "d",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "br",
    "ch",
    "cl",
    "cr",
    "dr",
    "fl",
    "fr",
    "gr",
    "pl",
    "pr",
    "sh",
    "sl",
    "sp",
    "st",
    "str",
    "th",
    "tr",
    "wh",
)
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "i", "o", "ai", "ea", "ee", "ie", "oo", "ou", "y")
_CODAS = (
    "",
    "",
    "",
    "",
    "",
    "",
    "n",
    "r",
    "s",
    "t",
    "l",
    "m",
    "n",
    "r",
    "nd",
    "nt",
    "st",
    "ck",
    "ng",
    "rt",
    "ss",
    "th",
)
_SUFFIXES = ("", "", "", "", "", "s", "s", "ed", "ing", "er", "ly", "tion", "ment", "ness", "al")


def vocabulary(size: int, rng: random.Random) -> list[str]:
    """``size`` distinct English-looking words, most frequent first: real function words, then
    syllable-built words growing longer with rank (as in English), ~4% capitalised names and
    ~0.5% numbers."""
    words = list(_COMMON_WORDS)
    seen = set(words)
    while len(words) < size:
        rank = len(words)
        roll = rng.random()
        if roll < 0.005:
            word = rng.choice(
                (
                    str(rng.randint(0, 99)),
                    str(rng.randint(1800, 2030)),
                    f"{rng.randint(1, 99)}.{rng.randint(0, 9)}",
                    f"{rng.randint(1, 100)}%",
                )
            )
        else:
            syllables = min(5, 1 + int(rng.expovariate(1.0 / (0.15 + 0.15 * np.log10(rank)))))
            word = "".join(
                rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables)
            ) + rng.choice(_SUFFIXES)
            if roll < 0.045:
                word = word.capitalize()
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def generated_corpus(
    target_mb: float, seed: int, vocab_size: int = 100_000, zipf_s: float = 1.0
) -> list[str]:
    """Documents of ~2 KB (log-normal, 0.5-8 KB) drawn from a Zipf-Mandelbrot vocabulary
    (p(rank) ~ 1 / (rank + 2.7)^s, Mandelbrot's fit to English), in sentences with capitals,
    commas, quotes and paragraphs. Deterministic in ``seed``; ASCII only."""
    rng = np.random.default_rng(seed)
    vocab = vocabulary(vocab_size, random.Random(seed))
    lower = np.array(vocab, dtype=object)
    capital = np.array([w[:1].upper() + w[1:] for w in vocab], dtype=object)
    weights = 1.0 / (np.arange(vocab_size) + 2.7) ** zipf_s
    cdf = np.cumsum(weights / weights.sum())
    mean_token_bytes = float(np.dot(weights / weights.sum(), [len(w) for w in vocab])) + 1.15
    docs: list[str] = []
    total = 0
    target = target_mb * MB
    while total < target:
        doc_bytes = np.clip(rng.lognormal(np.log(2048), 0.3, 512), 512, 8192)
        n_words = np.maximum(8, (doc_bytes / mean_token_bytes).astype(np.int64))
        bounds = np.concatenate(([0], np.cumsum(n_words)))
        n = int(bounds[-1])
        ids = np.minimum(np.searchsorted(cdf, rng.random(n)), vocab_size - 1)
        # Sentences average 15 words; every document ends one.
        ends = rng.random(n) < 1 / 15
        ends[bounds[1:] - 1] = True
        starts = np.zeros(n, dtype=bool)
        starts[1:] = ends[:-1]
        starts[bounds[:-1]] = True
        words = np.where(starts, capital[ids], lower[ids])
        quoted = rng.random(n) < 0.004
        mid = rng.choice(np.array(["", ",", ";", ":"], dtype=object), n, p=[0.925, 0.065, 0.005, 0.005])
        end = rng.choice(np.array([".", "?", "!"], dtype=object), n, p=[0.9, 0.06, 0.04])
        punct = np.where(ends, end, mid)
        sep = np.where(ends & (rng.random(n) < 0.2), "\n\n", " ").astype(object)
        sep[bounds[1:] - 1] = ""
        tokens = (np.where(quoted, '"' + words + '"', words) + punct + sep).tolist()
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            doc = "".join(tokens[a:b])
            docs.append(doc)
            total += len(doc)
            if total >= target:
                break
    return docs


def _edit(doc: str, n_edits: int, vocab_words: list[str], rng: random.Random) -> str:
    """``doc`` with ``n_edits`` single-word substitutions, deletions or insertions."""
    parts = re.split(r"(\s+)", doc)  # words at even positions, their separators at odd ones
    for _ in range(n_edits):
        i = 2 * rng.randrange((len(parts) + 1) // 2)
        op = rng.choice(("substitute", "delete", "insert"))
        if op == "substitute":
            parts[i] = rng.choice(vocab_words)
        elif op == "delete" and len(parts) > 2:
            # Take the word with one separator beside it, so its neighbours stay apart.
            span = slice(i, i + 2) if i + 1 < len(parts) else slice(i - 1, i + 1)
            del parts[span]
        else:
            parts[i:i] = [rng.choice(vocab_words), " "]
    return "".join(parts)


def plant_near_duplicates(docs: list[str], n_pairs: int, seed: int) -> np.ndarray:
    """Overwrite ``n_pairs`` documents with an edited copy of another; return the pairs (int64,
    shape (n_pairs, 2)), all indices distinct."""
    rng = random.Random(seed + 1)
    n_pairs = min(n_pairs, len(docs) // 2)
    chosen = rng.sample(range(len(docs)), 2 * n_pairs)
    vocab_words = _COMMON_WORDS + [w for w in " ".join(docs[:50]).split() if w.isalpha()][:2000]
    pairs = np.array(chosen, dtype=np.int64).reshape(-1, 2)
    for source, target in pairs.tolist():
        docs[target] = _edit(docs[source], EDITS_PER_PLANTED_PAIR, vocab_words, rng)
    return pairs


# Scripts of the multilingual corpus: (letters of its words, word lengths, separator between
# words, sentence ends, capitalised sentence starts). CJK is written without spaces.
_SCRIPTS = {
    "russian": ("абвгдежзийклмнопрстуфхцчшщыьэюяё", (2, 10), " ", (". ", "? ", "! "), True),
    "german": ("abcdefghiklmnoprstuvwzäöüß", (2, 12), " ", (". ", "? "), True),
    "french": ("abcdefghijlmnopqrstuvéèêàçôî", (1, 10), " ", (". ", " ? ", " ! "), True),
    "greek": ("αβγδεζηθικλμνξοπρστυφχψωάέήίόύώ", (2, 10), " ", (". ", "; "), True),
    "chinese": ("".join(map(chr, range(0x4E00, 0x4E00 + 3000))), (1, 3), "", ("。", "，", "！"), False),
    "japanese": (
        "".join(map(chr, range(0x3041, 0x3097))) + "".join(map(chr, range(0x30A1, 0x30FB))),
        (2, 6),
        "",
        ("。", "、"),
        False,
    ),
    "arabic": ("ابتثجحخدذرزسشصضطظعغفقكلمنهوي", (2, 8), " ", (". ", "، "), False),
}


def multilingual_corpus(target_mb: float, seed: int) -> list[str]:
    """Documents of ~2 KB of UTF-8, each in one of seven scripts (Cyrillic, Latin with accents
    and ß, Greek, Chinese, Japanese kana, Arabic), words drawn from a Zipf vocabulary per script,
    with the script's punctuation (CJK's full-width forms) and capitals where it has them; so
    most documents hold code points that normalisation changes. Deterministic in ``seed``."""
    rng = random.Random(seed)
    vocabularies = {}
    for name, (letters, (shortest, longest), *_) in _SCRIPTS.items():
        words = {
            "".join(rng.choice(letters) for _ in range(rng.randint(shortest, longest))) for _ in range(5000)
        }
        vocabularies[name] = sorted(words)
    cum_weights = np.cumsum(1.0 / (np.arange(5000) + 2.7)).tolist()
    docs: list[str] = []
    total = 0
    while total < target_mb * MB:
        name = rng.choice(list(_SCRIPTS))
        letters, _, sep, ends, capitals = _SCRIPTS[name]
        vocab = vocabularies[name]
        chars = 2048 // len(letters[0].encode())  # ~2 KB of UTF-8
        parts, size, start = [], 0, True
        for word in rng.choices(vocab, cum_weights=cum_weights[: len(vocab)], k=chars):
            if size >= chars:
                break
            if start and capitals:
                word = word[:1].upper() + word[1:]
            start = rng.random() < 1 / 12
            parts.append(word + (rng.choice(ends) if start else sep))
            size += len(parts[-1])
        docs.append("".join(parts))
        total += len(docs[-1].encode())
    return docs


def stdlib_corpus(cap_mb: float, seed: int) -> tuple[list[str], dict[str, Any]]:
    """The standard library's ``.py`` files (site-packages left out), one document each, in a
    seeded random order, up to ``cap_mb`` of UTF-8; undecodable bytes become U+FFFD."""
    root = Path(sysconfig.get_paths()["stdlib"])
    paths = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in {"site-packages", "dist-packages", "__pycache__"})
        paths.extend(Path(folder, f) for f in sorted(files) if f.endswith(".py"))
    random.Random(seed).shuffle(paths)
    docs, total = [], 0
    for path in paths:
        text = path.read_bytes().decode("utf-8", errors="replace")
        size = len(text.encode("utf-8"))
        if total + size > cap_mb * MB and docs:
            break
        docs.append(text)
        total += size
    return docs, {"root": str(root), "files_available": len(paths), "files_used": len(docs)}


def utf8_bytes(docs: list[str]) -> int:
    return sum(len(d.encode("utf-8")) if not d.isascii() else len(d) for d in docs)


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------


def best_of(fn: Callable[[], Any], repeats: int) -> tuple[float, list[float], Any]:
    """One warm-up call, then the best wall time of ``repeats`` calls (and the last result)."""
    result = fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), times, result


def row(
    engine: str,
    config: str,
    input_kind: str,
    threads: int,
    n_docs: int,
    n_bytes: int,
    seconds: float,
    times: list[float],
    note: str = "",
) -> dict[str, Any]:
    mb_s = n_bytes / MB / seconds
    docs_s = n_docs / seconds
    return {
        "engine": engine,
        "config": config,
        "input": input_kind,
        "threads": threads,
        "docs": n_docs,
        "mb": round(n_bytes / MB, 3),
        "best_s": seconds,
        "times_s": [round(t, 6) for t in times],
        "mb_s": mb_s,
        "mb_s_per_core": mb_s / threads,
        "docs_s": docs_s,
        "docs_s_per_core": docs_s / threads,
        "note": note,
    }


def hamming_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Bits differing between rows of uint64 fingerprints, shape (n,) or (n, words)."""
    x = np.bitwise_count(np.asarray(a, dtype=np.uint64) ^ np.asarray(b, dtype=np.uint64))
    return x.reshape(x.shape[0], -1).sum(axis=1)


def quality(fps: np.ndarray, planted: np.ndarray, random_pairs: np.ndarray, bits: int) -> dict[str, Any]:
    """Planted near-duplicates should sit far below the random-pair mean of ``bits / 2``."""
    near = hamming_bits(fps[planted[:, 0]], fps[planted[:, 1]])
    far = hamming_bits(fps[random_pairs[:, 0]], fps[random_pairs[:, 1]])
    k = 3 * bits // 64  # Manku et al. 2007: k = 3 for 64-bit fingerprints
    return {
        "bits": bits,
        "planted_mean": float(near.mean()),
        "planted_median": float(np.median(near)),
        "planted_max": int(near.max()),
        "random_mean": float(far.mean()),
        "random_min": int(far.min()),
        "k": k,
        "planted_within_k": float((near <= k).mean()),
        "random_within_k": float((far <= k).mean()),
    }


# ---------------------------------------------------------------------------------------------
# Child processes: compile time, cold start, memory
# ---------------------------------------------------------------------------------------------

_WARMUP_CHILD = "import neardup, time; t=time.perf_counter(); neardup.warmup(); print(time.perf_counter()-t)"

_CLI_CHILD = """
import json, time
t0 = time.perf_counter()
import neardup
docs = [f"short document {i}: the quick brown fox jumps over the lazy dog, again and again {i % 7}"
        for i in range(100)]
t1 = time.perf_counter()
fps = neardup.Fingerprinter().fingerprint_batch(docs)
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "first_call_s": t2 - t1, "in_process_s": t2 - t0}))
"""

_MEMORY_CHILD = """
import gc, json, resource, sys
import pyarrow as pa
import neardup

# VmHWM, not ru_maxrss: Linux carries the parent's RSS across exec into the child's ru_maxrss
# (signal->maxrss takes the pre-exec mm's high-water mark), so ru_maxrss here would read at least
# the benchmark's own RSS. VmHWM is this address space's alone, and /proc/self/clear_refs resets it.
def status_kb(field):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None

def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False

path, input_kind, config = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
fp = neardup.Fingerprinter(**config)
neardup.warmup()
after_import_kb = status_kb("VmRSS")
with pa.OSFile(path) as f:
    texts = pa.ipc.open_file(f).read_all().column(0).combine_chunks()
if input_kind == "list":
    texts = texts.to_pylist()
# A first small call loads this input path's kernels and starts the thread pool: fixed costs
# that are not the call's working memory.
fp.fingerprint_batch(texts[:8], n_jobs=None)
gc.collect()
if status_kb("VmHWM") is None or not reset_peak():
    print(json.dumps({"unsupported": "needs Linux >= 4.0 (/proc/self/status VmHWM, clear_refs)",
                      "ru_maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
    sys.exit(0)
extras, peaks = [], []
for _ in range(2):
    # The high-water mark is reset before each call so that earlier peaks (loading the input,
    # the call before) do not count; the second call shows what is left once one-off costs are paid.
    reset_peak()
    baseline_kb = status_kb("VmRSS")
    fp.fingerprint_batch(texts, n_jobs=None)
    peaks.append(status_kb("VmHWM"))
    extras.append(max(0, peaks[-1] - baseline_kb))
print(json.dumps({"after_import_mb": after_import_kb / 1024, "baseline_mb": baseline_kb / 1024,
                  "peak_mb": max(peaks) / 1024, "first_call_extra_mb": extras[0] / 1024,
                  "call_extra_mb": min(extras) / 1024}))
"""


def _child(code: str, env: dict[str, str], *args: str, timeout: float = 900) -> tuple[str, float]:
    """Run ``code`` in a fresh interpreter; its stdout and the parent-side wall time."""
    t = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=timeout
    )
    wall = time.perf_counter() - t
    if done.returncode != 0:
        raise RuntimeError(f"child process failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout.strip().splitlines()[-1], wall


def measure_startup(cache_dir: str | None) -> dict[str, Any]:
    """Compile time (warmup() with an empty cache), cache-load time, and a small CLI-like call
    in a new process with a warm cache."""
    env = dict(os.environ)
    out: dict[str, Any] = {}
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
        line, wall = _child(_WARMUP_CHILD, env)
        out["warmup_empty_cache_s"] = float(line)
        out["warmup_empty_cache_process_s"] = wall
    line, wall = _child(_WARMUP_CHILD, env)
    out["warmup_warm_cache_s"] = float(line)
    if "warmup_empty_cache_s" in out:
        out["compile_s"] = out["warmup_empty_cache_s"] - out["warmup_warm_cache_s"]
    _child(_CLI_CHILD, env)
    line, wall = _child(_CLI_CHILD, env)
    out["cli_100_docs"] = {**json.loads(line), "process_wall_s": wall}
    return out


def measure_memory(
    docs_arrow: Any, config: dict[str, Any], cache_dir: str | None, workdir: str, name: str
) -> dict[str, Any]:
    """Peak RSS a child gains during one all-core fingerprint_batch, per input kind."""
    import pyarrow as pa

    path = os.path.join(workdir, f"{name}.arrow")
    table = pa.table({"text": docs_arrow})
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    result = {}
    for kind in ("list", "arrow"):
        line, _ = _child(_MEMORY_CHILD, env, path, kind, json.dumps(config))
        result[kind] = json.loads(line)
    os.unlink(path)
    return result


# ---------------------------------------------------------------------------------------------
# One corpus
# ---------------------------------------------------------------------------------------------


def bench_corpus(
    name: str,
    docs: list[str],
    info: dict[str, Any],
    args: argparse.Namespace,
    size: dict[str, Any],
    all_threads: int,
    peers: dict[str, Any],
    planted: np.ndarray | None,
    cache_dir: str | None,
    workdir: str,
) -> dict[str, Any]:
    import pyarrow as pa

    import neardup

    n_docs, n_bytes = len(docs), utf8_bytes(docs)
    arrow = pa.array(docs, type=pa.string())
    inputs = {"list": docs, "arrow": arrow}
    repeats = size["repeats"]
    rows, fingerprints = [], {}
    non_ascii = sum(not d.isascii() for d in docs)
    print(
        f"\n== {name}: {n_docs:,} docs, {n_bytes / MB:.1f} MB UTF-8, mean {n_bytes / max(n_docs, 1):,.0f} "
        f"B/doc, non-ASCII docs {non_ascii / max(n_docs, 1):.1%} ==\n{_HEADER}",
        flush=True,
    )

    plan = [("default", 1)] + [(label, all_threads) for label in CONFIGS]
    for label, threads in plan:
        fp = neardup.Fingerprinter(**CONFIGS[label])
        for kind, texts in inputs.items():
            n_jobs = 1 if threads == 1 else None
            best, times, fps = best_of(partial(fp.fingerprint_batch, texts, n_jobs=n_jobs), repeats)
            rows.append(row("neardup", label, kind, threads, n_docs, n_bytes, best, times))
            fingerprints.setdefault(label, fps)
            _print_row(rows[-1])

    if "gaoya" in peers:
        rows.extend(_bench_gaoya(peers, docs, n_docs, n_bytes, repeats, all_threads, fingerprints))
    if "simhash" in peers:
        rows.append(_bench_simhash(peers, docs, size["simhash_mb"], repeats, fingerprints))

    result: dict[str, Any] = {
        "docs": n_docs,
        "mb": n_bytes / MB,
        "non_ascii_docs": non_ascii,
        **info,
        "rows": rows,
        "ratios": _ratios(rows),
    }
    rng = np.random.default_rng(args.seed + 2)
    random_pairs = rng.integers(0, n_docs, size=(size["random_pairs"], 2))
    random_pairs = random_pairs[random_pairs[:, 0] != random_pairs[:, 1]]
    if planted is not None:
        result["quality"] = _quality_all(fingerprints, planted, random_pairs, docs, peers)
    else:
        # No planted pairs in real text: only check that unrelated documents sit near bits / 2.
        result["quality"] = {
            "random_pairs_mean_hamming": {
                label: float(hamming_bits(fps[random_pairs[:, 0]], fps[random_pairs[:, 1]]).mean())
                for label, fps in fingerprints.items()
                if label in CONFIGS or label == "gaoya"
            }
        }
    if not args.no_memory:
        result["memory"] = measure_memory(arrow, {}, cache_dir, workdir, name)
    del inputs, arrow
    gc.collect()
    return result


def _bench_gaoya(
    peers: dict[str, Any],
    docs: list[str],
    n_docs: int,
    n_bytes: int,
    repeats: int,
    all_threads: int,
    fingerprints: dict[str, Any],
) -> list[dict[str, Any]]:
    index = peers["gaoya"](**GAOYA_ARGS).index
    rows = []
    best, times, _ = best_of(lambda: [index.doc2signature(d) for d in docs], repeats)
    rows.append(
        row(
            "gaoya",
            "word 3-shingles",
            "list",
            1,
            n_docs,
            n_bytes,
            best,
            times,
            "doc2signature in a Python loop",
        )
    )
    _print_row(rows[-1])
    if hasattr(index, "par_bulk_doc2signatures"):
        best, times, fps = best_of(lambda: index.par_bulk_doc2signatures(docs), repeats)
        note = "par_bulk_doc2signatures"
    else:

        def insert() -> None:
            peers["gaoya"](**GAOYA_ARGS).index.par_bulk_insert_docs(list(range(n_docs)), docs)

        best, times, _ = best_of(insert, repeats)
        fps = [index.doc2signature(d) for d in docs]
        note = "par_bulk_insert_docs (includes index construction and insertion)"
    gaoya_threads = int(os.environ.get("RAYON_NUM_THREADS", "0")) or len(os.sched_getaffinity(0))
    rows.append(row("gaoya", "word 3-shingles", "list", gaoya_threads, n_docs, n_bytes, best, times, note))
    _print_row(rows[-1])
    fingerprints["gaoya"] = np.array(fps, dtype=np.uint64)
    return rows


def _bench_simhash(
    peers: dict[str, Any], docs: list[str], subset_mb: float, repeats: int, fingerprints: dict[str, Any]
) -> dict[str, Any]:
    simhash_cls = peers["simhash"]
    subset, total = [], 0
    for d in docs:
        if total >= subset_mb * MB:
            break
        subset.append(d)
        total += len(d.encode("utf-8"))
    # The warm-up pass also drops the documents simhash cannot take: under numpy 2 it raises
    # OverflowError on a feature repeated more than 255 times (uint8 bit array times weight).
    usable, failures = [], 0
    for d in subset:
        try:
            simhash_cls(d)
            usable.append(d)
        except OverflowError:
            failures += 1
    total = utf8_bytes(usable)
    # Pure Python: two timed calls are enough to take a best of, and keep the run short.
    times = []
    for _ in range(min(repeats, 2)):
        t = time.perf_counter()
        for d in usable:
            simhash_cls(d)
        times.append(time.perf_counter() - t)
    note = f"first {len(subset)} docs only"
    if failures:
        note += f"; {failures} raised OverflowError and are left out"
    r = row("simhash", "default", "list", 1, len(usable), total, min(times), times, note)
    r["failed_docs"] = failures
    _print_row(r)
    return r


def _simhash_or_zero(simhash_cls: Any, text: str) -> int:
    try:
        return simhash_cls(text).value
    except OverflowError:
        return 0


def _quality_all(
    fingerprints: dict[str, Any],
    planted: np.ndarray,
    random_pairs: np.ndarray,
    docs: list[str],
    peers: dict[str, Any],
) -> dict[str, Any]:
    out = {}
    for label, fps in fingerprints.items():
        if label in CONFIGS or label == "gaoya":
            out[label if label in CONFIGS else "gaoya"] = quality(
                fps, planted, random_pairs, 128 if fps.ndim == 2 else 64
            )
    if "simhash" in peers:
        # simhash is too slow for the whole corpus: fingerprint only the documents of the first
        # planted pairs and of random pairs drawn from among them.
        pairs = planted[:SIMHASH_QUALITY_PAIRS]
        ids = np.unique(pairs)
        fps = np.zeros(len(docs), dtype=np.uint64)
        fps[ids] = [_simhash_or_zero(peers["simhash"], docs[i]) for i in ids.tolist()]
        rand = np.random.default_rng(7).choice(ids, size=(2000, 2))
        rand = rand[rand[:, 0] != rand[:, 1]]
        out["simhash"] = {
            **quality(fps, pairs, rand, 64),
            "note": f"first {len(pairs)} planted pairs; random pairs among their documents",
        }
    return out


def _ratios(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """neardup default / peer, in MB/s, with like threads and per input kind."""

    def find(engine: str, config: str | None, kind: str, one_thread: bool) -> float | None:
        for r in rows:
            if (
                r["engine"] == engine
                and (config is None or r["config"] == config)
                and r["input"] == kind
                and (r["threads"] == 1) == one_thread
            ):
                return r["mb_s"]
        return None

    out: dict[str, Any] = {}
    for peer in ("gaoya", "simhash"):
        for kind in ("list", "arrow"):
            for one_thread, tag in ((True, "1_thread"), (False, "all_cores")):
                mine = find("neardup", "default", kind, one_thread)
                theirs = find(peer, None, "list", one_thread) or find(peer, None, "list", True)
                if mine and theirs:
                    out[f"neardup_{kind}_vs_{peer}_{tag}"] = mine / theirs
    return out


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------

_HEADER = (
    f"{'engine':<8} {'config':<21} {'input':<5} {'thr':>3} {'best s':>8} {'MB/s':>8} "
    f"{'MB/s/core':>9} {'docs/s':>10} {'docs/s/core':>11}  note"
)


def _print_row(r: dict[str, Any]) -> None:
    print(
        f"{r['engine']:<8} {r['config']:<21} {r['input']:<5} {r['threads']:>3} {r['best_s']:>8.4f} "
        f"{r['mb_s']:>8.1f} {r['mb_s_per_core']:>9.1f} {r['docs_s']:>10,.0f} {r['docs_s_per_core']:>11,.0f}"
        f"  {r['note']}",
        flush=True,
    )


def _print_corpus_summary(name: str, res: dict[str, Any]) -> None:
    if res["ratios"]:
        print(f"-- {name}: neardup default / peer (MB/s)")
        for key, value in res["ratios"].items():
            print(f"   {key:<40} {value:8.1f}x")
    q = res.get("quality", {})
    if "random_pairs_mean_hamming" in q:
        print(
            f"-- {name}: mean Hamming of random pairs: "
            + ", ".join(f"{k} {v:.1f}" for k, v in q["random_pairs_mean_hamming"].items())
        )
    elif q:
        print(f"-- {name}: quality, {EDITS_PER_PLANTED_PAIR} word edits per planted pair (Hamming bits)")
        print(
            f"   {'fingerprint':<21} {'planted mean':>12} {'median':>7} {'max':>5} {'random mean':>12} "
            f"{'k':>3} {'planted<=k':>10} {'random<=k':>9}"
        )
        for label, v in q.items():
            print(
                f"   {label:<21} {v['planted_mean']:>12.2f} {v['planted_median']:>7.1f} "
                f"{v['planted_max']:>5} "
                f"{v['random_mean']:>12.2f} {v['k']:>3} {v['planted_within_k']:>10.1%} "
                f"{v['random_within_k']:>9.2%}"
            )
    for kind, m in res.get("memory", {}).items():
        if "unsupported" in m:
            print(f"-- {name}: memory, {kind} input: not measured ({m['unsupported']})")
            continue
        extra = m["call_extra_mb"]
        print(
            f"-- {name}: memory, default config, all cores, {kind} input: a call adds {extra:.1f} MiB "
            f"({extra * 1.048576 / max(res['mb'], 1e-9):.2f}x the corpus; first call "
            f"{m['first_call_extra_mb']:.1f} MiB) to the child's "
            f"{m['baseline_mb']:.0f} MiB (after import and warmup {m['after_import_mb']:.0f} MiB, "
            f"then the input); peak {m['peak_mb']:.0f} MiB"
        )


def _load_peers(no_peers: bool) -> dict[str, Any]:
    peers: dict[str, Any] = {}
    if no_peers:
        return peers
    try:
        from gaoya.simhash import SimHashStringIndex

        peers["gaoya"] = SimHashStringIndex
    except ImportError as e:
        print(f"gaoya not installed ({e}); skipping it (pip install 'neardup[bench]')")
    try:
        from simhash import Simhash

        peers["simhash"] = Simhash
    except ImportError as e:
        print(f"simhash not installed ({e}); skipping it (pip install 'neardup[bench]')")
    return peers


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="CI size: ~2 MB corpora, few repeats")
    parser.add_argument("--json", metavar="FILE", help="also write the results JSON to FILE")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated corpus")
    parser.add_argument("--gen-mb", type=float, help="generated corpus size (MB)")
    parser.add_argument("--stdlib-mb", type=float, help="cap on the stdlib corpus (MB)")
    parser.add_argument("--multilingual-mb", type=float, help="multilingual corpus size (MB; 0 skips it)")
    parser.add_argument("--repeats", type=int, help="timed calls per measurement (best is kept)")
    parser.add_argument("--no-peers", action="store_true", help="skip simhash and gaoya")
    parser.add_argument(
        "--no-compile",
        action="store_true",
        help="skip the empty-cache compile measurement (it takes 20-60 s)",
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the memory child processes")
    args = parser.parse_args(argv)
    size = dict(SIZES["quick" if args.quick else "full"])
    for key in ("gen_mb", "stdlib_mb", "multilingual_mb", "repeats"):
        if getattr(args, key) is not None:
            size[key] = getattr(args, key)

    started = time.perf_counter()
    results: dict[str, Any] = {
        "benchmark": "fingerprint",
        "quick": args.quick,
        "seed": args.seed,
        "sizes": size,
        "mb_unit_bytes": int(MB),
    }
    with tempfile.TemporaryDirectory(prefix="neardup-bench-") as workdir:
        cache_dir = None if args.no_compile else os.path.join(workdir, "numba-cache")
        print("measuring compile and start-up times in child processes ...", flush=True)
        results["startup"] = measure_startup(cache_dir)

        import neardup  # the parent's kernels come from the usual cache

        t = time.perf_counter()
        neardup.warmup()
        results["startup"]["parent_warmup_s"] = time.perf_counter() - t
        import numba

        results["machine"] = machine_info(("pyarrow", "simhash", "gaoya"))
        results["machine"]["threading_layer"] = numba.threading_layer()
        all_threads = numba.config.NUMBA_NUM_THREADS
        peers = _load_peers(args.no_peers)
        results["peers"] = {
            "simhash_features": SIMHASH_FEATURES,
            "gaoya_features": GAOYA_FEATURES,
            "gaoya_args": {k: list(v) if isinstance(v, tuple) else v for k, v in GAOYA_ARGS.items()},
            "installed": sorted(peers),
        }

        t = time.perf_counter()
        docs = generated_corpus(size["gen_mb"], args.seed)
        planted = plant_near_duplicates(docs, size["planted"], args.seed)
        gen_s = time.perf_counter() - t
        corpora: dict[str, Any] = {}
        corpora["generated"] = bench_corpus(
            "generated",
            docs,
            {"generate_s": gen_s, "planted_pairs": len(planted), "edits_per_pair": EDITS_PER_PLANTED_PAIR},
            args,
            size,
            all_threads,
            peers,
            planted,
            cache_dir,
            workdir,
        )
        _print_corpus_summary("generated", corpora["generated"])
        del docs
        gc.collect()

        docs, info = stdlib_corpus(size["stdlib_mb"], args.seed)
        corpora["stdlib"] = bench_corpus(
            "stdlib", docs, info, args, size, all_threads, peers, None, cache_dir, workdir
        )
        _print_corpus_summary("stdlib", corpora["stdlib"])
        del docs

        if size["multilingual_mb"] > 0:
            t = time.perf_counter()
            docs = multilingual_corpus(size["multilingual_mb"], args.seed)
            corpora["multilingual"] = bench_corpus(
                "multilingual",
                docs,
                {"generate_s": time.perf_counter() - t, "scripts": sorted(_SCRIPTS)},
                args,
                size,
                all_threads,
                peers,
                None,
                cache_dir,
                workdir,
            )
            _print_corpus_summary("multilingual", corpora["multilingual"])
            del docs
    results["corpora"] = corpora
    results["targets"] = _targets(corpora)
    results["parent_peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    results["wall_s"] = time.perf_counter() - started
    _print_footer(results)
    line = json.dumps(results, separators=(",", ":"))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    print("RESULT " + line)
    return results


def _targets(corpora: dict[str, Any]) -> dict[str, Any]:
    """The issue's targets, on its two corpora (the multilingual one is reported beside them)."""
    out = {}
    for name, res in corpora.items():
        if name not in ("generated", "stdlib"):
            continue
        for r in res["rows"]:
            if r["engine"] == "neardup" and r["config"] == "default" and r["threads"] == 1:
                out[f"{name}_{r['input']}_mb_s_per_core>={TARGET_MB_S_PER_CORE:g}"] = (
                    r["mb_s_per_core"] >= TARGET_MB_S_PER_CORE
                )
        for kind in ("list", "arrow"):
            ratio = res["ratios"].get(f"neardup_{kind}_vs_gaoya_all_cores")
            if ratio is not None:
                key = f"{name}_{kind}_vs_gaoya_all_cores>={TARGET_GAOYA_RATIO:g}x"
                out[key] = ratio >= TARGET_GAOYA_RATIO
    return out


def _print_footer(results: dict[str, Any]) -> None:
    s, m = results["startup"], results["machine"]
    print("\n== start-up (child processes) ==")
    if "compile_s" in s:
        print(
            f"warmup() with an empty NUMBA_CACHE_DIR   {s['warmup_empty_cache_s']:8.2f} s "
            f"(process {s['warmup_empty_cache_process_s']:.2f} s)"
        )
        print(
            f"warmup() with the cache warm             {s['warmup_warm_cache_s']:8.2f} s "
            f"=> compile time {s['compile_s']:.2f} s"
        )
    else:
        print(
            f"warmup() with the cache warm             {s['warmup_warm_cache_s']:8.2f} s "
            "(compile not measured)"
        )
    cli = s["cli_100_docs"]
    print(
        f"new process, warm cache, 100 short docs: import {cli['import_s']:.3f} s, first call "
        f"{cli['first_call_s']:.3f} s, whole process {cli['process_wall_s']:.2f} s"
    )
    print(f"this process's warmup()                  {s['parent_warmup_s']:8.2f} s")
    peers = results["peers"]
    print(f"\n== peers == installed: {', '.join(peers['installed']) or 'none'}")
    print(f"simhash: Simhash(text) defaults: {peers['simhash_features']}")
    print(
        f"gaoya: SimHashStringIndex({', '.join(f'{k}={v!r}' for k, v in peers['gaoya_args'].items())}): "
        f"{peers['gaoya_features']}"
    )
    print(
        f"\n== machine == {m.get('cpu_model')}; {m['cpus_available']} CPUs available; numba "
        f"{m['numba']} with {m['numba_threads']} threads ({m['threading_layer']}); Python {m['python']}"
    )
    print(
        "targets (default config, warm): "
        + ", ".join(f"{k} {'met' if v else 'NOT met'}" for k, v in results["targets"].items())
    )
    print(f"this process's peak RSS {results['parent_peak_rss_mib']:.0f} MiB; wall {results['wall_s']:.1f} s")


if __name__ == "__main__":
    main()
