"""The index file: one self-describing file of a JSON header and raw, 64-byte aligned arrays.

Layout (all integers little-endian)::

    offset 0   8 bytes   magic b"NDUPHIX\\0"
           8   uint64    header length h in bytes
          16   uint32    CRC-32 of the header bytes
          20   4 bytes   zero
          24   h bytes   header: UTF-8 JSON (see ``HammingIndex.save``)
               zeros     up to the next multiple of 64
               arrays    each at the offset its header entry names, a multiple of 64, C order

The header carries ``format``, ``format_version`` and one entry per array: ``offset``, ``dtype``
(``"<u8"``, ``"<i8"`` or ``"<u4"``), ``shape``, ``nbytes`` and ``crc32`` (8 hex digits), plus
``file_size``. Opening always checks the magic, the header's CRC, the format and version, and
that every array lies inside the file and is aligned: a truncated file or a damaged header is
caught for the cost of reading the header. The arrays' CRCs cost a pass over the data (about
2.5 GB/s) and are checked only when asked (``verify``).

Arrays come back as read-only ``np.memmap`` views of the file: opening reads no array data, so
a large index opens in milliseconds and its pages are loaded on demand (and shared between
processes that open the same file).

A :class:`HammingIndex` file (:func:`save_index`, :func:`open_index`) is of format
``"neardup.HammingIndex"``, version ``FORMAT_VERSION``; its header also records the release
that wrote it, ``bits``, ``max_distance``, the plan (name, spec, strategy, blocks, tables, key,
row and directory bits), the counts (main rows, delta, tombstones, live) and
``fingerprint_config``; its arrays are ``ARRAYS``. Version 3 stores each table entry without
the key bits its directory gives, in ``IndexPlan.entry_dtype`` (uint32 where they fit);
version 2, which this release still opens, stored whole uint64 entries, which the kernels read
the same way (a release that reads version 2 only would misread version 3, hence the new
number). A file of any other version is refused with a :class:`~neardup.FormatError` naming it.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .._atomic import atomic_write
from .._errors import FormatError
from .plan import IndexPlan, directory_dtype, row_bits

if TYPE_CHECKING:
    from .hamming_index import HammingIndex

FORMAT = "neardup.HammingIndex"
FORMAT_VERSION = 3
READABLE_VERSIONS = (2, 3)
ARRAYS = (
    "fingerprints",
    "ids",
    "sorted_ids",
    "tables",
    "directory",
    "delta_fingerprints",
    "delta_ids",
    "tombstones",
)
"""The arrays of an index file, in the order they are written."""
MAGIC = b"NDUPHIX\x00"
ALIGN = 64
VERIFY_AUTO_BYTES = 256 * 2**20
"""With ``verify=None``, array checksums are checked when the arrays hold at most this many
bytes (about 0.1 s of CRC-32); larger files open without reading their data."""

_PREFIX = struct.Struct("<8sQI4x")
_DTYPES: dict[str, np.dtype] = {"<u8": np.dtype("<u8"), "<i8": np.dtype("<i8"), "<u4": np.dtype("<u4")}
_CHUNK = 64 * 2**20
_CRC_PLACEHOLDER = "00000000"


def _align(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def _dtype_name(arr: np.ndarray) -> str:
    for name, dtype in _DTYPES.items():
        if arr.dtype == dtype or arr.dtype == dtype.newbyteorder("="):
            return name
    raise TypeError(f"cannot store dtype {arr.dtype}; arrays are uint64, int64 or uint32")


def _layout(meta: dict, arrays: dict[str, np.ndarray], crcs: dict[str, str]) -> tuple[bytes, dict]:
    """The header bytes with array offsets filled in. The header length does not depend on the
    CRC values (fixed 8 hex digits), so it can be rewritten in place once they are known."""
    entries: dict[str, dict] = {}
    header = {**meta, "arrays": entries, "file_size": 0}
    # Offsets depend on the header's length and the header on the offsets: iterate to a fixed
    # point (numbers only grow, so two or three rounds).
    start = 0
    while True:
        at = start
        for name, arr in arrays.items():
            entries[name] = {
                "offset": at,
                "dtype": _dtype_name(arr),
                "shape": list(arr.shape),
                "nbytes": int(arr.nbytes),
                "crc32": crcs.get(name, _CRC_PLACEHOLDER),
            }
            at = _align(at + arr.nbytes)
        header["file_size"] = at if arrays else start
        raw = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
        need = _align(_PREFIX.size + len(raw))
        if need == start:
            return raw, header
        start = max(start, need)


def write_file(path: str | os.PathLike, meta: dict, arrays: dict[str, np.ndarray]) -> int:
    """Write ``meta`` (JSON-able) and ``arrays`` to ``path`` atomically; returns the file size.

    The arrays are streamed once: each one's CRC is computed as it is written, then the
    header, whose length does not change, is rewritten with them before the file is renamed
    into place (``atomic_write``: temporary file beside ``path``, fsync, rename)."""
    arrays = {name: np.ascontiguousarray(a) for name, a in arrays.items()}
    raw, header = _layout(meta, arrays, {})
    crcs: dict[str, str] = {}
    with atomic_write(path) as f:
        f.write(_PREFIX.pack(MAGIC, len(raw), zlib.crc32(raw)))
        f.write(raw)
        at = _PREFIX.size + len(raw)
        for name, arr in arrays.items():
            offset = header["arrays"][name]["offset"]
            f.write(b"\0" * (offset - at))
            flat = arr.reshape(-1).view(np.uint8)
            crc = 0
            for s in range(0, flat.shape[0], _CHUNK):
                piece = flat[s : s + _CHUNK].data
                crc = zlib.crc32(piece, crc)
                f.write(piece)
            crcs[name] = f"{crc:08x}"
            at = offset + arr.nbytes
        f.write(b"\0" * (header["file_size"] - at))
        final, header = _layout(meta, arrays, crcs)
        if len(final) != len(raw):  # cannot happen: CRCs are fixed-width
            raise AssertionError("index header changed length")
        f.seek(0)
        f.write(_PREFIX.pack(MAGIC, len(final), zlib.crc32(final)))
        f.write(final)
    return int(header["file_size"])


def read_file(
    path: str | os.PathLike, format_name: str, format_versions: tuple[int, ...], verify: bool | None = None
) -> tuple[dict, dict[str, np.ndarray]]:
    """The header and the arrays (read-only ``np.memmap`` views) of a file from ``write_file``.

    Raises :class:`~neardup.FormatError` naming ``path`` when the file is not of format
    ``format_name`` in one of ``format_versions``, is truncated, or its header (always) or arrays
    (with ``verify``; ``None`` checks files up to ``VERIFY_AUTO_BYTES``) fail their CRC-32."""
    path = Path(path)

    def bad(what: str) -> FormatError:
        return FormatError(f"{path}: {what}")

    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            prefix = f.read(_PREFIX.size)
            if len(prefix) < _PREFIX.size or prefix[:8] != MAGIC:
                raise bad(
                    f"not a neardup index file (starts with {prefix[:8]!r}, expected "
                    f"{MAGIC!r}); open files written by HammingIndex.save"
                )
            _, length, crc = _PREFIX.unpack(prefix)
            if length > size - _PREFIX.size:
                raise bad(
                    f"truncated: the header needs {length} bytes, the file has "
                    f"{size - _PREFIX.size} after its prefix; save the index again"
                )
            raw = f.read(length)
    except OSError as e:
        raise FormatError(f"{path}: cannot read the index file: {e}") from e
    if zlib.crc32(raw) != crc:
        raise bad("the header is corrupt (CRC-32 mismatch); restore the file or save the index again")
    try:
        header = json.loads(raw)
    except ValueError as e:
        raise bad(f"the header is not valid JSON ({e})") from e
    if not isinstance(header, dict) or header.get("format") != format_name:
        raise bad(
            f"format {header.get('format') if isinstance(header, dict) else None!r} is not {format_name!r}"
        )
    if header.get("format_version") not in format_versions:
        readable = " or ".join(map(str, format_versions))
        raise bad(
            f"written with format version {header.get('format_version')!r}; this release of "
            f"neardup reads format version {readable}: rebuild the index with this release "
            "and save it again"
        )
    if header.get("file_size") != size:
        raise bad(
            f"the header says {header.get('file_size')} bytes, the file has {size}: truncated "
            "or appended to; save the index again"
        )
    entries = header.get("arrays")
    if not isinstance(entries, dict):
        raise bad("the header lists no arrays")
    data_start = _align(_PREFIX.size + length)
    total = sum(int(e.get("nbytes", 0)) for e in entries.values() if isinstance(e, dict))
    if verify is None:
        verify = total <= VERIFY_AUTO_BYTES
    whole = np.memmap(path, mode="r", dtype=np.uint8) if size else np.zeros(0, np.uint8)
    arrays = {}
    for name, entry in entries.items():
        try:
            offset, nbytes, shape = (
                int(entry["offset"]),
                int(entry["nbytes"]),
                tuple(int(s) for s in entry["shape"]),
            )
            dtype = _DTYPES[entry["dtype"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise bad(f"array {name!r} has a malformed entry {entry!r}") from exc
        if (
            offset % ALIGN
            or offset < data_start
            or offset + nbytes > size
            or min(shape, default=0) < 0
            or nbytes != dtype.itemsize * int(np.prod(shape, dtype=np.int64))
        ):
            raise bad(
                f"array {name!r} (offset {offset}, {nbytes} bytes, shape {list(shape)}) does "
                f"not fit the {size}-byte file; save the index again"
            )
        view = whole[offset : offset + nbytes]
        if verify and f"{zlib.crc32(view.data):08x}" != entry.get("crc32"):
            raise bad(
                f"array {name!r} is corrupt (CRC-32 mismatch); restore the file or save the index again"
            )
        arrays[name] = view.view(dtype).reshape(shape)
    return header, arrays


def save_index(index: HammingIndex, path: str | os.PathLike) -> int:
    """Write ``index`` to ``path`` atomically, pending changes as they are; returns the file's
    size in bytes (see :meth:`HammingIndex.save`)."""
    from .._version import __version__

    arrays = index._arrays()
    n_main = int(arrays["ids"].shape[0])
    plan = index.plan
    spec = index._plan_spec if isinstance(index._plan_spec, (str, int)) else None
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "written_by": f"neardup {__version__}",
        "bits": index.bits,
        "max_distance": index.max_distance,
        "plan": {
            "name": plan.name,
            "spec": spec,
            "strategy": plan.strategy,
            "num_blocks": plan.num_blocks,
            "block_sizes": list(plan.block_sizes),
            "tables": [list(t) for t in plan.tables],
            "stored_key_bits": list(plan.stored_key_bits(n_main)),
            "row_bits": row_bits(n_main),
            "directory_bits": plan.directory_bits(n_main),
        },
        "counts": {
            "main": n_main,
            "delta": int(arrays["delta_ids"].shape[0]),
            "tombstones": int(arrays["tombstones"].shape[0]),
            "live": len(index),
        },
        "fingerprint_config": index.fingerprint_config,
    }
    return write_file(path, meta, {name: arrays[name] for name in ARRAYS})


def open_index(
    cls: type[HammingIndex],
    path: str | os.PathLike,
    verify: bool | None = None,
    fingerprint_config: dict | None = None,
) -> HammingIndex:
    """The index saved at ``path``, its arrays memory-mapped, once the header, the layout and
    every array's shape and type are checked (see :meth:`HammingIndex.open`)."""
    header, arrays = read_file(path, FORMAT, READABLE_VERSIONS, verify=verify)

    def bad(what: str) -> FormatError:
        return FormatError(f"{path}: {what}; save the index again with this release")

    try:
        plan_meta, counts = header["plan"], header["counts"]
        bits, max_distance = header["bits"], header["max_distance"]
        plan = IndexPlan(
            bits,
            max_distance,
            plan_meta["num_blocks"],
            plan_meta["name"],
            plan_meta.get("strategy", "tables"),
        )
        spec = plan_meta["spec"]
        if spec is not None:  # "auto", a preset or a number of blocks
            IndexPlan.choose(bits, max_distance, spec, 0)  # valid?
        n, m, dead = int(counts["main"]), int(counts["delta"]), int(counts["tombstones"])
        stored_config = header["fingerprint_config"]
    except (KeyError, TypeError, ValueError) as e:  # ConfigError is a ValueError
        raise bad(f"the header does not describe an index ({type(e).__name__}: {e})") from e
    if (
        plan_meta.get("block_sizes") != list(plan.block_sizes)
        or plan_meta.get("tables") != [list(t) for t in plan.tables]
        or plan_meta.get("stored_key_bits") != list(plan.stored_key_bits(n))
        or plan_meta.get("row_bits") != row_bits(n)
        or plan_meta.get("directory_bits") != plan.directory_bits(n)
    ):
        raise bad(f"its table layout differs from what this release builds for {plan.describe(n)}")
    words = bits // 64
    shapes = {
        "fingerprints": (n, words),
        "ids": (n,),
        "sorted_ids": (n,),
        "tables": (plan.num_tables, n),
        "directory": (plan.num_tables, 2 ** plan.directory_bits(n) + 1),
        "delta_fingerprints": (m, words),
        "delta_ids": (m,),
        "tombstones": (dead,),
    }
    for name, shape in shapes.items():
        if name not in arrays or arrays[name].shape != shape:
            got = arrays[name].shape if name in arrays else "missing"
            raise bad(f"array {name!r} has shape {got}, the header's counts say {shape}")
    if fingerprint_config is not None and stored_config != fingerprint_config:
        raise FormatError(
            f"{path}: built with fingerprint config {stored_config!r}, not "
            f"{fingerprint_config!r}; fingerprints made with different configs "
            "cannot be compared: rebuild the index or fingerprint with its config"
        )
    entry_dtype = plan.entry_dtype(n) if header["format_version"] >= 3 else np.dtype(np.uint64)
    if arrays["tables"].dtype != entry_dtype:
        raise bad(f"array 'tables' has dtype {arrays['tables'].dtype}, expected {entry_dtype}")
    if arrays["directory"].dtype != directory_dtype(n):
        raise bad(f"array 'directory' has dtype {arrays['directory'].dtype}, expected {directory_dtype(n)}")
    return cls._from_arrays(plan, spec, arrays, stored_config)
