"""Arrow arrays made from numpy buffers, for a command's start-up path.

``pa.array`` (and every compute call given a Python value) imports pandas where it is
installed, 0.15-0.3 s: a third of a small ``neardup logs`` run. These build the same arrays
from buffers, which pyarrow takes as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa


def int64_array(values: np.ndarray) -> pa.Array:
    """``values`` as an int64 array."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def string_array(texts: Sequence[str]) -> pa.Array:
    """``texts`` as a large string array."""
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), out=offsets[1:])
    data = "".join(texts).encode("utf-8")
    if len(data) != offsets[-1]:  # not all ASCII: a character's length is not its bytes'
        encoded = [text.encode("utf-8") for text in texts]
        np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(texts)), out=offsets[1:])
        data = b"".join(encoded)
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    return pa.Array.from_buffers(pa.large_string(), len(texts), buffers)


def prefixed(prefix: str, numbers: np.ndarray) -> pa.Array:
    """``f"{prefix}{n}"`` for each of ``numbers``, as a large string array."""
    from .._kernels.lines import prefixed_decimals

    head = np.frombuffer(prefix.encode("utf-8"), dtype=np.uint8)
    data, offsets = prefixed_decimals(head, np.ascontiguousarray(numbers, dtype=np.int64))
    return pa.Array.from_buffers(
        pa.large_string(), len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
