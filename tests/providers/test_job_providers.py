"""A job with its own OpenTelemetry for some signals, in real processes.

The job (tests/programs/own_otel_job.py) sets up an SDK TracerProvider (global, or passed
to ``instrument``) or all three providers globally, makes step spans around compiled
calls, and prints the spans its own exporter received. otel_dynamo's spans go to the
job's tracer provider; the signals the job did not set up go to otel_dynamo's own files,
with the job's resource.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from _export_support import (
    JobResult,
    child_environ,
    json_attributes,
    json_log_records,
    json_metric_names,
    one_file,
    read_jsonl,
    run_program,
)

from otel_dynamo import names

JOB = Path(__file__).parents[1] / "programs" / "own_otel_job.py"
TIMEOUT_S = 240
JOB_SERVICE_NAME = "own-otel-job"
STEP_SPAN = "train.step"
MESSAGE_START = "otel_dynamo: the job set up OpenTelemetry"
TRACER_ONLY = ("global-tracer", "passed-tracer")


def run_job(out: Path, own: str, **environ: str) -> JobResult:
    env = child_environ(OTEL_DYNAMO_OUTPUT_DIR=str(out), **environ)
    env.pop("OTEL_DYNAMO_ENABLED", None)
    done = run_program(JOB, "--own", own, env=env, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def tracer_only_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, JobResult]]:
    """Each tracer-only job run once, as rank 1 of 2."""
    runs = {}
    for own in TRACER_ONLY:
        out = tmp_path_factory.mktemp(own)
        runs[own] = (out, run_job(out, own, RANK="1", WORLD_SIZE="2"))
    return runs


def resource_of(path: Path, signal: str) -> dict[str, Any]:
    """The resource attributes of the first export request in an OTLP/JSON Lines file."""
    key = {"metrics": "resourceMetrics", "logs": "resourceLogs"}[signal]
    return json_attributes(read_jsonl(path)[0][key][0]["resource"]["attributes"])


def message_lines(done: JobResult) -> list[str]:
    return [line for line in done.stderr_lines() if line.startswith(MESSAGE_START)]


@pytest.mark.parametrize("own", TRACER_ONLY)
def test_compile_spans_are_children_of_the_jobs_step_spans(tracer_only_runs, own):
    """Every frame compile span the job's exporter received has a step span as its parent,
    in that step's trace."""
    spans = tracer_only_runs[own][1].summary()["spans"]
    steps = {span["span_id"]: span["trace_id"] for span in spans if span["name"] == STEP_SPAN}
    frames = [span for span in spans if span["name"] == names.SPAN_FRAME]
    assert len(frames) == 2  # the first call and the recompile of the last step
    assert all(steps.get(frame["parent_id"]) == frame["trace_id"] for frame in frames)


@pytest.mark.parametrize("own", TRACER_ONLY)
def test_metrics_and_logs_go_to_own_files_and_no_traces_file(tracer_only_runs, own):
    """The signals the job did not set up are written to otel_dynamo's files; traces,
    which the job owns, get no file."""
    out = tracer_only_runs[own][0]
    assert names.METRIC_COMPILES in json_metric_names(one_file(out, "metrics"))
    assert json_log_records(one_file(out, "logs"))
    assert list(out.glob("traces-*.jsonl")) == []


@pytest.mark.parametrize("own", TRACER_ONLY)
@pytest.mark.parametrize("signal", ["metrics", "logs"])
def test_own_files_carry_the_jobs_resource_and_the_rank(tracer_only_runs, own, signal):
    """Our metrics and logs carry the job's resource (its service.name and attributes win)
    plus the torchrun rank attributes the job's resource lacked."""
    resource = resource_of(one_file(tracer_only_runs[own][0], signal), signal)
    assert resource["service.name"] == JOB_SERVICE_NAME
    assert resource["job.team"] == "vision"
    assert resource[names.RESOURCE_RANK] == 1
    assert resource[names.RESOURCE_WORLD_SIZE] == 2


@pytest.mark.parametrize("own", TRACER_ONLY)
def test_one_message_says_where_metrics_and_logs_went(tracer_only_runs, own):
    """Exactly one message, naming the job's signal and our files' directory."""
    out, done = tracer_only_runs[own]
    assert message_lines(done) == [
        f"{MESSAGE_START} traces; otel_dynamo's logs and metrics go to its own exporters: "
        f"files in {out} (with the job's resource)"
    ]


def test_a_job_with_all_three_global_providers_gets_no_own_files(tmp_path):
    """All three signals set up globally: everything goes to the job's providers, otel_dynamo
    writes no file and says nothing."""
    done = run_job(tmp_path, "global-all")
    result = done.summary()
    assert result["job_metric_points"] > 0 and result["job_log_records"] > 0
    assert list(tmp_path.iterdir()) == []
    assert message_lines(done) == []


def test_metrics_exporter_none_is_named_in_the_message(tmp_path):
    """OTEL_METRICS_EXPORTER=none: no metrics file, and the message says metrics go nowhere."""
    done = run_job(tmp_path, "global-tracer", OTEL_METRICS_EXPORTER="none")
    assert list(tmp_path.glob("metrics-*.jsonl")) == []
    assert message_lines(done) == [
        f"{MESSAGE_START} traces; otel_dynamo's logs and metrics go to its own exporters: "
        f"logs to files in {tmp_path}; metrics to nothing (OTEL_METRICS_EXPORTER=none) "
        "(with the job's resource)"
    ]


def test_the_message_never_shows_endpoint_credentials(tmp_path):
    """An OTLP endpoint with a user and password, and a header: the message names the
    endpoint with both hidden."""
    done = run_job(
        tmp_path,
        "global-tracer",
        OTEL_EXPORTER_OTLP_ENDPOINT="http://trainer:pa55word@127.0.0.1:9",
        OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf",
        OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer%20t0ken-value",
        OTEL_EXPORTER_OTLP_TIMEOUT="0.2",
    )
    [message] = message_lines(done)
    assert "http://***@127.0.0.1:9" in message
    assert "pa55word" not in done.stderr and "t0ken-value" not in done.stderr


def test_sdk_disabled_turns_our_providers_off_without_a_message(tmp_path):
    """OTEL_SDK_DISABLED=true with a job's tracer provider: no files, no message."""
    done = run_job(tmp_path, "global-tracer", OTEL_SDK_DISABLED="true")
    assert list(tmp_path.glob("*.jsonl")) == []
    assert message_lines(done) == []


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
