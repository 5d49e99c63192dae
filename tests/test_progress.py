"""Progress: plain lines when not on a terminal, a bar on one, nothing when disabled; the
stage times are kept in every case."""

from __future__ import annotations

import io

from neardup._progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def run_stage(progress: Progress) -> None:
    with progress.stage("read", total=4 * 2**20) as stage:
        for step in range(1, 5):
            stage.update(step * 2**20, 10)


def test_plain_lines_off_a_terminal():
    out = io.StringIO()
    progress = Progress(out, interval=0.0)
    run_stage(progress)
    lines = out.getvalue().splitlines()
    assert len(lines) == 4
    assert lines[-1].startswith("neardup: read: 40 docs; 4 MiB, ")
    assert "100%, about 0 s left" in lines[-1]
    assert set(progress.seconds) == {"read"}


def test_a_bar_on_a_terminal_and_nothing_when_disabled():
    terminal = Terminal()
    run_stage(Progress(terminal))
    assert "\r" in terminal.getvalue() and "read" in terminal.getvalue()
    quiet = io.StringIO()
    progress = Progress(quiet, enabled=False, interval=0.0)
    run_stage(progress)
    assert quiet.getvalue() == "" and "read" in progress.seconds
