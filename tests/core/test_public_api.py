"""storybench uses other packages' public API only (issue 29): no private module or name is
imported from another package, no private attribute is reached from an imported module, and
no private name is read or set through getattr/setattr/hasattr on anything but our own `self`.

A static check of every Python file of the project (the tests and benchmarks too): what it
catches is what an import or a chain of attributes from an import can reach; a private
attribute of an object handed back by a library call is for review to catch."""

from __future__ import annotations

import ast

from tests.conftest import ROOT

OURS = {"annotators", "pipelines", "schemas", "bench", "tests", "harness_helpers", "pool_steps", "conftest"}
FOLDERS = ("annotators", "pipelines", "schemas", "bench", "tests")
PUBLIC = {"os._exit"}  # documented public, underscore and all (the exit of a forked child)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(source: str) -> list[tuple[int, str]]:
    """(line, what) for each private name of another package that `source` uses."""
    tree = ast.parse(source)
    imported: dict[str, str] = {}  # a name bound by an import of another package -> what it is
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in OURS:
                    continue
                if any(map(_private, alias.name.split("."))):
                    found.append((node.lineno, alias.name))
                top = alias.name.split(".")[0]
                imported[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module.split(".")[0] in OURS:
                continue
            if any(map(_private, node.module.split("."))):
                found.append((node.lineno, node.module))
            for alias in node.names:
                if _private(alias.name):
                    found.append((node.lineno, f"{node.module}.{alias.name}"))
                imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in imported:
                what = imported[root.id] + ast.unparse(node)[len(root.id) :]  # the path from the import
                if what not in PUBLIC:
                    found.append((node.lineno, what))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
            and not (isinstance(node.args[0], ast.Name) and node.args[0].id in ("self", "cls"))
        ):
            found.append((node.lineno, f"{node.func.id}(..., {node.args[1].value!r})"))
    return sorted(found)


def test_the_check_sees_each_kind_of_private_use():
    source = (
        "import atexit, argparse\n"
        "from lm_eval.tasks._yaml_loader import load_yaml\n"
        "from apache_beam.coders import typecoders, _private_name\n"
        "import pyarrow._parquet as pq\n"
        "atexit._run_exitfuncs()\n"
        "typecoders.registry._fallback_coder = None\n"
        "getattr(options, '_flags', ())\n"
        "import os\n"
        "os._exit(0)\n"  # documented public
        "getattr(self, '_cache', None)\n"  # our own object's
        "argparse.ArgumentParser().__dict__\n"  # a dunder is Python's, not private
    )
    assert private_uses(source) == [
        (2, "lm_eval.tasks._yaml_loader"),
        (3, "apache_beam.coders._private_name"),
        (4, "pyarrow._parquet"),
        (5, "atexit._run_exitfuncs"),
        (6, "apache_beam.coders.typecoders.registry._fallback_coder"),
        (7, "getattr(..., '_flags')"),
    ]


def test_no_file_of_the_project_uses_another_packages_private_api():
    found = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for folder in FOLDERS
        for path in sorted((ROOT / folder).rglob("*.py"))
        for line, what in private_uses(path.read_text(encoding="utf-8"))
    ]
    assert found == []
