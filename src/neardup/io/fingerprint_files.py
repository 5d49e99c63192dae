"""Fingerprint files: what ``neardup fingerprint`` writes and the index commands read (and
NumPy ``.npy`` arrays of fingerprints made elsewhere, :func:`read_numpy_fingerprints`).

    # neardup fingerprints v1 {"bits": 64, "features": "word-shingles", ...}
    ID<TAB>HEX
    ...

The first line names the format, its version and the full FingerprintConfig (as JSON), so a
file describes itself and fingerprints of different configs are never compared. HEX is the
fingerprint in lowercase hex: 16 digits for 64 bits, 32 for 128 (high word first).
"""

from __future__ import annotations

import json
import os
import string
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._config import FINGERPRINT_VERSION, FingerprintConfig
from .._errors import ConfigError, FormatError

FORMAT = "neardup fingerprints"
FORMAT_VERSION = 1


def format_header(config: FingerprintConfig) -> bytes:
    """The first line of a fingerprint file for ``config``."""
    return f"# {FORMAT} v{FORMAT_VERSION} {json.dumps(config.to_dict())}\n".encode()


def format_hex(fingerprints: np.ndarray) -> list[str]:
    """Zero-padded lowercase hex of uint64 fingerprints (n,) or (n, 2), column 0 the low bits."""
    if fingerprints.ndim == 1:
        return [f"{value:016x}" for value in fingerprints.tolist()]
    return [f"{high:016x}{low:016x}" for low, high in fingerprints.tolist()]


def format_rows(ids: list[str], fingerprints: np.ndarray) -> bytes:
    """``ID<TAB>HEX`` lines for a batch."""
    text = "".join(f"{doc_id}\t{value}\n" for doc_id, value in zip(ids, format_hex(fingerprints)))
    return text.encode("utf-8", "surrogateescape")  # file names keep their undecodable bytes


def parse_hex(value: str, bits: int) -> np.ndarray:
    """One fingerprint from its hex (16 or 32 digits as ``bits`` says): uint64, shape (words,)."""
    digits = bits // 4
    if len(value) != digits:
        raise ConfigError(f"{value!r} has {len(value)} hex digits; a {bits}-bit fingerprint has {digits}")
    if not set(value) <= set(string.hexdigits):
        raise ConfigError(f"{value!r} is not a fingerprint: it holds characters other than hex digits")
    number = int(value, 16)
    return np.array([(number >> (64 * w)) & (2**64 - 1) for w in range(bits // 64)], dtype=np.uint64)


@dataclass
class FingerprintFile:
    """A fingerprint file read back: its config (as written; None for fingerprints made
    elsewhere), ids (None: the row numbers, from 0) and fingerprints (uint64, (n,) for 64
    bits, (n, 2) for 128)."""

    config: dict[str, Any] | None
    ids: list[str] | None
    fingerprints: np.ndarray

    @property
    def bits(self) -> int:
        return 64 * (1 if self.fingerprints.ndim == 1 else self.fingerprints.shape[1])

    def id_of(self, row: int) -> str:
        """The id of the fingerprint at ``row``."""
        return str(row) if self.ids is None else self.ids[row]


NUMPY_MAGIC = b"\x93NUMPY"
"""How a NumPy ``.npy`` file starts."""


def read_numpy_fingerprints(path: str | os.PathLike) -> FingerprintFile:
    """The fingerprints of a NumPy ``.npy`` file made elsewhere (the Spark job's fingerprint
    step, another tool): 64-bit integers, shape (n,) for 64-bit fingerprints or (n, 2) for
    128 (column 0 the low bits). Their ids are their row numbers, from 0; their config is
    not known. Memory-mapped: a billion rows are not read until used."""
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as e:  # a pickle, or a damaged header
        raise FormatError(f"{os.fspath(path)}: not a NumPy array of fingerprints ({e})") from None
    if (
        array.dtype.kind not in "ui"
        or array.dtype.itemsize != 8
        or array.ndim not in (1, 2)
        or (array.ndim == 2 and array.shape[1] != 2)
    ):
        raise FormatError(
            f"{os.fspath(path)}: a NumPy array of {array.dtype} and shape {array.shape}, where "
            f"fingerprints are uint64 of shape (n,) for 64 bits or (n, 2) for 128; convert it "
            f"with numpy (array.astype(np.uint64))"
        )
    little = array.astype(array.dtype.newbyteorder("<"), copy=False)  # a copy only if big-endian
    return FingerprintFile(None, None, little.view(np.uint64))


def read_fingerprints(path: str | os.PathLike) -> FingerprintFile:
    """Read a file written by ``neardup fingerprint``; a line that is not ``ID<TAB>HEX`` of the
    header's width, or a missing or foreign header, raises FormatError naming file and line.
    Lines end in ``\n`` or ``\r\n``; the lines are parsed by a compiled pass over the bytes
    and the ids decoded at once (a Python loop read a million lines in 1.9 s)."""
    from .._kernels.lines import gather, hex_fields, split_lines

    with open(path, "rb") as f:
        header = f.readline()
        config = _parse_header(header.decode("utf-8", "surrogateescape"), path)
        data = np.frombuffer(f.read(), dtype=np.uint8)
    bits = int(config["bits"])
    width = bits // 4
    starts, ends, _ = split_lines(data)
    fingerprints = np.empty((starts.shape[0], bits // 64), dtype=np.uint64)
    bad = hex_fields(data, starts, ends, width, fingerprints)
    if bad >= 0:
        line = data[starts[bad] : ends[bad]].tobytes().decode("utf-8", "surrogateescape")
        _, tab, value = line.rpartition("\t")
        if not tab or len(value) != width:
            raise FormatError(
                f"{path}:{bad + 2}: expected ID<TAB>HEX with {width} hex digits, got {line[:80]!r}"
            )
        raise FormatError(f"{path}:{bad + 2}: {value!r} is not hexadecimal")
    pieces, _ = gather(data, starts, ends - width - 1, np.arange(starts.shape[0]), np.array([10], np.uint8))
    ids = pieces.tobytes().decode("utf-8", "surrogateescape").split("\n")[:-1]
    return FingerprintFile(config, ids, fingerprints.reshape(-1) if bits == 64 else fingerprints)


def _parse_header(line: str, path: str | os.PathLike) -> dict[str, Any]:
    prefix = f"# {FORMAT} v"
    if not line.startswith(prefix):
        raise FormatError(
            f"{path}:1: not a neardup fingerprint file (its first line should start "
            f"with {prefix!r}); make one with `neardup fingerprint`"
        )
    version, _, description = line[len(prefix) :].partition(" ")
    if version != str(FORMAT_VERSION):
        raise FormatError(
            f"{path}:1: fingerprint file format v{version} is not readable by this "
            f"release, which reads v{FORMAT_VERSION}"
        )
    try:
        config = json.loads(description)
    except json.JSONDecodeError as e:
        raise FormatError(f"{path}:1: the config in the header is not JSON ({e})") from None
    if config.get("fingerprint_version") != FINGERPRINT_VERSION or config.get("bits") not in (64, 128):
        raise FormatError(
            f"{path}:1: fingerprints of spec version {config.get('fingerprint_version')} "
            f"and {config.get('bits')} bits cannot be read by this release "
            f"(spec version {FINGERPRINT_VERSION}, 64 or 128 bits)"
        )
    return config
