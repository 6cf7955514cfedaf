"""The layout's promises: annotators/ is pure text logic, schemas/ stands alone."""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FORBIDDEN_IN_ANNOTATORS = ("apache_beam", "requests", "urllib.request", "http.client", "socket")
BENCHMARKS = ("stories", "lot", "chapterbreak", "glge", "storium", "audits")


def _imports(path: pathlib.Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def _modules(folder: str) -> list[pathlib.Path]:
    return sorted((ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", _modules("annotators"), ids=lambda p: str(p.relative_to(ROOT)))
def test_annotators_import_no_beam_and_no_network(path):
    bad = {n for n in _imports(path) for f in FORBIDDEN_IN_ANNOTATORS if n == f or n.startswith(f + ".")}
    assert bad == set()


@pytest.mark.parametrize("path", _modules("schemas"), ids=lambda p: str(p.relative_to(ROOT)))
def test_schemas_import_nothing_from_annotators_or_pipelines(path):
    assert {n for n in _imports(path) if n.split(".")[0] in ("annotators", "pipelines")} == set()


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_every_benchmark_package_has_the_one_shape(benchmark):
    folder = ROOT / "annotators" / benchmark
    assert {"steps.py", "reasons.py", "card.py"} <= {p.name for p in folder.glob("*.py")}


def test_no_benchmark_package_imports_another():
    for benchmark in BENCHMARKS:
        for path in (ROOT / "annotators" / benchmark).rglob("*.py"):
            others = {
                n.split(".")[1]
                for n in _imports(path)
                if n.startswith("annotators.")
                and n.count(".") >= 1
                and n.split(".")[1] in BENCHMARKS
                and n.split(".")[1] != benchmark
            }
            assert others == set(), path
