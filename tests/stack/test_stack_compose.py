"""docker-compose.yml: valid, pinned, wired to the shipped configs; optionally run for real.

The binaries of the stack (Collector, Jaeger, Tempo, Loki, Grafana) are not installable
here; test_stack_runs_under_compose starts them where a container engine answers and is
skipped, with the reason, where none does.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import _stack_support as support
import pytest
from dashgen import promnames
from dashgen.datasources import UIDS
from otelcol_check.model import shipped

from otel_dynamo import names

SERVICES = support.load_yaml(support.COMPOSE_FILE)["services"]
EXACT_TAG = re.compile(r"^[a-z0-9./-]+:v?\d+\.\d+\.\d+$")
WANTED = {
    "otel/opentelemetry-collector-contrib",
    "jaegertracing/jaeger",
    "grafana/tempo",
    "grafana/loki",
    "prom/prometheus",
    "grafana/grafana",
}


def test_compose_file_matches_the_compose_spec() -> None:
    """check-jsonschema validates docker-compose.yml against the Compose Specification."""
    binary = shutil.which("check-jsonschema")
    if binary is None:
        pytest.skip("check-jsonschema is not installed (pip install check-jsonschema)")
    result = subprocess.run(
        [binary, "--builtin-schema", "vendor.compose-spec", str(support.COMPOSE_FILE)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_starts_the_whole_stack() -> None:
    """Collector (contrib), Jaeger, Tempo, Loki, Prometheus and Grafana are all services."""
    assert {s["image"].rsplit(":", 1)[0] for s in SERVICES.values()} == WANTED


def test_every_image_is_pinned_to_an_exact_version() -> None:
    """Each image names an exact x.y.z tag (no latest, no floating major/minor)."""
    assert [s["image"] for s in SERVICES.values() if not EXACT_TAG.match(s["image"])] == []


def test_every_port_is_published_on_loopback_only() -> None:
    """Published ports bind 127.0.0.1, never all interfaces."""
    ports = [p for s in SERVICES.values() for p in s.get("ports", [])]
    assert ports and [p for p in ports if not str(p).startswith("127.0.0.1:")] == []


def test_bind_mounts_exist() -> None:
    """Every bind-mounted file or directory exists (the replay directory comes from REPLAY_DIR)."""
    sources = [v.split(":", 1)[0] for s in SERVICES.values() for v in s.get("volumes", [])]
    missing = [
        src
        for src in sources
        if not src.startswith("${") and not (support.COMPOSE_FILE.parent / src).exists()
    ]
    assert missing == []


def test_collectors_run_shipped_configs() -> None:
    """Each Collector service runs a config file shipped in collector-config/."""
    configs = {
        c.split("/")[-1]
        for s in SERVICES.values()
        for c in s.get("command", [])
        if str(c).startswith("--config=")
    }
    assert configs == {"single-node.yaml", "replay.yaml"} and configs <= set(shipped())


# --- optional: the real stack, where a container engine exists -----------------------

COMPOSE = ["docker", "compose", "-p", "otel-dynamo-test", "-f", str(support.COMPOSE_FILE)]


@pytest.fixture(scope="module")
def engine() -> None:
    reason = support.why_no_container_engine()
    if reason:
        pytest.skip(f"stack binaries need containers here: {reason}")


def _run(args: list[str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(shipped()))
def test_pinned_collector_validates_config(engine: None, name: str) -> None:
    """The pinned otelcol-contrib image accepts each shipped config (`validate`)."""
    image = SERVICES["otel-collector"]["image"]
    result = _run(
        [
            "docker",
            "run",
            "--rm",
            "-v",
            f"{support.COLLECTOR}:/cfg:ro",
            image,
            "validate",
            f"--config=/cfg/{name}",
        ]
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def stack(engine: None) -> Iterator[None]:
    up = _run([*COMPOSE, "up", "-d", "--wait", "--wait-timeout", "300"])
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        yield
    finally:
        _run([*COMPOSE, "down", "-v", "--remove-orphans"])


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read()


@pytest.mark.slow
def test_stack_runs_under_compose(stack: None, tmp_path: Path) -> None:
    """Under compose every backend answers and Grafana has the datasources and dashboards."""
    for url in (
        "http://127.0.0.1:3200/ready",
        "http://127.0.0.1:3100/ready",
        "http://127.0.0.1:9090/-/ready",
        "http://127.0.0.1:16686/",
        "http://127.0.0.1:13133/",
    ):
        support.wait_until(lambda u=url: _get(u) is not None, 180)
    for uid in UIDS.values():
        support.wait_until(
            lambda u=uid: _get(f"http://127.0.0.1:3000/api/datasources/uid/{u}"), 120
        )
    for file in support.dashboards():
        uid = support.dashboards()[file]["uid"]
        body = support.wait_until(
            lambda u=uid: _get(f"http://127.0.0.1:3000/api/dashboards/uid/{u}"), 120
        )
        assert json.loads(body)["dashboard"]["uid"] == uid


SERVICE = "otel-dynamo-compose-test"
PROMETHEUS, TEMPO = "http://127.0.0.1:9090", "http://127.0.0.1:3200"
LOKI, JAEGER = "http://127.0.0.1:3100", "http://127.0.0.1:16686"


def _send_sample_telemetry() -> None:
    """One failed frame span, one log line inside it, one compile counted, over OTLP gRPC."""
    from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.trace import Status, StatusCode

    endpoint = "http://127.0.0.1:4317"
    resource = Resource.create({"service.name": SERVICE})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint, insecure=True))
    )
    log_provider = LoggerProvider(resource=resource)
    log_provider.add_log_record_processor(
        SimpleLogRecordProcessor(OTLPLogExporter(endpoint=endpoint, insecure=True))
    )
    reader = PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=endpoint, insecure=True))
    meter_provider = MeterProvider(metric_readers=[reader], resource=resource)
    logger = logging.getLogger("otel_dynamo.compose_test")
    logger.addHandler(LoggingHandler(logger_provider=log_provider))
    tracer = tracer_provider.get_tracer(names.INSTRUMENTATION_NAME)
    with tracer.start_as_current_span(names.SPAN_FRAME) as span:
        span.set_status(Status(StatusCode.ERROR))
        logger.error(names.LOG_COMPILE_FAILED)
    meter_provider.get_meter(names.INSTRUMENTATION_NAME).create_counter(
        names.METRIC_COMPILES, unit="{compile}"
    ).add(1, {names.ATTR_OUTCOME: "failure"})
    for provider in (tracer_provider, log_provider, meter_provider):
        provider.shutdown()


def _query(url: str, **params: str) -> dict:
    return json.loads(_get(f"{url}?{urllib.parse.urlencode(params)}"))


def _found(url: str, key: str, **params: str) -> object:
    """The non-empty ``data.result`` (or top-level ``key``) of a backend's JSON answer."""
    body = _query(url, **params)
    return body.get(key) or (body.get("data") or {}).get("result")


@pytest.mark.slow
def test_stack_stores_and_serves_telemetry(stack: None) -> None:
    """Telemetry sent to the Collector reaches Prometheus, Tempo, Jaeger and Loki."""
    _send_sample_telemetry()
    series = f'{promnames.series("METRIC_COMPILES")}{{job="{SERVICE}"}}'
    traceql = f'{{ name = "{names.SPAN_FRAME}" && resource.service.name = "{SERVICE}" }}'
    logql = f'{{service_name="{SERVICE}"}} |= "{names.LOG_COMPILE_FAILED}"'
    support.wait_until(lambda: _found(f"{PROMETHEUS}/api/v1/query", "-", query=series), 120)
    support.wait_until(lambda: _found(f"{TEMPO}/api/search", "traces", q=traceql), 120)
    support.wait_until(lambda: _found(f"{JAEGER}/api/traces", "data", service=SERVICE), 120)
    streams = support.wait_until(
        lambda: _found(f"{LOKI}/loki/api/v1/query_range", "-", query=logql), 120
    )
    assert any("trace_id" in stream["stream"] for stream in streams)
