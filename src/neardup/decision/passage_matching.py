"""The passages documents share, from their words: sampled seeds -> documents that share a
seed -> chains of shared seeds along one diagonal -> a banded local alignment of each chain,
kept when long and similar enough. Seeds in ``common_docs`` documents or more make no pairs:
their runs are common passages (a site's footer), counted once each.

Why these settings (``benchmarks/bench_passages.py`` measures them): seeds of 4 words, one in
3 kept, leave a 50-word passage with one word in ten edited about 7 seeds, of which a chain
needs 2; an edit breaks the 4 seeds over it, so exact runs are not needed. The alignment scores
+2 a matched word and -3 a changed, inserted or deleted one: a passage with one edit in ten
scores well above zero, unrelated text well below, so the passage's ends are where its
matches stop.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .._config import check_code_settings
from .._errors import ConfigError
from .._kernels.passages import align_chains, chain_hits, common_runs, count_seeds, fill_seeds, seed_hits
from .choices import PASSAGE_FEATURES

SEED_WORDS = 4
"""Words hashed into one seed."""
SEED_TOKENS = 12
"""Code tokens hashed into one seed (``features="code"``). Tokens are far more alike than
words, most of all with names made placeholders: on 300 files of the Python standard library,
61% of the runs of 4 normalised tokens lie in 100 files or more (common seeds), 9% of runs of
8, none of 12."""
SAMPLE = 3
"""One seed in this many is kept (by its hash, so the same ones in every document)."""
MIN_HITS = 2
"""Shared seeds along one diagonal that make a chain worth aligning, lying a seed's length
apart or more (or more seeds than MIN_HITS): two overlapping seeds are one shared phrase of 5
or 6 words (three chains in four, on real text), no passage."""
MAX_GAP = 24
"""Words between two seeds of one chain, at most."""
MAX_DRIFT = 8
"""Words the diagonal may move between two seeds of one chain (insertions, deletions)."""
MARGIN = 32
"""Words aligned beyond a chain's first and last seed (doubled while the passage reaches further)."""
BAND = 8
"""Diagonals aligned beyond the chain's."""
MATCH, MISMATCH, GAP = 2, 3, 3


@dataclass(frozen=True)
class PassageOptions:
    """What counts as a shared passage.

    Attributes:
        min_words: a passage's length in words, at least; its longer copy may hold one in ten
            fewer (``least_words``), since an edited word at either end is not aligned.
        min_similarity: 2 * matched words / (words of both copies), at least this.
        common_docs: a passage in this many documents or more is common: reported once, with
            its count, not as pairs (a footer in a million pages would be 5e11 pairs).
        features: what a passage is made of: ``"words"`` of prose, or ``"code"``: the tokens
            of source code, as ``FingerprintConfig(features="code")`` lexes them (the ``code``
            extra); ``min_words`` then counts tokens.
        language, code_normalize: for ``"code"``, as ``FingerprintConfig`` takes them: the
            pygments lexer of every document (None: each one's file name says it), and
            ``"identifiers"`` (names and literals made placeholders) or ``"none"``.
    """

    min_words: int = 50
    min_similarity: float = 0.8
    common_docs: int = 100
    features: str = "words"
    language: str | None = None
    code_normalize: str = "identifiers"

    @property
    def seed_words(self) -> int:
        """Words (code tokens) hashed into one seed."""
        return SEED_TOKENS if self.features == "code" else SEED_WORDS

    @property
    def least_words(self) -> int:
        """The words the longer copy of an accepted passage holds at least."""
        return self.min_words - self.min_words // 10

    @property
    def least_matches(self) -> int:
        """Pairs of words in a row that a chain's region matches along its diagonals before it
        is aligned: three quarters of the words an accepted passage matches at least (an edit breaks the
        pairs on both sides of it; indels beyond the chain's reach move a few off those
        diagonals)."""
        return int(0.75 * self.least_words * self.min_similarity)

    def __post_init__(self) -> None:
        if self.features not in PASSAGE_FEATURES:
            raise ConfigError(
                f"features={self.features!r} is not a kind of passage; choose one of "
                f"{', '.join(map(repr, PASSAGE_FEATURES))}"
            )
        check_code_settings(self.features, self.language, self.code_normalize)
        if not isinstance(self.min_words, int) or self.min_words < 2 * self.seed_words:
            unit = "tokens" if self.features == "code" else "words"
            raise ConfigError(
                f"min_words (--min-words) must be an integer >= {2 * self.seed_words} ({unit}), "
                f"got {self.min_words!r}"
            )
        if not 0 < self.min_similarity <= 1:
            raise ConfigError(
                f"min_similarity (--min-similarity) must be in (0, 1], got {self.min_similarity!r}"
            )
        if not isinstance(self.common_docs, int) or self.common_docs < 3:
            raise ConfigError(
                f"common_docs (--common-docs) must be an integer >= 3, got {self.common_docs!r}"
            )


class Seeds:
    """The sampled seeds of every document long enough to hold a passage."""

    def __init__(self, min_words: int, seed_words: int = SEED_WORDS) -> None:
        self.min_words = min_words
        self.seed_words = seed_words
        self._parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, hashes: np.ndarray, offsets: np.ndarray, first_doc: int) -> None:
        """The seeds of documents ``first_doc, first_doc + 1, ...``, whose words are
        ``hashes[offsets[d]:offsets[d + 1]]``."""
        counts = count_seeds(hashes, offsets, self.seed_words, SAMPLE, self.min_words)
        seed_offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=seed_offsets[1:])
        self._parts.append(
            fill_seeds(hashes, offsets, self.seed_words, SAMPLE, self.min_words, seed_offsets, first_doc)
        )

    def by_seed(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(seeds, documents, positions), sorted by seed, then document and position. Seeds
        are cut to their top 32 bits: a sort of the cut seed and the occurrence's number in
        one uint64 is several times faster than an argsort, and two seeds that meet by
        chance make a hit that no chain follows."""
        if not self._parts:
            return np.zeros(0, np.uint64), np.zeros(0, np.int32), np.zeros(0, np.int32)
        seeds, docs, positions = (np.concatenate(column) for column in zip(*self._parts))
        self._parts = []
        if len(seeds) >= 2**32:
            raise ValueError(f"{len(seeds):,} seeds is more than one run sorts (2**32)")
        keyed = seeds >> np.uint64(32) << np.uint64(32)
        keyed |= np.arange(len(seeds), dtype=np.uint64)
        keyed.sort()  # documents were added in order, so each seed's stay in order
        at = (keyed & np.uint64(0xFFFFFFFF)).astype(np.int64)
        return keyed >> np.uint64(32), docs[at], positions[at]


@dataclass
class Matches:
    """Aligned passages, one per row (int64 arrays): documents a < b, the first and last word
    of each copy (numbered within its document), and the words matched."""

    doc_a: np.ndarray
    doc_b: np.ndarray
    first_a: np.ndarray
    last_a: np.ndarray
    first_b: np.ndarray
    last_b: np.ndarray
    matched: np.ndarray

    def __len__(self) -> int:
        return len(self.doc_a)

    def rows(self, rows: np.ndarray) -> Matches:
        return Matches(*(getattr(self, name)[rows] for name in Matches.__dataclass_fields__))

    @property
    def words(self) -> np.ndarray:
        """The longer copy's length in words."""
        return np.maximum(self.last_a - self.first_a, self.last_b - self.first_b) + 1

    @property
    def similarity(self) -> np.ndarray:
        """2 * matched / (words of both copies)."""
        total = self.last_a - self.first_a + self.last_b - self.first_b + 2
        return 2 * self.matched / np.maximum(total, 1)


@dataclass
class Common:
    """Common passages: each run of common seeds (``doc``, ``first`` and ``last`` word) with
    the number of its ``passage`` (0, 1, ...), runs of one passage in document order, where
    the seed the passage is keyed by lies in the run (``anchor``: the words of two copies line
    up on the diagonal of their anchors), and the words its copy may span when aligned
    (``lower`` to ``upper``: not into the seeds of the common passages beside it)."""

    doc: np.ndarray
    first: np.ndarray
    last: np.ndarray
    passage: np.ndarray
    anchor: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    def rows(self, rows: np.ndarray) -> Common:
        return Common(*(getattr(self, name)[rows] for name in Common.__dataclass_fields__))

    def documents(self) -> np.ndarray:
        """How many documents hold each passage (int64, one per passage)."""
        if not len(self.passage):
            return np.zeros(0, np.int64)
        held = np.unique(np.stack([self.passage, self.doc]), axis=1)[0]
        return np.bincount(held, minlength=int(self.passage[-1]) + 1).astype(np.int64)


def find_passages(
    hashes: np.ndarray, offsets: np.ndarray, seeds: Seeds, options: PassageOptions
) -> tuple[Matches, Common]:
    """The passages the documents share (pairs) and the common ones, from every document's
    words (``hashes[offsets[d]:offsets[d + 1]]``) and their ``seeds``. Every copy of a common
    passage runs to its aligned ends (one alignment each: what stripping them needs), and no
    pair's alignment runs into one: a common passage is reported once, in ``Common``, not
    again as the pairs of its copies that share a variant (a licence's year), and its words
    cost a pair no alignment (the cost grows with the text pairs share, not with the
    boilerplate around it)."""
    by_seed, docs, positions = seeds.by_seed()
    doc_a, doc_b, pos_a, pos_b, in_documents = seed_hits(by_seed, docs, positions, options.common_docs)
    common = in_documents > 0
    runs = _common_runs(by_seed[common], docs[common], positions[common], in_documents[common], options)
    del by_seed, docs, positions, in_documents, common
    ends = _common_ends(runs, hashes, offsets, options.least_words, options.seed_words)
    common_found = _earlier_copy_first(_copy_ends(ends, hashes, offsets, options.seed_words))
    chains = passage_chains(doc_a, doc_b, pos_a, pos_b, len(offsets) - 1, options.seed_words)
    del doc_a, doc_b, pos_a, pos_b
    masked = common_words(common_found, offsets, len(hashes))
    return aligned_passages(hashes, offsets, masked, chains, options), common_found


def passages_with_first(hashes: np.ndarray, offsets: np.ndarray, options: PassageOptions) -> Matches:
    """The passages document 0 shares with each of the others (``doc_a`` is 0), from their
    words (``hashes[offsets[d]:offsets[d + 1]]``): what :func:`find_passages` finds between
    them, with no pairs among the others (``neardup serve --passages``: 0 is the query, the
    others its candidates). Seeds are not made common here: the caller bounds the documents
    a seed brings (a common passage is a pair per candidate, at most)."""
    seeds = Seeds(options.min_words)
    seeds.add(hashes, offsets, 0)
    by_seed, docs, positions = seeds.by_seed()
    chains = passage_chains(
        *_hits_with_first(by_seed, docs, positions, options.common_docs), len(offsets) - 1
    )
    return aligned_passages(hashes, offsets, np.zeros(len(hashes), dtype=np.uint8), chains, options)


def _hits_with_first(
    seeds: np.ndarray, docs: np.ndarray, positions: np.ndarray, common_docs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``seed_hits``' pairs of occurrences whose first is document 0's, from seeds sorted with
    their documents ascending: a join on the seed, with its rule for a seed of more than
    4 * ``common_docs`` occurrences (only each document's first occurrence pairs)."""
    new_seed = np.ones(len(seeds), dtype=bool)
    new_seed[1:] = seeds[1:] != seeds[:-1]
    occurrences = np.diff(np.append(np.flatnonzero(new_seed), len(seeds)))
    crowded = np.repeat(occurrences > 4 * common_docs, occurrences)
    repeat = ~new_seed
    repeat[1:] &= docs[1:] == docs[:-1]
    kept = ~(crowded & repeat)
    seeds, docs, positions = seeds[kept], docs[kept], positions[kept]
    first = docs == 0
    mine, my_positions = seeds[first], positions[first]
    theirs, their_docs, their_positions = seeds[~first], docs[~first], positions[~first]
    lo = np.searchsorted(mine, theirs, side="left")
    shared = np.searchsorted(mine, theirs, side="right") - lo
    total = int(shared.sum())
    other = np.repeat(np.arange(len(theirs)), shared)
    at = np.repeat(lo - np.cumsum(shared) + shared, shared) + np.arange(total)
    return (
        np.zeros(total, dtype=np.int32),
        their_docs[other],
        my_positions[at],
        their_positions[other],
    )


def passage_chains(
    doc_a: np.ndarray,
    doc_b: np.ndarray,
    pos_a: np.ndarray,
    pos_b: np.ndarray,
    n_docs: int,
    seed_words: int = SEED_WORDS,
) -> np.ndarray:
    """The chains of seed hits (doc_a < doc_b, documents below ``n_docs``) along one diagonal
    worth aligning, in the order ``align_chains`` takes them; ``seed_words`` is the seeds'
    length, the least span of a chain of ``MIN_HITS`` seeds."""
    chains = chain_hits(doc_a, doc_b, pos_a, pos_b, n_docs, MAX_GAP, MAX_DRIFT, MIN_HITS, seed_words)
    return chains[np.lexsort((chains[:, 2], chains[:, 1], chains[:, 0]))]


def aligned_passages(
    hashes: np.ndarray, offsets: np.ndarray, masked: np.ndarray, chains: np.ndarray, options: PassageOptions
) -> Matches:
    """The passages of ``chains`` (``passage_chains``), each aligned (not into ``masked``
    words, uint8 one per word), kept when long and similar enough, one row per passage."""
    whole = np.stack([np.zeros(len(chains), np.int64), np.diff(offsets)[chains[:, 0]]], axis=1)
    aligned = align_chains(
        hashes,
        offsets,
        masked,
        chains,
        whole,
        options.seed_words,
        MARGIN,
        BAND,
        MATCH,
        MISMATCH,
        GAP,
        options.least_matches,
        True,
    )
    matches = Matches(chains[:, 0], chains[:, 1], *aligned[:, :5].T)
    good = (matches.words >= options.least_words) & (matches.similarity >= options.min_similarity)
    return _distinct(matches.rows(np.flatnonzero(good)), aligned[good, 5])


def common_words(common: Common, offsets: np.ndarray, n_words: int) -> np.ndarray:
    """uint8, one per word: 1 where a copy of a common passage lies, else 0."""
    edges = np.zeros(n_words + 1, dtype=np.int32)
    starts = offsets[common.doc] + common.first
    np.add.at(edges, starts, 1)
    np.add.at(edges, starts + (common.last - common.first) + 1, -1)
    np.cumsum(edges, out=edges)
    return (edges[:-1] > 0).view(np.uint8)


def _distinct(matches: Matches, scores: np.ndarray) -> Matches:
    """One row per passage: of the alignments of one pair that overlap in both documents
    (chains of one passage, split by a gap, align to the same words), the best scored."""
    order = np.lexsort((-scores, matches.first_a, matches.doc_b, matches.doc_a))
    m = matches.rows(order)
    keep = np.ones(len(m), dtype=bool)
    pair = m.doc_a * (int(m.doc_b.max(initial=0)) + 1) + m.doc_b
    score = scores[order]
    starts = np.flatnonzero(np.diff(pair, prepend=-1))
    ends = np.append(starts[1:], len(m))
    for lo, hi in zip(starts.tolist(), ends.tolist()):
        if hi - lo == 1:
            continue
        kept: list[int] = []
        for r in range(lo, hi):
            for k in kept:
                if (
                    m.first_a[r] <= m.last_a[k]
                    and m.first_a[k] <= m.last_a[r]
                    and (m.first_b[r] <= m.last_b[k] and m.first_b[k] <= m.last_b[r])
                ):
                    if score[r] > score[k]:
                        keep[k] = False
                        kept.remove(k)
                        kept.append(r)
                    else:
                        keep[r] = False
                    break
            else:
                kept.append(r)
    return m.rows(np.flatnonzero(keep))


def _common_runs(
    seeds: np.ndarray, docs: np.ndarray, positions: np.ndarray, counts: np.ndarray, options: PassageOptions
) -> Common:
    """Runs of common seeds, numbered as passages by their smallest seed, in order of the
    first document that holds each. A run needs half of ``min_words`` between its first seed
    and its last: its copy's ends, aligned, are further apart (``_common_ends``)."""
    order = np.lexsort((positions, docs))
    sorted_ = docs[order], positions[order], seeds[order], counts[order]
    runs = common_runs(*sorted_, options.seed_words, MAX_GAP, options.min_words // 2)
    keys = runs[:, 3]
    _, first_at, label = np.unique(keys, return_index=True, return_inverse=True)
    # Number passages by where they first occur (runs are in document order).
    rank = np.empty(len(first_at), dtype=np.int64)
    rank[np.argsort(first_at, kind="stable")] = np.arange(len(first_at))
    passage = rank[label.reshape(-1)] if len(runs) else np.zeros(0, np.int64)
    lower, upper = _between_neighbours(runs[:, 0], runs[:, 1], runs[:, 2])
    order = np.lexsort((runs[:, 0], passage))
    doc, first, last, anchor = runs[order, 0], runs[order, 1], runs[order, 2], runs[order, 4]
    return Common(doc, first, last, passage[order], anchor, lower[order], upper[order])


def _common_ends(
    common: Common, hashes: np.ndarray, offsets: np.ndarray, min_words: int, seed_words: int
) -> Common:
    """Each common passage's first copy, aligned with its second, so that it runs to where
    the copies stop agreeing rather than from its first common seed to its last. Passages
    whose first copy is then shorter than ``min_words`` are left out, and those held by one
    document: common phrases repeated close together in it, not a passage others hold."""
    n = len(common.passage)
    firsts = np.flatnonzero(np.diff(common.passage, prepend=-1))  # passage k's first run
    seconds = np.minimum(firsts + 1, max(n - 1, 0))
    paired = (firsts + 1 < n) & (common.passage[seconds] == common.passage[firsts])
    first, last = _aligned_runs(common, firsts[paired], seconds[paired], hashes, offsets, seed_words)
    long_enough = (last[firsts] - first[firsts] + 1 >= min_words) & (common.documents() > 1)
    kept = np.flatnonzero(long_enough[common.passage])
    renumbered = np.cumsum(long_enough) - 1  # 0, 1, ... in the same order
    # The runs left out bound no copy now: the others' bounds come from the runs kept.
    lower, upper = _between_neighbours(common.doc[kept], common.first[kept], common.last[kept])
    aligned = replace(common, first=first, last=last, passage=renumbered[common.passage]).rows(kept)
    return replace(aligned, lower=lower, upper=upper)


def _copy_ends(common: Common, hashes: np.ndarray, offsets: np.ndarray, seed_words: int) -> Common:
    """Every copy of each common passage but its first, aligned with the first."""
    firsts = np.flatnonzero(np.diff(common.passage, prepend=-1))
    first_of = firsts[common.passage]  # each run's passage's first run
    others = np.flatnonzero(first_of != np.arange(len(common.passage)))
    first, last = _aligned_runs(common, others, first_of[others], hashes, offsets, seed_words)
    return replace(common, first=first, last=last)


def _aligned_runs(
    common: Common,
    runs: np.ndarray,
    against: np.ndarray,
    hashes: np.ndarray,
    offsets: np.ndarray,
    seed_words: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Every run's first and last word, those of ``runs`` aligned with the copies of the
    same passage at ``against`` (where an alignment is found), not past the runs of other
    common passages beside them (``Common.lower``, ``Common.upper``)."""
    first, last = common.first.copy(), common.last.copy()
    if not len(runs):
        return first, last
    lower, upper = common.lower[runs], common.upper[runs]
    # The diagonal of the seed both copies are keyed by, not of their first seeds: a copy whose
    # first seed fell to an edit (a licence's year) starts at another of the passage's seeds.
    d = common.anchor[against] - common.anchor[runs]
    chains = np.stack(
        [
            common.doc[runs],
            common.doc[against],
            common.first[runs],
            np.maximum(common.last[runs] - seed_words + 1, common.first[runs]),
            common.first[against],
            np.maximum(common.last[against] - seed_words + 1, common.first[against]),
            d,
            d,
        ],
        axis=1,
    ).astype(np.int64)
    # The alignment is held between the neighbours (no wider region is aligned only to be
    # cut): two footers side by side in every page would otherwise widen each copy's
    # alignment over both, and over the whole page where pages share most of their text.
    bounds = np.stack([lower, np.minimum(upper, np.iinfo(np.int32).max) + 1], axis=1)
    no_mask = np.zeros(len(hashes), dtype=np.uint8)
    aligned = align_chains(
        hashes, offsets, no_mask, chains, bounds, seed_words, MARGIN, BAND, MATCH, MISMATCH, GAP, 0, False
    )
    found = aligned[:, 5] > 0
    first[runs[found]] = np.maximum(aligned[found, 0], lower[found])
    last[runs[found]] = np.minimum(aligned[found, 1], upper[found])
    return first, last


def _between_neighbours(
    doc: np.ndarray, first: np.ndarray, last: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each run of common seeds, the words its copy may span when aligned: not into the
    seeds of the runs beside it in its document. Two footers side by side in many pages would
    otherwise align as one, copy against copy. The seeds say where one ends: where the
    documents holding them change: a copy may run until the next run's first seed (which,
    over the words where two passages meet, may start up to a seed's words less one before
    the next passage does), and back to the last seed of the run before."""
    order = np.lexsort((first, doc))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    before, after = order[np.maximum(rank - 1, 0)], order[np.minimum(rank + 1, len(order) - 1)]
    has_before = (rank > 0) & (doc[before] == doc)
    has_after = (rank + 1 < len(order)) & (doc[after] == doc)
    lower = np.where(has_before, last[before] + 1, 0)
    upper = np.where(has_after, np.maximum(first[after] - 1, last), np.iinfo(np.int64).max)
    return lower, upper


def _earlier_copy_first(common: Common) -> Common:
    """Copies of two passages side by side, each aligned against its first copy, may overlap
    by the few words between the seeds of one and those of the other (where both first copies
    have the same words beside them): those words go to the earlier copy. A copy inside an
    earlier one is left as it is."""
    order = np.lexsort((common.first, common.doc))
    doc, first, last = common.doc[order], common.first[order], common.last[order]
    # The furthest word the copies so far reach in their document: a running maximum that
    # each document's larger key starts afresh.
    width = int(last.max(initial=0)) + 2
    reach = np.maximum.accumulate(doc * width + last) - doc * width
    moved = first.copy()
    after = np.flatnonzero((doc[1:] == doc[:-1]) & (first[1:] <= reach[:-1]) & (reach[:-1] < last[1:])) + 1
    moved[after] = reach[after - 1] + 1
    new_first = np.empty_like(moved)
    new_first[order] = moved
    return replace(common, first=new_first)
