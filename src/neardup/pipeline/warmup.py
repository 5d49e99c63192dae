"""Compile (or load from numba's cache) the hot kernels before the first real call, in named
groups: a command compiles only the groups it runs (``cli/warmup.py``), ``warmup`` them all."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
from ..io.arrays import prefixed


def warmup() -> None:
    """Compile (or load from the cache) every hot kernel now, fingerprinting and index alike, so
    the first real call is fast: a service calls this at start, Spark once per executor."""
    for name, warm in GROUPS.items():
        warm()
        mark_warm(name)  # the cache now holds them: commands need not say they compile


def warm_fingerprints() -> None:
    """The fingerprinters of both widths and the usual weightings, one text, a batch of each
    kind, a chunk for the parallel kernel."""
    large = ["warm up the parallel kernels " * 10] * (_CHUNK_BYTES // 250)  # over one chunk
    for bits in (64, 128):
        for weighting in ("tf", "sublinear"):
            fingerprinter = Fingerprinter(bits=bits, weighting=weighting)
            fingerprinter.fingerprint("warm up")
            fingerprinter.fingerprint_batch(["warm up", b"\xff", "Stra\u00dfe", "caf\u00e9"])
            fingerprinter.fingerprint_batch(large)  # the parallel kernel
    Fingerprinter().fingerprint_batch(["a long list is copied on all cores " * 32] * 1024)  # past 1M chars


def warm_reading() -> None:
    """The readers of documents (lines and JSONL) and of fingerprint files."""
    from ..io.batch import ReadOptions
    from ..io.documents import DocumentReader
    from ..io.fingerprint_files import format_header, format_rows, read_fingerprints
    from ..io.rejects import Rejects

    with _corpus() as path:
        list(DocumentReader([str(path)], ReadOptions()).batches(Rejects()))
        fingerprinter = Fingerprinter()
        fp_file = path.with_suffix(".fp")
        fp_file.write_bytes(
            format_header(fingerprinter.config) + format_rows(["a"], fingerprinter.fingerprint_batch(["a"]))
        )
        read_fingerprints(fp_file)


def warm_join() -> None:
    """The self-join of both widths and both search plans: ``pairs`` and ``dedup``."""
    for _, max_distance, fingerprints in _plans():
        list(self_join(fingerprints, max_distance))


def warm_index() -> None:
    """An index of each width and plan built and saved: ``index build``, ``--save-index``."""
    for plan in _plans():
        with tempfile.TemporaryDirectory() as folder:
            _saved_index(Path(folder), *plan)


def warm_snapshot() -> None:
    """A saved index opened again and searched: ``index query``, ``--against``. Its arrays are
    memory-mapped and read-only, which numba compiles apart."""
    for plan in _plans():
        with tempfile.TemporaryDirectory() as folder:
            opened = HammingIndex.open(_saved_index(Path(folder), *plan))
            opened.query(plan[2][0])
            opened.query_batch(plan[2])
            del opened  # the memory map, before its folder goes


def warm_search() -> None:
    """Everything else an index does, live and opened again (add, remove, pairs, clusters,
    compaction, the keep rules on an index): for the library's users, no command's first run."""
    for bits, max_distance, fingerprints in _plans():
        index = HammingIndex(bits=bits, max_distance=max_distance)
        _warm_index(index, fingerprints)
        _warm_opened(index, fingerprints)


def warm_dedup() -> None:
    """The dedup job on a file: read, fingerprint, join, keep."""
    from .job import dedup

    with _corpus() as path:
        for cluster in ("greedy", "components"):
            dedup([path], cluster=cluster)


def warm_minhash() -> None:
    """``dedup --jaccard``: MinHash-LSH candidates, each verified."""
    from .job import dedup

    with _corpus() as path:
        dedup([path], jaccard=0.8)


def warm_verify() -> None:
    """``dedup --cosine`` and ``--verify``: each candidate pair's exact similarity."""
    from .job import dedup

    with _corpus() as path:
        for options in ({"verify": ("jaccard", 0.8)}, {"cosine": 0.98}):
            dedup([path], **options)


def warm_logs() -> None:
    """``neardup logs``: the masking kernel, with the argument types of ``Masker.key_array``
    (read-only bytes from Arrow), and the lines' ids (``prefixed``)."""
    mask_lines(np.frombuffer(b"warm up 1", dtype=np.uint8), np.array([0, 9], dtype=np.int64), True)
    prefixed("warm-up.log:", np.arange(1, 3))


def warm_code() -> None:
    """``--features code``: the code kernels of both widths, and ``--jaccard``'s band keys of
    code shingles (nothing without the code extra, which those runs need)."""
    try:
        import pygments  # noqa: F401
    except ModuleNotFoundError:
        return
    from .._config import FingerprintConfig
    from ..decision.lsh import Banding
    from ..decision.verify import FeatureTable

    for bits in (64, 128):
        fingerprinter = Fingerprinter(bits=bits, features="code", language="python")
        fingerprinter.fingerprint("def warm(up):\n    return up + 1\n")
        fingerprinter.fingerprint_batch(["x = 1", "def f(a):\n    return a"])
    code = FingerprintConfig(features="code", language="python")  # the same features at any width
    table = FeatureTable.of(["def f(a):\n    return a"], code, None)
    Banding(bands=2, rows=2).keys_of_features(table)  # --jaccard's band keys of code shingles


GROUPS: dict[str, Callable[[], None]] = {
    "read": warm_reading,
    "fingerprint": warm_fingerprints,
    "join": warm_join,
    "index": warm_index,
    "snapshot": warm_snapshot,
    "search": warm_search,
    "dedup": warm_dedup,
    "minhash": warm_minhash,
    "verify": warm_verify,
    "logs": warm_logs,
    "code": warm_code,
}
"""The library's groups of kernels, by name, each compiled by its function."""


@contextmanager
def _corpus() -> Iterator[Path]:
    """A small JSONL file of repeated documents, for as long as the block runs."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "warmup.jsonl"
        texts = [f"document {i % 50} of the warm-up, with a few more words" for i in range(100)]
        path.write_text("".join(json.dumps({"text": text}) + "\n" for text in texts))
        yield path


def _fingerprints(bits: int) -> np.ndarray:
    return Fingerprinter(bits=bits).fingerprint_batch([f"doc {i} of the warm-up" for i in range(128)])


def _radii(bits: int) -> tuple[int, int]:
    return 3, 8 if bits == 64 else 16  # permuted tables, multi-index hashing


def _plans() -> Iterator[tuple[int, int, np.ndarray]]:
    """(bits, max_distance, fingerprints) for each width and search plan."""
    for bits in (64, 128):
        fingerprints = _fingerprints(bits)
        for max_distance in _radii(bits):
            yield bits, max_distance, fingerprints


def _saved_index(folder: Path, bits: int, max_distance: int, fingerprints: np.ndarray) -> Path:
    index = HammingIndex(bits=bits, max_distance=max_distance)
    index.add(fingerprints)
    index.compact()
    path = folder / "warmup.idx"
    index.save(path)
    return path


def _warm_index(index: HammingIndex, fingerprints: np.ndarray) -> None:
    index.add(fingerprints[:100])
    index.add(fingerprints[100:])  # into the delta
    index.query(fingerprints[0])  # on this thread
    index.query_batch(fingerprints)  # in parallel
    i, j, _ = index.pairs()
    clusters(i, j, index.ids)
    keep_greedy(index, fingerprints, accept=_every)  # the search path (items in the delta)
    index.compact()
    index.clusters()
    keep_greedy(index, fingerprints, accept=_every)  # the self-join path
    component_roots(index, accept=_every)


def _warm_opened(index: HammingIndex, fingerprints: np.ndarray) -> None:
    """The index saved and opened again: what a service does after a restart."""
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
