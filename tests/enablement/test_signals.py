"""SIGTERM in the middle of a compile, in a real process enabled by environment. The
telemetry is flushed, the open frame span ends as interrupted, and the signal still ends
the job (or the job's own handler decides), even with the main thread stuck in C code;
with OTEL_DYNAMO_FLUSH_ON_SIGNAL=false the signal ends the job untouched, finished
compiles' metrics already on disk."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _export_support import (
    BlackHole,
    child_environ,
    json_attributes,
    json_metric_names,
    json_spans,
    one_file,
    wait_until,
)

from otel_dynamo import names

JOB = Path(__file__).parents[1] / "programs" / "signalled_compile_job.py"
FORKED_JOB = Path(__file__).parents[1] / "programs" / "forked_signal_job.py"
TIMEOUT_S = 120


def _start(
    tmp_path: Path, *args: str, slow_compile_seconds: str = "60", **variables: str
) -> subprocess.Popen[str]:
    env = child_environ(
        OTEL_DYNAMO_ENABLED="true",
        OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path / "out"),
        OTEL_DYNAMO_SLOW_COMPILE_SECONDS=slow_compile_seconds,
    )
    env.update(variables)  # OTEL_DYNAMO_ENABLED=false: the plain job
    job = subprocess.Popen(
        [sys.executable, str(JOB), str(tmp_path / "ready"), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert wait_until((tmp_path / "ready").exists, timeout=TIMEOUT_S)
    return job


def _frames(tmp_path: Path) -> dict[str, dict]:
    """Frame span attributes by compile id."""
    spans = json_spans(one_file(tmp_path / "out", "traces"))
    found = [json_attributes(s["attributes"]) for s in spans if s["name"] == names.SPAN_FRAME]
    return {attributes[names.ATTR_COMPILE_ID]: attributes for attributes in found}


def test_sigterm_during_a_compile_flushes_and_still_ends_the_job(tmp_path):
    """Killed by SIGTERM as without otel_dynamo; the compile in progress is on disk as an
    interrupted frame span (error.type SIGTERM), beside the finished one and its metrics."""
    job = _start(tmp_path)
    job.send_signal(signal.SIGTERM)
    _out, err = job.communicate(timeout=TIMEOUT_S)
    assert job.returncode == -signal.SIGTERM, err
    frames = _frames(tmp_path)
    assert frames["0/0"][names.ATTR_OUTCOME] == names.OUTCOME_SUCCESS
    assert frames["1/0"][names.ATTR_OUTCOME] == names.OUTCOME_INTERRUPTED
    assert frames["1/0"][names.ATTR_ERROR_TYPE] == "SIGTERM"
    assert frames["1/0"][names.ATTR_CODE_FUNCTION] == "<lambda>"  # known from the start
    assert frames["1/0"][names.ATTR_CODE_FILE] == str(JOB)
    assert names.METRIC_COMPILES in json_metric_names(one_file(tmp_path / "out", "metrics"))


def test_sigterm_ends_a_job_stuck_in_c_code_after_flushing(tmp_path):
    """The main thread blocked in C code (SIGTERM blocked there, as in a collective) never
    runs a Python handler: the watcher thread flushes, then ends the job by SIGTERM itself,
    within the shutdown timeout plus its grace, not at the job's own pace (120 s)."""
    job = _start(tmp_path, "--stuck-in-c")
    started = time.monotonic()
    job.send_signal(signal.SIGTERM)
    _out, err = job.communicate(timeout=TIMEOUT_S)
    assert time.monotonic() - started < 30
    assert job.returncode == -signal.SIGTERM, err
    frames = _frames(tmp_path)
    assert frames["1/0"][names.ATTR_OUTCOME] == names.OUTCOME_INTERRUPTED
    assert frames["1/0"][names.ATTR_ERROR_TYPE] == "SIGTERM"


def test_sighup_is_flushed_like_sigterm(tmp_path):
    """SIGHUP (a closed terminal) ends the job by SIGHUP, the compile in progress on disk
    as interrupted with error.type SIGHUP."""
    job = _start(tmp_path)
    job.send_signal(signal.SIGHUP)
    _out, err = job.communicate(timeout=TIMEOUT_S)
    assert job.returncode == -signal.SIGHUP, err
    assert _frames(tmp_path)["1/0"][names.ATTR_ERROR_TYPE] == "SIGHUP"


def test_the_jobs_own_handler_still_decides(tmp_path):
    """A job with its own SIGTERM handler: ours flushes, then runs it; the job goes on,
    finishes its compile and exits 0, both frames successful."""
    job = _start(tmp_path, "--own-handler")
    job.send_signal(signal.SIGTERM)
    out, err = job.communicate(timeout=TIMEOUT_S)
    assert job.returncode == 0, err
    assert out.splitlines() == ["own handler ran", "continued"]
    outcomes = {cid: attrs[names.ATTR_OUTCOME] for cid, attrs in _frames(tmp_path).items()}
    assert outcomes == {"0/0": names.OUTCOME_SUCCESS, "1/0": names.OUTCOME_SUCCESS}


def test_metrics_reach_disk_after_each_frame_compile(tmp_path):
    """With the default 60 s metric interval, a finished compile's metrics are on disk
    within seconds, before the job ends: even SIGKILL (no flush possible) keeps them."""
    job = _start(tmp_path)
    try:

        def compiles_exported() -> bool:
            found = list((tmp_path / "out").glob("metrics-*.jsonl"))
            return bool(found) and names.METRIC_COMPILES in json_metric_names(found[0])

        assert wait_until(compiles_exported, timeout=30)
    finally:
        job.kill()
        job.communicate(timeout=TIMEOUT_S)


def test_a_compile_killed_outright_is_reported_as_never_finished(tmp_path):
    """SIGKILL mid-compile (nothing can flush): the still_compiling event already on disk
    names the function, and the report lists the compile as never finished."""
    job = _start(tmp_path, slow_compile_seconds="0.2")
    try:

        def still_compiling_exported() -> bool:
            found = list((tmp_path / "out").glob("logs-*.jsonl"))
            return bool(found) and names.LOG_STILL_COMPILING in found[0].read_text()

        assert wait_until(still_compiling_exported, timeout=30)
    finally:
        job.kill()
        job.communicate(timeout=TIMEOUT_S)
    report = subprocess.run(
        [sys.executable, "-m", "otel_dynamo.cli", "report", str(tmp_path / "out"), "--json"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert report.returncode == 0, report.stderr
    (process,) = json.loads(report.stdout)["processes"]
    (unfinished,) = process["unfinished"]
    assert (unfinished["compile_id"], unfinished["function"], unfinished["file"]) == (
        "1/0",
        "<lambda>",
        str(JOB),
    )
    assert unfinished["elapsed_s"] >= 0.2


def test_switched_off_sigterm_is_left_to_the_job(tmp_path):
    """With OTEL_DYNAMO_FLUSH_ON_SIGNAL=false otel_dynamo installs no handler: SIGTERM ends
    the job by the signal, and the finished compile's metrics were already exported."""
    job = _start(tmp_path, OTEL_DYNAMO_FLUSH_ON_SIGNAL="false")
    try:

        def compiles_exported() -> bool:
            found = list((tmp_path / "out").glob("metrics-*.jsonl"))
            return bool(found) and names.METRIC_COMPILES in json_metric_names(found[0])

        assert wait_until(compiles_exported, timeout=30)
        job.send_signal(signal.SIGTERM)
        _out, err = job.communicate(timeout=TIMEOUT_S)
    finally:
        job.kill()
    assert job.returncode == -signal.SIGTERM, err


def test_a_forked_childs_signal_never_ends_its_parent(tmp_path):
    """SIGTERM to a forked child ends the child by SIGTERM; the parent, whose watcher
    thread read the same wakeup pipe before the fork, lives on and exits 0."""
    job = subprocess.Popen(
        [sys.executable, str(FORKED_JOB), str(tmp_path / "ready")],
        env=child_environ(OTEL_DYNAMO_ENABLED="true", OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path / "out")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert job.stdout is not None
    child = int(job.stdout.readline())
    assert wait_until((tmp_path / "ready").exists, timeout=TIMEOUT_S)
    os.kill(child, signal.SIGTERM)
    out, err = job.communicate(timeout=TIMEOUT_S)
    assert job.returncode == 0, err
    assert out.splitlines() == [f"child ended by signal {int(signal.SIGTERM)}", "parent alive"]


SHUTDOWN_TIMEOUT_S = 3.0
"""OTEL_DYNAMO_SHUTDOWN_TIMEOUT for the GIL-held jobs: the bound is this plus one second."""
INTO_THE_CALL_S = 0.3
"""The job writes READY just before its C call: the signal is sent this much later."""


def _signalled(
    tmp_path: Path, signum: int, *args: str, traced: bool
) -> tuple[int, float, str, str]:
    """The job plain or traced, sent ``signum`` once it is compiling: exit status,
    seconds from the signal to the exit, stdout, stderr."""
    arm = tmp_path / ("traced" if traced else "plain")
    arm.mkdir()
    variables = {"OTEL_DYNAMO_SHUTDOWN_TIMEOUT": str(SHUTDOWN_TIMEOUT_S)}
    if not traced:
        variables["OTEL_DYNAMO_ENABLED"] = "false"
    job = _start(arm, *args, **variables)
    if traced:
        assert wait_until(lambda: len(_sentinels_of(job.pid)) == 1)
    time.sleep(INTO_THE_CALL_S)
    started = time.monotonic()
    job.send_signal(signum)
    out, err = job.communicate(timeout=TIMEOUT_S)
    return job.returncode, time.monotonic() - started, out, err


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_job_holding_the_gil_in_c_ends_by_the_signal_as_plain(tmp_path, signum):
    """Main thread in a C call that holds the GIL for 120 s: the plain job ends by the
    signal at once; the traced job ends by it too (same status), within
    OTEL_DYNAMO_SHUTDOWN_TIMEOUT + 1 s, not when the C call returns."""
    plain_status, _plain_s, _out, plain_err = _signalled(
        tmp_path, signum, "--gil-held", traced=False
    )
    traced_status, traced_s, _out, traced_err = _signalled(
        tmp_path, signum, "--gil-held", traced=True
    )
    assert plain_status == -signum, plain_err
    assert traced_status == plain_status, traced_err
    assert traced_s < SHUTDOWN_TIMEOUT_S + 1


def test_a_job_holding_the_gil_keeps_its_own_handler_as_plain(tmp_path):
    """The job's own SIGTERM handler and a 3 s C call holding the GIL: plain and traced,
    the handler runs once the call returns and the job goes on and exits 0, the traced
    job no later than the bound after the plain one."""
    args = ("--own-handler", "--gil-held=3")
    plain = _signalled(tmp_path, signal.SIGTERM, *args, traced=False)
    traced = _signalled(tmp_path, signal.SIGTERM, *args, traced=True)
    assert plain[0] == 0 and plain[2].splitlines() == ["own handler ran", "continued"]
    assert (traced[0], traced[2]) == (plain[0], plain[2]), traced[3]
    assert traced[1] < plain[1] + SHUTDOWN_TIMEOUT_S + 1


def test_the_sentinel_leaves_with_the_job(tmp_path):
    """A traced job ended by SIGTERM while holding the GIL leaves no sentinel behind."""
    job = _start(tmp_path, "--gil-held")
    assert wait_until(lambda: len(_sentinels_of(job.pid)) == 1)
    job.send_signal(signal.SIGTERM)
    job.communicate(timeout=TIMEOUT_S)
    assert wait_until(lambda: not _sentinels_of(job.pid))


def _sentinels_of(pid: int) -> list[int]:
    """Running sentinel processes watching ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        program = next(
            (i for i, arg in enumerate(argv) if arg.endswith(b"termination_sentinel.py")), None
        )
        if program is not None and argv[program + 1 : program + 2] == [str(pid).encode()]:
            found.append(int(entry.name))
    return found


def test_a_second_sigterm_during_the_flush_does_not_cut_it_short(tmp_path):
    """SIGTERM twice (a scheduler and torchrun both send it), the second while the flush
    waits on a collector that never answers: the second is caught too (our handler was
    put back), so the job ends by SIGTERM when the bounded flush is over, not at the
    second signal."""
    with BlackHole() as hole:
        job = _start(
            tmp_path,
            OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{hole.port}",
            OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf",
            OTEL_DYNAMO_SHUTDOWN_TIMEOUT=str(SHUTDOWN_TIMEOUT_S),
        )
        assert wait_until(lambda: len(_sentinels_of(job.pid)) == 1)
        started = time.monotonic()
        job.send_signal(signal.SIGTERM)
        time.sleep(DUPLICATE_AFTER_S)
        job.send_signal(signal.SIGTERM)
        _out, err = job.communicate(timeout=TIMEOUT_S)
    assert job.returncode == -signal.SIGTERM, err
    assert time.monotonic() - started > SHUTDOWN_TIMEOUT_S / 2


DUPLICATE_AFTER_S = 0.3
"""How long after the first SIGTERM the duplicate comes (well within the flush)."""
