"""Log templates: neardup beside drain3 and Brain, accuracy and speed, in one run.

Data:
- LogHub-2k (Zhu et al., ISSRE 2023; https://github.com/logpai/loghub): the labelled samples
  in ../shared/data/loghub-2k/ (research licence: read from there, never copied here). Every
  tool reads each line's message (LogHub's ``Content``: the line after its header), as
  LogHub's own evaluation does; one configuration serves every system.
- A generated log: 36 templates in the style of HDFS, OpenSSH, Apache and Spark logs, with
  variables of every kind the masks name (numbers, hex, IPs, paths, UUIDs, times, hosts,
  sizes) and words the masks cannot see (user names), labelled by the template that made it.

Measures: group accuracy (a line is right when the lines sharing its template are exactly
those sharing its label), template accuracy (the share of lines whose template reads as its
label, ``<*>`` for variables; LogHub-2k only), lines per second in one process, and end to
end (``neardup logs`` on a file, start-up and writing included, beside a drain3 script doing
the same), with peak memory as the lines grow 10x.

    python benchmarks/bench_logs.py            # LogHub-2k and 1M generated lines
    python benchmarks/bench_logs.py --quick    # LogHub-2k and 100k generated lines

Peers (pip install drain3 logparser3): drain3 with its defaults, and given neardup's masked
lines (the same masking); Brain (logparser3) with its defaults, and with its own per-system
settings (patterns, delimiters, threshold), read from its installed benchmark script.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import csv
import gzip
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "loghub-2k"
SYSTEMS = ["HDFS", "Hadoop", "Spark", "Zookeeper", "BGL", "HPC", "Thunderbird", "OpenSSH"]


# --- measures -------------------------------------------------------------------------


def group_accuracy(predicted: list, labels: list) -> float:
    """The share of lines whose predicted group is exactly their label's group."""
    by_prediction, by_label = defaultdict(set), defaultdict(set)
    for i, (p, t) in enumerate(zip(predicted, labels)):
        by_prediction[p].add(i)
        by_label[t].add(i)
    right = 0
    for members in by_prediction.values():
        label = labels[next(iter(members))]
        if by_label[label] == members:
            right += len(members)
    return right / len(labels)


def template_accuracy(templates: list[str], labels: list[str]) -> float:
    """The share of lines whose template reads as its label (spacing aside)."""
    return sum(" ".join(t.split()) == " ".join(l.split()) for t, l in zip(templates, labels)) / len(labels)


# --- the tools ------------------------------------------------------------------------


def neardup_templates(lines: list[str]) -> tuple[list, list[str]]:
    from neardup import LogTemplates

    mined = LogTemplates()
    ids = mined.resolve(mined.add_lines(lines)).tolist()
    text = {t.id: t.text for t in mined.templates()}
    return ids, [text[i] for i in ids]


def drain3_templates(lines: list[str], masked: bool = False) -> tuple[list, list[str]]:
    from drain3 import TemplateMiner
    from drain3.template_miner_config import TemplateMinerConfig

    if masked:
        from neardup.logs.masking import Masker

        lines = Masker().keys(lines)
    config = TemplateMinerConfig()
    config.profiling_enabled = False
    miner = TemplateMiner(config=config)
    ids = [miner.add_log_message(line)["cluster_id"] for line in lines]
    text = {c.cluster_id: c.get_template() for c in miner.drain.clusters}
    return ids, [text[i] for i in ids]


def brain_templates(lines: list[str], settings: dict | None = None) -> tuple[list, list[str]]:
    from logparser.Brain import LogParser

    settings = settings or {}
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "x.log").write_text("".join(line.replace("\n", " ") + "\n" for line in lines))
        parser = LogParser(
            logname="x",
            log_format="<Content>",
            indir=folder,
            outdir=folder,
            rex=settings.get("regex", []),
            delimeter=settings.get("delimiter", []),
            threshold=settings.get("theshold", 2),  # sic: the peer's spelling
        )
        with contextlib.redirect_stdout(io.StringIO()):
            parser.parse("x.log")
        with open(Path(folder, "x.log_structured.csv"), encoding="utf-8") as f:
            templates = [row["EventTemplate"] for row in csv.DictReader(f)]
    return templates, templates


def brain_settings() -> dict:
    """Brain's per-system settings, read (not run) from its installed benchmark script."""
    import logparser.Brain

    source = Path(logparser.Brain.__file__).with_name("benchmark.py").read_text()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "benchmark_settings":
            return ast.literal_eval(node.value)
    raise RuntimeError("Brain's benchmark settings not found")


# --- the generated log ----------------------------------------------------------------

_USERS = ["admin", "oracle", "guest", "test", "support", "webmaster", "postgres", "ubuntu", "git", "deploy"]
_HOSTS = ["example.com", "mail.example.org", "db.internal.net", "cdn.example.co.uk", "api.service.io"]
_MODULES = ["scheduler", "storage", "network", "auth", "cache"]


def _variables(rng: random.Random) -> dict:
    octets = [rng.randrange(1, 255) for _ in range(4)]
    return {
        "int": rng.randrange(0, 100000),
        "small": rng.randrange(0, 16),
        "hex": f"0x{rng.getrandbits(32):08x}",
        "ip": ".".join(map(str, octets)),
        "port": rng.randrange(1024, 65536),
        "path": "/".join(
            [
                "",
                rng.choice(["var", "data", "srv"]),
                rng.choice(["log", "tmp", "app"]),
                f"part-{rng.randrange(10000):05d}.{rng.choice(['gz', 'json', 'bin'])}",
            ]
        ),
        "uuid": "-".join(f"{rng.getrandbits(4 * n):0{n}x}" for n in (8, 4, 4, 4, 12)),
        "time": f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:"
        f"{rng.randrange(60):02d}:{rng.randrange(60):02d}.{rng.randrange(1000):03d}Z",
        "host": rng.choice(_HOSTS),
        "user": rng.choice(_USERS),
        "size": f"{rng.randrange(1, 900)}.{rng.randrange(10)} {rng.choice(['KB', 'MB', 'GB'])}",
        "ms": f"{rng.randrange(1, 5000)} ms",
        "blk": f"blk_{rng.choice(['', '-'])}{rng.getrandbits(62)}",
        "module": rng.choice(_MODULES),
    }


GENERATED = [
    "Receiving block {blk} src: /{ip}:{port} dest: /{ip}:{port}",
    "Received block {blk} of size {int} from /{ip}",
    "PacketResponder {small} for block {blk} terminating",
    "BLOCK* NameSystem.addStoredBlock: blockMap updated: {ip}:{port} is added to {blk} size {int}",
    "Deleting block {blk} file {path}",
    "Verification succeeded for {blk}",
    "Accepted password for {user} from {ip} port {port} ssh2",
    "Failed password for {user} from {ip} port {port} ssh2",
    "Failed password for invalid user {user} from {ip} port {port} ssh2",
    "Invalid user {user} from {ip}",
    "Connection closed by {ip} [preauth]",
    "Received disconnect from {ip}: 11: Bye Bye [preauth]",
    "pam_unix(sshd:session): session opened for user {user} by (uid={int})",
    "pam_unix(sshd:session): session closed for user {user}",
    "reverse mapping checking getaddrinfo for {host} [{ip}] failed - POSSIBLE BREAK-IN ATTEMPT!",
    '{ip} - - "GET {path} HTTP/1.1" 200 {int}',
    '{ip} - - "POST {path} HTTP/1.1" 201 {int}',
    '{ip} - - "DELETE {path} HTTP/1.1" 204 {int}',
    "jk2_init() Found child {int} in scoreboard slot {small}",
    "workerEnv.init() ok {path}",
    "mod_jk child workerEnv in error state {small}",
    "Block {int} stored as bytes in memory (estimated size {size}, free {size})",
    "Block {int} stored as values in memory (estimated size {size}, free {size})",
    "Finished task {int}.0 in stage {small}.0 (TID {int}) in {ms} on {host} (executor {small}) ({int}/{int})",
    "Starting task {int}.0 in stage {small}.0 (TID {int}, {host}, executor {small}, partition {int}, "
    "PROCESS_LOCAL, {int} bytes)",
    "Told master about block broadcast_{small}_piece0",
    "Found block rdd_{int}_{small} locally",
    "Request {uuid} from {ip} took {ms}",
    "Request {uuid} failed after {ms}: timeout connecting to {host}:{port}",
    "Job {uuid} started at {time} by {user}",
    "Job {uuid} finished at {time} with status {hex}",
    "Cache miss for key {hex} in module {module}",
    "Cache hit for key {hex} in module {module}",
    "Checkpoint written to {path} ({size})",
    "Checkpoint restored from {path} in {ms}",
    "Heartbeat from {host} at {time}",
]


def generated_log(count: int, seed: int = 0) -> tuple[list[str], list[int]]:
    rng = random.Random(seed)
    weights = [rng.paretovariate(1.0) for _ in GENERATED]  # skewed, as real logs are
    labels = rng.choices(range(len(GENERATED)), weights=weights, k=count)
    return [GENERATED[t].format_map(_Fresh(rng)) for t in labels], labels


class _Fresh(dict):
    """A fresh value for every placeholder, even one named twice in a template."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__()
        self.rng = rng

    def __missing__(self, name: str) -> object:
        return _variables(self.rng)[name]


# --- runs -----------------------------------------------------------------------------


def loghub(system: str) -> tuple[list[str], list[str], list[str]]:
    with gzip.open(SHARED / f"{system}_2k.log_structured.csv.gz", "rt", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return [r["Content"] for r in rows], [r["EventId"] for r in rows], [r["EventTemplate"] for r in rows]


def timed(tool, lines: list[str]) -> tuple[tuple[list, list[str]], float]:
    started = time.perf_counter()
    answer = tool(lines)
    return answer, time.perf_counter() - started


def accuracy_table(results: dict) -> None:
    tools = list(next(iter(results.values())))
    print(f"{'system':<12}" + "".join(f"{tool:>22}" for tool in tools))
    for system, row in results.items():
        cells = (f"{row[t]['group']:>11.3f} / {row[t].get('template', 0):.3f}" for t in tools)
        print(f"{system:<12}" + "".join(cells))
    for t in tools:
        group = sum(row[t]["group"] for row in results.values()) / len(results)
        template = sum(row[t].get("template", 0) for row in results.values()) / len(results)
        print(f"  {t}: average group accuracy {group:.4f}, template accuracy {template:.4f}")


def run_loghub(report: dict) -> None:
    if not SHARED.exists():
        print(f"LogHub-2k not found at {SHARED}: skipping its systems")
        return
    have_brain = _importable("logparser.Brain")
    settings = brain_settings() if have_brain else {}
    tools = {
        "neardup": neardup_templates,
        "drain3": drain3_templates,
        "drain3+masks": lambda lines: drain3_templates(lines, masked=True),
    }
    if have_brain:
        tools["brain"] = brain_templates
        tools["brain tuned"] = None  # per system, below
    else:
        print("logparser3 not installed (pip install logparser3): Brain left out")
    results = {}
    for system in SYSTEMS:
        lines, labels, label_templates = loghub(system)
        row = {}
        for name, tool in tools.items():
            if name == "brain tuned":
                tool = lambda lines, s=settings[system]: brain_templates(lines, s)  # noqa: E731
            (ids, templates), seconds = timed(tool, lines)
            row[name] = {
                "group": group_accuracy(ids, labels),
                "template": template_accuracy(templates, label_templates),
                "lines_per_s": len(lines) / seconds,
            }
        results[system] = row
    print("\nLogHub-2k (message after the header; group accuracy / template accuracy):")
    accuracy_table(results)
    report["loghub"] = results


def run_generated(report: dict, count: int) -> None:
    lines, labels = generated_log(count)
    print(f"\ngenerated log: {count:,} lines of {len(GENERATED)} templates")
    row = {}
    for name, tool in {"neardup": neardup_templates, "drain3": drain3_templates}.items():
        (ids, _), seconds = timed(tool, lines)
        row[name] = {"group": group_accuracy(ids, labels), "lines_per_s": count / seconds}
        print(f"  {name:<8} group accuracy {row[name]['group']:.4f}, {count / seconds:,.0f} lines/s")
    ratio = row["neardup"]["lines_per_s"] / row["drain3"]["lines_per_s"]
    print(f"  in one process: neardup {ratio:.1f}x drain3's lines/s")
    report["generated"] = row
    end_to_end(report, lines, count)


_DRAIN_SCRIPT = """
import sys, csv
from drain3 import TemplateMiner
from drain3.template_miner_config import TemplateMinerConfig
config = TemplateMinerConfig(); config.profiling_enabled = False
miner = TemplateMiner(config=config)
with open(sys.argv[1], encoding="utf-8") as f, open(sys.argv[2], "w", newline="") as out:
    writer = csv.writer(out); writer.writerow(["line", "template_id"])
    for n, line in enumerate(f, 1):
        writer.writerow([n, miner.add_log_message(line.rstrip("\\n"))["cluster_id"]])
with open(sys.argv[3], "w", newline="") as out:
    writer = csv.writer(out); writer.writerow(["template_id", "template", "count"])
    for c in miner.drain.clusters:
        writer.writerow([c.cluster_id, c.get_template(), c.size])
"""


def end_to_end(report: dict, lines: list[str], count: int) -> None:
    """``neardup logs`` on a file beside a drain3 script doing the same, and memory as the
    lines grow 10x."""
    with tempfile.TemporaryDirectory() as folder:
        rows = {}
        warm = Path(folder, "warm-up.log")  # untimed: the bytecode cached, as installed
        warm.write_text("".join(line + "\n" for line in lines[:100]), encoding="utf-8")
        out = ["-o", str(Path(folder, "w.csv")), "--templates", str(Path(folder, "w-t.csv"))]
        _child([sys.executable, "-m", "neardup", "logs", str(warm), "-q", *out])
        for size in (count // 10, count):
            log = Path(folder, f"app-{size}.log")
            log.write_text("".join(line + "\n" for line in lines[:size]), encoding="utf-8")
            neardup = [
                sys.executable,
                "-m",
                "neardup",
                "logs",
                str(log),
                "-q",
                "-o",
                str(Path(folder, "lines.csv")),
                "--templates",
                str(Path(folder, "t.csv")),
            ]
            drain = [
                sys.executable,
                "-c",
                _DRAIN_SCRIPT,
                str(log),
                str(Path(folder, "d-lines.csv")),
                str(Path(folder, "d-t.csv")),
            ]
            rows[size] = {"neardup": _child(neardup), "drain3": _child(drain)}
            n, d = rows[size]["neardup"], rows[size]["drain3"]
            print(
                f"  end to end, {size:,} lines: neardup {n['seconds']:.1f} s ({n['peak_mb']:.0f} MB peak), "
                f"drain3 {d['seconds']:.1f} s ({d['peak_mb']:.0f} MB peak): "
                f"{d['seconds'] / n['seconds']:.1f}x"
            )
        # Memory as lines grow 10x, from ``count`` (past one 16 MB read block: below it the
        # block, not the log, grows) to ten copies of it, neardup alone.
        log = Path(folder, "app-10x.log")
        with open(Path(folder, f"app-{count}.log"), "rb") as one, open(log, "wb") as ten:
            block = one.read()
            for _ in range(10):
                ten.write(block)
        neardup[4] = str(log)
        tenfold = _child(neardup)
        small = rows[count]["neardup"]
        print(
            f"  neardup, {10 * count:,} lines: {tenfold['seconds']:.1f} s, {tenfold['peak_mb']:.0f} MB peak: "
            f"{tenfold['peak_mb'] / small['peak_mb']:.2f}x the memory of {count:,} lines"
        )
        report["end_to_end"] = {str(size): row for size, row in rows.items()}
        report["end_to_end"][str(10 * count)] = {"neardup": tenfold}


def _child(command: list[str]) -> dict:
    """Seconds and peak resident memory of a child process: its VmHWM, read while it runs
    (``ru_maxrss`` would be this process's: Linux keeps the size of the memory a child was
    forked with across its exec). The child may cache its modules' bytecode, as an install
    does (pip compiles it): where PYTHONDONTWRITEBYTECODE is set, every start would compile
    neardup's sources again (an editable install's), a cost no installed copy has."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    started = time.perf_counter()
    peak_kb = 0
    with subprocess.Popen(command, env=env) as child:
        while child.poll() is None:
            peak_kb = max(peak_kb, _high_water_kb(child.pid))
            time.sleep(0.02)
    if child.returncode:
        raise RuntimeError(f"{command[:4]} failed with {child.returncode}")
    return {"seconds": time.perf_counter() - started, "peak_mb": peak_kb / 1024}


def _high_water_kb(pid: int) -> int:
    """The peak resident memory of process ``pid`` so far (kB), 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def _importable(name: str) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="100k generated lines instead of 1M")
    parser.add_argument("--lines", type=int, help="generated lines (default: 1M, 100k with --quick)")
    args = parser.parse_args()
    if not _importable("drain3"):
        sys.exit("bench_logs needs drain3 (pip install drain3; logparser3 adds Brain)")
    report: dict = {}
    run_loghub(report)
    run_generated(report, args.lines or (100_000 if args.quick else 1_000_000))
    print(json.dumps({"bench": "logs", **report}, default=float))


if __name__ == "__main__":
    main()
