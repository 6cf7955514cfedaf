"""The portable path: a job submitted through Beam's Job API gives the in-process run's bytes.

Beam's Python local job service (`apache_beam.runners.portability.local_job_service_main`)
speaks the same Job API as the Flink and Spark job servers: `--runner PortableRunner
--job_endpoint HOST:PORT`. This test starts one on loopback, runs the LOT job through it
(`--environment_type LOOPBACK`: the SDK harness runs in the submitting process) and compares
every output file with an in-process run's. Only the runner's name (stats.json, CARD.md,
README.md) may differ. What it does not test: a real Flink or Spark cluster.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import time

import pytest
from conftest import ROOT

from pipelines import lot

pytestmark = pytest.mark.slow

SAMPLE = ROOT / "samples" / "lot"


@pytest.fixture
def job_service(tmp_path):
    port_file = tmp_path / "port"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "apache_beam.runners.portability.local_job_service_main",
            "--port",
            "0",
            "--port_file",
            str(port_file),
            "--staging_dir",
            str(tmp_path / "staging"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip()):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("the local job service did not start")
            time.sleep(0.1)
        yield f"localhost:{port_file.read_text().strip()}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _files(folder: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _without_runner(name: str, data: bytes) -> bytes:
    if name == "stats.json":
        stats = json.loads(data)
        stats.pop("runner", None)
        return json.dumps(stats, sort_keys=True).encode()
    if name.endswith(".md"):
        return b"\n".join(line for line in data.split(b"\n") if not line.startswith(b"- runner: "))
    return data


def test_lot_on_the_portable_runner_gives_the_in_process_bytes(job_service, tmp_path):
    base = [
        "--stories",
        str(SAMPLE / "stories.jsonl"),
        "--annotations",
        str(SAMPLE / "clozet_annotations.jsonl"),
        "--splits",
        "8,1,1",
    ]
    lot.run(base + ["--output", str(tmp_path / "local")])
    lot.run(
        base
        + [
            "--output",
            str(tmp_path / "portable"),
            "--runner",
            "PortableRunner",
            "--job_endpoint",
            job_service,
            "--environment_type",
            "LOOPBACK",
        ]
    )
    local, portable = _files(tmp_path / "local"), _files(tmp_path / "portable")
    assert sorted(local) == sorted(portable)
    assert json.loads(portable["stats.json"])["runner"] == "PortableRunner"
    different = [name for name in local if local[name] != portable[name]]
    assert sorted(different) == ["CARD.md", "README.md", "stats.json"]  # the runner's name only
    for name in different:
        assert _without_runner(name, local[name]) == _without_runner(name, portable[name]), name
