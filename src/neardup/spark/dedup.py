"""``dedup`` on Spark: the local job's choices (``--keep``, ``--cluster``, ``--featureless``)
over a DataFrame, with the same answer as :func:`neardup.dedup` on the same rows.

1. Each row gets its position in the input (``monotonically_increasing_id``: input order).
   :func:`decide` then works on a narrow table of *facts* (``facts.py``), computed once and
   checkpointed: the position, the fingerprint, the text's length in bytes, whether it has
   features (and the id); the texts go to Python and do not come back.
2. The rows are numbered in ``keep`` order: a row's *rank* (increasing, not dense; the
   position itself for ``keep="first"``, so no sort).
3. Copies collapse: each distinct fingerprint is led by its lowest rank.
4. :func:`near_duplicate_pairs` joins the distinct fingerprints (under ``jaccard``, the
   leaders sharing a MinHash band key are paired instead: ``buckets.py``); the pairs, as
   leader ranks, go to :func:`representatives` (Manku's rule or components), with a check
   (``verify``, ``cosine``, ``jaccard``) only those whose texts pass it (``checks.py``).
5. A leader follows its representative, a copy its leader's (unless its text fails its
   leader's check: then it is its own). Only the rows whose representative is another row
   are named (the leaders the rule moved, and the copies), and they meet the rows by
   position, broadcast while they are few: a row is kept when no one names it, its cluster
   is its representative's rank, and the rows are never shuffled to learn it.
6. The input rows meet the outcome (a few longs a row) by position, broadcast while it is
   small.

:func:`dedup_with_pairs` also gives the pairs that rebuild every cluster, as the local
``--pairs`` writes them: each pair of distinct fingerprints within the radius between their
leaders, and each copy's link to its leader (distance 0).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .._errors import ConfigError
from ..decision.options import DedupOptions
from ..index.hamming_index import HammingIndex
from ..index.plan import MAX_DISTANCE
from . import stages
from .driver import DRIVER_ROWS, decide_on_driver, driver_capacity
from .facts import (
    POSITION,
    Facts,
    Texts,
    broadcast_while_few,
    text_facts,
    texts_by_position,
)
from .fingerprints import fingerprint_columns
from .join import GROUP_LIMIT
from .keep_rules import LOCAL_LIMIT
from .splits import SplitFacts


def dedup(
    df: DataFrame, text_col: str = "text", options: DedupOptions | None = None, **keywords: Any
) -> DataFrame:
    """Every row of ``df`` with its fingerprint column(s) and two more: ``cluster``, the rank
    (in ``keep`` order) of the kept row it duplicates (its own when kept: rows of one cluster
    share it), and ``kept``. ``.where("kept")`` gives the deduplicated rows. The options are
    :func:`dedup_with_pairs`'s."""
    return _dedup(df, text_col, options, with_pairs=False, **keywords)[0]


def dedup_with_pairs(
    df: DataFrame, text_col: str = "text", options: DedupOptions | None = None, **keywords: Any
) -> tuple[DataFrame, DataFrame]:
    """(the rows of :func:`dedup`, the pairs that rebuild its clusters): the pairs have columns
    ``a``, ``b`` (``id_col``'s values, else the rows' positions in the input) and ``distance``:
    each pair of distinct fingerprints within the radius, between their leaders (the rows first
    in ``keep`` order), and each other copy's link to its leader (distance 0), as the local
    ``--pairs`` writes them.

    Args:
        df: the documents, one per row, text in ``text_col`` (no nulls).
        options: a :class:`~neardup.DedupOptions` (the radius, ``keep``, ``cluster``,
            ``featureless``, ``verify``, ``jaccard``, ``cosine``, the fingerprint ``config``),
            or its fields as keywords, as :func:`neardup.dedup` takes them. ``keep="lowest-id"``
            orders by ``id_col``.
        id_col: the column of the ids (optional).
        group_limit, local_limit: see :func:`near_duplicate_pairs` and
            :func:`neardup.spark.keep_rules.representatives`.
        driver_limit: up to this many rows, the decision is taken on the driver, by the local
            engine's steps (``driver.py``); the texts stay on the executors. By default
            ``DRIVER_ROWS`` (2M), or with a check of each pair (``verify``, ``cosine``,
            ``jaccard``) or ``against`` as many as its memory holds (``driver_capacity()``);
            past it the pairs are checked in the tasks (``checks.py``), and the tasks ask the
            ``against`` index, shipped to them (``against.py``).
    """
    rows, pairs = _dedup(df, text_col, options, with_pairs=True, **keywords)
    assert pairs is not None
    return rows, pairs


_ENGINE_KEYWORDS = ("id_col", "group_limit", "local_limit", "driver_limit")
"""What the Spark engine takes beside the options."""


def _dedup(
    df: DataFrame, text_col: str, options: DedupOptions | None, *, with_pairs: bool, **keywords: Any
) -> tuple[DataFrame, DataFrame | None]:
    engine = {name: keywords.pop(name) for name in _ENGINE_KEYWORDS if name in keywords}
    if options is None:
        options = DedupOptions.from_keywords(**keywords)
    elif keywords:
        raise ConfigError(f"pass options= or its fields as keywords, not both: {', '.join(sorted(keywords))}")
    id_col = engine.get("id_col")
    if clash := {*fingerprint_columns(options.config), "cluster", "kept"} & set(df.columns):
        raise ConfigError(
            f"the DataFrame has a column named {sorted(clash)[0]!r}, which dedup adds; rename it"
        )
    # Numbered once and kept: the rows are used twice, and any DataFrame may not give the
    # same order again (files do; the CLI reads them again instead).
    positioned = numbered(df).localCheckpoint(eager=False)
    if text_col not in df.columns:
        raise ConfigError(f"the DataFrame has no column {text_col!r}; its columns: {', '.join(df.columns)}")
    if id_col is not None and id_col not in df.columns:
        raise ConfigError(
            f"the DataFrame has no column {id_col!r} (id_col); its columns: {', '.join(df.columns)}"
        )
    decision = decide(
        text_facts(positioned, text_col, Facts(options.config, id_col, jaccard=options.bands)),
        options,
        texts=texts_by_position(positioned, text_col) if options.check else None,
        against=options.open_against(),
        with_pairs=with_pairs,
        **engine,
    )
    ids = [id_col] if id_col else []
    rows = rows_with(positioned, decision.outcome.drop(*ids), decision.documents)
    return rows.drop(POSITION), decision.pairs


def decide(
    facts: DataFrame | SplitFacts,
    options: DedupOptions,
    *,
    id_col: str | None = None,
    group_limit: int = GROUP_LIMIT,
    local_limit: int = LOCAL_LIMIT,
    driver_limit: int | None = None,
    hold: str | None = None,
    with_pairs: bool = True,
    every_pair: bool = False,
    texts: Texts | None = None,
    against: HammingIndex | None = None,
    timings: dict[str, float] | None = None,
) -> Decision:
    """The :class:`Decision` of :func:`dedup_with_pairs` from the rows' ``facts`` (see
    ``facts.py``; computed here once), as ``options`` decide: its outcome has a row per input
    row, with ``POSITION``, its fingerprint column(s), ``cluster`` and ``kept`` (and
    ``id_col``), and is checkpointed:
    a few longs a row, whatever the texts. ``timings``, when given, gets the seconds of each
    step: ``fingerprint``, then ``join`` (ranks, copies, pairs) and ``clusters``, or ``decide
    on the driver`` for facts of at most ``driver_limit`` rows (``driver.py``). The pairs are
    None without ``with_pairs``; with ``every_pair`` (on the driver only) they are every pair
    of rows, not just those that rebuild the clusters. Where the options check each pair
    (``verify``, ``cosine``, ``jaccard``), a pair counts only if its ``texts`` (fetched to the
    driver, or read by the tasks past it: ``checks.py``) are similar enough, and a copy whose
    text fails its leader's check stands alone: as :func:`neardup.dedup` decides. Under
    ``jaccard`` the candidates share a MinHash band key (``buckets.py``). With ``against``
    (the opened index of documents seen before; past the driver its file is shipped to the
    tasks, ``against.py``), a document near it is not kept, nor its cluster under components.
    ``driver_limit`` is by default ``DRIVER_ROWS``, or with any of those as many rows as the
    driver's memory holds; past it, ``every_pair`` and ``hold`` (what needs the outcome held
    by the driver) are refused, named in the error."""
    if options.keep == "lowest-id" and id_col is None:
        raise ConfigError('keep="lowest-id" needs id_col=, a column of the DataFrame')
    if options.check is not None and texts is None:
        raise ConfigError("verify on Spark needs texts=, which fetches the texts it checks")
    with _Clock(timings, facts.sparkSession) as clock:
        clock.start("fingerprint")
        # Kept for the steps that follow; counting them is what computes them.
        facts = facts.persist(StorageLevel.MEMORY_AND_DISK)
        rows = facts.count()
        on_driver = [str(name) for name in ("every pair" if every_pair else None, hold) if name is not None]
        if driver_limit is None:  # a check's pairs (and an index's queries) are cheaper on the
            # driver while it holds them
            many = on_driver or options.check or against is not None
            driver_limit = driver_capacity() if many else DRIVER_ROWS
        if on_driver and rows > driver_limit:
            raise ConfigError(
                f"{' and '.join(on_driver)} run on the driver on Spark, up to {driver_limit:,} rows "
                f"(its memory); these are {rows:,}: run without, or on the local engine"
            )
        if rows <= driver_limit:
            clock.start("decide on the driver")
            return _on_driver(facts, options, id_col, with_pairs, every_pair, texts, against)
        _check_radius(options, rows)
        clock.start("join")
        ranked = stages.ranked(facts.frame() if isinstance(facts, SplitFacts) else facts, options, id_col)
        led = stages.leaders(ranked, options, against)
        edges = stages.candidates(led, options, group_limit)
        checked = similar = None
        if options.check is not None:
            assert texts is not None
            clock.start("candidates")
            edges = edges.localCheckpoint()
            clock.start("check")
            edges, led, checked, similar = stages.checked(edges, led, texts, options.check)
        clock.start("clusters")
        outcome = stages.outcome(ranked, led, edges, options, local_limit)
        decision = Decision(
            computed=outcome.rows,
            spread_pairs=None,
            documents=rows,
            kept=outcome.kept,
            clusters=outcome.clusters,
            checked_pairs=checked,
            similar_pairs=similar,
            against_matches=outcome.cleared,
        )
        if with_pairs:
            decision.spread_pairs = stages.spread_pairs(edges, led, ranked.facts, id_col, options.check)
        return decision


def _on_driver(
    facts: DataFrame | SplitFacts,
    options: DedupOptions,
    id_col: str | None,
    with_pairs: bool,
    every_pair: bool,
    texts: Texts | None,
    against: HammingIndex | None,
) -> Decision:
    """The facts collected and decided by the local engine's steps (``driver.py``)."""
    decided = decide_on_driver(
        facts.toArrow(),
        fingerprint_columns(options.config),
        options,
        id_col=id_col,
        with_pairs=with_pairs,
        every_pair=every_pair,
        texts=texts,
        against=against,
    )
    table = decided.outcome
    return Decision(
        computed=None,
        spread_pairs=None,
        documents=table.num_rows,
        kept=int(pc.sum(table.column("kept").cast("int64")).as_py() or 0),
        clusters=decided.clusters,
        checked_pairs=decided.checked_pairs,
        similar_pairs=decided.similar_pairs,
        against_matches=decided.against_matches,
        held=Held(lambda: facts.sparkSession, table, decided.pairs),
    )


def _check_radius(options: DedupOptions, rows: int) -> None:
    k = options.radius
    if options.banding is None and k > MAX_DISTANCE:
        asked = f"cosine={options.cosine}" if options.cosine is not None else f"max_distance={k}"
        raise ConfigError(
            f"{asked} searches {k} bits, and past the driver the Spark join serves up to "
            f"{MAX_DISTANCE} (permuted tables); decide on the driver (driver_limit, --driver-limit, "
            f"of at least {rows:,} rows, as its memory allows), ask for a smaller radius, or run "
            f"the local engine"
        )


@dataclass
class Held:
    """What the driver holds of a decision it took: the ``outcome`` and the ``pairs`` (when
    asked for) as Arrow tables, and how to get the ``session`` to make DataFrames of them in
    (made only when first needed)."""

    session: Callable[[], SparkSession]
    outcome: pa.Table
    pairs: pa.Table | None


@dataclass
class Decision:
    """What :func:`decide` found."""

    computed: DataFrame | None
    """The outcome, when decided by Spark; else see ``held``."""
    spread_pairs: DataFrame | None
    """The pairs, when decided by Spark and asked for; else see ``held``."""
    documents: int
    kept: int
    clusters: int
    """Clusters of more than one row."""
    checked_pairs: int | None = None
    similar_pairs: int | None = None
    """With ``verify``: the pairs whose similarity was computed, and those that passed."""
    against_matches: int = 0
    """With ``against``: the documents not kept for being near it."""
    held: Held | None = None
    """What the driver holds, when it decided (``driver.py``)."""

    @property
    def outcome(self) -> DataFrame:
        """A row per input row: ``POSITION``, the fingerprint column(s), ``cluster``, ``kept``
        (and the id column). Made from the table ``held`` when first asked for."""
        if self.computed is None:
            assert self.held is not None
            self.computed = self.held.session().createDataFrame(self.held.outcome)
        return self.computed

    @property
    def pairs(self) -> DataFrame | None:
        """The pairs (``a``, ``b``, ``distance``; ``similarity`` where checked), when asked
        for: those that rebuild the clusters, or every pair. Made from the table ``held`` when
        first asked for."""
        if self.spread_pairs is None and self.held is not None and self.held.pairs is not None:
            self.spread_pairs = self.held.session().createDataFrame(self.held.pairs)
        return self.spread_pairs

    def positions(self, kept: bool) -> np.ndarray | DataFrame:
        """The positions of the kept rows (or of the others): an array where the driver holds
        the outcome, else a DataFrame of ``POSITION``."""
        if self.held is not None:
            table = self.held.outcome
            flags = table.column("kept").to_numpy(zero_copy_only=False)
            return table.column(POSITION).to_numpy()[flags == kept]
        return self.outcome.where(F.col("kept") == kept).select(POSITION)


def numbered(df: DataFrame) -> DataFrame:
    """``df`` with ``POSITION``: each row's position in the input, increasing in input order."""
    if POSITION in df.columns:
        raise ConfigError(f"the DataFrame has a column named {POSITION!r}, which dedup adds; rename it")
    return df.withColumn(POSITION, F.monotonically_increasing_id())


def rows_with(positioned: DataFrame, outcome: DataFrame, size: int, how: str = "inner") -> DataFrame:
    """The rows of ``positioned`` joined with ``outcome`` (``size`` rows) by ``POSITION``
    (``how`` as Spark's join takes it), the outcome broadcast while it is small."""
    return positioned.join(broadcast_while_few(outcome, size), POSITION, how)


class _Clock:
    """Seconds a step takes, into ``timings`` (a step's checkpoint ends it: Spark runs lazily),
    and its name on the Spark jobs it runs (``neardup: join``), so that the Spark UI and the
    bench's stage lists say what runs; the caller's description is restored at the end."""

    _DESCRIPTION = "spark.job.description"

    def __init__(self, timings: dict[str, float] | None, session: SparkSession) -> None:
        self.timings, self.last = timings, time.perf_counter()
        self.step: str | None = None
        try:  # Spark Connect has no SparkContext, and no job descriptions to set
            self.context: Any = session.sparkContext
            self.callers = self.context.getLocalProperty(self._DESCRIPTION)
        except Exception:
            self.context = None

    def __enter__(self) -> _Clock:
        return self

    def start(self, step: str) -> None:
        """Ends the step running (its seconds counted) and starts ``step``."""
        self._lap()
        self.step = step
        if self.context is not None:
            self.context.setJobDescription(f"neardup: {step}")

    def _lap(self) -> None:
        now = time.perf_counter()
        if self.timings is not None and self.step is not None:
            self.timings[self.step] = self.timings.get(self.step, 0.0) + now - self.last
        self.last = now

    def __exit__(self, *exc: object) -> None:
        self._lap()
        if self.context is not None:
            self.context.setLocalProperty(self._DESCRIPTION, self.callers)
