"""Exporters the SDK finds by name: any entry point registered beside it (a third-party
package, Prometheus), the file exporter's own name, and OTLP/JSON over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _export_support import child_environ, clear_otel_environ, free_port, raw_http_sink

from otel_dynamo import names
from otel_dynamo._config.otel_env import read_otel_env
from otel_dynamo._config.settings import Settings
from otel_dynamo._providers.setup import setup_providers

TESTS = Path(__file__).parents[1]
JOB = TESTS / "programs" / "compile_job.py"
REGISTERED = TESTS / "data" / "registered_exporter"
TIMEOUT_S = 240


@pytest.fixture(autouse=True)
def _no_stray_otel_variables(monkeypatch):
    clear_otel_environ(monkeypatch)


def _traced_job(tmp_path: Path, **environ: str) -> subprocess.CompletedProcess[str]:
    """The training job (eager backend), enabled, with the test package's entry points
    installed beside it."""
    env = child_environ(OTEL_DYNAMO_ENABLED="true", JOB_BACKEND="eager", **environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REGISTERED), env["PYTHONPATH"]])
    return subprocess.run(
        [sys.executable, str(JOB)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def test_a_third_party_exporter_registered_by_entry_point_gets_the_spans(tmp_path):
    """OTEL_TRACES_EXPORTER=fake_lines, a name only an installed package's entry points
    know: an enabled training job's frame and graph spans reach that exporter."""
    out = tmp_path / "lines.txt"
    done = _traced_job(tmp_path, OTEL_TRACES_EXPORTER="fake_lines", FAKE_EXPORTER_OUT=str(out))
    assert done.returncode == 0, done.stderr
    assert {names.SPAN_FRAME, names.SPAN_GRAPH} <= set(out.read_text().splitlines())


def test_an_exporter_that_cannot_be_built_is_one_warning_and_the_job_is_traced(tmp_path):
    """OTEL_TRACES_EXPORTER=broken and OTEL_METRICS_EXPORTER=broken, an exporter whose
    construction raises: one warning names both signals sent there and the error; the
    job's log events still reach the files (tracing stays on)."""
    done = _traced_job(
        tmp_path,
        OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path),
        OTEL_TRACES_EXPORTER="broken",
        OTEL_METRICS_EXPORTER="broken",
    )
    assert done.returncode == 0, done.stderr
    ours = [line for line in done.stderr.splitlines() if line.startswith("otel_dynamo")]
    assert ours == [
        "otel_dynamo: could not export traces to broken (entry point): RuntimeError: the fake "
        "backend's credentials are missing. The job continues; traces and metrics sent there "
        "are dropped while it fails (further export problems are logged at DEBUG on the "
        "'otel_dynamo' logger)"
    ]
    (logs,) = tmp_path.glob("logs-*.jsonl")
    assert names.LOG_FRAME_COMPILED in logs.read_text()


def test_an_unknown_exporter_name_is_one_problem_naming_the_entry_points():
    """A name no entry point registers: the signal's export is off, with one problem whose
    accepted text says where names come from."""
    env = read_otel_env({"OTEL_TRACES_EXPORTER": "zipkin_nowhere"})
    (problem,) = env.problems
    assert (problem.variable, problem.value) == ("OTEL_TRACES_EXPORTER", "zipkin_nowhere")
    assert "opentelemetry_<signal>_exporter entry points" in problem.accepted
    assert env.plans["traces"].exporters == ()


def test_the_file_exporters_own_name_writes_our_files(tmp_path):
    """OTEL_TRACES_EXPORTER=otlp_json_file (the installed exporter's entry-point name)
    writes the embedded default's private OTLP/JSON Lines files."""
    environ = {
        name: "otlp_json_file"
        for name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_METRICS_EXPORTER")
    }
    telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ=environ)
    telemetry.tracer_provider.get_tracer("t").start_span("s").end()
    telemetry.shutdown(5.0)
    (traces,) = tmp_path.glob("traces-*.jsonl")
    assert json.loads(traces.read_text().splitlines()[0])["resourceSpans"]


def test_http_json_protocol_sends_otlp_json(tmp_path):
    """OTEL_EXPORTER_OTLP_PROTOCOL=http/json: spans, logs and metrics are POSTed as OTLP/JSON
    (application/json) to /v1/<signal> of the endpoint (where the json-http extra's
    exporter is installed: it exists from OpenTelemetry 1.43 on)."""
    pytest.importorskip("opentelemetry.exporter.otlp.json.http")
    port = free_port()
    environ = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
    }
    with raw_http_sink(port) as received:
        telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ=environ)
        telemetry.tracer_provider.get_tracer("t").start_span("json-span").end()
        telemetry.meter_provider.get_meter("t").create_counter("json.count").add(1)
        telemetry.logger_provider.get_logger("t").emit(body="json-log")
        telemetry.shutdown(5.0)
    by_path = {path: (kind, json.loads(body)) for path, kind, body in received}
    assert set(by_path) == {"/v1/traces", "/v1/metrics", "/v1/logs"}
    assert all(kind.startswith("application/json") for kind, _ in by_path.values())
    spans = by_path["/v1/traces"][1]["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert [span["name"] for span in spans] == ["json-span"]


PROMETHEUS_SCRIPT = """
import os, sys, urllib.request
from otel_dynamo._config.settings import Settings
from otel_dynamo._providers.setup import setup_providers
telemetry = setup_providers(Settings(output_dir=sys.argv[1]))
telemetry.meter_provider.get_meter("t").create_counter("scraped.count").add(3)
port = os.environ["OTEL_EXPORTER_PROMETHEUS_PORT"]
print(urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode())
telemetry.shutdown(2.0)
"""


def test_prometheus_by_its_entry_point_name_serves_a_scrape(tmp_path):
    """OTEL_METRICS_EXPORTER=prometheus (the prometheus exporter's entry point, a reader):
    a scrape of OTEL_EXPORTER_PROMETHEUS_PORT returns the counter."""
    env = child_environ(
        OTEL_METRICS_EXPORTER="prometheus",
        OTEL_EXPORTER_PROMETHEUS_HOST="127.0.0.1",
        OTEL_EXPORTER_PROMETHEUS_PORT=str(free_port()),
    )
    done = subprocess.run(
        [sys.executable, "-c", PROMETHEUS_SCRIPT, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (sample,) = [
        line for line in done.stdout.splitlines() if line.startswith("scraped_count_total")
    ]
    assert sample.endswith(" 3.0")
