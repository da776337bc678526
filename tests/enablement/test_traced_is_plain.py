"""The traced job is the plain job: each real job of ``tests/programs/differential_jobs.py``
runs twice in fresh processes, plain and with ``OTEL_DYNAMO_ENABLED=true``, and
everything Dynamo decides must be identical — compile ids and what each compile was
(function, outcome, recompile reason, graph and guard counts), graph-break reasons,
compiled runs per compile id, torch's frame, graph and cache counters, the job's results
and the exception it raised. A difference fails the test, named by job, rank and field.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _export_support import PROGRAMS, child_environ
from programs.differential_jobs import JOBS, View

pytestmark = [pytest.mark.slow, pytest.mark.torch_facing]  # Dynamo's decisions, on every torch

JOB_PROGRAM = PROGRAMS / "differential_jobs.py"
TIMEOUT_S = 240
"""Per job and arm: under pytest's own 300 s limit, so a hang fails with the job's output."""
DISTRIBUTED_JOBS = {"ddp": 2}
"""Jobs run by torchrun, and their ranks."""
TEARDOWN_GRACE_S = 30.0
"""How long a distributed job that wrote all its views has to exit by itself."""
POLL_S = 0.2
VIEW_FIELDS = (
    "compiles",
    "graph_breaks",
    "compiled_runs",
    "counters",
    "results",
    "exception",
)


def _command(job: str, out_dir: Path) -> list[str]:
    program = [str(JOB_PROGRAM), job, str(out_dir)]
    ranks = DISTRIBUTED_JOBS.get(job)
    if ranks is None:
        return [sys.executable, *program]
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    return [*launcher, f"--nproc_per_node={ranks}", *program]


def _start(job: str, root: Path, *, traced: bool) -> tuple[subprocess.Popen[bytes], Path]:
    """The job in a fresh process (its own inductor cache: both start equally cold), in a
    session of its own, its output in ``<arm>.log``."""
    arm = "traced" if traced else "plain"
    out_dir = root / arm
    environ = child_environ(TORCHINDUCTOR_CACHE_DIR=str(root / f"inductor-{arm}"))
    if traced:
        environ.update(OTEL_DYNAMO_ENABLED="true", OTEL_DYNAMO_OUTPUT_DIR=str(root / "telemetry"))
    with (root / f"{arm}.log").open("wb") as log:
        process = subprocess.Popen(
            _command(job, out_dir),
            env=environ,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # torchrun and its ranks end together
        )
    return process, out_dir


def _output(out_dir: Path) -> str:
    """The end of an arm's output, for a failure message."""
    log = out_dir.with_name(f"{out_dir.name}.log")
    return log.read_text(encoding="utf-8", errors="replace")[-4000:]


def _end(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _written(out_dir: Path, job: str) -> list[Path]:
    """The views the job's ranks have written (each whole: written aside, then renamed)."""
    return sorted(out_dir.glob(f"{job}.rank*.json"))


def _finish(process: subprocess.Popen[bytes], out_dir: Path, job: str) -> None:
    """Wait for the job to exit with status 0. A distributed job that wrote every rank's
    view but then hangs in gloo's teardown (torch's own deadlock, plain or traced alike)
    is ended after ``TEARDOWN_GRACE_S`` instead."""
    ranks = DISTRIBUTED_JOBS.get(job)
    deadline = time.monotonic() + TIMEOUT_S
    written_at = None
    while process.poll() is None:
        assert time.monotonic() < deadline, f"{job} ({out_dir.name}) hung:\n{_output(out_dir)}"
        if ranks and written_at is None and len(_written(out_dir, job)) == ranks:
            written_at = time.monotonic()
        if written_at is not None and time.monotonic() - written_at > TEARDOWN_GRACE_S:
            _end(process)
            return
        time.sleep(POLL_S)
    assert process.returncode == 0, f"{job} ({out_dir.name}) failed:\n{_output(out_dir)}"


def _views(process: subprocess.Popen[bytes], out_dir: Path, job: str) -> dict[str, View]:
    _finish(process, out_dir, job)
    views: dict[str, View] = {}
    for path in _written(out_dir, job):
        view: View = json.loads(path.read_text(encoding="utf-8"))
        views[view["rank"]] = view
    assert views, f"{job} ({out_dir.name}) wrote no view:\n{_output(out_dir)}"
    return views


def _first_difference(plain: Any, traced: Any, path: str = "") -> str | None:
    """Where two JSON values first differ, and how (None when equal)."""
    if isinstance(plain, dict) and isinstance(traced, dict):
        for key in sorted(set(plain) | set(traced)):
            if key not in plain or key not in traced:
                side = "traced only" if key not in plain else "plain only"
                return f"{path}.{key}: {side}: {plain.get(key, traced.get(key))!r}"
            found = _first_difference(plain[key], traced[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(plain, list) and isinstance(traced, list):
        for index, (mine, theirs) in enumerate(zip(plain, traced, strict=False)):
            found = _first_difference(mine, theirs, f"{path}[{index}]")
            if found:
                return found
        if len(plain) != len(traced):
            return f"{path}: {len(plain)} items plain, {len(traced)} traced"
        return None
    if plain != traced:
        return f"{path}: plain {plain!r}, traced {traced!r}"
    return None


def run_pair(job: str, root: Path) -> tuple[dict[str, View], dict[str, View]]:
    """The job plain and traced, at the same time, each in its own fresh process (both
    killed should either fail or hang)."""
    plain = _start(job, root, traced=False)
    traced = _start(job, root, traced=True)
    try:
        return _views(*plain, job), _views(*traced, job)
    finally:
        for process, _out_dir in (plain, traced):
            _end(process)


def differences(plain: dict[str, View], traced: dict[str, View]) -> list[str]:
    """Each field of Dynamo's view that differs, as "rank R field: where and how"."""
    found = []
    if sorted(plain) != sorted(traced):
        found.append(f"ranks: plain {sorted(plain)}, traced {sorted(traced)}")
    for rank in sorted(set(plain) & set(traced)):
        for field in VIEW_FIELDS:
            difference = _first_difference(plain[rank][field], traced[rank][field])  # type: ignore[literal-required]
            if difference:
                found.append(f"rank {rank} {field}{difference}")
    return found


@pytest.mark.parametrize("job", sorted(JOBS))
def test_dynamo_decides_the_same_traced_as_plain(job: str, tmp_path: Path) -> None:
    """Job ``job`` plain and traced: Dynamo's whole view is identical, field by field."""
    plain, traced = run_pair(job, tmp_path)
    assert differences(plain, traced) == [], f"job {job}: traced differs from plain"
    assert any(view["compiles"] for view in plain.values()), f"job {job} compiled nothing"
    telemetry = list((tmp_path / "telemetry").glob("traces-*.jsonl"))
    assert telemetry, f"job {job}: the traced run wrote no traces"


def test_twelve_compiled_blocks_compile_once_and_recompile_once(tmp_path: Path) -> None:
    """Twelve identical blocks, each ``block.compile()``: traced as plain, ``forward``
    compiles once, recompiles once (requires_grad), and every block's every run is
    compiled (12 blocks x 2 steps = 24 compiled runs); no backend-match recompile."""
    plain, traced = run_pair("regional_blocks", tmp_path)
    for views in (plain, traced):
        view = views["0"]
        assert [c["compile_id"] for c in view["compiles"]] == ["0/0", "0/1"]
        reasons = [c["fields"].get("recompile_reason") or "" for c in view["compiles"]]
        assert "requires_grad mismatch" in reasons[1] and "BACKEND_MATCH" not in reasons[1]
        assert sum(view["compiled_runs"].values()) == 24
