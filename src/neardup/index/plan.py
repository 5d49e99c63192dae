"""The block layout of a permuted-table index (Manku, Jain & Das Sarma, WWW 2007, sec. 3).

The b bits are cut into B contiguous blocks, the first ``b % B`` one bit wider than the rest
(64 bits in 6 blocks: 11, 11, 11, 11, 10, 10). Two fingerprints within distance k differ in at
most k blocks, so they agree exactly on the other B - k: one table per *combination* of B - k
kept blocks, C(B, k) tables, finds every such pair. Its key is the kept blocks' bits; random
fingerprints share a key of w bits with probability 2**-w, so a probe sees about n / 2**w
candidates per table.

Presets, for max_distance k (the paper's 64-bit, k = 3 trade-off: 4 tables keyed on 16 bits,
10 on about 25, 20 on about 32):

- ``"compact"``: B = k + 1, k + 1 tables, the fewest bytes, most candidates;
- ``"balanced"``: B = k + 2, C(k + 2, 2) tables;
- ``"fast"``: B = k + 3, C(k + 3, 3) tables, the fewest candidates;
- ``"auto"``: the first of these (fewest tables) whose probe expects at most one candidate per
  table for the index's size, else the one with the fewest expected candidates.

Multi-index hashing (Norouzi, Punjani & Fleet, CVPR 2012), strategy ``"mih"``, for radii past
what C(B, k) tables serve (k up to 8 on 64 bits, 16 on 128 bits): the b bits are cut into m
blocks as above, one table per block keyed on that block alone. Two fingerprints within k differ
in at most ``r = k // m`` bits of at least one block (pigeonhole), so a query probes, in every
table, each key within r bits of its own block: ``sum(C(w, i) for i <= r)`` probes per table of
w key bits (a permuted table is probed once: r = 0). ``"auto"`` picks it when k >
``MAX_DISTANCE`` (and ``"mih"`` at any k), with the m of least estimated cost per query
(``IndexPlan.cost``) for the index's size. Within ``MAX_DISTANCE`` ``"auto"`` keeps the tables
even where a multi-index layout answers a query for less: the self-join, which the tables answer
by their key groups without a probe, would cost a query per fingerprint (measured at k = 7,
100k: 4 blocks of radius 1 answer queries 2.9x faster than the 120 tables of "fast" and build
24x faster in 1/18 of the memory, but join 20x slower).

One query costs, for both strategies, a probe per key (one directory slot read and a short
bucket scan, ``PROBE_NS``) and a verification per candidate (XOR + popcount of a stored
fingerprint, ``CANDIDATE_NS`` by width).

A table entry is ``(key << rowbits) | row`` with ``rowbits`` the bits a row number needs, so a
key longer than ``64 - rowbits`` bits is cut to that (still exact: only more candidates to
verify). The directory below gives each entry's top ``dbits`` key bits, so an entry keeps only
the ``key - dbits + rowbits`` bits beneath them: 4 bytes where they fit in 32 (every plan with
keys of about ``log2(n)`` bits or less, as "balanced" and "compact" have and multi-index hashing
in most layouts, at any n below 2**32), else 8 (``entry_dtype``; Manku et al.'s compressed
tables keep the same bits). Fingerprints and ids are stored once.

Each table has a *directory*: for every value of its keys' top ``dbits`` bits, the first
position holding it (``directory_bits``: 16 to 32 entries a bucket, so uint32 positions cost
1/8 to 1/4 byte per fingerprint per table). A probe reads one directory slot and searches one
bucket, a few adjacent cache lines, instead of binary-searching 10^8 entries (~27 scattered
cache and TLB misses).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from .._errors import ConfigError

PRESETS = {"compact": 1, "balanced": 2, "fast": 3}
"""Preset name -> B - k, the number of blocks each table keeps (B = k + value)."""

MAX_DISTANCE = 7
"""The largest max_distance served by C(B, k) tables; beyond it tables multiply or keys shrink
to nothing, and ``"auto"`` uses multi-index hashing."""

MIH_MAX_DISTANCE = {64: 8, 128: 16}
"""The largest max_distance per width, served by multi-index hashing."""

MAX_TABLES = 256
MAX_PROBES = 65536
"""Most multi-index probes (a directory slot and a bucket scan each) per query a plan may need."""

# Nanoseconds per probe, and per candidate by fingerprint width, of one query, fitted by least
# squares (relative error) to query_batch on one thread over 1M random fingerprints (20,000 random
# queries, best of 3) for 12 plans from 4 to 14,108 probes and 0 to 97,656 candidates per query:
# 64-bit k = 3 tables (compact, balanced, fast), k = 8 multi-index in 3, 4, 5, 9 blocks, 128-bit
# k = 16 in 5, 6, 7, 9, 17 blocks (`python benchmarks/bench_index.py --calibrate`; AMD EPYC, 2
# cores shared with other work, 32 MiB L3). One plan's time is within a factor of 3 of the fit
# (cache effects the terms do not model), but only the ratios decide a plan, and the fit ranks the
# measured k = 8 (64-bit) and k = 16 (128-bit) layouts in their measured order of cost, fastest
# first (tests/index/test_index_mih.py). A probe is a directory slot and a bucket, misses
# overlapped with other probes' (``_kernels/index.py``). A 128-bit candidate reads a row of an
# array twice as large, which the last-level cache holds less of: 4x a 64-bit one, where one
# price for both made auto pick 9 blocks at k = 16 over 6 that answer 1.35x faster. The
# binary-search model this replaces priced a probe at log2(n) / 2 candidates of either width.
PROBE_NS = 93.6
CANDIDATE_NS = {64: 7.6, 128: 31.2}
STRATEGIES = ("tables", "mih")
_BITS = (64, 128)


def row_bits(n: int) -> int:
    """Bits of a row number in a table entry for an index of ``n`` fingerprints (at least 1)."""
    return max(1, (n - 1).bit_length())


def directory_dtype(n: int) -> np.dtype:
    """Positions in a table of ``n`` entries, as its directory holds them: uint32 where they fit."""
    return np.dtype(np.uint32 if n < 2**32 else np.uint64)


def _check_distance(max_distance: object, bits: object = 64) -> int:
    limit = MIH_MAX_DISTANCE.get(bits, MAX_DISTANCE)  # type: ignore[call-overload]
    if isinstance(max_distance, bool) or not isinstance(max_distance, int):
        raise ConfigError(f"max_distance={max_distance!r} must be an integer in [0, {limit}]")
    if not 0 <= max_distance <= limit:
        raise ConfigError(
            f"max_distance={max_distance} is not served for bits={bits}: it must be in "
            f"[0, {limit}] (permuted tables up to {MAX_DISTANCE}, multi-index hashing beyond; "
            "limits: 8 at 64 bits, 16 at 128 bits)"
        )
    return max_distance


def _probes(width: int, radius: int) -> int:
    """Keys within ``radius`` bits of a ``width``-bit key."""
    return sum(math.comb(width, i) for i in range(min(radius, width) + 1))


@dataclass(frozen=True)
class IndexPlan:
    """The block layout of a :class:`~neardup.HammingIndex`: which bits form which block, which
    blocks key which table.

    Args:
        bits: fingerprint width, 64 or 128.
        max_distance: the largest Hamming distance searched: 0 to 7 for permuted tables, up to
            8 (64-bit) or 16 (128-bit) for multi-index hashing.
        num_blocks: B, the number of blocks; for ``"tables"`` C(B, max_distance) tables, each
            keeping B - max_distance blocks (needs max_distance < B <= 64); for ``"mih"`` one
            table per block. Blocks hold at most 64 bits.
        name: the preset that chose it, or ``"custom"``.
        strategy: ``"tables"`` (permuted tables, max_distance <= 7) or ``"mih"`` (multi-index
            hashing, max_distance up to 8 on 64 bits and 16 on 128 bits).
    """

    bits: int = 64
    max_distance: int = 3
    num_blocks: int = 4
    name: str = "custom"
    strategy: str = "tables"

    def __post_init__(self) -> None:
        if self.bits not in _BITS:
            raise ConfigError(f"bits={self.bits!r} must be 64 or 128")
        if self.strategy not in STRATEGIES:
            raise ConfigError(f"strategy={self.strategy!r} is not allowed; choose 'tables' or 'mih'")
        k = _check_distance(self.max_distance, self.bits)
        b = self.num_blocks
        if isinstance(b, bool) or not isinstance(b, int):
            raise ConfigError(f"num_blocks={b!r} must be an integer")
        if self.strategy == "mih":
            low = self.bits // 64
            if not low <= b <= 64:
                raise ConfigError(
                    f"num_blocks={b} is not allowed for a multi-index plan at bits={self.bits}: it "
                    f"must be in [{low}, 64] (blocks of at most 64 bits)"
                )
            if self.probes_per_query() > MAX_PROBES:
                raise ConfigError(
                    f"num_blocks={b} with max_distance={k} needs {self.probes_per_query():,} probes "
                    f"per query (radius {self.radius} per block), more than {MAX_PROBES:,}; "
                    "choose more blocks"
                )
            return
        if k > MAX_DISTANCE:
            raise ConfigError(
                f"max_distance={k} is not served by permuted tables: they serve [0, {MAX_DISTANCE}]; "
                "use plan='mih' or 'auto' (multi-index hashing)"
            )
        low = max(k + 1, self.bits // 64)
        if not low <= b <= 64:
            raise ConfigError(
                f"num_blocks={b} is not allowed for bits={self.bits}, max_distance={k}: it must be "
                f"in [{low}, 64] (more blocks than max_distance, blocks of at most 64 bits)"
            )
        if math.comb(b, k) > MAX_TABLES:
            raise ConfigError(
                f"num_blocks={b} with max_distance={k} needs {math.comb(b, k)} tables, more than "
                f"{MAX_TABLES}; choose fewer blocks"
            )

    @classmethod
    def choose(cls, bits: int, max_distance: int, plan: object = "auto", n: int = 0) -> IndexPlan:
        """The plan for ``plan``: a preset name, ``"auto"`` (by ``n``, the number of
        fingerprints), a number of blocks, or an :class:`IndexPlan` (checked against ``bits`` and
        ``max_distance``)."""
        k = _check_distance(max_distance, bits)
        if isinstance(plan, IndexPlan):
            if (plan.bits, plan.max_distance) != (bits, k):
                raise ConfigError(
                    f"plan is for bits={plan.bits}, max_distance={plan.max_distance}; the index has "
                    f"bits={bits}, max_distance={k}"
                )
            return plan
        if isinstance(plan, int) and not isinstance(plan, bool):
            return cls(bits, k, plan, strategy="tables" if k <= MAX_DISTANCE else "mih")
        if plan == "mih" or (plan == "auto" and k > MAX_DISTANCE):
            return cls._multi_index(bits, k, n, str(plan))
        if plan == "auto":
            options = [p for p in (cls._preset(bits, k, name) for name in PRESETS) if p is not None]
            for p in options:
                if p.expected_candidates(n) <= p.num_tables:
                    return p
            return min(options, key=lambda p: p.expected_candidates(n))
        if isinstance(plan, str) and plan in PRESETS:
            if k > MAX_DISTANCE:
                raise ConfigError(
                    f"plan={plan!r} is a permuted-table preset, served up to "
                    f"max_distance={MAX_DISTANCE}; at {k} choose 'auto' or 'mih'"
                )
            preset = cls._preset(bits, k, plan)
            if preset is None:
                raise ConfigError(
                    f"plan={plan!r} needs more than {MAX_TABLES} tables at "
                    f"max_distance={k}; choose 'compact' or 'balanced'"
                )
            return preset
        valid = ", ".join(repr(name) for name in ("auto", *PRESETS, "mih"))
        raise ConfigError(
            f"plan={plan!r} is not allowed; choose one of {valid}, a number of blocks, or an IndexPlan"
        )

    @classmethod
    def for_join(
        cls, bits: int, max_distance: int, n: int, row_ns: float, check_ns: float, *, whole_keys: bool = False
    ) -> IndexPlan:
        """The permuted-table plan of least estimated time for a self-join of ``n`` fingerprints
        by key groups, over every number of blocks up to ``MAX_TABLES`` tables: per table, each
        fingerprint costs ``row_ns`` (its entry made and sorted; also written and read back out
        of core, or shuffled on Spark) and each candidate pair of a key group ``check_ns``
        (``n**2 / 2**(w + 1)`` of them for random fingerprints and a ``w``-bit key). A join pays
        for every table and probes none, so it wants fewer tables than a query does: at k = 3
        on one machine, 4 tables up to about 10M, 10 from there to billions, 20 (Manku's design
        for 8B pages) past. Keys are those a table entry keeps (cut to ``64 - row_bits(n)``
        bits), or with ``whole_keys`` the whole concatenated blocks (Spark's rows carry them)."""
        k = _check_distance(max_distance, bits)
        if k > MAX_DISTANCE:
            raise ConfigError(f"max_distance={k}: a join by key groups serves up to {MAX_DISTANCE}")
        options = []
        for blocks in range(max(k + 1, bits // 64), 65):  # at most 64 blocks
            if math.comb(blocks, k) > MAX_TABLES:
                break
            options.append(cls(bits, k, blocks, "auto"))
            if k == 0:
                break

        def cost(plan: IndexPlan) -> float:
            keys = plan.key_bits if whole_keys else plan.stored_key_bits(n)
            return sum(n * row_ns + n * n / 2.0 ** (w + 1) * check_ns for w in keys)

        return min(options, key=cost)

    @classmethod
    def _preset(cls, bits: int, k: int, name: str) -> IndexPlan | None:
        # k = 0 needs one table whatever B is: keep the fewest blocks that fit the width.
        b = max(k + PRESETS[name], bits // 64) if k else bits // 64
        if math.comb(b, k) > MAX_TABLES:
            return None
        return cls(bits, k, b, name)

    @classmethod
    def _multi_index(cls, bits: int, k: int, n: int, name: str) -> IndexPlan:
        """The multi-index plan of least estimated cost (``cost``) for ``n`` fingerprints. Block
        counts run from the fewest that fit the width to k + 1 (radius 0, one probe per table:
        always within MAX_PROBES; more blocks only shorten keys)."""
        low = bits // 64
        options = [
            cls(bits, k, m, name, "mih")
            for m in range(low, max(low, k + 1) + 1)
            if m * _probes(-(-bits // m), k // m) <= MAX_PROBES
        ]
        return min(options, key=lambda p: p.cost(n))

    def cost(self, n: int) -> float:
        """Estimated nanoseconds of one query among ``n`` random fingerprints: ``PROBE_NS`` per
        probe, ``CANDIDATE_NS[bits]`` per candidate (one thread; see where they were measured)."""
        return self.probes_per_query(n) * PROBE_NS + self.expected_candidates(n) * CANDIDATE_NS[self.bits]

    @property
    def radius(self) -> int:
        """Multi-index hashing: the bits each block is searched within, ``max_distance //
        num_blocks`` (pigeonhole: a pair within max_distance is that close on some block);
        0 for permuted tables (kept blocks agree exactly)."""
        return self.max_distance // self.num_blocks if self.strategy == "mih" else 0

    def probes_per_query(self, n: int = 0) -> int:
        """Probes (directory slot + bucket scan) one query makes over all tables, for ``n``
        fingerprints: one per table for permuted tables."""
        return sum(_probes(w, self.radius) for w in self.stored_key_bits(n))

    @functools.cached_property
    def block_sizes(self) -> tuple[int, ...]:
        """Bits per block; the first ``bits % num_blocks`` blocks are one bit wider."""
        q, r = divmod(self.bits, self.num_blocks)
        return tuple(q + 1 if j < r else q for j in range(self.num_blocks))

    @functools.cached_property
    def block_starts(self) -> tuple[int, ...]:
        """The lowest bit of each block (bit 0 is the lowest bit of word 0)."""
        starts, at = [], 0
        for size in self.block_sizes:
            starts.append(at)
            at += size
        return tuple(starts)

    @functools.cached_property
    def tables(self) -> tuple[tuple[int, ...], ...]:
        """The kept blocks of each table: every combination of num_blocks - max_distance blocks,
        in lexicographic order (the order that decides which table reports a pair); one block
        per table for multi-index hashing."""
        if self.strategy == "mih":
            return tuple((j,) for j in range(self.num_blocks))
        return tuple(combinations(range(self.num_blocks), self.num_blocks - self.max_distance))

    @property
    def num_tables(self) -> int:
        """C(num_blocks, max_distance), or num_blocks for multi-index hashing."""
        if self.strategy == "mih":
            return self.num_blocks
        return math.comb(self.num_blocks, self.max_distance)

    @functools.cached_property
    def key_bits(self) -> tuple[int, ...]:
        """Bits of each table's full key: the sum of its kept blocks' sizes."""
        sizes = self.block_sizes
        return tuple(sum(sizes[j] for j in kept) for kept in self.tables)

    def stored_key_bits(self, n: int) -> tuple[int, ...]:
        """Key bits each table keeps for ``n`` fingerprints: at most ``64 - row_bits(n)``."""
        room = 64 - row_bits(n)
        return tuple(min(w, room) for w in self.key_bits)

    def directory_bits(self, n: int) -> int:
        """Top key bits each table's directory indexes for ``n`` fingerprints: ``2**dbits``
        buckets of 16 to 32 entries (0 below 32 fingerprints), never more than the shortest key."""
        return max(0, min(*self.stored_key_bits(n), n.bit_length() - 5))

    def entry_dtype(self, n: int) -> np.dtype:
        """The type of a table entry for ``n`` fingerprints: uint32 where the key bits below the
        directory's and the row number fit in 32 bits, else uint64."""
        held = max(self.stored_key_bits(n)) - self.directory_bits(n) + row_bits(n)
        return np.dtype(np.uint32 if held <= 32 else np.uint64)

    def directory_bytes(self, n: int) -> int:
        """Bytes of the tables' directories for ``n`` fingerprints (uint32 positions, uint64 from
        2**32 fingerprints)."""
        return self.num_tables * (2 ** self.directory_bits(n) + 1) * (4 if n < 2**32 else 8)

    def expected_candidates(self, n: int) -> float:
        """Candidates a query expects over all tables (and probes) among ``n`` random fingerprints."""
        return sum(_probes(w, self.radius) * n / 2.0**w for w in self.stored_key_bits(n))

    def table_bytes(self, n: int) -> int:
        """Bytes of the tables for ``n`` fingerprints: an entry (4 or 8 bytes) per fingerprint
        per table."""
        return self.entry_dtype(n).itemsize * n * self.num_tables

    def total_bytes(self, n: int) -> int:
        """Bytes of the tables and their directories plus the fingerprints and int64 ids,
        stored once."""
        return self.table_bytes(n) + self.directory_bytes(n) + n * (self.bits // 8 + 8)

    def describe(self, n: int = 0) -> str:
        """One readable line: blocks, tables, key bits, and for ``n`` fingerprints the expected
        candidates per query and the bytes."""
        sizes = self.block_sizes
        keys = self.stored_key_bits(n)
        key_range = f"{min(keys)}" if min(keys) == max(keys) else f"{min(keys)}-{max(keys)}"
        mih = (
            f" (multi-index hashing, radius {self.radius} per block, "
            f"{self.probes_per_query(n):,} probes per query)"
            if self.strategy == "mih"
            else ""
        )
        return (
            f"plan {self.name!r}: {self.bits}-bit, max_distance={self.max_distance}, "
            f"{self.num_blocks} blocks of {','.join(map(str, sizes))} bits, "
            f"{self.num_tables} tables keyed on {key_range} bits{mih}; for n={n:,}: "
            f"~{self.expected_candidates(n):.3g} candidates per query (random fingerprints), "
            f"{self.table_bytes(n) / 2**20:,.1f} MiB of tables + "
            f"{self.directory_bytes(n) / 2**20:,.1f} MiB of directories + "
            f"{n * (self.bits // 8 + 8) / 2**20:,.1f} MiB of fingerprints and ids"
        )
