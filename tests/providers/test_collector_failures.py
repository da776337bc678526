"""A dead, silent or failing collector never hurts the job (real child processes).

Each case runs tests/programs/telemetry_job.py, which creates spans, log events and
metrics through setup_providers and exits without an explicit shutdown (the atexit
path). The job must exit 0, print exactly one warning line, and never wait out the
OTLP exporter's own timeout (what a blocking export or exit flush would do). What the
collector costs in wall time and memory is measured by bench/bench_collector.py, not here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest
from _export_support import (
    TELEMETRY_JOB,
    BlackHole,
    JobResult,
    child_environ,
    failing_grpc_collector,
    failing_http_collector,
    fastest,
    free_port,
    run_program,
)

OTLP_EXPORTER_TIMEOUT_S = 10.0
"""The OTLP exporters' default timeout: a job that blocked on the collector would wait it out."""
RUNS = 2
"""Runs per measurement; the fastest counts (noise on a shared machine only adds time)."""

pytestmark = pytest.mark.slow


@contextlib.contextmanager
def closed_port() -> Iterator[int]:
    yield free_port()


@contextlib.contextmanager
def black_hole() -> Iterator[int]:
    with BlackHole() as hole:
        yield hole.port


@contextlib.contextmanager
def failing_http() -> Iterator[int]:
    with failing_http_collector() as server:
        yield server.server_address[1]


@contextlib.contextmanager
def failing_grpc() -> Iterator[int]:
    port = free_port()
    with failing_grpc_collector(port):
        yield port


CASES: dict[str, tuple[Callable[[], contextlib.AbstractContextManager[int]], str]] = {
    "down-grpc": (closed_port, "grpc"),
    "down-http": (closed_port, "http/protobuf"),
    "black-hole-grpc": (black_hole, "grpc"),
    "black-hole-http": (black_hole, "http/protobuf"),
    "failing-503-http": (failing_http, "http/protobuf"),
    "failing-grpc": (failing_grpc, "grpc"),
}


def _job(env: dict[str, str], telemetry: str) -> JobResult:
    return run_program(TELEMETRY_JOB, "--telemetry", telemetry, env=env)


@pytest.fixture(scope="module")
def baseline() -> JobResult:
    """The job with telemetry off (otel_dynamo never imported)."""
    result = fastest(RUNS, lambda: _job(child_environ(), "off"))
    assert result.returncode == 0, result.stderr
    return result


def _run_against(case: str) -> JobResult:
    collector, protocol = CASES[case]
    with collector() as port:
        env = child_environ(
            OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{port}",
            OTEL_EXPORTER_OTLP_PROTOCOL=protocol,
        )
        return fastest(RUNS, lambda: _job(env, "on"))


@pytest.fixture(scope="module")
def results() -> dict[str, JobResult]:
    return {case: _run_against(case) for case in CASES}


@pytest.mark.parametrize("case", CASES)
def test_job_succeeds(case, results):
    """The job exits 0 and prints its summary: no exception reached it."""
    result = results[case]
    assert (result.returncode, result.summary()["spans"]) == (0, 201)


@pytest.mark.parametrize("case", CASES)
def test_exactly_one_warning_line(case, results):
    """stderr holds exactly one line: otel_dynamo's warning (no SDK noise, no traceback)."""
    lines = results[case].stderr_lines()
    assert len(lines) == 1, results[case].stderr
    assert lines[0].startswith("otel_dynamo: ")


@pytest.mark.parametrize("case", CASES)
def test_job_never_waits_for_the_exporter_timeout(case, results, baseline):
    """Spawn to exit, the job is not held for the OTLP exporter's timeout: exports run in
    the background and the exit flush gives up after OTEL_DYNAMO_SHUTDOWN_TIMEOUT."""
    overhead = results[case].wall_s - baseline.wall_s
    assert overhead < OTLP_EXPORTER_TIMEOUT_S, f"{case}: {overhead:.2f} s over telemetry off"


@pytest.mark.parametrize("case", ["down-grpc", "black-hole-http"])
def test_files_beside_a_dead_collector_get_every_signal(case, tmp_path):
    """OTEL_<SIGNAL>_EXPORTER=otlp,otlp_file with a collector that is down or silent: the
    job's files still hold its spans, log records and metrics (a collector that does not
    answer never costs the local files their last export)."""
    collector, protocol = CASES[case]
    exporters = "otlp,otlp_file"
    with collector() as port:
        env = child_environ(
            OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{port}",
            OTEL_EXPORTER_OTLP_PROTOCOL=protocol,
            OTEL_TRACES_EXPORTER=exporters,
            OTEL_LOGS_EXPORTER=exporters,
            OTEL_METRICS_EXPORTER=exporters,
            OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path),
        )
        result = _job(env, "on")
    assert result.returncode == 0, result.stderr
    written = sorted(path.name.split("-")[0] for path in tmp_path.glob("*.jsonl"))
    assert written == ["logs", "metrics", "traces"]
    assert all(path.stat().st_size > 0 for path in tmp_path.glob("*.jsonl"))
