"""A process's first export imports no module: every import an exporter needs is made
when the telemetry is set up, on the thread setting it up.

An export runs on an exporter's thread. A fork (a DataLoader worker) while that thread
imports a module leaves the module's import lock held for ever in the child, whose own
export then waits on it (tests/programs/first_export_job.py reports what the first
export imported). Each exporter is run against a live receiver, so the export succeeds
(a failed one would warn on stderr); the HTTP one reads no body, so gzip is taken too.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from _export_support import (
    PROGRAMS,
    child_environ,
    free_port,
    grpc_sink,
    raw_http_sink,
    run_program,
)

from otel_dynamo._config.otel_variables import EXPORTER_CONSOLE, EXPORTER_FILE

JOB = PROGRAMS / "first_export_job.py"
SUMMARY_START = '{"imported": '
SINKS = {"grpc": grpc_sink, "http/protobuf": raw_http_sink, "http/json": raw_http_sink}


def _first_export(tmp_path: Path, **environ: str) -> dict[str, object]:
    result = run_program(
        JOB, env=child_environ(OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path), **environ), timeout=120
    )
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    (line,) = [line for line in result.stdout.splitlines() if line.startswith(SUMMARY_START)]
    summary: dict[str, object] = json.loads(line)
    return summary


@contextlib.contextmanager
def _receiver(protocol: str) -> Iterator[int]:
    port = free_port()
    with SINKS[protocol](port):
        yield port


@pytest.mark.parametrize("compression", ["none", "gzip"])
@pytest.mark.parametrize("protocol", sorted(SINKS))
def test_a_first_otlp_export_imports_nothing(tmp_path, protocol, compression):
    """Spans, a log event and a metric sent over OTLP ``protocol`` to a live receiver: the
    export succeeds and imports no module."""
    if protocol == "http/json":
        pytest.importorskip("opentelemetry.exporter.otlp.json.http")
    with _receiver(protocol) as port:
        summary = _first_export(
            tmp_path,
            OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{port}",
            OTEL_EXPORTER_OTLP_PROTOCOL=protocol,
            OTEL_EXPORTER_OTLP_COMPRESSION=compression,
        )
    assert summary == {"imported": [], "flushed": True}


@pytest.mark.parametrize("exporter", [EXPORTER_FILE, EXPORTER_CONSOLE])
def test_a_first_local_export_imports_nothing(tmp_path, exporter):
    """The embedded default's files, or the console: the first export imports no module."""
    summary = _first_export(
        tmp_path,
        OTEL_TRACES_EXPORTER=exporter,
        OTEL_LOGS_EXPORTER=exporter,
        OTEL_METRICS_EXPORTER=exporter,
    )
    assert summary == {"imported": [], "flushed": True}
