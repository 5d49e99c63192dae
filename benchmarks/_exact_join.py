"""Exact Jaccard set-similarity self-join: the ground truth that recall by Jaccard band is
measured against.

:func:`exact_jaccard_pairs` returns every pair of documents whose feature sets have Jaccard
similarity >= a threshold, with the similarity, and nothing else; :func:`brute_force_pairs` is
the obviously-right O(n^2) reference it is checked against (``python benchmarks/_exact_join.py``).

How (AllPairs: Bayardo, Ma and Srikant, "Scaling up all pairs similarity search", WWW 2007, with
the size filter and pointer advance of their sec. 4, as PPJoin restates it for sets):

1. Identical sets are collapsed first: each document's sorted hashes are folded into a 64-bit
   signature, documents are sorted by (size, signature) and each run is checked element by
   element. Copies of one set are pairs at Jaccard 1.0 and need no search; a corpus with one page
   repeated 10,000 times would otherwise put 10,000 documents behind every feature of that page.
2. Features are ranked by their frequency among the distinct sets, rarest first (ties by hash),
   and each set is rewritten as its ascending ranks: a bijection, so overlaps are unchanged.
3. Prefix filter: if J(x, y) >= t then |x & y| >= t |x|, so x's first |x| - ceil(t |x|) + 1
   ranks and y's first |y| - ceil(t |y|) + 1 share the rarest common feature (Chaudhuri et al.
   2006). Only prefixes are indexed, and rare features make short posting lists.
4. Sets are probed in order of size; a posting list holds earlier (so not larger) sets in that
   order, and the size filter |y| >= t |x| drops its front for good (the start pointer only moves
   forward, as the probing sizes only grow). A per-set stamp array dedups the candidates of one
   probing set, and each candidate is verified at once by merging the two sorted rank lists, with
   an early exit when the overlap J >= t needs (ceil(t/(1+t) (|x|+|y|))) is out of reach. Only
   pairs that pass are kept, so memory is the index plus the output.
5. Pairs of distinct sets expand to the cross product of their copies, plus the pairs among the
   copies of each set; the result is sorted by (first, second).

Floating point: the filters use t |x| - EPS, so rounding in ``t * size`` never drops a pair
exactly at the threshold (0.7 * 10 is 7.000000000000001); they only admit more candidates. The
decision itself is ``inter / union >= threshold`` in float64, the same division the reference
does, so both agree to the bit on which pairs and which values. Exact for sets of fewer than
~10^9 features.

Empty documents are in no pair.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from numba import njit

EPS = 1e-6
"""Slack in the filters' bounds; see the module docstring."""

_MIX = np.uint64(0xBF58476D1CE4E5B9)
_SEED = np.uint64(0x9E3779B97F4A7C15)


def exact_jaccard_pairs(
    doc_offsets: np.ndarray, hashes: np.ndarray, threshold: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair of documents with Jaccard similarity >= ``threshold``.

    Args:
        doc_offsets: int64, shape (n + 1,): document d's features are
            ``hashes[doc_offsets[d]:doc_offsets[d + 1]]``.
        hashes: uint64, each document's distinct feature hashes, ascending within the document.
        threshold: 0 < threshold <= 1.

    Returns:
        (first, second, jaccard): int64, int64 and float64, shape (m,), first < second, sorted by
        (first, second). Documents without features are in no pair.
    """
    offsets, hashes = _checked(doc_offsets, hashes)
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold={threshold!r} must be in (0, 1]; 0 would pair disjoint sets")
    n = offsets.shape[0] - 1
    sizes = np.diff(offsets)

    # 1. Collapse identical sets: group[d] is d's distinct set (-1 if empty), reps[g] one copy.
    docs = np.flatnonzero(sizes > 0)
    signatures = _signatures(offsets, hashes)
    order = docs[np.lexsort((docs, signatures[docs], sizes[docs]))]
    group, reps = _collapse(order, offsets, hashes, signatures, n)
    members = docs[np.argsort(group[docs], kind="stable")]  # each set's copies, ascending
    member_offsets = np.zeros(reps.shape[0] + 1, np.int64)
    np.cumsum(np.bincount(group[docs], minlength=reps.shape[0]), out=member_offsets[1:])

    # 2. Distinct sets as ascending frequency ranks.
    set_sizes = sizes[reps]
    set_offsets = np.zeros(reps.shape[0] + 1, np.int64)
    np.cumsum(set_sizes, out=set_offsets[1:])
    set_hashes = _gather(offsets, hashes, reps, set_offsets)
    values, inverse, counts = np.unique(set_hashes, return_inverse=True, return_counts=True)
    del set_hashes, values
    rank_of_value = np.empty(counts.shape[0], np.int64)
    rank_of_value[np.argsort(counts, kind="stable")] = np.arange(counts.shape[0])
    ranks = rank_of_value[inverse.reshape(-1)]
    del inverse, rank_of_value
    _sort_each(set_offsets, ranks)

    # 3-4. Prefix index over sets in size order, probed in the same order.
    by_size = np.lexsort((np.arange(reps.shape[0]), set_sizes))
    sizes_by_position = set_sizes[by_size]
    prefix = sizes_by_position - np.ceil(threshold * sizes_by_position - EPS).astype(np.int64) + 1
    prefix = np.clip(prefix, 1, sizes_by_position)
    index_offsets, entries = _prefix_index(by_size, set_offsets, ranks, prefix, counts.shape[0])
    a, b, jaccard = _probe(
        by_size, set_offsets, ranks, sizes_by_position, prefix, index_offsets, entries, threshold
    )

    # 5. Back to documents.
    first, second, jaccard = _expand(a, b, jaccard, member_offsets, members)
    order = np.lexsort((second, first))
    return first[order], second[order], jaccard[order]


def brute_force_pairs(
    doc_offsets: np.ndarray, hashes: np.ndarray, threshold: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`exact_jaccard_pairs` the obvious way (Python sets, every pair): the reference,
    for a few thousand documents at most."""
    offsets, hashes = _checked(doc_offsets, hashes)
    sets = [frozenset(hashes[lo:hi].tolist()) for lo, hi in zip(offsets[:-1].tolist(), offsets[1:].tolist())]
    first, second, jaccard = [], [], []
    for i, x in enumerate(sets):
        if not x:
            continue
        for j in range(i + 1, len(sets)):
            y = sets[j]
            if not y:
                continue
            inter = len(x & y)
            value = inter / (len(x) + len(y) - inter)
            if value >= threshold:
                first.append(i)
                second.append(j)
                jaccard.append(value)
    return np.array(first, np.int64), np.array(second, np.int64), np.array(jaccard, np.float64)


def _checked(doc_offsets: np.ndarray, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    hashes = np.ascontiguousarray(hashes, dtype=np.uint64)
    if offsets.ndim != 1 or offsets.shape[0] < 1 or offsets[0] != 0 or offsets[-1] != hashes.shape[0]:
        raise ValueError(
            f"doc_offsets must be int64, shape (n + 1,), from 0 to len(hashes)={hashes.shape[0]}; "
            f"got shape {offsets.shape} ending at {offsets[-1] if offsets.size else None}"
        )
    bad = _first_unsorted(offsets, hashes)
    if bad >= 0:
        raise ValueError(
            f"document {bad}'s hashes are not strictly ascending (distinct, sorted); "
            "sort and dedupe each document's hashes (np.unique) first"
        )
    return offsets, hashes


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _first_unsorted(offsets, hashes):
    for d in range(offsets.shape[0] - 1):
        if offsets[d + 1] < offsets[d]:
            return d
        for i in range(offsets[d] + 1, offsets[d + 1]):
            if hashes[i] <= hashes[i - 1]:
                return d
    return -1


@njit(cache=True, nogil=True)
def _signatures(offsets, hashes):
    """uint64 per document: its sorted hashes folded together (equal sets, equal signatures)."""
    n = offsets.shape[0] - 1
    out = np.empty(n, np.uint64)
    for d in range(n):
        h = _SEED
        for i in range(offsets[d], offsets[d + 1]):
            h = (h ^ hashes[i]) * _MIX
            h ^= h >> np.uint64(31)
        out[d] = h
    return out


@njit(cache=True, nogil=True)
def _same(offsets, hashes, a, b):
    return np.array_equal(hashes[offsets[a] : offsets[a + 1]], hashes[offsets[b] : offsets[b + 1]])


@njit(cache=True, nogil=True)
def _collapse(order, offsets, hashes, signatures, n):
    """Documents in ``order`` (sorted by size, signature) grouped into distinct sets: each is
    compared with the sets already found in its run of equal (size, signature)."""
    group = np.full(n, -1, np.int64)
    reps = np.empty(order.shape[0], np.int64)
    n_groups = 0
    run_start = 0
    for k in range(order.shape[0]):
        d = order[k]
        if k > 0:
            prev = order[k - 1]
            if (
                signatures[d] != signatures[prev]
                or offsets[d + 1] - offsets[d] != offsets[prev + 1] - offsets[prev]
            ):
                run_start = n_groups
        found = -1
        for g in range(run_start, n_groups):
            if _same(offsets, hashes, reps[g], d):
                found = g
                break
        if found < 0:
            found = n_groups
            reps[n_groups] = d
            n_groups += 1
        group[d] = found
    return group, reps[:n_groups].copy()


@njit(cache=True, nogil=True)
def _gather(offsets, hashes, docs, out_offsets):
    out = np.empty(out_offsets[-1], np.uint64)
    for k in range(docs.shape[0]):
        d = docs[k]
        out[out_offsets[k] : out_offsets[k + 1]] = hashes[offsets[d] : offsets[d + 1]]
    return out


@njit(cache=True, nogil=True)
def _sort_each(offsets, values):
    for k in range(offsets.shape[0] - 1):
        values[offsets[k] : offsets[k + 1]] = np.sort(values[offsets[k] : offsets[k + 1]])


@njit(cache=True, nogil=True)
def _prefix_index(by_size, set_offsets, ranks, prefix, n_features):
    """Inverted index of the prefixes: positions (in ``by_size``) per feature rank, ascending."""
    index_offsets = np.zeros(n_features + 1, np.int64)
    for p in range(by_size.shape[0]):
        start = set_offsets[by_size[p]]
        for i in range(start, start + prefix[p]):
            index_offsets[ranks[i] + 1] += 1
    for f in range(n_features):
        index_offsets[f + 1] += index_offsets[f]
    fill = index_offsets[:-1].copy()
    entries = np.empty(index_offsets[-1], np.int64)
    for p in range(by_size.shape[0]):
        start = set_offsets[by_size[p]]
        for i in range(start, start + prefix[p]):
            entries[fill[ranks[i]]] = p
            fill[ranks[i]] += 1
    return index_offsets, entries


@njit(cache=True, nogil=True)
def _overlap(ranks, x, size_x, y, size_y, needed):
    """|x & y| by merging two ascending lists, or -1 once ``needed`` is out of reach."""
    i = 0
    j = 0
    inter = 0
    while i < size_x and j < size_y:
        if inter + min(size_x - i, size_y - j) < needed:
            return -1
        rx = ranks[x + i]
        ry = ranks[y + j]
        if rx == ry:
            inter += 1
            i += 1
            j += 1
        elif rx < ry:
            i += 1
        else:
            j += 1
    return inter if inter >= needed else -1


@njit(cache=True, nogil=True)
def _probe(by_size, set_offsets, ranks, sizes, prefix, index_offsets, entries, threshold):
    """(set a, set b, Jaccard) of every pair of distinct sets at >= ``threshold``."""
    n_sets = by_size.shape[0]
    start = index_offsets[:-1].copy()
    stamp = np.full(n_sets, -1, np.int64)
    out_a = np.empty(1024, np.int64)
    out_b = np.empty(1024, np.int64)
    out_j = np.empty(1024, np.float64)
    m = 0
    for p in range(n_sets):
        size_x = sizes[p]
        x = set_offsets[by_size[p]]
        min_size = threshold * size_x - EPS
        for i in range(x, x + prefix[p]):
            f = ranks[i]
            k = start[f]
            end = index_offsets[f + 1]
            while k < end and sizes[entries[k]] < min_size:
                k += 1
            start[f] = k
            while k < end:
                q = entries[k]
                if q >= p:
                    break
                k += 1
                if stamp[q] == p:
                    continue
                stamp[q] = p
                size_y = sizes[q]
                needed = math.ceil(threshold / (1.0 + threshold) * (size_x + size_y) - EPS)
                inter = _overlap(ranks, x, size_x, set_offsets[by_size[q]], size_y, needed)
                if inter < 0:
                    continue
                jaccard = inter / (size_x + size_y - inter)
                if jaccard >= threshold:
                    if m == out_a.shape[0]:
                        out_a = np.concatenate((out_a, np.empty(m, np.int64)))
                        out_b = np.concatenate((out_b, np.empty(m, np.int64)))
                        out_j = np.concatenate((out_j, np.empty(m, np.float64)))
                    out_a[m] = by_size[q]
                    out_b[m] = by_size[p]
                    out_j[m] = jaccard
                    m += 1
    return out_a[:m].copy(), out_b[:m].copy(), out_j[:m].copy()


@njit(cache=True, nogil=True)
def _expand(a, b, jaccard, member_offsets, members):
    """Set pairs to document pairs: copies of one set pair at 1.0, two sets' copies crosswise."""
    total = 0
    for g in range(member_offsets.shape[0] - 1):
        c = member_offsets[g + 1] - member_offsets[g]
        total += c * (c - 1) // 2
    for k in range(a.shape[0]):
        total += (member_offsets[a[k] + 1] - member_offsets[a[k]]) * (
            member_offsets[b[k] + 1] - member_offsets[b[k]]
        )
    first = np.empty(total, np.int64)
    second = np.empty(total, np.int64)
    out_j = np.empty(total, np.float64)
    m = 0
    for g in range(member_offsets.shape[0] - 1):
        for i in range(member_offsets[g], member_offsets[g + 1]):
            for j in range(i + 1, member_offsets[g + 1]):
                first[m] = members[i]  # members are ascending within a set
                second[m] = members[j]
                out_j[m] = 1.0
                m += 1
    for k in range(a.shape[0]):
        for i in range(member_offsets[a[k]], member_offsets[a[k] + 1]):
            for j in range(member_offsets[b[k]], member_offsets[b[k] + 1]):
                first[m] = min(members[i], members[j])
                second[m] = max(members[i], members[j])
                out_j[m] = jaccard[k]
                m += 1
    return first, second, out_j


# ---------------------------------------------------------------------------------------------
# Self-check: python benchmarks/_exact_join.py [--full 20000]
# ---------------------------------------------------------------------------------------------

THRESHOLDS = (0.5, 0.7, 0.8, 0.9)
BANDS = ((0.5, 0.7), (0.7, 0.8), (0.8, 0.9), (0.9, 1.01))


def _random_sets(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """~1,100 small sets over a skewed pool of 3,000 full-range uint64 values: unrelated sets,
    edited copies at 0-40%, pairs planted exactly at 0.5, 0.7, 0.8 and 0.9, one set 300 times and
    another 40 times (with edited copies of them), and empty documents; in a shuffled order."""
    rng = np.random.default_rng(seed)
    pool = np.unique(rng.integers(0, 2**64, size=3000, dtype=np.uint64))
    p = 1.0 / np.arange(1, pool.shape[0] + 1) ** 0.8
    p /= p.sum()

    def draw(size: int) -> set[int]:
        return set(rng.choice(pool, size=min(size, pool.shape[0] // 2), replace=False, p=p).tolist())

    def edit(s: set[int], rate: float) -> set[int]:
        kept = {v for v in s if rng.random() >= rate}
        return kept | draw(int(rng.binomial(len(s), rate)))

    sets = [draw(int(rng.integers(1, 80))) for _ in range(400)]
    sets += [edit(sets[int(rng.integers(len(sets)))], float(rng.uniform(0, 0.4))) for _ in range(250)]
    # (|x|, |y|, |x & y|) at Jaccard exactly 0.5, 0.7, 0.8, 0.9 (0.7 * 10 rounds above 7 in float)
    for size_x, size_y, inter in (
        (10, 5, 5),
        (10, 7, 7),
        (10, 8, 8),
        (10, 9, 9),
        (20, 14, 14),
        (12, 12, 8),
        (17, 17, 14),
        (9, 9, 8),
        (19, 19, 18),
    ):
        values = list(draw(size_x + size_y - inter))
        sets += [set(values[:size_x]), set(values[size_x - inter : size_x - inter + size_y])]
    common, other = draw(60), draw(25)
    sets += [common] * 300 + [other] * 40 + [edit(common, 0.05) for _ in range(20)] + [set()] * 15
    order = rng.permutation(len(sets))
    sets = [sets[i] for i in order.tolist()]
    offsets = np.zeros(len(sets) + 1, np.int64)
    np.cumsum([len(s) for s in sets], out=offsets[1:])
    hashes = np.concatenate([np.array(sorted(s), np.uint64) for s in sets])
    return offsets, hashes


def _compare(name: str, offsets: np.ndarray, hashes: np.ndarray) -> bool:
    ok = True
    for t in THRESHOLDS:
        started = time.perf_counter()
        fast = exact_jaccard_pairs(offsets, hashes, t)
        fast_s = time.perf_counter() - started
        started = time.perf_counter()
        slow = brute_force_pairs(offsets, hashes, t)
        slow_s = time.perf_counter() - started
        same = all(np.array_equal(f, s) for f, s in zip(fast, slow))
        at_t = int(np.sum(slow[2] == t))
        ok &= same
        print(
            f"  {name} t={t}: {'same' if same else 'DIFFERENT'} {slow[0].shape[0]:,} pairs "
            f"({at_t} exactly at t); exact join {fast_s:.3f} s, brute force {slow_s:.1f} s"
        )
        if not same:
            fast_set = set(zip(fast[0].tolist(), fast[1].tolist()))
            slow_set = set(zip(slow[0].tolist(), slow[1].tolist()))
            print(f"    missing {sorted(slow_set - fast_set)[:5]} extra {sorted(fast_set - slow_set)[:5]}")
    return ok


def _features(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    from neardup._config import FingerprintConfig
    from neardup.decision.verify import FeatureTable

    table = FeatureTable.of(texts, FingerprintConfig(features="word-shingles", shingle_size=3))
    return table.doc_offsets, table.hashes


def _band_report(
    docs: list[dict[str, str]], first: np.ndarray, second: np.ndarray, jaccard: np.ndarray
) -> None:
    kinds = np.array([d["kind"] for d in docs])
    pair_kind = np.where(kinds[first] == kinds[second], kinds[first], "mixed")
    names = sorted(set(pair_kind.tolist()))
    header = "".join(f"{f'{lo}-{hi}' if hi <= 1 else f'>={lo}':>11}" for lo, hi in BANDS)
    print(f"  {'pairs':10s}{header}{'all':>11}")
    for name in [*names, "all"]:
        mask = np.ones(first.shape[0], bool) if name == "all" else pair_kind == name
        counts = [int(np.sum(mask & (jaccard >= lo) & (jaccard < hi))) for lo, hi in BANDS]
        print(f"  {name:10s}" + "".join(f"{c:>11,}" for c in counts) + f"{int(mask.sum()):>11,}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check exact_jaccard_pairs against brute force.")
    parser.add_argument("--sample", type=int, default=1500, help="documents of build_corpus to check on")
    parser.add_argument("--full", type=int, default=0, help="also time the join on build_corpus(FULL)")
    parser.add_argument("--cache", help="JSONL cache of the full corpus (cached_corpus)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).parent))
    from _real_corpus import build_corpus, cached_corpus

    started = time.perf_counter()
    exact_jaccard_pairs(np.array([0, 1, 2], np.int64), np.array([1, 1], np.uint64), 0.5)
    print(f"compile (or load from cache): {time.perf_counter() - started:.1f} s")

    print("(a) random sets with planted near-duplicates, exact-threshold pairs and copies")
    ok = _compare("random", *_random_sets(args.seed))

    print(f"(b) build_corpus({args.sample}), word 3-shingles")
    docs = build_corpus(args.sample, args.seed)
    offsets, hashes = _features([d["text"] for d in docs])
    print(f"  {len(docs):,} documents, {hashes.shape[0]:,} features")
    ok &= _compare("corpus", offsets, hashes)

    if args.full:
        print(f"(c) build_corpus({args.full}), word 3-shingles")
        started = time.perf_counter()
        kw = {"max_docs": args.full, "seed": args.seed}
        docs = cached_corpus(args.cache, **kw) if args.cache else build_corpus(**kw)
        corpus_s = time.perf_counter() - started
        started = time.perf_counter()
        offsets, hashes = _features([d["text"] for d in docs])
        features_s = time.perf_counter() - started
        print(
            f"  {len(docs):,} documents ({sum(len(d['text']) for d in docs) / 1e6:.0f} M characters, "
            f"{corpus_s:.1f} s), {hashes.shape[0]:,} features ({features_s:.1f} s); "
            f"per kind: {dict(sorted(Counter(d['kind'] for d in docs).items()))}"
        )
        for t in THRESHOLDS:
            started = time.perf_counter()
            first, second, jaccard = exact_jaccard_pairs(offsets, hashes, t)
            print(f"  t={t}: {first.shape[0]:,} pairs in {time.perf_counter() - started:.2f} s")
            if t == THRESHOLDS[0]:
                _band_report(docs, first, second, jaccard)
    print("self-check:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
