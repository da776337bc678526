"""The traced job is the plain job: each real job of ``tests/programs/differential_jobs.py``
runs twice in fresh processes, plain and with ``OTEL_DYNAMO_ENABLED=true``, both with
``TORCH_TRACE`` and ``TORCH_LOGS`` on, and must be identical:

- everything Dynamo decides: compile ids and what each compile was (function, outcome,
  recompile reason, graph and guard counts), graph-break reasons, compiled runs per
  compile id, torch's frame, graph and cache counters, the job's results and the
  exception it raised;
- everything torch writes: its structured trace record for record (source location,
  metadata, payload), its ``TORCH_LOGS`` lines and the rest of stderr, tracebacks
  included, all after ``torch_records``' normalisation of what differs between any two
  runs; where our traced backend stands between torch and the user's backend, a traceback
  may show that one frame of ours and nothing else;
- and in the traced job, no frame compile, graph break, record or line of torch's names
  code of otel_dynamo's or OpenTelemetry's.

A difference fails the test, named by job, rank and field, with both values.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _export_support import PROGRAMS, child_environ
from programs import torch_records
from programs.differential_jobs import JOBS, View

import otel_dynamo

# Dynamo's decisions and torch's records: on every torch. In CI: all jobs on the pinned
# torch, all but the heavy ones on the oldest of the matrix, the core ones
# (plain_vs_traced) on the newest.
pytestmark = [pytest.mark.slow, pytest.mark.torch_facing]

JOB_PROGRAM = PROGRAMS / "differential_jobs.py"
TIMEOUT_S = 240
"""Per job and arm: under pytest's own 300 s limit, so a hang fails with the job's output."""
DISTRIBUTED_JOBS = {"ddp_step": 2}
"""Jobs run by torchrun, and their ranks."""
TEARDOWN_GRACE_S = 30.0
"""How long a distributed job that wrote all its views has to exit by itself."""
POLL_S = 0.2
TORCH_LOGS = "recompiles,graph_breaks,dynamo,aot"
"""What each arm logs: Dynamo's and AOT Autograd's own logs, recompiles and breaks."""
WRAPPER_FRAME = re.compile(
    r'File "[^"]*otel_dynamo/_sources/traced_backend\.py", line \d+, in __call__'
)
"""The one frame of ours a traceback through a traced backend may show."""
OWN_CODE = re.compile(
    "|".join(
        (
            re.escape(os.path.dirname(otel_dynamo.__file__) + os.sep),
            re.escape(torch_records.INSTALLED_PACKAGE),
            re.escape(os.sep + "opentelemetry" + os.sep),
            r"\botel_dynamo: ",
        )
    )
)
"""Code of ours or OpenTelemetry's named by its path, or a message of ours."""
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
    # each rank's stderr in a file of its own (ranks interleave on a shared one)
    per_rank = [f"--log-dir={out_dir}-ranks", "--redirects=2"]
    return [*launcher, f"--nproc_per_node={ranks}", *per_rank, *program]


def _start(job: str, root: Path, *, traced: bool) -> tuple[subprocess.Popen[bytes], Path]:
    """The job in a fresh process (its own inductor cache: both start equally cold), in a
    session of its own, its output in ``<arm>.log``."""
    arm = "traced" if traced else "plain"
    out_dir = root / arm
    environ = child_environ(
        TORCHINDUCTOR_CACHE_DIR=str(root / f"inductor-{arm}"),
        TORCH_TRACE=str(root / f"{arm}-trace"),
        TORCH_LOGS=TORCH_LOGS,
        # one string hash in both arms: sympy's assumption caches (symbolic shapes) iterate
        # sets of strings, and which of its frames run otherwise differs from run to run
        PYTHONHASHSEED="0",
    )
    if traced:
        environ.update(OTEL_DYNAMO_ENABLED="true", OTEL_DYNAMO_OUTPUT_DIR=str(root / "telemetry"))
    with (root / f"{arm}.log").open("wb") as log, (root / f"{arm}.err").open("wb") as err:
        process = subprocess.Popen(
            _command(job, out_dir),
            env=environ,
            stdout=log,
            stderr=err,
            start_new_session=True,  # torchrun and its ranks end together
        )
    return process, out_dir


def _output(out_dir: Path) -> str:
    """The end of an arm's output and stderr, for a failure message."""
    texts = (
        out_dir.with_name(f"{out_dir.name}{suffix}").read_text(encoding="utf-8", errors="replace")
        for suffix in (".log", ".err")
    )
    return "\n".join(text[-3000:] for text in texts)


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


def _stderr(root: Path, arm: str) -> list[str]:
    """An arm's stderr, normalised: its ranks' own (a distributed job's), rank by rank."""
    ranks = sorted(
        (root / f"{arm}-ranks").glob("**/stderr.log"), key=lambda path: int(path.parent.name)
    )
    if ranks:
        texts = [path.read_text(errors="replace") for path in ranks]
    else:
        texts = [(root / f"{arm}.err").read_text(errors="replace")]
    return [line for text in texts for line in torch_records.log_lines(text)]


def without_wrapper_frames(lines: list[str]) -> list[str]:
    """``lines`` without the frames of our traced backend (``WRAPPER_FRAME``): the frame's
    ``File`` line and the source and caret lines under it."""
    kept: list[str] = []
    frame_prefix: str | None = None
    for line in lines:
        if frame_prefix is not None and line.startswith(frame_prefix + "    "):
            continue
        frame_prefix = None
        found = WRAPPER_FRAME.search(line)
        if found:
            frame_prefix = line[: found.start()].rstrip(" ")  # before the frame's indent
            continue
        kept.append(line)
    return kept


def _without_wrapper_frame(record: torch_records.TraceRecord) -> torch_records.TraceRecord:
    """A record without the frame of ours in the tracebacks it holds (as payload lines,
    or as text in its metadata: ``exception_stack_trace``)."""
    return dataclasses.replace(
        record,
        metadata=_without_wrapper_frame_in(record.metadata),
        payload=_without_wrapper_frame_in(record.payload),
    )


def _without_wrapper_frame_in(value: Any) -> Any:
    if isinstance(value, list) and all(
        isinstance(line, str) and "\n" not in line for line in value
    ):
        return without_wrapper_frames(value)  # a payload's lines
    if isinstance(value, list):
        return [_without_wrapper_frame_in(item) for item in value]
    if isinstance(value, dict):
        return {key: _without_wrapper_frame_in(item) for key, item in value.items()}
    if isinstance(value, str) and WRAPPER_FRAME.search(value):
        return "\n".join(without_wrapper_frames(value.split("\n")))
    return value


def _wrapper_frames_per_traceback(lines: list[str]) -> int:
    """The most frames of ours any one traceback in ``lines`` shows."""
    most = count = 0
    for line in lines:
        if "Traceback (most recent call last):" in line:
            count = 0
        count += bool(WRAPPER_FRAME.search(line))
        most = max(most, count)
    return most


def differences(job: str, root: Path, plain: dict[str, View], traced: dict[str, View]) -> list[str]:
    """Every way the traced arm of ``job`` differs from the plain one: each as "job J
    field: where: plain X, traced Y" (module doc)."""
    found = []
    if sorted(plain) != sorted(traced):
        found.append(f"ranks: plain {sorted(plain)}, traced {sorted(traced)}")
    for rank in sorted(set(plain) & set(traced)):
        for field in VIEW_FIELDS:
            difference = torch_records.first_difference(plain[rank][field], traced[rank][field])  # type: ignore[literal-required]
            if difference:
                found.append(f"rank {rank} {field}{difference}")
    plain_trace = torch_records.trace_records(root / "plain-trace")
    traced_trace = [
        _without_wrapper_frame(r) for r in torch_records.trace_records(root / "traced-trace")
    ]
    difference = torch_records.trace_difference(plain_trace, traced_trace)
    if difference:
        found.append(f"TORCH_TRACE: {difference}")
    ours = [record for record in traced_trace if OWN_CODE.search(repr(record))]
    if ours:
        found.append(f"TORCH_TRACE names our code: {ours[0]!r}"[:2000])
    plain_err, traced_err = _stderr(root, "plain"), _stderr(root, "traced")
    if _wrapper_frames_per_traceback(traced_err) > 1:
        found.append("stderr: a traceback shows more than one frame of ours")
    difference = torch_records.first_difference(plain_err, without_wrapper_frames(traced_err))
    if difference:
        found.append(f"stderr (TORCH_LOGS={TORCH_LOGS}){difference}")
    own_lines = [line for line in without_wrapper_frames(traced_err) if OWN_CODE.search(line)]
    if own_lines:
        found.append(f"stderr names our code: {own_lines[0]!r}")
    return [f"job {job} {item}" for item in found]


HEAVY_JOBS = frozenset(
    {
        "training_step_inductor",
        "dynamic_step_inductor",
        "transformers_step",
        "ddp_step",
        "regional_gpt2",
    }
)
"""Jobs of a minute or more on 2 cores: run on the pinned torch only (CI's time)."""
CORE_JOBS = frozenset(
    {"backward_inside", "training_step", "compiled_autograd", "backend_raises", "fullgraph_break"}
)
"""The jobs the newest torch of CI's matrix runs too (``plain_vs_traced``): code of ours
inside a compiled step, and the tracebacks of failing compiles."""


def _job_param(job: str) -> Any:
    marks = [pytest.mark.heavy] if job in HEAVY_JOBS else []
    if job in CORE_JOBS:
        marks.append(pytest.mark.plain_vs_traced)
    return pytest.param(job, marks=marks)


@pytest.mark.parametrize("job", [_job_param(job) for job in sorted(JOBS)])
def test_dynamo_decides_the_same_traced_as_plain(job: str, tmp_path: Path) -> None:
    """Job ``job`` plain and traced: Dynamo's whole view is identical, field by field."""
    plain, traced = run_pair(job, tmp_path)
    assert differences(job, tmp_path, plain, traced) == []
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
