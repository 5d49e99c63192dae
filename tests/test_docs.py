"""Every code block of README.md and docs/*.md runs here, so that the docs stay true.

A fenced block's info string says what it is (CONTRIBUTING.md repeats this for writers):

- ``python``: executed. The Python blocks of one document share a namespace, in order.
- ``sh``: each command runs: ``neardup ...`` in-process through ``neardup.cli.main`` (its exit
  status must be 0, and every file it is told to write must exist afterwards); ``curl ...`` as
  a process, in ``service`` blocks only; a ``pip install`` before ``&&`` is the environment
  this test already runs in. Any other command fails the test until the block is marked.
- ``text``: output or a file's content, shown and never run.
- A second word marks the block: ``no-run`` (it cannot run in a test: a pip install, a remote
  cluster, a server that runs until stopped; the prose says so), ``spark`` (runs in
  test_spark_blocks, on a local Spark), ``service`` (runs in test_service_blocks against a real
  ``neardup serve`` the test starts; ``http://127.0.0.1:8000`` in the block means it).

Blocks run in a temporary folder holding the example inputs the docs name (``pages.jsonl``
and its kin, made by ``example_inputs``); the unmarked blocks of one document run in one folder,
in order, so a block may read what an earlier one wrote. Spark and service blocks run in a
fresh folder of their own.
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LANGUAGES = {"python", "sh", "text"}
MARKS = {"no-run", "spark", "service"}
DOC_URL = "http://127.0.0.1:8000"
WRITES = {"-o", "--output", "--clusters", "--pairs", "--save-index"}
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


def _group(doc: Path, mark: str | None) -> list[Block]:
    """The runnable blocks of ``doc`` under ``mark`` (None: the unmarked ones)."""
    name = str(doc.relative_to(ROOT))
    return [
        b
        for b in ALL_BLOCKS
        if b.doc == name
        and b.language != "text"
        and "no-run" not in b.marks
        and (mark in b.marks if mark else not b.marks & {"spark", "service"})
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
    crawl = folder / "crawl"
    crawl.mkdir()
    half = len(lines) // 2
    with gzip.open(crawl / "part-0.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(lines[:half])
    (crawl / "part-1.jsonl").write_text("".join(lines[half:]), "utf-8")


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    example_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


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


# -- the tests -----------------------------------------------------------------------------------


def test_every_block_says_what_it_is():
    """No block is skipped silently: each has a known language and known marks."""
    assert ALL_BLOCKS, "no code blocks found"
    for block in ALL_BLOCKS:
        assert block.language in LANGUAGES, (
            f"{block.where}: info string {block.language!r}: use one of {sorted(LANGUAGES)}"
        )
        assert block.marks <= MARKS, f"{block.where}: unknown marks {sorted(block.marks - MARKS)}"
        if block.language == "text":
            assert not block.marks, f"{block.where}: a text block is never run; it needs no mark"


def test_blocks_are_split_into_commands():
    block = Block(
        "x.md", 1, "sh", frozenset(), 'pip install . && neardup a \\\n  --b "c d"  # note\nneardup e\n'
    )
    assert _commands(block) == [["pip", "install", "."], ["neardup", "a", "--b", "c d"], ["neardup", "e"]]


def test_the_readme_keeps_its_two_commands():
    """The install-and-run line of the quick start, and the test command CI runs (.ci/run)."""
    readme = (ROOT / "README.md").read_text("utf-8")
    assert "pip install . && neardup dedup --example" in readme
    assert 'pip install -e ".[dev]" && python -m pytest' in readme
    ci = (ROOT / ".ci" / "run").read_text("utf-8").splitlines()
    assert 'pip install -e ".[dev]"' in ci and "python -m pytest" in ci


def test_links_between_docs_resolve():
    """Every relative link of README.md, CONTRIBUTING.md, CHANGELOG.md and docs/ names a file."""
    for path in [*DOCS, ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", ROOT / "benchmarks" / "README.md"]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text("utf-8")):
            if not re.match(r"[a-z]+:", target):
                assert (path.parent / target).exists(), f"{path.relative_to(ROOT)}: link to missing {target}"


@pytest.mark.slow
@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_blocks(doc, workdir):
    for module in ("matplotlib", "pandas"):  # the examples draw a report and show DataFrames
        pytest.importorskip(module, reason=f"the docs' examples need {module}: pip install -e '.[dev]'")
    blocks = _group(doc, None)
    namespace: dict = {"__name__": "__docs__"}
    for block in blocks:
        run_block(block, namespace)


SPARK_DOCS = [doc for doc in DOCS if _group(doc, "spark")]
SERVICE_DOCS = [doc for doc in DOCS if _group(doc, "service")]


@pytest.mark.spark
@pytest.mark.parametrize("doc", SPARK_DOCS, ids=lambda p: p.name)
def test_spark_blocks(doc, workdir, monkeypatch):
    pytest.importorskip("pyspark", reason="the Spark examples need pip install 'neardup[spark]'")
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)  # the workers import this neardup
    namespace: dict = {"__name__": "__docs__"}
    try:
        for block in _group(doc, "spark"):
            run_block(block, namespace)
    finally:
        from pyspark import SparkContext

        if SparkContext._active_spark_context is not None:
            SparkContext._active_spark_context.stop()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def service(tmp_path):
    """A real ``neardup serve`` on a free loopback port, with default settings."""
    httpx = pytest.importorskip("httpx", reason="the service examples need pip install 'neardup[serve]'")
    pytest.importorskip("fastapi", reason="the service examples need pip install 'neardup[serve]'")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "NEARDUP_TOKEN"}
    argv = [sys.executable, "-m", "neardup", "serve", "--data", str(tmp_path / "seen"), "--port", str(port)]
    process = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, (
                f"neardup serve exited: {process.stderr.read() if process.stderr else ''}"
            )
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "neardup serve did not answer /healthz within 60 s"
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stderr is not None:
            process.stderr.close()


@pytest.mark.service
@pytest.mark.slow
@pytest.mark.parametrize("doc", SERVICE_DOCS, ids=lambda p: p.name)
def test_service_blocks(doc, workdir, service):
    namespace: dict = {"__name__": "__docs__"}
    for block in _group(doc, "service"):
        run_block(block, namespace, url=service)
