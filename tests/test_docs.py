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
  ``neardup serve`` the test starts; ``http://127.0.0.1:8000`` in the block means it),
  ``jaccard-service`` (the same, against a ``neardup serve --jaccard 0.8``),
  ``passages-service`` (against a ``neardup serve --passages``).

Blocks run in a temporary folder holding the example inputs the docs name (``pages.jsonl``
and its kin, made by ``example_inputs``); the unmarked blocks of one document run in one folder,
in order, so a block may read what an earlier one wrote. Spark and service blocks run in a
fresh folder of their own.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time

import pytest
from docs_blocks import (
    ALL_BLOCKS,
    DOCS,
    LANGUAGES,
    MARKS,
    ROOT,
    Block,
    _commands,
    example_inputs,
    group,
    run_block,
)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    example_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


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
    blocks = group(doc, None)
    namespace: dict = {"__name__": "__docs__"}
    for block in blocks:
        run_block(block, namespace)


SPARK_DOCS = [doc for doc in DOCS if group(doc, "spark")]
SERVICE_DOCS = [doc for doc in DOCS if group(doc, "service")]
JACCARD_SERVICE_DOCS = [doc for doc in DOCS if group(doc, "jaccard-service")]
PASSAGES_SERVICE_DOCS = [doc for doc in DOCS if group(doc, "passages-service")]


@pytest.mark.spark
@pytest.mark.parametrize("doc", SPARK_DOCS, ids=lambda p: p.name)
def test_spark_blocks(doc, workdir):
    """In a process of its own, whose JVM starts in the folder of the inputs: Spark resolves a
    relative path against the folder its JVM started in, and the blocks build their own session."""
    pytest.importorskip("pyspark", reason="the Spark examples need pip install 'neardup[spark]'")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}  # the workers import this neardup
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "docs_blocks", str(doc), "spark"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-4000:]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def service(tmp_path):
    """A real ``neardup serve`` on a free loopback port, with default settings."""
    yield from _serve(tmp_path)


@pytest.fixture
def jaccard_service(tmp_path):
    """A real ``neardup serve --jaccard 0.8`` on a free loopback port."""
    yield from _serve(tmp_path, "--jaccard", "0.8")


@pytest.fixture
def passages_service(tmp_path):
    """A real ``neardup serve --passages`` on a free loopback port."""
    yield from _serve(tmp_path, "--passages")


def _serve(tmp_path, *options: str):
    httpx = pytest.importorskip("httpx", reason="the service examples need pip install 'neardup[serve]'")
    pytest.importorskip("fastapi", reason="the service examples need pip install 'neardup[serve]'")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "NEARDUP_TOKEN"}
    argv = [
        sys.executable,
        "-m",
        "neardup",
        "serve",
        "--data",
        str(tmp_path / "seen"),
        "--port",
        str(port),
        *options,
    ]
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
    for block in group(doc, "service"):
        run_block(block, namespace, url=service)


@pytest.mark.service
@pytest.mark.slow
@pytest.mark.parametrize("doc", JACCARD_SERVICE_DOCS, ids=lambda p: p.name)
def test_jaccard_service_blocks(doc, workdir, jaccard_service):
    namespace: dict = {"__name__": "__docs__"}
    for block in group(doc, "jaccard-service"):
        run_block(block, namespace, url=jaccard_service)


@pytest.mark.service
@pytest.mark.slow
@pytest.mark.parametrize("doc", PASSAGES_SERVICE_DOCS, ids=lambda p: p.name)
def test_passages_service_blocks(doc, workdir, passages_service):
    namespace: dict = {"__name__": "__docs__"}
    for block in group(doc, "passages-service"):
        run_block(block, namespace, url=passages_service)
