"""Produce ahead in a thread: reading and decoding (pyarrow, the line kernels: they release
the GIL) overlaps the work done with what was read."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

_DONE = object()


def prefetch(items: Iterator[Any], depth: int = 2) -> Iterator[Any]:
    """``items``, produced up to ``depth`` ahead in a thread (pyarrow and the line kernels
    release the GIL, so reading overlaps the caller's work). An error in the thread is raised
    here; stopping early stops the thread."""
    ready: queue.Queue = queue.Queue(depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        ready.put((item, None), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            ready.put((_DONE, None))
        except BaseException as e:  # handed to the consumer, raised there
            ready.put((_DONE, e))

    thread = threading.Thread(target=produce, name="neardup-reader", daemon=True)
    thread.start()
    try:
        while True:
            item, error = ready.get()
            if error is not None:
                raise error
            if item is _DONE:
                return
            yield item
    finally:
        stop.set()
