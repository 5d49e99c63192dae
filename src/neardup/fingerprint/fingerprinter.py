"""Fingerprinter: validate and coerce documents, run the SimHash kernels, return uint64 arrays."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal, overload

import numba
import numpy as np

from .._config import FEATURE_KINDS, WEIGHTING_CODES, FingerprintConfig
from .._errors import ConfigError
from .._kernels import simhash as kernels
from ..io.encoding import encode_text
from .code import code_fingerprints
from .features import (
    KEEP,
    NormalizationTable,
    char_classes,
    normalization_table_if_built,
)
from .text_buffers import (
    _CHUNK_BYTES,
    UNCHECKED,
    TextBuffer,
    chunk_bounds,
    named_buffers,
    prepare,
    prepare_bytes,
    prepare_str,
    stand_in_table,
)

_NO_IDF_HASHES = np.zeros(0, dtype=np.uint64)
_NO_IDF_VALUES = np.zeros(0, dtype=np.float64)
_ASCII_ONLY = stand_in_table(np.full(0x80, KEEP, dtype=np.uint8))  # actions known for ASCII alone
# Documents the kernels hand back unprepared are prepared and run again this many bytes at a time.
_REDO_BYTES = 32 << 20
# Documents of a Python list or iterable encoded at a time: memory stays bounded, and the
# working set small (measured 10-20% faster than one piece on 2 KB documents).
_PIECE_DOCS = 8192


def resolve_threads(n_jobs: int | None) -> int:
    """The cores ``n_jobs`` asks for (None or -1: all numba may use), or ConfigError."""
    available = numba.config.NUMBA_NUM_THREADS
    if n_jobs is None or n_jobs == -1:
        return available
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
        raise ConfigError(f"n_jobs={n_jobs!r} must be a positive integer, -1 or None (all cores)")
    return min(n_jobs, available)


@contextlib.contextmanager
def _threads(n: int) -> Iterator[None]:
    previous = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        # Chunks go to whichever thread is free, so one long document does not idle the rest.
        with numba.parallel_chunksize(1):
            yield
    finally:
        numba.set_num_threads(previous)


def _groups(docs: np.ndarray, offsets: np.ndarray, budget: int) -> list[np.ndarray]:
    """``docs`` (ascending) in consecutive groups of at most about ``budget`` bytes (a group's
    first document may take it over)."""
    if docs.size == 0:
        return []
    ends = np.cumsum(offsets[docs + 1] - offsets[docs])
    cuts = np.unique(np.searchsorted(ends, np.arange(budget, ends[-1], budget)))
    return [group for group in np.split(docs, cuts) if group.size]


def _as_int(row: np.ndarray) -> int:
    return int(row[0]) if row.shape[0] == 1 else int(row[0]) | (int(row[1]) << 64)


class Fingerprinter:
    """Computes SimHash fingerprints under one :class:`FingerprintConfig`.

    Example:
        >>> fp = Fingerprinter(features="words")
        >>> a, b = fp.fingerprint_batch(["the cat sat on the mat", "the cat sat on a mat"])
    """

    def __init__(self, config: FingerprintConfig | None = None, **options: Any) -> None:
        """Use ``config``, or build one from keyword ``options`` (see FingerprintConfig)."""
        if config is not None and options:
            raise TypeError("pass either a FingerprintConfig or keyword options, not both")
        self._config = config if config is not None else FingerprintConfig(**options)
        idf = self._config.idf
        self._idf_hashes = idf.hashes if idf is not None else _NO_IDF_HASHES
        self._idf_values = idf.values if idf is not None else _NO_IDF_VALUES
        self._idf_default = idf.default_idf if idf is not None else 0.0

    @property
    def config(self) -> FingerprintConfig:
        """The configuration every fingerprint of this object follows."""
        return self._config

    def __repr__(self) -> str:
        return f"Fingerprinter({self._config!r})"

    def fingerprint(self, text: str | bytes, *, name: str | None = None) -> int:
        """The fingerprint of one text, as a Python int (< 2**bits). ``name``, its file name,
        chooses the lexer of ``features="code"`` when the config names no language."""
        if self._config.features == "code":
            if not isinstance(text, (str, bytes, bytearray, memoryview)):
                raise TypeError(f"text is {type(text).__name__}, not str or bytes")
            return _as_int(self.fingerprint_batch([text], n_jobs=1, names=[name])[0].reshape(-1))
        if isinstance(text, str):
            data = prepare_str(text, self._config.normalize)
        elif isinstance(text, (bytes, bytearray, memoryview)):
            data = prepare_bytes(bytes(text), self._config.normalize)
        else:
            raise TypeError(f"text is {type(text).__name__}, not str or bytes")
        offsets = np.array([0, len(data)], dtype=np.int64)
        buffer = TextBuffer(np.frombuffer(data, dtype=np.uint8), offsets, np.zeros(1, dtype=bool))
        return _as_int(self._kernels(buffer, 1, UNCHECKED)[0][0])

    @overload
    def fingerprint_batch(
        self,
        texts: Any,
        *,
        n_jobs: int | None = ...,
        errors: Literal["raise"] = ...,
        names: Sequence[str | None] | None = ...,
    ) -> np.ndarray: ...

    @overload
    def fingerprint_batch(
        self,
        texts: Any,
        *,
        n_jobs: int | None = ...,
        errors: Literal["skip"],
        names: Sequence[str | None] | None = ...,
    ) -> tuple[np.ndarray, np.ndarray]: ...

    def fingerprint_batch(
        self,
        texts: Any,
        *,
        n_jobs: int | None = None,
        errors: str = "raise",
        names: Sequence[str | None] | None = None,
    ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Fingerprints of many documents, computed on ``n_jobs`` cores (all by default).

        Args:
            texts: a list or iterable of ``str``/``bytes``, a numpy array of strings, or a
                pyarrow string/binary array (read without copying the text).
            n_jobs: cores to use (threads; for code, processes that lex); ``None`` or -1
                for all.
            errors: ``"raise"``: a document that is not text raises ``TypeError`` naming its
                position. ``"skip"``: it gets fingerprint 0 and is marked in the mask returned
                beside the fingerprints.
            names: for ``features="code"`` without a ``language``: each document's file name
                (or None), whose suffix chooses its lexer (``src/app.py``: Python).

        Returns:
            uint64 fingerprints, shape (n,) for 64 bits or (n, 2) for 128 bits (column 0 holds
            bits 0-63). With ``errors="skip"``, a tuple of them and a bool mask (n,) of the
            skipped documents.
        """
        threads = resolve_threads(n_jobs)
        parts, skips = [], []
        code = self._config.features == "code"
        with _threads(threads):  # preparing the buffers runs parallel kernels too
            for buffer, piece_names in named_buffers(texts, names, errors, _PIECE_DOCS):
                if code:
                    parts.append(
                        code_fingerprints(buffer, piece_names, self._config, self.weighing(), threads)
                    )
                else:
                    parts.append(self._run(buffer, threads))
                skips.append(buffer.skipped)
        words = self._config.bits // 64
        out = np.concatenate(parts) if parts else np.zeros((0, words), dtype=np.uint64)
        skipped = np.concatenate(skips) if skips else np.zeros(0, bool)
        out[skipped] = 0
        if words == 1:
            out = out.reshape(-1)
        return (out, skipped) if errors == "skip" else out

    def weighing(self) -> tuple[Any, ...]:
        """What the kernels take to weigh features into bits: the weighting's code, the seed,
        64-bit words, and the IDF model's hashes, values and default."""
        config = self._config
        return (
            WEIGHTING_CODES[config.weighting],
            np.uint64(config.seed),
            config.bits // 64,
            self._idf_hashes,
            self._idf_values,
            self._idf_default,
        )

    def _run(self, buffer: TextBuffer, threads: int) -> np.ndarray:
        """Fingerprints of a buffer's documents as they come: the kernels take each as it is,
        except the few they find need preparing (``text_buffers.prepare``: normalisation the table
        cannot do in place, UTF-8 repair), which are prepared and fingerprinted again."""
        normalize = self._config.normalize
        table = UNCHECKED
        if normalize:
            # Until non-ASCII text has made ``prepare`` build the table, any is unprepared.
            table = normalization_table_if_built() or _ASCII_ONLY
        out, unprepared = self._kernels(buffer, threads, table)
        # A group at a time, so that a call never holds more than _REDO_BYTES in copies.
        for group in _groups(np.flatnonzero(unprepared), buffer.offsets, _REDO_BYTES):
            ready = prepare(buffer.subset(group), normalize)
            out[group] = self._kernels(ready, threads, UNCHECKED)[0]
        return out

    def _kernels(
        self, buffer: TextBuffer, threads: int, table: NormalizationTable
    ) -> tuple[np.ndarray, np.ndarray]:
        """(fingerprints, unprepared): the fingerprint kernel on ``threads`` threads."""
        config = self._config
        size = config.ngram_size if config.features == "char-ngrams" else config.shingle_size
        out = np.zeros((len(buffer), config.bits // 64), dtype=np.uint64)
        unprepared = np.zeros(len(buffer), dtype=bool)
        settings = (
            char_classes(),
            *table,
            config.normalize,
            FEATURE_KINDS[config.features],
            size,
            *self.weighing(),
            out,
            unprepared,
        )
        if threads == 1 or buffer.offsets[-1] - buffer.offsets[0] < _CHUNK_BYTES:
            kernels.fingerprint_buffer_serial(buffer.data, buffer.offsets, *settings)
        else:
            kernels.fingerprint_buffer(
                buffer.data, buffer.offsets, chunk_bounds(buffer.offsets, threads), *settings
            )
        return out, unprepared

    def fingerprint_features(self, features: Iterable[tuple[str | bytes, float]]) -> int:
        """The fingerprint of caller-given weighted features, as a Python int.

        Each feature (``str``, hashed as UTF-8 without normalisation, or ``bytes``) is hashed
        with the config's seed and bits; weights of a repeated feature add up. Weights are
        finite reals; a negative weight pulls the bits the other way.
        """
        pairs = list(features)
        data = []
        for position, pair in enumerate(pairs):
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise TypeError(f"feature {position} is {pair!r}; give (feature, weight) pairs")
            feature, weight = pair
            if isinstance(feature, str):
                data.append(encode_text(feature))
            elif isinstance(feature, (bytes, bytearray)):
                data.append(bytes(feature))
            else:
                raise TypeError(f"feature {position} is {type(feature).__name__}, not str or bytes")
            if (
                isinstance(weight, bool)
                or not isinstance(weight, (int, float, np.number))
                or not math.isfinite(weight)
            ):
                raise ValueError(f"feature {position} has weight {weight!r}; weights must be finite numbers")
        buf = np.frombuffer(b"".join(data), dtype=np.uint8)
        offsets = np.zeros(len(data) + 1, dtype=np.int64)
        np.cumsum([len(d) for d in data], out=offsets[1:])
        weights = np.array([float(w) for _, w in pairs], dtype=np.float64)
        return _as_int(
            kernels.fingerprint_weighted(
                buf, offsets, weights, np.uint64(self._config.seed), self._config.bits // 64
            )
        )


def simhash(text: str | bytes, **config: Any) -> int:
    """The SimHash fingerprint of one text as an int; keyword options as in FingerprintConfig.

    Example:
        >>> simhash("the cat sat on the mat") == simhash("The cat sat on the mat!")
        True
    """
    return Fingerprinter(**config).fingerprint(text)
