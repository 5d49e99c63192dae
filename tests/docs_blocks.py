"""The machinery of tests/test_docs.py: the fenced blocks of README.md and docs/*.md, the
example inputs they name, and how each block runs (test_docs.py's docstring says the rules).

A module of its own, not a test module, so that the Spark blocks can run in a process of their
own: ``python -m docs_blocks DOC MARK`` in the folder of the inputs (Spark resolves a relative
path against the folder its JVM started in, so that JVM must start there).
"""

from __future__ import annotations

import gzip
import itertools
import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LANGUAGES = {"python", "sh", "text"}
MARKS = {"no-run", "spark", "service", "jaccard-service", "passages-service"}
SERVERS = {"spark", "service", "jaccard-service", "passages-service"}
"""The marks of blocks that run against something a test starts, not with the unmarked ones."""
DOC_URL = "http://127.0.0.1:8000"
WRITES = {"-o", "--output", "--clusters", "--pairs", "--save-index", "--common", "--documents"}
"""The options whose value is a file a command writes: it must exist after the command."""

FENCE = re.compile(r"^(`{3,})(.*)$")


@dataclass(frozen=True)
class Block:
    doc: str
    line: int
    language: str
    marks: frozenset[str]
    code: str

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def blocks_of(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, in order."""
    found, lines = [], path.read_text("utf-8").splitlines()
    name = str(path.relative_to(ROOT))
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        words = fence.group(2).split()
        start, body = i + 1, []
        i += 1
        while i < len(lines) and lines[i].rstrip() != fence.group(1):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise AssertionError(f"{name}:{start}: a ``` block is never closed")
        language = words[0] if words else ""
        found.append(Block(name, start, language, frozenset(words[1:]), "\n".join(body) + "\n"))
        i += 1
    return found


ALL_BLOCKS = [block for path in DOCS for block in blocks_of(path)]


def group(doc: Path, mark: str | None) -> list[Block]:
    """The runnable blocks of ``doc`` under ``mark`` (None: the unmarked ones)."""
    name = str(doc.relative_to(ROOT))
    return [
        b
        for b in ALL_BLOCKS
        if b.doc == name
        and b.language != "text"
        and "no-run" not in b.marks
        and (mark in b.marks if mark else not b.marks & SERVERS)
    ]


# -- the example inputs the docs name ------------------------------------------------------------

ORIGINALS = {
    "council": "The city council will vote on the new library budget at its meeting next Tuesday "
    "evening. Members of the public may speak for three minutes each, and written comments can be "
    "sent to the clerk until noon on Monday. The proposal adds two reading rooms, longer opening "
    "hours on weekends and a small fund for books in languages other than English. Supporters say "
    "the branch is full every afternoon; critics ask whether the city can afford the extra staff.",
    "weather": "Rain is expected across the northern valleys tomorrow, with clearing skies by the "
    "weekend. Farmers who planned to cut hay should wait until Saturday, when the ground will have "
    "dried. Temperatures stay mild for the season, between twelve and eighteen degrees, and the "
    "wind turns to the west on Friday night. Drivers on the mountain pass should expect fog in the "
    "early morning hours.",
    "bread": "To make the bread, mix the flour, salt and yeast in a large bowl, then add warm water "
    "a little at a time until the dough comes together. Knead it on a floured table for ten "
    "minutes, until it is smooth and springs back when pressed. Leave it covered in a warm place "
    "for an hour, shape it into a loaf, and bake it for forty minutes in a hot oven.",
    "train": "The night train leaves the capital at ten and reaches the coast a little after dawn. "
    "Sleeping cars have two or four berths, and the dining car serves soup, bread and tea until "
    "midnight. Tickets are cheaper when bought a month ahead, and children under six travel free "
    "on the lap of an adult. Bicycles may be carried in the last carriage for a small fee.",
    "museum": "The museum of natural history reopens on the first of May after two years of repairs "
    "to its roof and galleries. The skeleton of the great whale hangs again in the main hall, and a "
    "new room shows minerals from the hills around the town. Entry is free for residents on "
    "Sundays; guided tours for schools can be booked by telephone or at the front desk.",
    "garden": "Our community garden has twenty plots, each rented for a year to a family from the "
    "neighbourhood. Water comes from two rain tanks and a tap by the gate, and tools are kept in "
    "the green shed. Volunteers meet on the second Saturday of every month to mend paths, turn the "
    "compost and share seeds. New members are welcome; the waiting list is short this spring.",
}
# Copies as a crawl meets them: distance 0 (case, punctuation), 1-2 (a line of site furniture,
# one word), and one edit beyond the default radius of 3 bits (5 bits).
VARIANTS = {
    "council-mirror": ORIGINALS["council"].lower(),
    "council-share": ORIGINALS["council"] + " Share this page.",
    "bread-print": ORIGINALS["bread"].replace(",", ""),
    "train-old": ORIGINALS["train"].replace("night train", "old train"),
    "weather-warm": ORIGINALS["weather"].replace("mild", "warm"),
}


def example_pages() -> list[dict[str, str]]:
    """The documents of pages.jsonl: ``url`` and ``text``; the originals first."""
    return [
        {"url": f"https://{'news' if name in ORIGINALS else 'mirror'}.example/{name}", "text": text}
        for name, text in {**ORIGINALS, **VARIANTS}.items()
    ]


def example_log() -> list[str]:
    """The lines of app.log, the log docs/logs.md mines: four messages, their variables varied."""
    users = ["alice", "bob", "carol", "dave", "erin", "frank"]
    lines = []
    for i in range(24):
        ip = f"10.0.{i % 3}.{i * 7 % 250}"
        lines.append(f"Accepted password for {users[i % 6]} from {ip} port {40000 + i * 37} ssh2")
        if i % 2:
            lines.append(f"Connection closed by {ip} port {40000 + i * 37} [preauth]")
        if i % 3 == 0:
            lines.append(f"Received block blk_{9000 + i * 11} of size {1024 * (i + 1)} from /{ip}")
        if i % 4 == 0:
            lines.append(f"Served GET /static/app{i}.js in {3 + i} ms")
    return lines


def example_inputs(folder: Path) -> None:
    """Write the inputs the docs' examples name into ``folder``."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    pages = example_pages()
    lines = [json.dumps(page, ensure_ascii=False) + "\n" for page in pages]
    (folder / "pages.jsonl").write_text("".join(lines), "utf-8")
    table = pa.Table.from_pylist(pages)
    pq.write_table(table, folder / "pages.parquet")
    pacsv.write_csv(table, folder / "pages.csv")
    (folder / "docs.txt").write_text("".join(page["text"] + "\n" for page in pages), "utf-8")
    (folder / "app.log").write_text("".join(line + "\n" for line in example_log()), "utf-8")
    crawl = folder / "crawl"
    crawl.mkdir()
    half = len(lines) // 2
    with gzip.open(crawl / "part-0.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(lines[:half])
    (crawl / "part-1.jsonl").write_text("".join(lines[half:]), "utf-8")


# -- running a block -----------------------------------------------------------------------------


def _commands(block: Block) -> list[list[str]]:
    """The commands of a shell block: lines joined at a trailing backslash, comments dropped,
    split at ``&&``."""
    text = re.sub(r"\\\n", " ", block.code)
    commands = []
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        while words:
            cut = words.index("&&") if "&&" in words else len(words)
            commands.append(words[:cut])
            words = words[cut + 1 :]
    return commands


def _run_neardup(argv: list[str], block: Block) -> None:
    from neardup.cli import main

    status = main(argv)
    assert status == 0, f"{block.where}: `neardup {shlex.join(argv)}` exited {status}"
    for option, value in itertools.pairwise(argv):
        if option in WRITES:
            assert Path(value).exists(), f"{block.where}: `neardup {shlex.join(argv)}` wrote no {value}"


def run_block(block: Block, namespace: dict, url: str | None = None) -> None:
    """Run one block; ``url`` is the service's, for service blocks."""
    code = block.code.replace(DOC_URL, url) if url else block.code
    if block.language == "python":
        exec(compile(code, block.where, "exec"), namespace)
        return
    assert block.language == "sh", f"{block.where}: no way to run a {block.language!r} block"
    for words in _commands(Block(block.doc, block.line, block.language, block.marks, code)):
        if words[:2] == ["pip", "install"]:
            continue  # the environment this test runs in
        if words[0] == "neardup":
            _run_neardup(words[1:], block)
        elif words[0] == "curl" and url:
            done = subprocess.run(
                [*words, "--fail-with-body", "--silent", "--show-error"], capture_output=True
            )
            assert done.returncode == 0, (
                f"{block.where}: {shlex.join(words)}: {done.stdout!r} {done.stderr!r}"
            )
        else:
            raise AssertionError(
                f"{block.where}: `{shlex.join(words)}` cannot run in this test: "
                "mark the block ```sh no-run (and say why in the text) or use neardup commands"
            )


def rungroup(doc: Path, mark: str | None, url: str | None = None) -> None:
    """Run the blocks of ``doc`` under ``mark`` in order, in one namespace."""
    namespace: dict = {"__name__": "__docs__"}
    for block in group(doc, mark):
        run_block(block, namespace, url)


if __name__ == "__main__":
    rungroup(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None)
