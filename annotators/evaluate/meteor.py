"""METEOR 1.5 as GLGE's QG scripts run it: `java -jar -Xmx2G meteor-1.5.jar - - -stdio -l en
-norm`, one SCORE line per group (its references, then its hypothesis with "|||" removed and
double spaces made single), then one EVAL line over all of them; the last line the jar
answers is the corpus score the scripts print.

The jar is the one the pip package `pycocoevalcap` ships (with its paraphrase table), found
with `meteor_jar()`; `STORYBENCH_METEOR_JAR` names another. Java comes from `JAVA` or PATH.
Nothing is downloaded. This module starts a local process and never touches the network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

JAR_ENV = "STORYBENCH_METEOR_JAR"
JAVA_ENV = "JAVA"


def meteor_jar() -> Path | None:
    named = os.environ.get(JAR_ENV)
    if named:
        return Path(named) if Path(named).is_file() else None
    try:
        import importlib.util

        spec = importlib.util.find_spec("pycocoevalcap")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        jar = Path(root) / "meteor" / "meteor-1.5.jar"
        if jar.is_file():
            return jar
    return None


def java() -> str | None:
    return os.environ.get(JAVA_ENV) or shutil.which("java")


def problem() -> str | None:
    """Why METEOR cannot run here, or None."""
    if meteor_jar() is None:
        return f"METEOR needs meteor-1.5.jar: `pip install pycocoevalcap` (make setup installs it) or set {JAR_ENV}"
    if java() is None:
        return f"METEOR needs a Java runtime (java on PATH, or set {JAVA_ENV})"
    return None


def _clean_hypothesis(text: str) -> str:
    return text.replace("|||", "").replace("  ", " ")


def _one_line(text: str) -> str:
    # a newline would end the jar's input line early; the scripts never see one (they read lines)
    return text.replace("\r", " ").replace("\n", " ")


def meteor_scores(groups: Sequence[tuple[str, Sequence[str]]]) -> tuple[float, list[float]]:
    """(corpus METEOR, each group's segment score) of (hypothesis, references) groups."""
    if not groups:
        return 0.0, []
    jar, runtime = meteor_jar(), java()
    if jar is None or runtime is None:
        raise RuntimeError(problem())
    cmd = [runtime, "-jar", "-Xmx2G", str(jar), "-", "-", "-stdio", "-l", "en", "-norm"]
    proc = subprocess.Popen(
        cmd,
        cwd=str(jar.parent),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
    )
    try:
        stats = []
        for hyp, refs in groups:
            line = " ||| ".join(["SCORE", " ||| ".join(_one_line(r) for r in refs), _one_line(_clean_hypothesis(hyp))])
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
            stats.append(proc.stdout.readline().strip())
        proc.stdin.write("EVAL ||| " + " ||| ".join(stats) + "\n")
        proc.stdin.flush()
        segments = [float(proc.stdout.readline().strip()) for _ in groups]
        total = float(proc.stdout.readline().strip())
    finally:
        if proc.stdin:
            proc.stdin.close()
        proc.kill()
        proc.wait()
    return total, segments
