"""The optional Prometheus scrape endpoint, scraped over HTTP."""

from __future__ import annotations

import logging
import socket
import urllib.request

import pytest
from _export_support import clear_otel_environ, free_port

from otel_dynamo._config.settings import Settings
from otel_dynamo._providers.setup import setup_providers

NO_EXPORT = {
    "OTEL_TRACES_EXPORTER": "none",
    "OTEL_LOGS_EXPORTER": "none",
    "OTEL_METRICS_EXPORTER": "none",
}


@pytest.fixture(autouse=True)
def _no_stray_otel_variables(monkeypatch):
    clear_otel_environ(monkeypatch)


def _scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode()


def test_counter_is_served_in_prometheus_format(tmp_path):
    """A counter shows up as <name>_total with its attributes as labels."""
    port = free_port()
    settings = Settings(output_dir=str(tmp_path), prometheus_port=port)
    telemetry = setup_providers(settings, environ=NO_EXPORT)
    try:
        counter = telemetry.meter_provider.get_meter("test").create_counter(
            "torch.compile.compiles"
        )
        counter.add(3, {"torch.compile.backend": "inductor"})
        body = _scrape(f"http://127.0.0.1:{port}/metrics")
    finally:
        telemetry.shutdown(2.0)
    samples = [
        line for line in body.splitlines() if line.startswith("torch_compile_compiles_total{")
    ]
    assert len(samples) == 1
    assert 'torch_compile_backend="inductor"' in samples[0]
    assert samples[0].endswith(" 3.0")


def test_endpoint_url_is_reported_and_answers(tmp_path):
    """ProcessProviders.prometheus_url names the endpoint on 127.0.0.1; it answers 200, text."""
    port = free_port()
    settings = Settings(output_dir=str(tmp_path), prometheus_port=port)
    telemetry = setup_providers(settings, environ=NO_EXPORT)
    try:
        assert telemetry.prometheus_url == f"http://127.0.0.1:{port}/metrics"
        with urllib.request.urlopen(telemetry.prometheus_url, timeout=5) as response:
            status, content_type = response.status, response.headers["Content-Type"]
    finally:
        telemetry.shutdown(2.0)
    assert (status, content_type.split(";")[0]) == (200, "text/plain")


def test_shutdown_stops_serving(tmp_path):
    """After shutdown the port no longer accepts connections."""
    port = free_port()
    telemetry = setup_providers(
        Settings(output_dir=str(tmp_path), prometheus_port=port), environ=NO_EXPORT
    )
    assert telemetry.shutdown(3.0) is True
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0


def test_port_in_use_is_a_problem_and_metrics_still_work(tmp_path, caplog):
    """A busy port: one warning naming the variable and port; setup still succeeds."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        with caplog.at_level(logging.WARNING, logger="otel_dynamo"):
            telemetry = setup_providers(
                Settings(output_dir=str(tmp_path), prometheus_port=port), environ={}
            )
        telemetry.shutdown(2.0)
    (problem,) = telemetry.problems
    assert (problem.variable, problem.value, problem.accepted) == (
        "OTEL_DYNAMO_PROMETHEUS_PORT",
        str(port),
        "a free TCP port on 127.0.0.1",
    )
    assert problem.consequence.startswith("Prometheus endpoint turned off (")
    assert [r.getMessage() for r in caplog.records] == [problem.message]
    assert telemetry.prometheus_url is None
