"""The package's folders follow the data's path, and each imports only the folders it stands on
(docs/architecture.md). The folders form a graph, not a line: the decision (``decision``) is
shared by the engines, which stand on it as peers (the local job in ``pipeline``, ``spark``,
``passage``, ``service``) and never import one another. The root's small shared modules and
``_kernels`` are below them all. ``planted`` (corpora for tests, benchmarks and ``--example``)
needs only the fingerprint, and only ``cli`` uses it."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import neardup

PACKAGE = Path(neardup.__file__).parent
# Each folder and the folders it stands on directly; it may import those and all they stand on.
STANDS_ON: dict[str, set[str]] = {
    "io": set(),
    "fingerprint": {"io"},
    "planted": {"fingerprint"},
    "index": {"fingerprint"},
    "decision": {"index"},
    "pipeline": {"decision"},
    "passage": {"decision"},
    "spark": {"decision"},
    "service": {"decision"},
    "report": {"passage"},  # explain shows the passages two documents share
    "logs": {"io"},  # log templates: lines read as every command reads them, no fingerprint
    "cli": {"pipeline", "passage", "spark", "service", "report", "planted", "logs"},
}
ENGINES = {"pipeline", "passage", "spark", "service"}
SHARED = {
    "_config",
    "_errors",
    "_extras",
    "_atomic",
    "_progress",
    "_prefetch",
    "_version",
    "_system",
    "_lexers",
    "_kernels",
}


@cache
def below(folder: str) -> frozenset[str]:
    """Every folder ``folder`` may import: those it stands on, and theirs."""
    found: set[str] = set()
    for under in STANDS_ON[folder]:
        found |= {under, *below(under)}
    return frozenset(found)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["neardup", *parts])


def _imported_modules(path: Path) -> list[tuple[int, list[str]]]:
    """(line, parts under neardup) of every import in ``path``, at any depth: a function's
    deferred import counts as much as the module's; those only type checkers read do not."""
    module_parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    package_parts = module_parts[:-1]  # __init__ included: its package is its folder
    found = []
    tree = ast.parse(path.read_text("utf-8"))
    unrun = _type_checking_only(tree)
    for node in ast.walk(tree):
        if node in unrun:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - (node.level - 1)]
                target = [*base, *(node.module.split(".") if node.module else [])]
            elif node.module and node.module.split(".")[0] == "neardup":
                target = node.module.split(".")[1:]
            else:
                continue
            found += [(node.lineno, [*target, alias.name]) for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "neardup" and len(parts) > 1:
                    found.append((node.lineno, parts[1:]))
    return found


def _type_checking_only(tree: ast.Module) -> set[ast.AST]:
    """The imports under ``if TYPE_CHECKING:``: read by type checkers, never run."""
    return {
        node
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and ast.unparse(block.test).endswith("TYPE_CHECKING")
        for statement in block.body
        for node in ast.walk(statement)
    }


def _layer(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else path.stem


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _resolve(parts: list[str], modules: dict[str, Path]) -> str | None:
    """The module an import names: ``from .x import y`` is module ``x.y`` where that exists,
    else ``x`` (y a name in it)."""
    for end in (len(parts), len(parts) - 1):
        name = ".".join(["neardup", *parts[:end]])
        if end and name in modules:
            return name
    return None


def test_the_engines_are_peers_over_the_decision():
    assert STANDS_ON.keys() == {*below("cli"), "cli"}, "every folder has a place in the graph"
    for engine in ENGINES:
        assert "decision" in below(engine)
        assert not below(engine) & ENGINES, f"{engine} stands on another engine"


def test_each_folder_imports_only_what_it_stands_on():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        layer = _layer(path)
        if layer in ("__init__", "__main__"):
            continue  # the root's public API and ``python -m`` may name anything
        allowed = set(SHARED) if layer in SHARED else below(layer)
        for line, parts in _imported_modules(path):
            target = parts[0] if parts else ""
            if target != layer and target not in SHARED and target not in allowed:
                wrong.append(f"{path.relative_to(PACKAGE)}:{line} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_no_import_cycle_between_modules():
    """Deferred imports included: a cycle hidden in a function is still a tangle."""
    modules = _modules()
    graph = {
        name: {
            target
            for _, parts in _imported_modules(path)
            if (target := _resolve(parts, modules)) not in (None, name, "neardup")
        }
        for name, path in modules.items()
        if name != "neardup"  # the public API names everything, lazily
    }
    cycles = [component for component in _strongly_connected(graph) if len(component) > 1]
    assert not cycles, "\n".join(" <-> ".join(sorted(cycle)) for cycle in cycles)


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's components, iteratively (the graph is a few hundred modules)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph.get(successor, ())))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    components.append(component)
    return components


def test_every_module_is_in_a_known_place():
    top_level = {p.name for p in PACKAGE.iterdir() if not p.name.startswith(("__pycache__", "."))}
    expected = (
        {f"{name}.py" for name in SHARED - {"_kernels"}}
        | set(STANDS_ON)
        | {"_kernels", "_data", "__init__.py", "__main__.py", "py.typed"}
    )
    assert top_level == expected


LONGEST_MODULE, LONGEST_FUNCTION = 550, 120


def test_modules_and_functions_stay_short_enough_to_read():
    """Outside ``_kernels`` (whose kernels are long loops on purpose): a module a reader can
    hold, a function a screen or two."""
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name.startswith("_kernels/"):
            continue
        source = path.read_text("utf-8")
        if len(source.splitlines()) > LONGEST_MODULE:
            long.append(f"{name}: {len(source.splitlines())} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > LONGEST_FUNCTION:
                    long.append(f"{name}:{node.lineno} {node.name}: {lines} lines")
    assert not long, "\n".join(long)


ENTRY_POINTS = {
    "pipeline/job.py": "run_job",
    "spark/job.py": "run_job",
    "passage/job.py": "run_job",
}
MOST_PARAMETERS = 10


def test_the_engines_entry_points_take_one_contract():
    """Each engine's internal entry point takes ``ReadOptions``, its outputs and its own
    options as values, not a keyword per setting (the public keyword functions may)."""
    wide = []
    for name, function in ENTRY_POINTS.items():
        tree = ast.parse((PACKAGE / name).read_text("utf-8"))
        found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function]
        assert found, f"{name} has no {function}"
        arguments = found[0].args
        count = len(arguments.posonlyargs + arguments.args + arguments.kwonlyargs)
        count += (arguments.vararg is not None) + (arguments.kwarg is not None)
        if count > MOST_PARAMETERS:
            wide.append(f"{name}: {function} takes {count} parameters")
    assert not wide, "\n".join(wide)
