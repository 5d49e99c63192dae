"""Turn a batch of documents into one UTF-8 buffer plus offsets, ready for the kernels.

Accepted: a list (or any iterable) of ``str``/``bytes``, a numpy array of strings, or a pyarrow
string/binary array (read in place: only its offsets are copied, unless a document needs
normalisation the kernels cannot apply as they tokenise, or UTF-8 repair; ``prepare`` does it).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice, repeat
from typing import Any

import numpy as np

from .._kernels.buffer_triage import AS_IS, PYTHON, rebuild, triage
from ..io.encoding import decode_bytes, encode_text
from .features import NormalizationTable, normalization_table, normalize

ERRORS = ("raise", "skip")
# Below this many characters a list is joined in Python: few pages to fault, and pyarrow's first
# conversion of a list imports pandas where it is installed (0.3 s).
_PYARROW_MIN_CHARS = 1 << 20


def stand_in_table(actions: np.ndarray) -> NormalizationTable:
    """A normalisation table with these actions and no replacements, read-only like the real
    one, so that the kernels see one type (no second compile)."""
    table = NormalizationTable(actions, np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.uint8))
    for array in table:
        array.setflags(write=False)
    return table


# No actions: the text is ready as it is (and ``prepare`` without normalisation only repairs
# UTF-8, so it reads no table).
UNCHECKED = stand_in_table(np.zeros(0, dtype=np.uint8))


@dataclass
class TextBuffer:
    """Documents as Arrow-style buffers: document d is ``data[offsets[d]:offsets[d + 1]]``.

    ``skipped`` (bool, (n,)) marks documents that were not text (``errors="skip"``); their
    fingerprints are zeroed after the kernels run."""

    data: np.ndarray
    offsets: np.ndarray
    skipped: np.ndarray

    def __post_init__(self) -> None:
        # One array type for the kernels, whoever owns the bytes (numba compiles read-only and
        # writable arrays separately: a second 20 s compile for nothing).
        self.data = self.data.view()
        self.data.flags.writeable = False

    def __len__(self) -> int:
        return self.offsets.shape[0] - 1

    def slice(self, lo: int, hi: int) -> TextBuffer:
        """A buffer of documents ``lo`` to ``hi - 1``, copied in one piece (a worker process
        is handed these bytes alone)."""
        start, end = int(self.offsets[lo]), int(self.offsets[hi])
        return TextBuffer(self.data[start:end].copy(), self.offsets[lo : hi + 1] - start, self.skipped[lo:hi])

    def subset(self, docs: np.ndarray) -> TextBuffer:
        """A buffer of just the documents ``docs`` (int, ascending), copied."""
        starts, ends = self.offsets[docs], self.offsets[docs + 1]
        offsets = np.zeros(len(docs) + 1, dtype=np.int64)
        np.cumsum(ends - starts, out=offsets[1:])
        data = np.concatenate(
            [self.data[a:b] for a, b in zip(starts.tolist(), ends.tolist())] or [np.zeros(0, np.uint8)]
        )
        return TextBuffer(data, offsets, self.skipped[docs])


def prepare_str(text: str, normalize_text: bool) -> bytes:
    """UTF-8 bytes of one text, normalised if asked (ASCII needs nothing: the kernels lower it)."""
    if normalize_text and not text.isascii():
        text = normalize(text)
    return encode_text(text)


def prepare_bytes(data: bytes, normalize_text: bool) -> bytes:
    """Valid UTF-8 for one document's bytes: repaired (U+FFFD) and normalised if asked."""
    if data.isascii():
        return data
    if normalize_text:
        return encode_text(normalize(decode_bytes(data)))
    try:
        data.decode("utf-8")
        return data
    except UnicodeDecodeError:
        return encode_text(decode_bytes(data))


def _not_text(position: int, value: object) -> TypeError:
    return TypeError(
        f"document {position} is {type(value).__name__}, not str or bytes; "
        f"convert it to text, or pass errors='skip' to leave it out"
    )


def _from_python(texts: list[Any], errors: str) -> TextBuffer:
    """A buffer of a list of ``str``/``bytes``. A large list is built by pyarrow in one pass:
    ASCII ``str`` as they are (their characters are their UTF-8 bytes), other ``str`` encoded
    here first (so that pyarrow does not cache a UTF-8 copy inside each of them); pyarrow's
    memory pool keeps its pages, where a fresh ``bytes`` of the whole piece would fault in new
    ones on every call (measured: 40 MB of English 35-44 ms by join, 13-15 ms by pyarrow). A
    small one, or one with anything else in it, goes through ``_from_python_slowly``."""
    import pyarrow as pa

    try:
        if sum(map(len, texts)) < _PYARROW_MIN_CHARS:
            return _from_python_slowly(texts, errors)
    except TypeError:  # something without a length: not text; named or skipped there
        return _from_python_slowly(texts, errors)
    try:
        items = texts if all(map(str.isascii, texts)) else None
    except TypeError:  # not all str
        items = None
    if items is None:
        items = [encode_text(t) if isinstance(t, str) and not t.isascii() else t for t in texts]
    gathered = _gathered(items)
    if gathered is not None:
        return _from_arrow_array(gathered, errors)
    try:
        array = pa.array(items, type=pa.large_binary())
    except (TypeError, pa.ArrowException):
        return _from_python_slowly(texts, errors)
    return _from_arrow_array(array, errors)


_CHUNK_BYTES = 256 * 1024  # a chunk of documents the kernels run on one thread


def chunk_bounds(offsets: np.ndarray, threads: int) -> np.ndarray:
    """Split documents into chunks of about equal bytes, several per thread (int64, (k + 1,))."""
    n = offsets.shape[0] - 1
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    total = int(offsets[-1] - offsets[0])
    n_chunks = int(min(n, max(4 * threads, total // _CHUNK_BYTES)))
    targets = offsets[0] + total * np.arange(1, n_chunks, dtype=np.float64) / n_chunks
    inner = np.searchsorted(offsets, targets)
    return np.unique(np.concatenate(([0], inner, [n]))).astype(np.int64)


# Where CPython keeps the characters of a compact ASCII ``str`` and the bytes of a ``bytes``,
# from the object's address (``id``): the size of an empty one, less its terminating NUL.
_STR_DATA = sys.getsizeof("") - 1
_BYTES_DATA = sys.getsizeof(b"") - 1
_IN_PLACE = sys.implementation.name == "cpython"


def _gathered(items: list[Any]) -> Any:
    """``items`` (exactly ``str``, all ASCII, or exactly ``bytes``) as a pyarrow large binary
    array, their bytes copied straight out of the objects on all cores into memory of
    pyarrow's pool, which keeps its pages (fresh ones fault in on every call): a third of
    ``pa.array``'s time, which copies them one by one holding the GIL. None where CPython's
    layout is not known to hold: another interpreter, a subclass, anything else."""
    import numba
    import pyarrow as pa

    from .._kernels.objects import gather

    held = tuple(items)  # alive while the copy runs, whatever happens to the caller's list
    kinds = set(map(type, held))
    if not _IN_PLACE or not kinds <= {str, bytes}:
        return None
    n = len(held)
    lengths = np.fromiter(map(len, held), dtype=np.int64, count=n)
    if kinds == {str} or kinds == {bytes}:
        header: Any = _STR_DATA if kinds == {str} else _BYTES_DATA
    else:
        header = np.where(np.fromiter(map(isinstance, held, repeat(str)), bool, n), _STR_DATA, _BYTES_DATA)
    # An object keeps its bytes right after its header where its size is the two and a NUL;
    # one that does not (a legacy str of Python 3.11, say) is left to pyarrow.
    if not np.array_equal(np.fromiter(map(sys.getsizeof, held), np.int64, n), header + lengths + 1):
        return None
    addresses = np.fromiter(map(id, held), dtype=np.int64, count=n) + header
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = pa.allocate_buffer(int(offsets[-1]))
    bounds = chunk_bounds(offsets, numba.get_num_threads())
    gather(addresses, offsets, bounds, np.frombuffer(data, dtype=np.uint8))
    return pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offsets), data])


def _from_python_slowly(texts: list[Any], errors: str) -> TextBuffer:
    encoded: list[bytes] = []
    skipped: list[int] = []
    for position, text in enumerate(texts):
        if isinstance(text, str):
            encoded.append(encode_text(text))
        elif isinstance(text, (bytes, bytearray, memoryview)):
            encoded.append(bytes(text))
        elif errors == "skip":
            encoded.append(b"")
            skipped.append(position)
        else:
            raise _not_text(position, text)
    n = len(encoded)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=n), out=offsets[1:])
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    mask = np.zeros(n, dtype=bool)
    mask[skipped] = True
    return TextBuffer(data, offsets, mask)


def _is_arrow(obj: object) -> bool:
    return type(obj).__module__.split(".")[0] == "pyarrow"


def _from_arrow_array(array: Any, errors: str) -> TextBuffer:
    import pyarrow as pa

    kind = array.type
    if pa.types.is_string_view(kind) or pa.types.is_binary_view(kind):
        array = array.cast(pa.large_string() if pa.types.is_string_view(kind) else pa.large_binary())
        kind = array.type
    if not (
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
    ):
        raise TypeError(f"a pyarrow array of {kind} is not text; pass a string or binary array")
    n = len(array)
    skipped = np.zeros(n, dtype=bool)
    if array.null_count:
        skipped = array.is_null().to_numpy(zero_copy_only=False)
        if errors != "skip":
            raise _not_text(int(np.flatnonzero(skipped)[0]), None)
    _, offset_buf, data_buf = array.buffers()
    offset_type = np.int64 if pa.types.is_large_string(kind) or pa.types.is_large_binary(kind) else np.int32
    offsets = np.frombuffer(offset_buf, dtype=offset_type)[array.offset : array.offset + n + 1].astype(
        np.int64
    )
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    return TextBuffer(data, offsets, skipped)


def prepare(buffer: TextBuffer, normalize_text: bool) -> TextBuffer:
    """The buffer with just the documents that need it normalised or repaired: in compiled code
    where ``normalization_table`` says each code point's result, in Python otherwise (invalid
    UTF-8, code points whose normalisation depends on their neighbours). Every other document
    keeps its bytes in place."""
    text = buffer.data[buffer.offsets[0] : buffer.offsets[-1]]
    if text.size == 0 or text.max() < 0x80:
        return buffer  # all ASCII (numpy's max runs at memory speed): nothing to prepare
    table = normalization_table() if normalize_text else UNCHECKED
    data, offsets = buffer.data, buffer.offsets
    status, lengths = triage(data, offsets, normalize_text, table.actions, table.replacement_offsets)
    status[buffer.skipped] = AS_IS
    if not status.any():
        return buffer
    prepared = [
        prepare_bytes(data[offsets[d] : offsets[d + 1]].tobytes(), normalize_text)
        for d in np.flatnonzero(status == PYTHON)
    ]
    new_offsets = np.zeros(len(prepared) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, prepared), dtype=np.int64, count=len(prepared)), out=new_offsets[1:])
    new_data = np.frombuffer(b"".join(prepared), dtype=np.uint8)
    rebuilt, rebuilt_offsets = rebuild(data, offsets, status, lengths, *table, new_data, new_offsets)
    return TextBuffer(rebuilt, rebuilt_offsets, buffer.skipped)


def iter_buffers(
    texts: Any, normalize_text: bool, errors: str = "raise", piece_docs: int | None = None
) -> Iterator[TextBuffer]:
    """The documents of ``texts`` as prepared buffers (``prepare``), made one at a time: one per
    Arrow chunk, or per ``piece_docs`` documents of any other input (all in one buffer when None)."""
    for buffer in raw_buffers(texts, errors, piece_docs):
        yield prepare(buffer, normalize_text)


def named_buffers(
    texts: Any, names: Sequence[str | None] | None, errors: str = "raise", piece_docs: int | None = None
) -> Iterator[tuple[TextBuffer, Sequence[str | None] | None]]:
    """:func:`raw_buffers` of ``texts``, each with its documents' ``names`` (None stays None)."""
    if names is not None and len(names) != len(texts):
        raise ValueError(f"names has {len(names)} names for {len(texts)} texts")
    done = 0
    for buffer in raw_buffers(texts, errors, piece_docs):
        yield buffer, None if names is None else names[done : done + len(buffer)]
        done += len(buffer)


def raw_buffers(texts: Any, errors: str = "raise", piece_docs: int | None = None) -> Iterator[TextBuffer]:
    """``iter_buffers`` before ``prepare``: the UTF-8 bytes as they come."""
    if errors not in ERRORS:
        raise ValueError(f"errors={errors!r} is not allowed; choose 'raise' or 'skip'")
    if isinstance(texts, (str, bytes)):
        raise TypeError("fingerprint_batch takes a batch of documents; for one text use fingerprint()")
    if _is_arrow(texts):
        pieces: Iterable[Any] = texts.chunks if hasattr(texts, "chunks") else [texts]
        make: Callable[[Any, str], TextBuffer] = _from_arrow_array
    else:
        if isinstance(texts, np.ndarray):
            if texts.ndim != 1:
                raise TypeError(f"a numpy array of documents must be 1-d, got shape {texts.shape}")
            texts = texts.tolist()
        pieces = _pieces(texts, piece_docs)
        make = _from_python
    done = 0
    for piece in pieces:
        try:
            buffer = make(piece, errors)
        except TypeError as e:
            raise _offset_position(e, done) from None
        done += len(buffer)
        yield buffer


def to_buffers(texts: Any, normalize_text: bool, errors: str = "raise") -> list[TextBuffer]:
    """All of ``iter_buffers``: one buffer per Arrow chunk, one otherwise."""
    return list(iter_buffers(texts, normalize_text, errors))


def _pieces(texts: Iterable[Any], piece_docs: int | None) -> Iterator[list[Any]]:
    if piece_docs is None:
        yield texts if isinstance(texts, list) else list(texts)
        return
    if isinstance(texts, list):
        for start in range(0, max(len(texts), 1), piece_docs):
            yield texts[start : start + piece_docs]
        return
    iterator = iter(texts)
    first = True
    while (piece := list(islice(iterator, piece_docs))) or first:
        first = False
        yield piece


def _offset_position(error: TypeError, done: int) -> TypeError:
    """Renumber 'document i' in an error from one piece to its place in the whole input."""
    message = str(error)
    if done and message.startswith("document "):
        position, rest = message[len("document ") :].split(" ", 1)
        message = f"document {int(position) + done} {rest}"
    return TypeError(message)
