"""Test modules never import each other, nor a conftest: what tests share lives in fixtures
(conftest.py) or in a helper module whose name does not start with test_, so each test file can
be run, moved or deleted alone."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent


def _imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, top-level module) of every absolute import in ``path``, at any depth."""
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
    return found


def _shared_wrongly(module: str) -> bool:
    return module.startswith("test_") or module == "conftest"


def test_no_test_module_imports_another_or_a_conftest():
    wrong = [
        f"{path.relative_to(TESTS)}:{line} imports {module}"
        for path in sorted(TESTS.rglob("test_*.py"))
        for line, module in _imported_modules(path)
        if _shared_wrongly(module)
    ]
    assert not wrong, (
        "move what is shared into a fixture in the folder's conftest.py or a helper module "
        "not named test_*: " + "; ".join(wrong)
    )


def test_the_check_sees_every_form_of_import(tmp_path):
    path = tmp_path / "test_example.py"
    path.write_text(
        "import test_a\n"
        "from test_b import helper\n"
        "def f():\n"
        "    import test_c.sub\n"
        "from conftest import Server\n"
        "import naive_index\n"
        "from . import test_d\n"  # relative: not how pytest's rootdir imports resolve here
    )
    shared = sorted(module for _, module in _imported_modules(path) if _shared_wrongly(module))
    assert shared == ["conftest", "test_a", "test_b", "test_c"]


def test_every_test_module_has_a_name_of_its_own():
    # The test folders are not packages, so pytest imports each test module by its bare name:
    # a second tests/*/test_x.py fails the whole run at collection ("import file mismatch").
    by_name: dict[str, list[str]] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        by_name.setdefault(path.name, []).append(str(path.relative_to(TESTS)))
    clashes = [paths for paths in by_name.values() if len(paths) > 1]
    assert not clashes, f"rename one of each group so every test module's name is unique: {clashes}"
