"""Every process that compiles writes all three signals before it ends, and a SIGTERM
during the exit flush loses nothing (real processes, real compiles, embedded files).

tests/programs/worker_compile_job.py starts workers that compile (the job itself never
does): DataLoader workers forked or spawned, and a spawn Pool terminated by its ``with``
block. tests/programs/exit_flush_signal_job.py gets SIGTERM during its exit flush.
Files are counted per pid (in their names) and their spans and log events read back.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from _export_support import (
    PROGRAMS,
    child_environ,
    json_attributes,
    json_log_records,
    json_spans,
    one_file,
    read_jsonl,
    run_program,
)

from otel_dynamo import names

WORKER_JOB = PROGRAMS / "worker_compile_job.py"
SIGNAL_JOB = PROGRAMS / "exit_flush_signal_job.py"
COMPILE_EVENTS = sorted(
    [names.LOG_FRAME_COMPILED, names.LOG_GRAPH_COMPILED, names.LOG_VARIANT_CALLS]
)
ROOMY = {"OTEL_DYNAMO_SHUTDOWN_TIMEOUT": "10"}
"""A bound no loaded machine reaches: what is tested is that nothing is lost, not the bound."""


def _files(directory: Path, signal_name: str, pid: int) -> list[Path]:
    return sorted(directory.glob(f"{signal_name}-*-{pid}-*.jsonl"))


def _run_workers(tmp_path: Path, mode: str) -> list[int]:
    env = child_environ(OTEL_DYNAMO_ENABLED="true", OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path), **ROOMY)
    result = run_program(WORKER_JOB, mode, env=env, timeout=240)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr[-3000:]
    workers: list[int] = json.loads(result.stdout)["workers"]
    return workers


def _span_names(path: Path) -> Counter[str]:
    return Counter(span["name"] for span in json_spans(path))


@pytest.mark.slow
@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_dataloader_workers_that_start_compiling_write_all_three_signals(tmp_path, context):
    """Each of the two workers, whose telemetry is built after it started, writes one
    traces, one logs and one metrics file of its own: its one frame compile, its four
    runs (four samples each) and the compile's three log events."""
    workers = _run_workers(tmp_path, f"dataloader-{context}")
    assert len(workers) == 2
    for pid in workers:
        counts = [len(_files(tmp_path, kind, pid)) for kind in ("traces", "logs", "metrics")]
        assert counts == [1, 1, 1]
        spans = _span_names(_files(tmp_path, "traces", pid)[0])
        assert (spans[names.SPAN_FRAME], spans[names.SPAN_RUN_INFERENCE]) == (1, 4)
        events = json_log_records(_files(tmp_path, "logs", pid)[0])
        assert sorted(event["eventName"] for event in events) == COMPILE_EVENTS


@pytest.mark.slow
def test_pool_workers_terminated_by_their_with_block_keep_their_compiles(tmp_path):
    """A spawn Pool's workers get SIGTERM from ``terminate`` while they may be flushing at
    exit: each worker that ran tasks still has one traces and one logs file, with its one
    frame span and its compile's two events."""
    workers = _run_workers(tmp_path, "pool-terminate")
    for pid in workers:
        assert [len(_files(tmp_path, kind, pid)) for kind in ("traces", "logs")] == [1, 1]
        spans = _span_names(_files(tmp_path, "traces", pid)[0])
        assert spans[names.SPAN_FRAME] == 1
        events = Counter(r["eventName"] for r in json_log_records(_files(tmp_path, "logs", pid)[0]))
        assert (events[names.LOG_GRAPH_COMPILED], events[names.LOG_FRAME_COMPILED]) == (1, 1)


@pytest.mark.slow
@pytest.mark.parametrize("moment", ["while-exporting", "while-starting-the-flush"])
def test_sigterm_during_the_exit_flush_waits_for_it_then_ends_the_process(tmp_path, moment):
    """SIGTERM arriving during the at-exit flush, while it exports or while the main thread
    starts it (holding a lock the flush needs): nothing buffered is lost (one frame span,
    three runs, the compile's three log events), and the process still ends by SIGTERM."""
    env = child_environ(
        OTEL_DYNAMO_ENABLED="true",
        OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path),
        OTEL_BSP_SCHEDULE_DELAY="60000",  # everything stays buffered until the exit flush
        OTEL_BLRP_SCHEDULE_DELAY="60000",
        **ROOMY,
    )
    result = run_program(SIGNAL_JOB, moment, env=env, timeout=120)
    assert (result.returncode, result.stdout, result.stderr) == (-signal.SIGTERM, "job done\n", "")
    (traces,) = tmp_path.glob("traces-*.jsonl")
    spans = _span_names(traces)
    assert (spans[names.SPAN_FRAME], spans[names.SPAN_RUN_INFERENCE]) == (1, 3)
    (logs,) = tmp_path.glob("logs-*.jsonl")
    assert sorted(r["eventName"] for r in json_log_records(logs)) == COMPILE_EVENTS


STEADY_JOB = PROGRAMS / "steady_compiles_job.py"
SETTLED_COMPILES = 5
"""Compiles the SIGKILL test waits for before it starts counting down to the kill."""
KILL_AFTER_S = 3.0
"""Three times the default span and log export interval (1 s): what ended that long
before a SIGKILL must be on disk, even on a loaded machine."""


def _compile_count(path: Path) -> int:
    """The highest total of the frame compile counter in a metrics file."""
    totals = [0]
    for line in read_jsonl(path):
        for resource_metrics in line["resourceMetrics"]:
            for scope_metrics in resource_metrics["scopeMetrics"]:
                for metric in scope_metrics["metrics"]:
                    if metric["name"] == names.METRIC_COMPILES:
                        points = metric["sum"]["dataPoints"]
                        totals.append(sum(int(point["asInt"]) for point in points))
    return max(totals)


@pytest.mark.slow
def test_after_sigkill_what_ended_three_export_intervals_before_is_on_disk(tmp_path):
    """SIGKILL runs no handler: the compiles that ended 3 s before it still have their
    frame spans and frame_compiled events on disk, every compile counted by then is in
    the metrics file, and the report reads the folder."""
    env = child_environ(OTEL_DYNAMO_ENABLED="true", OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path))
    job = subprocess.Popen(
        [sys.executable, str(STEADY_JOB)], env=env, stdout=subprocess.PIPE, text=True
    )
    assert job.stdout is not None
    try:
        for _ in range(SETTLED_COMPILES):
            job.stdout.readline()
        time.sleep(KILL_AFTER_S)
    finally:
        job.kill()
        job.wait()
    settled = {f"{number}/0" for number in range(SETTLED_COMPILES)}
    spans = json_spans(one_file(tmp_path, "traces"))
    frames = [span for span in spans if span["name"] == names.SPAN_FRAME]
    frame_ids = {json_attributes(span["attributes"])[names.ATTR_COMPILE_ID] for span in frames}
    assert settled <= frame_ids
    events = json_log_records(one_file(tmp_path, "logs"))
    compiled = [e for e in events if e["eventName"] == names.LOG_FRAME_COMPILED]
    assert len(compiled) >= SETTLED_COMPILES
    assert _compile_count(one_file(tmp_path, "metrics")) >= SETTLED_COMPILES
    report = subprocess.run(
        [sys.executable, "-m", "otel_dynamo", "report", str(tmp_path), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert report.returncode == 0, report.stderr
