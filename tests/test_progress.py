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


def test_verify_counts_the_bytes_it_reads_again_and_none_it_does_not(tmp_path):
    """A radius's check reads the texts it compares again: its stage counts the bytes up to
    the whole corpus. ``jaccard=`` holds the features from the first read: its check reads
    nothing and names no total (it used to show 0% of the corpus throughout)."""
    from neardup import dedup

    path = tmp_path / "docs.txt"
    texts = [f"the quick brown fox {i % 7} jumps over the lazy dog number {i % 7}" for i in range(60)]
    path.write_text("\n".join(texts) + "\n", encoding="utf-8")

    def verify_lines(**options: object) -> list[str]:
        out = io.StringIO()
        dedup(path, lines=True, progress=Progress(out, interval=0.0), **options)
        return [line for line in out.getvalue().splitlines() if line.startswith("neardup: verify: ")]

    again = verify_lines(verify=("jaccard", 0.5))
    assert again and "100%" in again[-1]
    held = verify_lines(jaccard=0.5)
    assert all("%" not in line for line in held)
