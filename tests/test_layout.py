"""The package's folders follow the data's path, and each imports only from those before it
(docs/architecture.md): io -> fingerprint -> planted -> index -> pipeline -> passage -> report -> spark ->
service -> cli, with the root's small shared modules and ``_kernels`` below them all. ``planted``
(corpora for tests, benchmarks and ``--example``) needs only the fingerprint, so it sits right
after it."""

from __future__ import annotations

import ast
from pathlib import Path

import neardup

PACKAGE = Path(neardup.__file__).parent
LAYERS = ["io", "fingerprint", "planted", "index", "pipeline", "passage", "report", "spark", "service", "cli"]
SHARED = {
    "_config",
    "_errors",
    "_extras",
    "_atomic",
    "_progress",
    "_prefetch",
    "_version",
    "_system",
    "_kernels",
}


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, first part under neardup) of every import in ``path``, at any depth."""
    module_parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    package_parts = module_parts[:-1]  # __init__ included: its package is its folder
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - (node.level - 1)]
                target = [*base, *(node.module.split(".") if node.module else [])]
                if not target:  # ``from .. import name``: the names are modules of the root
                    target = [node.names[0].name]
            elif node.module and node.module.split(".")[0] == "neardup":
                target = node.module.split(".")[1:]
            else:
                continue
            found.append((node.lineno, target[0] if target else ""))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "neardup" and len(parts) > 1:
                    found.append((node.lineno, parts[1]))
    return found


def _layer(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else path.stem


def test_each_folder_imports_only_from_folders_before_it():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        layer = _layer(path)
        if layer in ("__init__", "__main__"):
            continue  # the root's public API and ``python -m`` may name anything
        for line, target in _imports(path):
            if target == layer or target in SHARED:
                continue
            if layer in SHARED:
                allowed = set(SHARED)
            else:
                allowed = set(LAYERS[: LAYERS.index(layer)])
            if target not in allowed:
                wrong.append(f"{path.relative_to(PACKAGE)}:{line} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_every_module_is_in_a_known_place():
    top_level = {p.name for p in PACKAGE.iterdir() if not p.name.startswith(("__pycache__", "."))}
    expected = (
        {f"{name}.py" for name in SHARED - {"_kernels"}}
        | set(LAYERS)
        | {"_kernels", "_data", "__init__.py", "__main__.py", "py.typed"}
    )
    assert top_level == expected
