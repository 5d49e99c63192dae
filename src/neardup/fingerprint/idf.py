"""Inverse document frequencies for ``weighting="tfidf"``: fit on a corpus, save, load."""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

import numpy as np

from .._atomic import atomic_write
from .._config import FEATURE_KINDS
from .._errors import FormatError
from .._kernels.simhash import feature_counts
from .features import char_classes

IDF_FORMAT = "neardup-idf"
IDF_FORMAT_VERSION = 1


class IdfModel:
    """Document frequencies of features, keyed by the features' first 64-bit hash.

    ``idf(f) = ln((1 + n_docs) / (1 + df(f))) + 1`` (smoothed, as scikit-learn's default); a
    feature never seen gets ``ln(1 + n_docs) + 1``. Equal models have equal ``digest``.
    """

    def __init__(
        self, hashes: np.ndarray, doc_freqs: np.ndarray, n_docs: int, feature_config: dict[str, Any]
    ) -> None:
        hashes = np.ascontiguousarray(hashes, dtype=np.uint64)
        doc_freqs = np.ascontiguousarray(doc_freqs, dtype=np.int64)
        if hashes.shape != doc_freqs.shape or hashes.ndim != 1:
            raise ValueError("hashes and doc_freqs must be 1-d arrays of one length")
        if hashes.size and not (np.diff(hashes.astype(np.uint64)) > 0).all():
            raise ValueError("hashes must be strictly increasing")
        self.hashes = hashes
        self.doc_freqs = doc_freqs
        self.n_docs = int(n_docs)
        self.feature_config = dict(feature_config)
        self.values = np.log((1.0 + self.n_docs) / (1.0 + doc_freqs)) + 1.0
        self.default_idf = float(np.log(1.0 + self.n_docs) + 1.0)
        h = hashlib.sha256()
        h.update(json.dumps([self.n_docs, self.feature_config], sort_keys=True).encode())
        h.update(hashes.astype("<u8").tobytes())
        h.update(doc_freqs.astype("<i8").tobytes())
        self.digest = "sha256:" + h.hexdigest()[:32]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IdfModel) and other.digest == self.digest

    def __hash__(self) -> int:
        return hash(self.digest)

    def __len__(self) -> int:
        return int(self.hashes.shape[0])

    def __repr__(self) -> str:
        return f"IdfModel(n_docs={self.n_docs}, features={len(self)}, digest={self.digest!r})"

    def save(self, path: str | os.PathLike) -> None:
        """Write the model atomically to ``path`` (a ``.npz`` file that describes itself)."""
        header = {
            "format": IDF_FORMAT,
            "version": IDF_FORMAT_VERSION,
            "n_docs": self.n_docs,
            "feature_config": self.feature_config,
            "digest": self.digest,
        }
        with atomic_write(path) as f:
            np.savez(
                f,
                header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
                hashes=self.hashes,
                doc_freqs=self.doc_freqs,
            )

    @classmethod
    def load(cls, path: str | os.PathLike) -> IdfModel:
        """Read a model written by :meth:`save`; a damaged or foreign file raises FormatError."""
        try:
            with open(path, "rb") as f, np.load(f, allow_pickle=False) as z:
                header = json.loads(z["header"].tobytes())
                hashes, doc_freqs = z["hashes"], z["doc_freqs"]
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
            raise FormatError(f"{path}: not a readable neardup IDF model ({e})") from None
        if header.get("format") != IDF_FORMAT or header.get("version") != IDF_FORMAT_VERSION:
            raise FormatError(
                f"{path}: not a neardup IDF model of version {IDF_FORMAT_VERSION} "
                f"(found {header.get('format')!r} version {header.get('version')!r})"
            )
        model = cls(hashes, doc_freqs, header["n_docs"], header["feature_config"])
        if model.digest != header["digest"]:
            raise FormatError(f"{path}: contents do not match their checksum; the file is damaged")
        return model


def fit_idf(
    texts: Iterable[Any], config: Any = None, *, batch_size: int = 10_000, **options: Any
) -> IdfModel:
    """Count in how many of ``texts`` each feature occurs, under ``config`` (a FingerprintConfig)
    or keyword ``options`` for one. Texts are read in batches of ``batch_size``, so an iterator
    over a large corpus works in bounded memory (plus the distinct features)."""
    from .._config import FingerprintConfig
    from .text_buffers import to_buffers

    if config is None:
        config = FingerprintConfig(**options)
    elif options:
        raise TypeError("pass either a FingerprintConfig or keyword options, not both")
    size = config.ngram_size if config.features == "char-ngrams" else config.shingle_size
    keys = np.zeros(0, dtype=np.uint64)
    counts = np.zeros(0, dtype=np.int64)
    n_docs = 0
    for batch in _batches(texts, batch_size):
        for buffer in to_buffers(batch, config.normalize and config.features != "code"):
            if config.features == "code":  # the texts' language is config.language
                from .code import code_feature_counts

                _, found, _ = code_feature_counts(buffer, None, config)
            else:
                _, found, _ = feature_counts(
                    buffer.data,
                    buffer.offsets,
                    char_classes(),
                    config.normalize,
                    FEATURE_KINDS[config.features],
                    size,
                    np.uint64(config.seed),
                )
            batch_keys, batch_counts = np.unique(found, return_counts=True)
            keys, counts = _merge_counts(keys, counts, batch_keys, batch_counts)
            n_docs += len(buffer)
    return IdfModel(keys, counts, n_docs, config.feature_config())


def _batches(texts: Any, batch_size: int) -> Iterator[Any]:
    """Arrays (numpy, pyarrow) whole, other iterables ``batch_size`` texts at a time."""
    if isinstance(texts, np.ndarray) or type(texts).__module__.split(".")[0] == "pyarrow":
        yield texts
        return
    iterator = iter(texts)
    while batch := list(islice(iterator, batch_size)):
        yield batch


def _merge_counts(
    keys: np.ndarray, counts: np.ndarray, new_keys: np.ndarray, new_counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    all_keys = np.concatenate([keys, new_keys])
    all_counts = np.concatenate([counts, new_counts])
    order = np.argsort(all_keys, kind="stable")
    all_keys, all_counts = all_keys[order], all_counts[order]
    if all_keys.size == 0:
        return all_keys, all_counts
    starts = np.flatnonzero(np.concatenate(([True], all_keys[1:] != all_keys[:-1])))
    return all_keys[starts], np.add.reduceat(all_counts, starts)
