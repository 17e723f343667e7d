"""Structural rules of the codebase, checked on its source."""

import ast
from pathlib import Path
from typing import Iterator, Tuple

import pytest

from spinn_allennlp.testing import PROJECT_ROOT

PACKAGE = PROJECT_ROOT / "spinn_allennlp"
CORE = PROJECT_ROOT / "spinn_core"
LAB = PROJECT_ROOT / "tools"
SOURCES = [
    PACKAGE,
    CORE,
    LAB,
    PROJECT_ROOT / "tests",
    PROJECT_ROOT / "benchmarks",
    PROJECT_ROOT / "scripts",
]


def python_files(*roots: Path) -> Iterator[Path]:
    for root in roots:
        yield from sorted(root.rglob("*.py"))


def imports(tree: ast.AST) -> Iterator[Tuple[ast.AST, str, str]]:
    """(node, module, name) of every import; name is "" for `import module`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node, alias.name, ""
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                yield node, "." * node.level + (node.module or ""), alias.name


@pytest.mark.parametrize("path", list(python_files(CORE)), ids=str)
def test_core_imports_neither_allennlp_nor_the_plugin(path):
    """spinn_core is torch alone: the plugin builds on it, never the other way round."""
    for _, module, _ in imports(ast.parse(path.read_text())):
        assert module.split(".")[0] not in ("allennlp", "spinn_allennlp"), (path, module)


@pytest.mark.parametrize("path", list(python_files(PACKAGE, CORE)), ids=str)
def test_the_installed_packages_do_not_import_the_lab(path):
    """tools/ (benepar training, the ListOps generator, parse scoring, the suite's helpers) is
    not in the wheel: nothing installed may need it."""
    for _, module, _ in imports(ast.parse(path.read_text())):
        assert module.split(".")[0] not in ("tools", "tests", "scripts", "benchmarks"), (
            path,
            module,
        )


@pytest.mark.parametrize("path", list(python_files(*SOURCES)), ids=str)
def test_no_private_names_from_other_modules(path):
    for _, module, name in imports(ast.parse(path.read_text())):
        assert not (name.startswith("_") and not name.startswith("__")), (path, module, name)


@pytest.mark.parametrize("path", list(python_files(*SOURCES)), ids=str)
def test_no_function_level_imports_of_our_modules(path):
    """A function-level import of the project's own modules is how an import cycle gets dodged.
    (Third-party imports inside a function, e.g. matplotlib in a plotting helper, are allowed:
    they keep an optional dependency optional.)"""
    tree = ast.parse(path.read_text())
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for _, module, _ in imports(function):
                assert module.split(".")[0] not in (
                    "spinn_allennlp",
                    "spinn_core",
                    "tools",
                    "tests",
                    "benchmarks",
                ) and not module.startswith("."), (path, function.name, module)


@pytest.mark.parametrize("path", list(python_files(PROJECT_ROOT / "tests")), ids=str)
def test_no_test_module_imports_another(path):
    for _, module, _ in imports(ast.parse(path.read_text())):
        assert module.split(".")[0] != "tests" and not module.startswith("."), (path, module)


@pytest.mark.parametrize("path", list(python_files(*PACKAGE.glob("*/models"))), ids=str)
def test_models_do_not_branch_on_encoder_classes(path):
    """Models ask any encoder for its trees through `modules.tree_encoder` (`encode`,
    `has_parser`, ...), not by testing which class it is."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
            classes = ast.unparse(node.args[1]) if len(node.args) > 1 else ""
            assert "Encoder" not in classes, (path, node.lineno, classes)
