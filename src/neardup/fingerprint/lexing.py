"""Lexing source code on every core. pygments is Python (about 1 MB/s a core) and holds the
GIL, so threads cannot share the work: a large buffer's documents are cut into pieces of about
equal bytes, lexed in worker processes, and the pieces' token buffers joined in order.

The workers are loky's reusable pool (the ``code`` extra): started once, about 0.6 s, and kept
for the next buffer. loky starts them by fork and exec, so, unlike multiprocessing's spawn and
forkserver, it never runs the caller's script again in a worker (a script without an
``if __name__ == "__main__"`` guard would run once a worker).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np

from .._extras import require
from .text_buffers import TextBuffer, chunk_bounds

TokenBuffer = tuple[np.ndarray, np.ndarray, np.ndarray]
"""Tokens as the kernels take them: (uint8 bytes; int64 token offsets into them; int64
document offsets into the tokens)."""
Names = Sequence[str | None]
Lex = Callable[[TextBuffer, Names | None], TokenBuffer]
"""Lexes a buffer's documents, named by their file names, into one :data:`TokenBuffer`; it
must pickle (a module-level function, or a ``functools.partial`` of one)."""

POOL_BYTES = 1 << 20
"""A buffer smaller than this is lexed here: the pool's round trip would cost more."""
IDLE_SECONDS = 300
"""The pool's workers stop after this long without work."""


def lexed(buffer: TextBuffer, names: Names | None, lex: Lex, workers: int) -> TokenBuffer:
    """``lex(buffer, names)``, on ``workers`` processes when the buffer is large enough to
    gain by it: the same tokens in the same order either way."""
    size = int(buffer.offsets[-1] - buffer.offsets[0])
    if workers < 2 or len(buffer) < 2 or size < POOL_BYTES:
        return lex(buffer, names)
    require("code", "loky", needed_by="features='code' on more than one core")
    from loky import get_reusable_executor

    executor = get_reusable_executor(max_workers=workers, timeout=IDLE_SECONDS)
    futures = []
    for lo, hi in itertools.pairwise(chunk_bounds(buffer.offsets, workers).tolist()):
        piece_names = None if names is None else list(names[lo:hi])
        futures.append(executor.submit(lex, buffer.slice(lo, hi), piece_names))
    return joined([future.result() for future in futures])


def joined(parts: Sequence[TokenBuffer]) -> TokenBuffer:
    """One token buffer of ``parts``' documents in turn."""
    if not parts:
        return np.zeros(0, np.uint8), np.zeros(1, np.int64), np.zeros(1, np.int64)
    data = np.concatenate([part[0] for part in parts])
    byte_starts = np.cumsum([0] + [len(part[0]) for part in parts[:-1]])
    token_starts = np.cumsum([0] + [len(part[1]) - 1 for part in parts[:-1]])
    token_offsets = np.concatenate(
        [np.zeros(1, np.int64)] + [part[1][1:] + start for part, start in zip(parts, byte_starts)]
    )
    doc_offsets = np.concatenate(
        [np.zeros(1, np.int64)] + [part[2][1:] + start for part, start in zip(parts, token_starts)]
    )
    return data, token_offsets, doc_offsets
