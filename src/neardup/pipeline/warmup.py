"""Compile (or load from numba's cache) every hot kernel before the first real call."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np

from .._kernels._jit import mark_warm
from .._kernels.log_masks import mask_lines
from ..decision.clustering import clusters
from ..decision.selection import keep_greedy
from ..fingerprint.fingerprinter import _CHUNK_BYTES, Fingerprinter
from ..index.components import component_roots
from ..index.hamming_index import HammingIndex
from ..index.self_join import self_join


def warmup() -> None:
    """Compile (or load from the cache) every hot kernel now, fingerprinting and index alike, so
    the first real call is fast: a service calls this at start, Spark once per executor."""
    large = ["warm up the parallel kernels " * 10] * (_CHUNK_BYTES // 250)  # over one chunk
    for bits in (64, 128):
        for weighting in ("tf", "sublinear"):
            fingerprinter = Fingerprinter(bits=bits, weighting=weighting)
            fingerprinter.fingerprint("warm up")
            fingerprinter.fingerprint_batch(["warm up", b"\xff", "Stra\u00dfe", "caf\u00e9"])
            fingerprinter.fingerprint_batch(large)  # the parallel kernel
            fingerprints = fingerprinter.fingerprint_batch([f"doc {i} of the warm-up" for i in range(128)])
        _warm_index(fingerprints, bits)
    Fingerprinter().fingerprint_batch(["a long list is copied on all cores " * 32] * 1024)  # past 1M chars
    _warm_reading_and_checks()
    # neardup logs: the argument types of Masker.key_array (read-only bytes from Arrow).
    mask_lines(np.frombuffer(b"warm up 1", dtype=np.uint8), np.array([0, 9], dtype=np.int64), True)
    mark_warm()  # the cache now holds them all: commands need not say they compile


def _warm_reading_and_checks() -> None:
    """The JSONL and fingerprint-file readers' kernels, and the pair checks of --verify and
    --jaccard (MinHash)."""
    from ..io.fingerprint_files import format_header, format_rows, read_fingerprints
    from .job import dedup

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "warmup.jsonl"
        texts = [f"document {i % 50} of the warm-up, with a few more words" for i in range(100)]
        path.write_text("".join(json.dumps({"text": text}) + "\n" for text in texts))
        for options in ({}, {"jaccard": 0.8}, {"verify": ("jaccard", 0.8)}, {"cosine": 0.98}):
            dedup([path], **options)
        fingerprinter = Fingerprinter()
        fp_file = Path(folder) / "warmup.fp"
        fp_file.write_bytes(
            format_header(fingerprinter.config) + format_rows(["a"], fingerprinter.fingerprint_batch(["a"]))
        )
        read_fingerprints(fp_file)


def _warm_index(fingerprints: np.ndarray, bits: int) -> None:
    for max_distance in (3, 8 if bits == 64 else 16):  # permuted tables, multi-index hashing
        index = HammingIndex(bits=bits, max_distance=max_distance)
        index.add(fingerprints[:100])
        index.add(fingerprints[100:])  # into the delta
        index.query(fingerprints[0])  # on this thread
        index.query_batch(fingerprints)  # in parallel
        i, j, _ = index.pairs()
        clusters(i, j, index.ids)
        list(self_join(fingerprints, max_distance))  # the dedup job's join
        keep_greedy(index, fingerprints, accept=_every)  # the search path (items in the delta)
        index.compact()
        index.clusters()
        keep_greedy(index, fingerprints, accept=_every)  # the self-join path
        component_roots(index, accept=_every)
        _warm_opened(index, fingerprints)


def _warm_opened(index: HammingIndex, fingerprints: np.ndarray) -> None:
    """An index saved and opened again: its arrays are memory-mapped and read-only, which
    numba compiles apart (a service restarting from its snapshot took 25 s without them)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "warmup.idx"
        index.save(path)
        opened = HammingIndex.open(path)
        opened.query(fingerprints[0])
        opened.query_batch(fingerprints)
        opened.add(fingerprints[:10], np.arange(len(fingerprints), len(fingerprints) + 10))
        opened.remove(np.arange(5))
        opened.query_batch(fingerprints)
        opened.pairs()
        opened.compact()
        del opened  # the memory map, before its folder goes


def _every(first: np.ndarray, second: np.ndarray, distance: np.ndarray) -> np.ndarray:
    return np.ones(len(first), dtype=bool)
