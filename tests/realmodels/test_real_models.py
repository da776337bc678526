"""Real models nobody here wrote, run as a user would: every count equals torch's own.

Each job (``tests/programs/real_model_job.py``) runs in its own process with
``OTEL_DYNAMO_ENABLED=true``, ``TORCH_TRACE`` and fresh compile caches, and writes torch's
ground truth taken in that process: a counting backend around the real one (graphs, ops),
Dynamo's structured-trace records (frame starts, graph-break and recompile artifacts) and
its compilation metrics (guards, compile time, lazy backwards included). The telemetry is
read back with ``otel-dynamo report --json``; ``tlparse`` over the job's ``TORCH_TRACE``
is the peer oracle for the set of compile ids.
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

PROGRAM = Path(__file__).resolve().parents[1] / "programs" / "real_model_job.py"
MODELS = ("gpt2", "llama", "bert", "model_and_loss")
INDUCTOR_MODELS = ("bert", "model_and_loss")
"""The models also compiled by inductor. Dynamo decides frames, graphs, breaks, guards and
recompiles before the backend sees a graph, so every model runs with ``aot_eager``;
inductor adds its own compile (and, for the training job, its backward) to check, which
an inference model and the training one cover. inductor on CPU costs 0.5 to 2.5 minutes
per model here, in the pinned suite and on the oldest torch of the matrix."""
JOBS = tuple((model, "aot_eager") for model in MODELS) + tuple(
    (model, "inductor") for model in INDUCTOR_MODELS
)
JOB_TIMEOUT_S = 600

pytestmark = [pytest.mark.slow, pytest.mark.timeout(JOB_TIMEOUT_S + 120)]


class Job:
    """One finished job: torch's truth, the report's summary and tlparse's compile ids."""

    def __init__(self, truth: dict[str, Any], summary: dict[str, Any], tlparse_ids: set[str]):
        self.truth = truth
        (self.process,) = summary["processes"]
        self.totals = summary["totals"]
        self.tlparse_ids = tlparse_ids

    def rows(self) -> dict[str, dict[str, Any]]:
        return {row["compile_id"]: row for row in self.process["compiles"]}


def _run_job(model: str, backend: str, directory: Path) -> Job:
    env = {
        **os.environ,
        "OTEL_DYNAMO_ENABLED": "true",
        "OTEL_DYNAMO_OUTPUT_DIR": str(directory / "telemetry"),
        "OTEL_DYNAMO_RUN_SPANS": "off",
        "TORCH_TRACE": str(directory / "trace"),
        "TORCHINDUCTOR_CACHE_DIR": str(directory / "inductor-cache"),
        "TRITON_CACHE_DIR": str(directory / "triton-cache"),
    }
    truth_path = directory / "truth.json"
    job = subprocess.run(
        [sys.executable, str(PROGRAM), model, backend, str(truth_path)],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=JOB_TIMEOUT_S,
    )
    assert job.returncode == 0, job.stderr[-4000:]
    report = subprocess.run(
        [sys.executable, "-m", "otel_dynamo.cli", "report", str(directory / "telemetry"), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert report.returncode == 0, report.stderr[-4000:]
    truth = json.loads(truth_path.read_text())
    return Job(truth, json.loads(report.stdout), _tlparse_ids(directory))


def _tlparse_ids(directory: Path) -> set[str]:
    """Compile ids tlparse lists: one output folder per id, named ``-_FRAME_ATTEMPT_0``."""
    tlparse = shutil.which("tlparse")
    assert tlparse, "tlparse is a test dependency (pip install tlparse)"
    ids: set[str] = set()
    for index, log in enumerate(sorted((directory / "trace").glob("*.log"))):
        out = directory / f"tlparse-{index}"
        subprocess.run(
            [tlparse, str(log), "-o", str(out), "--no-browser", "--overwrite"],
            capture_output=True,
            check=True,
            timeout=300,
        )
        for entry in out.iterdir():
            parts = entry.name.split("_")
            if entry.is_dir() and len(parts) == 4 and parts[0] == "-" and parts[1].isdigit():
                ids.add(f"{parts[1]}/{parts[2]}")
    return ids


@pytest.fixture(scope="module", params=JOBS, ids="-".join)
def job(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Job:
    model, backend = request.param
    return _run_job(model, backend, tmp_path_factory.mktemp(f"{model}-{backend}"))


def test_every_frame_compile_is_recorded_once(job: Job) -> None:
    """The report's compile ids are exactly Dynamo's frame starts, each once, and
    exactly the compile ids tlparse lists for the same job."""
    recorded = [row["compile_id"] for row in job.process["compiles"]]
    assert sorted(recorded) == sorted(job.truth["frame_starts"])
    assert set(recorded) == job.tlparse_ids


def test_graphs_per_compile_equal_what_the_backend_compiled(job: Job) -> None:
    """Per compile id, graphs equal those the real backend compiled and returned."""
    graphs = {cid: row["graphs"] for cid, row in job.rows().items() if row["graphs"]}
    assert graphs == job.truth["graphs"]


def test_ops_per_compile_equal_the_graphs_handed_to_the_backend(job: Job) -> None:
    """Per compile id, ops (call_function + call_method + call_module) equal the count
    taken on the graphs the backend got."""
    ops = {cid: row["ops"] for cid, row in job.rows().items() if row["graphs"]}
    assert ops == job.truth["ops"]


def test_graph_breaks_per_compile_equal_dynamos_artifacts(job: Job) -> None:
    """Per compile id, graph breaks equal Dynamo's dynamo_graph_break_reason artifacts."""
    breaks = {cid: row["graph_breaks"] for cid, row in job.rows().items() if row["graph_breaks"]}
    assert breaks == dict(collections.Counter(job.truth["graph_breaks"]))


def test_recompiles_equal_dynamos_recompile_reasons(job: Job) -> None:
    """The recompiles listed are the compile ids with a recompile_reasons artifact, each
    with a reason."""
    recompiles = job.process["recompiles"]
    assert sorted(row["compile_id"] for row in recompiles) == sorted(job.truth["recompiles"])
    assert all(row["reason"] for row in recompiles)


def test_guards_per_compile_equal_dynamos_metrics(job: Job) -> None:
    """Per compile id, guards equal the guard_count of Dynamo's compilation metrics."""
    guards = {cid: row["guards"] for cid, row in job.rows().items()}
    assert guards == {cid: count or 0 for cid, count in job.truth["guards"].items()}


def test_compile_time_adds_up_to_dynamos(job: Job) -> None:
    """The job's compile seconds (frames and lazy backwards) are within 5% of the compile
    time Dynamo's metrics give, and each compile's parts add up to its time."""
    truth_s = job.truth["compile_us"] / 1e6
    assert job.totals["compile_seconds"] == pytest.approx(truth_s, rel=0.05)
    for row in job.process["compiles"]:
        parts = sum(value for value in row["phases"].values() if value)
        assert parts == pytest.approx(row["compile_s"], abs=1e-3 + 1e-3 * row["compile_s"])


def test_failed_compiles_are_those_dynamo_reports(job: Job) -> None:
    """The compiles recorded as failures are exactly those whose compilation metrics have
    a fail_type (none on torch 2.13; torch 2.8 fails some of GPT-2's frames itself)."""
    failed = sorted(
        row["compile_id"] for row in job.process["compiles"] if row["outcome"] == "failure"
    )
    assert failed == job.truth["failed"]
    assert all(row["stage"] == "compile" for row in job.process["failures"])
