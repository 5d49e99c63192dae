"""``features="code"`` against prose features on a clone set made from the Python standard
library: which copies each finds within the Hamming radius, and how fast pygments lexes.

Corpus: ``--files`` source files of the running interpreter's standard library (``Lib/**/*.py``,
tests left out, 1-60 KB, an even sample by path) and, for each, three copies:

- type 1: comments and blank lines dropped, layout changed (tokens rewritten by ``tokenize``
  with a space between each, indents of 2 columns a level);
- type 2: every identifier (not a keyword or builtin) and every literal renamed, consistently
  within the file;
- type 3: about 10% of the statements changed (a statement deleted, one altered, one
  inserted after another), by ``ast``, so that the copy still parses.

Every fingerprint is compared with every other (all pairs). Recall of a type: the share of its
(original, copy) pairs within the radius; precision: the share of the pairs found within it
that are copies of one original (the standard library holds a few near-duplicates of its own,
counted as false). Radii: 3 and 6 bits. Lexing: pygments' Python lexer over the originals
(MB/s on one core), and the whole code fingerprint (lex + compiled).

Then what a user gets: the dedup job (``neardup.dedup``, as ``neardup dedup DIR --features
code``) over a folder of the clones, with code's defaults and with other radii and checks
beside them. Recall of a type: the share of originals whose copy the job put in their
cluster; precision: the share of the pairs within its clusters that are copies of one original;
files/s: the whole job (read, lex, join, check), all cores. ``--only jobs`` runs just this.
"links" is the precision of the pairs the job linked (each dropped file and the one kept for
it), comparable with a peer's pair precision. Where copydetect is installed (it is no
dependency), it runs over the same folder: its files/s, and its recall and pair precision by
threshold on the lesser of a pair's two similarities. Where ``node`` and ``npm`` are found,
so does Dolos 3.5.1 (``@dodona/dolos-lib``, installed once from the npm registry into
``~/.cache/neardup-bench``), by threshold on its pair similarity.

Passages (``--only passages``, or the default run): one function copied into each file,
as is, renamed, or renamed and re-laid, found by ``neardup.passages(features="code",
code_normalize="identifiers")``: recall, line ranges right within one line, and precision
(``_planted_functions.py`` says how each is counted).

    python benchmarks/bench_code.py --quick        # 60 files; about a minute
    python benchmarks/bench_code.py                # 300 files
    python benchmarks/bench_code.py --only passages
    python benchmarks/bench_code.py --only passages --show-false   # and each false passage

The last stdout line is ``RESULT {json}``.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import io
import json
import keyword
import os
import random
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
import tokenize
from pathlib import Path
from typing import Any

import numpy as np

import neardup

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _planted_functions import score as planted_functions_score

from _common import finish, machine_info

TYPES = ("type-1", "type-2", "type-3")
# Tests, and encodings/: its codec tables are generated copies of one another (type-2 clones
# of their own, which would count as false pairs).
LEFT_OUT = ("test", "site-packages", "idlelib", "encodings")
RADII = (3, 6)
CONFIGS: dict[str, dict[str, Any]] = {
    "prose (word-shingles, k=3)": {},
    "code, identifiers, 3 tokens": {"features": "code", "shingle_size": 3},
    "code, identifiers, 4 tokens": {"features": "code", "shingle_size": 4},
    "code, identifiers, 5 tokens": {"features": "code", "shingle_size": 5},
    "code, identifiers, 6 tokens": {"features": "code", "shingle_size": 6},
    "code, identifiers, 8 tokens": {"features": "code", "shingle_size": 8},
    "code, none, 5 tokens": {"features": "code", "code_normalize": "none", "shingle_size": 5},
}


def stdlib_files(n: int) -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    found = sorted(
        p
        for p in root.rglob("*.py")
        if not any(part.startswith(LEFT_OUT) for part in p.relative_to(root).parts)
        and 1_000 < p.stat().st_size < 60_000
    )
    step = max(1, len(found) // n)
    return found[::step][:n]


def _tokens(source: str) -> list[tokenize.TokenInfo]:
    return list(tokenize.generate_tokens(io.StringIO(source).readline))


def relaid(source: str, text_of: Any = None, layout: bool = True) -> str:
    """``source`` rewritten token by token: with ``layout``, comments and blank lines out,
    lines inside brackets or after a backslash joined, two spaces wherever there was space, and
    indents of 2 columns a level; without, the layout as it was. ``text_of(token)`` gives each
    token's new text (renames)."""
    out: list[str] = []
    depth, line, col = 0, 1, 0
    at_line_start = True
    for tok in _tokens(source):
        if tok.type == tokenize.INDENT:
            depth += 1
            continue
        if tok.type == tokenize.DEDENT:
            depth -= 1
            continue
        if tok.type == tokenize.ENDMARKER:
            break
        if layout and (tok.type == tokenize.COMMENT or tok.type == tokenize.NL):
            continue
        text = text_of(tok) if text_of else tok.string
        if not layout:  # the same gaps; a line break here is a backslash's (NL tokens carry the rest)
            (row, start) = tok.start
            out.append("\\\n" * (row - line) + " " * (start if row != line else start - col))
        elif at_line_start:
            out.append("  " * depth)
        elif tok.start != (line, col) and tok.type != tokenize.NEWLINE:
            out.append("  ")
        out.append(text)
        at_line_start = tok.type in (tokenize.NEWLINE, tokenize.NL)
        line, col = tok.end
        if tok.type in (tokenize.NEWLINE, tokenize.NL):
            line, col = line + 1, 0
    return "".join(out)


def type1(source: str) -> str:
    """Comments and blank lines dropped, layout changed."""
    return relaid(source)


KEEP_NAMES = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins)) | {"self", "cls"}


def type2(source: str) -> str:
    """Identifiers and literals renamed consistently; layout and comments kept."""
    names: dict[str, str] = {}
    literals: dict[str, str] = {}

    def text_of(tok: tokenize.TokenInfo) -> str:
        text = tok.string
        if tok.type == tokenize.NAME and text not in KEEP_NAMES:
            return names.setdefault(text, f"n{len(names)}_{len(text)}")
        if tok.type == tokenize.STRING:  # a docstring stays one (triple quotes)
            quote = "'''" if text.lstrip("rRbBuUfF")[:3] in ("'''", '"""') else "'"
            return literals.setdefault(text, f"{quote}s{len(literals)}{quote}")
        if tok.type == tokenize.NUMBER:
            return literals.setdefault(text, str(1000 + len(literals)))
        return text

    return relaid(source, text_of, layout=False)


def type3(source: str, rng: random.Random) -> str:
    """About 10% of the statements deleted, altered or followed by an inserted one (a third
    each), as the issue's type 3 asks: simple statements (not a block, not a docstring) by
    their lines in ``ast``, so that the copy still parses; a statement is deleted only where
    its block keeps another. A file ``ast`` cannot parse is edited by lines
    (:func:`type3_lines`)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return type3_lines(source, rng)
    lines = source.splitlines()
    shared = _lines_of_many(tree)
    edits: dict[int, tuple[int, int]] = {}  # first line (0-based): (last line, change)
    for block in _blocks(tree):
        kept = len(block)
        for node in block:
            first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
            simple = not hasattr(node, "body") and not _is_docstring(node)
            if not simple or first in shared or rng.random() >= 0.10:
                continue
            change = rng.randrange(3)
            if change == 0 and kept == 1:
                continue  # the block's last statement stays
            kept -= change == 0
            edits[first] = (last, change)
    out: list[str] = []
    at = 0
    for first in sorted(edits):
        last, change = edits[first]
        out.extend(lines[at:first])
        statement = lines[first : last + 1]
        indent = statement[0][: len(statement[0]) - len(statement[0].lstrip())]
        altered = _altered(statement) if change == 1 else None
        if altered is not None:
            out.extend(altered)
        elif change:  # inserted after, or an alteration that would not parse
            out.extend([*statement, f"{indent}counter_{rng.randrange(100)} = {rng.randrange(100)}"])
        at = last + 1
    out.extend(lines[at:])
    return "\n".join(out) + "\n"


def _altered(statement: list[str]) -> list[str] | None:
    """The statement's lines with ``0, `` opening its first call's arguments, or None where
    it has none or the change would not parse (``f(x for x in y)``, ``a(b) = c``)."""
    if "(" not in statement[0]:
        return None
    altered = [statement[0].replace("(", "(0, ", 1), *statement[1:]]
    try:
        ast.parse(textwrap.dedent("\n".join(altered)))
    except SyntaxError:
        return None
    return altered


def _blocks(tree: ast.AST) -> list[list[ast.stmt]]:
    """Every list of statements in ``tree`` (a body, an else, a finally), in order."""
    return [
        value
        for node in ast.walk(tree)
        for field in ("body", "orelse", "finalbody")
        if isinstance(value := getattr(node, field, None), list) and value and isinstance(value[0], ast.stmt)
    ]


def _lines_of_many(tree: ast.AST) -> set[int]:
    """The lines (0-based) where a statement starts beside another (``a = 1; b = 2``)."""
    starts: dict[int, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            starts[node.lineno - 1] = starts.get(node.lineno - 1, 0) + 1
    return {line for line, n in starts.items() if n > 1}


def _is_docstring(node: ast.stmt) -> bool:
    value = node.value if isinstance(node, ast.Expr) else None
    return isinstance(value, ast.Constant) and isinstance(value.value, str)


def type3_lines(source: str, rng: random.Random) -> str:
    """About 10% of the lines deleted, altered or inserted (a third each)."""
    out = []
    for line in source.splitlines():
        if not line.strip() or rng.random() >= 0.10:
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        change = rng.randrange(3)
        if change == 1:
            out.append(line.replace("(", "(0, ", 1) if "(" in line else line + "  # altered")
        elif change == 2:
            out.extend([line, f"{indent}counter_{rng.randrange(100)} = {rng.randrange(100)}"])
    return "\n".join(out) + "\n"


def clone_set(files: list[Path], seed: int) -> tuple[list[str], list[str], list[int], list[str]]:
    """(texts, names, family of each, kind of each: original or a type)."""
    rng = random.Random(seed)
    texts, names, family, kinds = [], [], [], []
    for f, path in enumerate(files):
        source = path.read_text("utf-8")
        for kind, text in zip(
            ("original", *TYPES), (source, type1(source), type2(source), type3(source, rng))
        ):
            texts.append(text)
            names.append(f"{kind}/{path.name}")
            family.append(f)
            kinds.append(kind)
    return texts, names, family, kinds


JOBS: dict[str, dict[str, Any]] = {
    "code defaults (--features code: --jaccard 0.7)": {},
    "code, -k 8 (each pair checked, jaccard 0.7)": {"max_distance": 8},
    "code, --shingle-size 5": {"shingle_size": 5},
    "code, --shingle-size 3": {"shingle_size": 3},
    "code, -k 3, every pair kept": {"max_distance": 3, "verify": ("jaccard", 0.0)},
    "code, -k 6, every pair kept": {"max_distance": 6, "verify": ("jaccard", 0.0)},
    "code, -k 8, --verify jaccard 0.5": {"verify": ("jaccard", 0.5)},
    "code, -k 8, --verify jaccard 0.6": {"verify": ("jaccard", 0.6)},
    "code, -k 8, --verify cosine 0.8": {"verify": ("cosine", 0.8)},
    "code, --jaccard 0.65 (MinHash on code shingles)": {"jaccard": 0.65},
}
"""The dedup job as a user runs it on a folder of the clones (``neardup dedup DIR --features
code`` and the options named): the code defaults, and beside them other radii and checks."""


def write_clones(
    root: Path, texts: list[str], family: list[int], kinds: list[str], files: list[Path]
) -> None:
    """Each clone a file ``KIND/FAMILY_NAME.py`` under ``root``: its suffix says Python."""
    for text, f, kind in zip(texts, family, kinds):
        path = root / kind / f"{f:04d}_{files[f].name}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")


def tokenizes(source: str) -> bool:
    """Whether Python's tokenizer reads ``source`` to its end: a type-3 copy whose line edits
    cut a string literal or a bracket open does not (its tokens after the cut all change)."""
    try:
        _tokens(source)
    except (tokenize.TokenError, SyntaxError):
        return False
    return True


def score_job(root: Path, options: dict[str, Any], intact: set[int]) -> dict[str, Any]:
    """Recall per type: the share of originals whose copy of that type the job put in the
    original's cluster (for type 3 also among the ``intact`` families, whose copy still
    tokenizes); precision: the share of the pairs within its clusters that are copies of one
    original."""
    t = time.perf_counter()
    result = neardup.dedup(root, features="code", **options)
    seconds = time.perf_counter() - t
    ids = [Path(i) for i in result.ids]
    kinds = np.array([i.parent.name for i in ids])
    family = np.array([int(i.name.split("_", 1)[0]) for i in ids])
    labels = np.asarray(result.labels)
    together = labels[:, None] == labels[None, :]
    upper = np.triu(np.ones_like(together), 1)
    found = together & upper
    same = family[:, None] == family[None, :]
    dropped = np.flatnonzero(np.asarray(result.representatives) != np.arange(len(ids)))
    linked = family[dropped] == family[np.asarray(result.representatives)[dropped]]
    row: dict[str, Any] = {
        "pairs": int(found.sum()),
        "precision": float((found & same).sum() / found.sum()) if found.sum() else 1.0,
        "link_precision": float(linked.mean()) if linked.size else 1.0,
        "files_s": len(ids) / seconds,
        "candidate_pairs": result.stats.checked_pairs,
    }
    label_of = {(k, f): lab for k, f, lab in zip(kinds.tolist(), family.tolist(), labels.tolist())}
    for kind in TYPES:
        hits = [label_of[("original", f)] == label_of[(kind, f)] for (k, f) in label_of if k == kind]
        row[kind] = float(np.mean(hits))
    row["type-3 intact"] = float(
        np.mean([label_of[("original", f)] == label_of[("type-3", f)] for f in sorted(intact)])
    )
    return row


def copydetect_peer(root: Path, family: dict[Path, int], kind: dict[Path, str]) -> dict[str, Any] | None:
    """copydetect (winnowed k-grams of its own tokens, every pair compared) over the same
    folder, when it is installed: its files/s, and per threshold on the lesser of a pair's two
    similarities its recall per type and pair precision."""
    try:
        from copydetect import CopyDetector
    except ImportError:
        return None
    t = time.perf_counter()
    detector = CopyDetector(test_dirs=[str(root)], extensions=["py"], autoopen=False, silent=True)
    detector.run()
    seconds = time.perf_counter() - t
    similarity: dict[frozenset, float] = {}
    for row in detector.get_copied_code_list():
        pair = frozenset((Path(row[2]).resolve(), Path(row[3]).resolve()))
        similarity[pair] = max(similarity.get(pair, 0.0), min(row[0], row[1]))
    return {"files_s": len(family) / seconds, "thresholds": _by_threshold(similarity, family, kind)}


DOLOS = "@dodona/dolos-lib@3.5.1"
_DOLOS_SCRIPT = """
const fs = require("fs");
const { Dolos } = require("@dodona/dolos-lib");
(async () => {
  const paths = fs.readFileSync(process.argv[2], "utf8").split("\\n").filter(Boolean);
  const report = await new Dolos({ language: "python" }).analyzePaths(paths);
  for (const pair of report.allPairs()) {
    console.log(JSON.stringify([pair.leftFile.path, pair.rightFile.path, pair.similarity]));
  }
})().catch((error) => { console.error(error); process.exit(1); });
"""


def dolos_peer(root: Path, family: dict[Path, int], kind: dict[Path, str]) -> dict[str, Any] | str:
    """Dolos (tree-sitter tokens, winnowing; every pair compared) over the same folder, when
    ``node`` and ``npm`` are found: installed once into a cache folder from the npm registry,
    then run by node; its files/s (node's start included, the install not) and per threshold on
    a pair's similarity its recall per type and pair precision. A str says why it did not run."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "node and npm are not on this machine"
    home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "neardup-bench" / "dolos-3.5.1"
    if not (home / "node_modules" / "@dodona" / "dolos-lib").is_dir():
        home.mkdir(parents=True, exist_ok=True)
        install = ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(home), DOLOS]
        done = subprocess.run(install, capture_output=True, text=True)
        if done.returncode:
            return f"npm install {DOLOS} failed: {done.stderr.strip()[-300:]}"
    (home / "run.js").write_text(_DOLOS_SCRIPT, "utf-8")
    listing = home / "paths.txt"
    listing.write_text("".join(f"{path}\n" for path in family), "utf-8")
    t = time.perf_counter()
    done = subprocess.run(
        ["node", str(home / "run.js"), str(listing)], capture_output=True, text=True, cwd=home
    )
    seconds = time.perf_counter() - t
    if done.returncode:
        return f"Dolos failed: {done.stderr.strip()[-300:]}"
    similarity: dict[frozenset, float] = {}
    for line in done.stdout.splitlines():
        left, right, value = json.loads(line)
        similarity[frozenset((Path(left).resolve(), Path(right).resolve()))] = float(value)
    return {"files_s": len(family) / seconds, "thresholds": _by_threshold(similarity, family, kind)}


def _by_threshold(
    similarity: dict[frozenset, float], family: dict[Path, int], kind: dict[Path, str]
) -> dict[str, Any]:
    """Per threshold on a peer's pair similarity: its recall per type (the share of originals
    whose copy of that type it pairs with them) and its pair precision."""
    out: dict[str, Any] = {}
    originals = {family[p]: p for p in family if kind[p] == "original"}
    copies = {(kind[p], family[p]): p for p in family if kind[p] != "original"}
    for threshold in (0.33, 0.5, 0.6, 0.7, 0.8, 0.9):
        found = {pair for pair, value in similarity.items() if value >= threshold}
        true = sum(len({family[p] for p in pair}) == 1 for pair in found)
        row_out: dict[str, Any] = {"precision": true / len(found) if found else 1.0, "pairs": len(found)}
        for t in TYPES:
            row_out[t] = float(
                np.mean([frozenset((o, copies[(t, f)])) in found for f, o in originals.items()])
            )
        out[str(threshold)] = row_out
    return out


def distances(fps: np.ndarray) -> np.ndarray:
    """Hamming distance of every pair, (n, n) uint8."""
    x = fps[:, None] ^ fps[None, :]
    return np.unpackbits(x.view(np.uint8).reshape(len(fps), len(fps), 8), axis=2).sum(axis=2).astype(np.uint8)


def score(fps: np.ndarray, family: np.ndarray, kinds: np.ndarray) -> dict[str, Any]:
    dist = distances(fps)
    same = family[:, None] == family[None, :]
    upper = np.triu(np.ones_like(same), 1)
    originals = np.flatnonzero(kinds == "original")
    out: dict[str, Any] = {}
    for k in RADII:
        near = (dist <= k) & upper
        found = int(near.sum())
        row: dict[str, Any] = {
            "pairs": found,
            "precision": float((near & same).sum() / found) if found else 1.0,
        }
        for kind in TYPES:
            copies = np.flatnonzero(kinds == kind)
            row[kind] = float(np.mean(dist[originals, copies] <= k))
        out[f"k={k}"] = row
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="60 files")
    parser.add_argument("--files", type=int, default=300, help="originals (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="write the results JSON here")
    parser.add_argument(
        "--only",
        choices=("clones", "jobs", "passages"),
        help="one section: fingerprints of clones, the dedup job on them, or passages",
    )
    parser.add_argument(
        "--show-false", action="store_true", help="print each false passage (files, lines, text)"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    files = stdlib_files(60 if args.quick else args.files)
    texts, names, family, kinds = clone_set(files, args.seed)
    originals = [t for t, k in zip(texts, kinds) if k == "original"]
    megabytes = sum(len(t.encode()) for t in originals) / 1e6

    from pygments.lexers import PythonLexer

    lexer = PythonLexer()
    t = time.perf_counter()
    n_tokens = sum(1 for text in originals for _ in lexer.get_tokens(text))
    lex_s = time.perf_counter() - t

    results: dict[str, Any] = {
        "benchmark": "code",
        "machine": machine_info(("pygments",)),
        "files": len(files),
        "documents": len(texts),
        "originals_mb": megabytes,
        "pygments_python_mb_s": megabytes / lex_s,
        "pygments_tokens_s": n_tokens / lex_s,
        "configs": {},
    }
    if args.only in (None, "passages"):
        neardup.passages(["x = 1"], features="code", language="python")  # compile
        results["passages"] = planted_functions_score(
            files, args.seed, {"code_normalize": "identifiers"}, show_false=args.show_false
        )
    if args.only in (None, "clones"):
        _fingerprint_configs(texts, names, np.array(family), np.array(kinds), results)
    if args.only in (None, "jobs"):
        _dedup_jobs(texts, family, kinds, files, results)
    finish(results, started, args.json, _footer)


def _fingerprint_configs(
    texts: list[str], names: list[str], family_array: np.ndarray, kind_array: np.ndarray, results: dict
) -> None:
    neardup.Fingerprinter(features="code", language="python").fingerprint_batch(["x = 1"])  # compile
    for label, options in CONFIGS.items():
        fingerprinter = neardup.Fingerprinter(**options)
        t = time.perf_counter()
        fps = fingerprinter.fingerprint_batch(texts, names=names)
        seconds = time.perf_counter() - t
        entry = score(np.asarray(fps), family_array, kind_array)
        entry["mb_s"] = sum(len(x.encode()) for x in texts) / 1e6 / seconds
        results["configs"][label] = entry


def _dedup_jobs(
    texts: list[str], family: list[int], kinds: list[str], files: list[Path], results: dict
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        write_clones(Path(tmp), texts, family, kinds, files)
        neardup.dedup(Path(tmp) / "original", features="code")  # compile the job's kernels
        intact = {f for f, kind, text in zip(family, kinds, texts) if kind == "type-3" and tokenizes(text)}
        results["type3_intact"] = len(intact)
        results["jobs"] = {label: score_job(Path(tmp), options, intact) for label, options in JOBS.items()}
        paths = {
            (Path(tmp) / kind / f"{f:04d}_{files[f].name}").resolve(): (f, kind)
            for f, kind in zip(family, kinds)
        }
        family_of = {p: f for p, (f, _) in paths.items()}
        kind_of = {p: k for p, (_, k) in paths.items()}
        results["copydetect"] = copydetect_peer(Path(tmp), family_of, kind_of)
        results["dolos"] = dolos_peer(Path(tmp), family_of, kind_of)


def _footer(r: dict[str, Any]) -> None:
    print(f"{r['files']} files, {r['documents']} documents ({r['originals_mb']:.1f} MB of originals)")
    lexing = f"{r['pygments_python_mb_s']:.2f} MB/s, {r['pygments_tokens_s']:,.0f} tokens/s"
    print(f"pygments PythonLexer: {lexing} (one core)")
    if "passages" in r:
        p = r["passages"]
        kinds = ", ".join(f"{k} {v:.3f}" for k, v in p["recall_by_kind"].items() if v is not None)
        print(
            f"\npassages --features code --code-normalize identifiers, {p['planted']} functions planted "
            f"in {r['files']} files ({p['mb']:.1f} MB, {p['passages_s']:.1f} s):\n"
            f"  recall {p['recall']:.3f} ({kinds}); line ranges within one line {p['lines_within_one']:.3f}\n"
            f"  precision {p['precision']:.3f}: {p['passages']} passages, {p['planted_passages']} planted, "
            f"{p['true_shared_passages']} true shared code, {p['false_passages']} false"
        )
    for k in RADII if r["configs"] else ():
        print(f"\nradius k={k}: recall per clone type, precision of all pairs within k")
        heads = ("type-1", "type-2", "type-3", "precision", "pairs", "MB/s")
        print(f"{'features':<30} " + " ".join(f"{h:>7}" for h in heads))
        for label, entry in r["configs"].items():
            row = entry[f"k={k}"]
            print(
                f"{label:<30} {row['type-1']:7.2f} {row['type-2']:7.2f} {row['type-3']:7.2f} "
                f"{row['precision']:7.3f} {row['pairs']:7d} {entry['mb_s']:7.2f}"
            )
    if "jobs" in r:
        _jobs_footer(r)


def _jobs_footer(r: dict[str, Any]) -> None:
    print("\nthe dedup job on a folder of the clones: recall per type, precision of its clusters' pairs")
    print(f"(type-3 intact: the {r['type3_intact']} type-3 copies that still tokenize)")
    heads = ("type-1", "type-2", "type-3", "t3 intact", "links", "precision", "pairs", "checked", "files/s")
    print(f"{'options':<36} " + " ".join(f"{h:>9}" for h in heads))
    for label, row in r["jobs"].items():
        print(
            f"{label:<36} {row['type-1']:9.3f} {row['type-2']:9.3f} {row['type-3']:9.3f} "
            f"{row['type-3 intact']:9.3f} {row['link_precision']:9.3f} "
            f"{row['precision']:9.3f} {row['pairs']:9d} {row['candidate_pairs'] or 0:9d} "
            f"{row['files_s']:9.1f}"
        )
    peers = {
        "copydetect": (r.get("copydetect") or "copydetect is not installed", "a pair's lesser similarity"),
        "Dolos 3.5.1": (r.get("dolos") or "not run", "a pair's similarity"),
    }
    for name, (peer, measure) in peers.items():
        if isinstance(peer, str):
            print(f"\n{name}: no peer in this run ({peer})")
            continue
        print(f"\n{name} on the same folder: {peer['files_s']:.1f} files/s; by threshold on {measure}")
        for threshold, row in peer["thresholds"].items():
            print(
                f"  >= {threshold:<5} type-1/2/3 {row['type-1']:.3f}/{row['type-2']:.3f}/{row['type-3']:.3f} "
                f"precision {row['precision']:.3f} ({row['pairs']} pairs)"
            )


if __name__ == "__main__":
    main()
