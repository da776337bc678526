"""Arize Phoenix as a real trace store: spans sent over OTLP, queried back over its REST API.

Phoenix runs from its own venv (OTEL_DYNAMO_PHOENIX_PYTHON, default
/opt/phoenix-venv/bin/python; .ci/run creates it). Spans are read back with
``GET /v1/projects/{project}/spans?trace_id=...``; the project is the resource
attribute ``openinference.project.name`` ("default" without it).
"""

from __future__ import annotations

import urllib.error
import urllib.parse

import pytest
from _export_support import (
    clear_otel_environ,
    phoenix_installed,
    phoenix_python,
    phoenix_server,
    wait_until,
)

from otel_dynamo._config.settings import Settings
from otel_dynamo._providers.setup import setup_providers

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not phoenix_installed(),
        reason=f"no Phoenix venv at {phoenix_python()} (set OTEL_DYNAMO_PHOENIX_PYTHON)",
    ),
]

ONLY_TRACES = {"OTEL_LOGS_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}


@pytest.fixture(autouse=True)
def _no_stray_otel_variables(monkeypatch):
    clear_otel_environ(monkeypatch)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    with phoenix_server(tmp_path_factory.mktemp("phoenix")) as server:
        yield server


def _send_frame_trace(environ: dict[str, str], tmp_path) -> str:
    """A frame span with a graph child, as otel_dynamo shapes them; returns the trace id."""
    telemetry = setup_providers(
        Settings(output_dir=str(tmp_path)), environ={**ONLY_TRACES, **environ}
    )
    tracer = telemetry.tracer_provider.get_tracer("otel_dynamo")
    frame_attributes = {"torch.compile.id": "0/0", "torch.compile.outcome": "success"}
    with tracer.start_as_current_span("torch.compile.frame", attributes=frame_attributes) as frame:
        graph_attributes = {
            "torch.compile.graph.index": 0,
            "torch.compile.graph.ops": ["aten.mm=2"],
        }
        with tracer.start_as_current_span("torch.compile.graph", attributes=graph_attributes):
            pass
    assert telemetry.shutdown(10.0) is True
    return format(frame.get_span_context().trace_id, "032x")


def _spans(phoenix, project: str, trace_id: str) -> dict[str, dict]:
    query = urllib.parse.urlencode({"trace_id": trace_id})
    found: dict[str, dict] = {}

    def arrived() -> bool:
        try:
            body = phoenix.get_json(f"/v1/projects/{project}/spans?{query}")
        except urllib.error.HTTPError as error:
            if error.code == 404:  # the project appears with its first ingested span
                return False
            raise
        found.update({span["name"]: span for span in body["data"]})
        return len(found) == 2

    assert wait_until(arrived, timeout=20), f"spans of {trace_id} not in {project}: {found}"
    return found


def test_http_spans_land_in_the_resource_project_with_structure(phoenix, tmp_path, monkeypatch):
    """Over OTLP/HTTP: both spans in the project named by the resource, child under parent."""
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "openinference.project.name=otel-dynamo-http")
    environ = {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{phoenix.url}/v1/traces",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
    }
    trace_id = _send_frame_trace(environ, tmp_path)
    spans = _spans(phoenix, "otel-dynamo-http", trace_id)
    frame, graph = spans["torch.compile.frame"], spans["torch.compile.graph"]
    assert (frame["parent_id"], graph["parent_id"]) == (None, frame["context"]["span_id"])
    assert (frame["context"]["trace_id"], graph["context"]["trace_id"]) == (trace_id, trace_id)


def test_http_span_attributes_round_trip(phoenix, tmp_path, monkeypatch):
    """Attribute values (string, int, string list) come back as sent."""
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "openinference.project.name=otel-dynamo-attrs")
    environ = {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{phoenix.url}/v1/traces",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
    }
    spans = _spans(phoenix, "otel-dynamo-attrs", _send_frame_trace(environ, tmp_path))
    assert spans["torch.compile.frame"]["attributes"] == {
        "torch.compile.id": "0/0",
        "torch.compile.outcome": "success",
    }
    assert spans["torch.compile.graph"]["attributes"] == {
        "torch.compile.graph.index": 0,
        "torch.compile.graph.ops": ["aten.mm=2"],
    }


def test_grpc_spans_land_in_the_default_project(phoenix, tmp_path):
    """Over OTLP/gRPC without a project attribute: both spans in the "default" project."""
    environ = {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"http://127.0.0.1:{phoenix.grpc_port}"}
    trace_id = _send_frame_trace(environ, tmp_path)
    spans = _spans(phoenix, "default", trace_id)
    assert (
        spans["torch.compile.graph"]["parent_id"]
        == spans["torch.compile.frame"]["context"]["span_id"]
    )
