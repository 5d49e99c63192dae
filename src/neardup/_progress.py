"""Progress of a long run, per stage: a bar (tqdm) on a terminal, a plain line every few
seconds otherwise (a log file stays readable), nothing when quiet. Stage times are kept
either way, for the summary."""

from __future__ import annotations

import sys
import time
from typing import IO, Any


class Progress:
    """Reports stages to ``stream``.

    Args:
        stream: where to write (default stderr); None or ``enabled=False`` writes nothing.
        interval: seconds between plain lines when ``stream`` is not a terminal.
    """

    def __init__(self, stream: IO[str] | None = None, enabled: bool = True, interval: float = 10.0) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.interval = interval
        self.seconds: dict[str, float] = {}

    def stage(self, name: str, total: int | None = None, unit: str = "B") -> Stage:
        """A stage of ``total`` units (bytes by default; None if unknown) about to start."""
        return Stage(self, name, total, unit)

    def record(self, name: str, seconds: float | None) -> None:
        """A stage that ran before this Progress began (the kernels' compilation), if it ran."""
        if seconds is not None:
            self.seconds[name] = seconds


class Stage:
    """One stage: ``update(done, items)`` as it goes; a context manager that records its time."""

    def __init__(self, progress: Progress, name: str, total: int | None, unit: str) -> None:
        self.progress = progress
        self.name = name
        self.total = total
        self.unit = unit
        self.done = 0
        self.items = 0
        self._bar: Any = None
        self._start = self._last = time.perf_counter()

    def __enter__(self) -> Stage:
        progress = self.progress
        if progress.enabled and _is_terminal(progress.stream):
            from tqdm import tqdm

            self._bar = tqdm(
                total=self.total,
                desc=self.name,
                unit=self.unit,
                unit_scale=self.unit == "B",
                unit_divisor=1024 if self.unit == "B" else 1000,
                file=progress.stream,
                leave=False,
                dynamic_ncols=True,
            )
        return self

    def update(self, done: int, items: int = 0) -> None:
        """``done`` units so far (absolute), ``items`` more documents."""
        self.items += items
        if self._bar is not None:
            self._bar.set_postfix_str(f"{self.items:,} docs", refresh=False)  # shown by update
            self._bar.update(done - self.done)
        self.done = done
        now = time.perf_counter()
        if self._bar is None and self.progress.enabled and now - self._last >= self.progress.interval:
            self._last = now
            self.progress.stream.write(f"neardup: {self.name}: {self._status(now)}\n")
            self.progress.stream.flush()

    def _status(self, now: float) -> str:
        elapsed = max(now - self._start, 1e-9)
        parts = [f"{self.items:,} docs"] if self.items else []
        if self.unit == "B":
            parts.append(f"{self.done / 2**20:,.0f} MiB, {self.done / 2**20 / elapsed:,.0f} MiB/s")
        if self.total and self.done:
            eta = elapsed * (self.total - self.done) / self.done
            parts.append(f"{100 * self.done / self.total:.0f}%, about {eta:,.0f} s left")
        return "; ".join(parts) or f"{elapsed:.0f} s"

    def __exit__(self, kind: Any, *_: Any) -> None:
        if self._bar is not None:
            self._bar.close()
        self.progress.seconds[self.name] = time.perf_counter() - self._start


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
