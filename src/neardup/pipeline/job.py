"""Deduplicate a corpus: read -> fingerprint -> candidate pairs (Hamming self-join) ->
verify (optional) -> clusters -> keep one document per cluster -> write.

Memory holds the documents' columns (fingerprint, row, source, byte range, cluster: about 60
bytes a document once read, about 200 at the peak while the read pass joins its blocks and
while writing: 20M short documents peak at 3.9 GiB) plus one block of input; the texts are read
again, never kept, for ``verify`` and for writing. ``memory=`` bounds the near-duplicate join's
share (``bounded.py``). The decision's steps are in ``steps.py`` (shared with the Spark
driver), its options in ``options.py``, the result and its writing in ``result.py``.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._config import FingerprintConfig
from .._errors import ConfigError
from .._progress import Progress
from ..decision.bounded import JoinBudget
from ..decision.lsh import CorpusKeys
from ..decision.options import DedupOptions
from ..decision.outcome import Outcome
from ..decision.stats import DedupStats
from ..decision.steps import Choice, choose_representatives, priority
from ..decision.verify import (
    DocumentFeatures,
    HeldFeatures,
    featureless_texts,
    fingerprints_and_code_features,
    holds_code_features,
)
from ..fingerprint.fingerprinter import Fingerprinter
from ..io.batch import ReadOptions
from ..io.corpus import file_names, read_corpus
from ..io.ids import repeated_ids
from ..io.outputs import Outputs
from ..io.rejects import Rejects
from .result import DedupResult


def dedup(
    data: Any,
    options: DedupOptions | None = None,
    *,
    text_field: str = "text",
    id_field: str | None = None,
    errors: str = "raise",
    max_skipped: float | None = None,
    input_format: str | None = None,
    compression: str | None = None,
    lines: bool = False,
    max_document_mb: float = 32,
    block_mb: float = 16,
    n_jobs: int | None = None,
    memory: int | None = None,
    work_dir: str | os.PathLike | None = None,
    progress: Progress | None = None,
    config: FingerprintConfig | None = None,
    **option_keywords: Any,
) -> DedupResult:
    """Find the near-duplicates of a corpus and choose one document to keep per cluster.

    Args:
        data: a list of texts; a pandas or polars DataFrame or a pyarrow Table (column
            ``text_field``); or files: a path (str or ``Path``), or a list of ``Path``
            (a list of str is texts). Files are JSONL, Parquet, CSV/TSV, or text (one document
            per file, or per line with ``lines``), plain or .gz/.zst; see ``neardup dedup --help``.
        options: how near-duplicates are found and which one is kept: a
            :class:`~neardup.DedupOptions`, or its fields as keywords (``max_distance``,
            ``similarity``, ``jaccard``, ``cosine``, ``verify``, ``verify_features``,
            ``verify_size``, ``keep``, ``cluster``, ``featureless``, ``against``), with the
            fingerprint as ``config`` or as :class:`~neardup.FingerprintConfig`'s fields.
        text_field, id_field: the field or column of the text and of the id.
        errors: ``"raise"`` at the first bad record, naming its file and line; ``"skip"`` to
            leave bad records out, counted in ``result.stats``.
        max_skipped: with ``"skip"``, raise :class:`FormatError` when more than this share
            of the records is left out; by default, when every record is (a wrong
            ``text_field`` skips them all).
        input_format, compression, lines: override what file names say.
        max_document_mb: a longer text is a bad record.
        block_mb: how much of a file is read at a time; bounds memory, changes no result.
        n_jobs: threads for fingerprinting; default all cores.
        memory: bytes for the near-duplicate join: past them the distinct fingerprints are
            joined out of core, and the pairs the greedy rule needs spill to disk, where
            without a budget a near-identical family's pairs (more than 16M) turn the rule to
            searching an index (``pipeline/bounded.py``); the same answer. The read pass's
            columns come on top. Not with ``jaccard`` (MinHash buckets join in memory); code's
            default bands give way to its radius, each pair checked (``DedupOptions.bounded``).
        work_dir: where a join past ``memory`` writes its files (default: the system's
            temporary folder); its size is checked before the join starts.
        progress: a :class:`neardup._progress.Progress` to report to.
    """
    if options is None:
        options = DedupOptions.from_keywords(config, **option_keywords)
    elif config is not None or option_keywords:
        given = sorted(option_keywords) + (["config"] if config is not None else [])
        raise ConfigError(f"pass options= or its fields as keywords, not both: {', '.join(given)}")
    read = ReadOptions.from_keywords(
        text_field=text_field,
        id_field=id_field,
        errors=errors,
        max_skipped=max_skipped,
        input_format=input_format,
        compression=compression,
        lines=lines,
        max_document_mb=max_document_mb,
        block_mb=block_mb,
    )
    return run_job(data, options, read, LocalEngine(n_jobs, memory, work_dir), progress=progress)


@dataclass(frozen=True)
class LocalEngine:
    """What the local engine takes besides the reading and the decision's options.

    Attributes:
        n_jobs: threads for fingerprinting; None: all cores.
        memory: bytes for the near-duplicate join (``JoinBudget``); None: in memory.
        work_dir: where a join past ``memory`` writes its files; None: the temporary folder.
    """

    n_jobs: int | None = None
    memory: int | None = None
    work_dir: str | os.PathLike | None = None


def run_job(
    data: Any,
    options: DedupOptions,
    read: ReadOptions,
    engine: LocalEngine | None = None,
    outputs: Outputs | None = None,
    progress: Progress | None = None,
) -> DedupResult:
    """The local job, as :func:`dedup` and ``neardup dedup`` run it: ``data`` read as ``read``
    says, decided as ``options`` say, on this machine as ``engine`` says; ``outputs``, when
    given, written (:meth:`DedupResult.write`) before the result is returned."""
    engine = engine or LocalEngine()
    corpus = read_corpus(data, read)
    budget = JoinBudget.of(engine.memory, engine.work_dir)
    if budget is not None:
        options = options.bounded()
    against = options.open_against()
    progress = progress or Progress(enabled=False)
    rejects = Rejects(read.errors)
    read_pass = _fingerprint_all(corpus, options, rejects, progress, engine.n_jobs, hold=budget is None)
    rejects.check_share(len(read_pass.rows), read.max_skipped)
    if (repeated := repeated_ids(read_pass.ids, read.id_field)) is not None:
        warnings.warn(repeated, UserWarning, stacklevel=3)  # the caller of dedup or run_job
    keys = None if read_pass.keys is None else read_pass.keys.keys()  # once: n x bands words
    choice = _choose(read_pass, keys, options, corpus, progress, against, budget)
    with progress.stage("clusters", unit="docs"):
        outcome = Outcome.of(read_pass.fingerprints, read_pass.no_features, choice, options)
    result = DedupResult(
        config=options.config,
        max_distance=options.radius,
        fingerprints=read_pass.fingerprints,
        kept=outcome.kept,
        labels=outcome.labels.astype(np.int64),
        representatives=choice.representatives,
        distances=outcome.distances,
        matched=choice.matched,
        rows=read_pass.rows,
        stats=_stats(outcome, read_pass, choice, options, rejects, corpus, progress),
        _corpus=corpus,
        _owners=read_pass.owners,
        _ids=read_pass.ids,
        _lengths=read_pass.lengths,
        _against_index=against,
        _spans=read_pass.spans,
        _collapsed=choice.collapsed,
        _verify=options.check,
        plan=options.banding,
        _keys=keys,
        _features=choice.features,
        _budget=budget,
    )
    if outputs is not None:
        result.write(
            outputs.output,
            format=outputs.format,
            clusters=outputs.clusters,
            pairs=outputs.pairs,
            every_pair=outputs.every_pair,
            save_index=outputs.save_index,
            progress=progress,
        )
    return result


def _choose(
    read_pass: ReadPass,
    keys: np.ndarray | None,
    options: DedupOptions,
    corpus: Any,
    progress: Progress,
    against: Any,
    budget: JoinBudget | None,
) -> Choice:
    """The decision's steps over what the read pass recorded."""
    n = len(read_pass.rows)
    # Positions of the documents compared with others: all but those without features, unless
    # asked to compare them too.
    no_features = read_pass.no_features
    compared = np.arange(n) if options.featureless == "compare" else np.flatnonzero(~no_features)
    return choose_representatives(
        read_pass.fingerprints,
        compared,
        priority(n, options.keep, read_pass.lengths, read_pass.ids),
        options,
        corpus,
        progress,
        against=against,
        keys=keys,
        held=read_pass.held if read_pass.keys is None else read_pass.keys.features(),
        budget=budget,
    )


def _stats(
    outcome: Outcome,
    read_pass: ReadPass,
    choice: Choice,
    options: DedupOptions,
    rejects: Rejects,
    corpus: Any,
    progress: Progress,
) -> DedupStats:
    lengths = read_pass.lengths
    return DedupStats(
        documents=len(lengths),
        skipped=rejects.count,
        skip_summary=rejects.summary(),
        input_bytes=corpus.total_bytes or 0,
        text_bytes=int(lengths.sum()),
        candidate_pairs=choice.candidate_pairs,
        checked_pairs=choice.checked_pairs,
        similar_pairs=choice.similar_pairs,
        clusters=outcome.clusters,
        duplicates=outcome.duplicates,
        against_matches=outcome.against_matches,
        featureless=int(read_pass.no_features.sum()),
        featureless_policy=options.featureless,
        chained=outcome.chained,
        removed_text_bytes=int(lengths[~outcome.kept].sum()),
        plan=options.plan,
        seconds=progress.seconds,
    )


@dataclass(frozen=True)
class ReadPass:
    """What the read pass records of every document, in input order."""

    fingerprints: np.ndarray
    """uint64, shape (n,), or (n, 2) for 128 bits."""
    lengths: np.ndarray
    """int64: the text's length in bytes."""
    rows: np.ndarray
    """int64: the line or row in its file (its position, for data in memory)."""
    owners: np.ndarray
    """int32: the position of its source file."""
    ids: pa.ChunkedArray | None
    """The id field's values, or None without one."""
    spans: np.ndarray
    """int64, shape (n, 2): the byte span of its line, -1 where a source is not line-based."""
    no_features: np.ndarray
    """bool: the text has no features (fingerprint 0)."""
    keys: CorpusKeys | None
    """Under ``jaccard``: the band keys of the checked features (and the features, if they fit)."""
    held: DocumentFeatures | None
    """Every document's checked features, where the read pass kept them (code, checked by its
    own features, while they fit): the checks need not lex the files again."""


def _fingerprint_all(
    corpus: Any,
    options: DedupOptions,
    rejects: Rejects,
    progress: Progress,
    n_jobs: int | None,
    hold: bool = True,
) -> ReadPass:
    """Reads the corpus once: fingerprints and what else :class:`ReadPass` records. With
    ``hold``, code checked by its own features keeps them (``HeldFeatures``), lexed once."""
    fingerprinter = Fingerprinter(options.config)
    lexed_by_name = options.config.features == "code" and options.config.language is None
    fps, lengths, rows, owners, ids, spans, no_features = [], [], [], [], [], [], []
    corpus_keys = held = None
    if options.banding is not None:
        assert options.check is not None
        corpus_keys = CorpusKeys(options.banding, options.check, fingerprinter)
    elif hold and holds_code_features(options.check, options.config):
        assert options.check is not None
        held = HeldFeatures(options.check.features)
    with progress.stage("read + fingerprint", total=corpus.total_bytes) as stage:
        for batch, owner in corpus.batches(rejects):
            names = file_names(corpus, batch, owner) if lexed_by_name else None
            batch_fps = corpus_keys.add(batch.texts, names, n_jobs) if corpus_keys is not None else None
            if held is not None:
                batch_fps, table = fingerprints_and_code_features(batch.texts, names, fingerprinter, n_jobs)
                held.add(table)
                no_features.append(np.diff(table.doc_offsets) == 0)
            else:
                if batch_fps is None:
                    batch_fps = fingerprinter.fingerprint_batch(batch.texts, n_jobs=n_jobs, names=names)
                no_features.append(featureless_texts(batch.texts, batch_fps, fingerprinter.config, names))
            fps.append(batch_fps)
            lengths.append(_text_lengths(batch.texts))
            rows.append(batch.rows)
            owners.append(
                np.broadcast_to(np.int32(owner), len(batch))
                if np.ndim(owner) == 0
                else owner.astype(np.int32)
            )
            if batch.ids is not None:
                ids.append(batch.ids)
            spans.append(batch.spans if batch.spans is not None else np.full((len(batch), 2), -1, np.int64))
            stage.update(batch.consumed, len(batch))
    words = options.config.bits // 64
    empty_fps = np.zeros((0,) if words == 1 else (0, 2), dtype=np.uint64)
    return ReadPass(
        fingerprints=np.concatenate(fps) if fps else empty_fps,
        lengths=np.concatenate(lengths) if lengths else np.zeros(0, np.int64),
        rows=np.concatenate(rows) if rows else np.zeros(0, np.int64),
        owners=np.concatenate(owners) if owners else np.zeros(0, np.int32),
        ids=pa.chunked_array(ids, pa.string()) if ids else None,
        spans=np.concatenate(spans) if spans else np.zeros((0, 2), np.int64),
        no_features=np.concatenate(no_features) if no_features else np.zeros(0, bool),
        keys=corpus_keys,
        held=None if held is None else held.features(),
    )


def _text_lengths(texts: Any) -> np.ndarray:
    if isinstance(texts, list):
        return np.fromiter(
            (len(t.encode("utf-8", "surrogatepass")) if isinstance(t, str) else len(t) for t in texts),
            dtype=np.int64,
            count=len(texts),
        )
    lengths = pc.binary_length(texts)
    if isinstance(lengths, pa.ChunkedArray):
        lengths = lengths.combine_chunks()
    return lengths.to_numpy(zero_copy_only=False).astype(np.int64)
