"""A real traced torch.compile job exporting over OTLP to real receivers.

The job (tests/programs/compile_job.py) is enabled by OTEL_DYNAMO_ENABLED and the
standard endpoint variables only; oteltest's gRPC and HTTP sinks receive all three
signals, and Arize Phoenix stores the trace, which is queried back by trace id.
"""

from __future__ import annotations

import subprocess
import sys
import urllib.error
import urllib.parse
from pathlib import Path

import pytest
from _export_support import (
    child_environ,
    free_port,
    grpc_sink,
    http_sink,
    phoenix_installed,
    phoenix_python,
    phoenix_server,
    proto_attributes,
    wait_until,
)

from otel_dynamo import names

JOB = Path(__file__).parents[1] / "programs" / "compile_job.py"
TIMEOUT_S = 240
pytestmark = pytest.mark.slow


def run_job(tmp_path: Path, **environ: str) -> None:
    env = child_environ(
        JOB_BACKEND="aot_eager",
        OTEL_DYNAMO_ENABLED="true",
        OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path),
        OTEL_METRIC_EXPORT_INTERVAL="500",
        **environ,
    )
    done = subprocess.run(
        [sys.executable, str(JOB)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture(params=["grpc", "http/protobuf"])
def received(request, tmp_path):
    """What a real OTLP receiver got from one traced job over ``protocol``."""
    port = free_port()
    sink = grpc_sink if request.param == "grpc" else http_sink
    with sink(port) as collected:
        run_job(
            tmp_path,
            OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{port}",
            OTEL_EXPORTER_OTLP_PROTOCOL=request.param,
        )
        assert wait_until(lambda: collected.spans() and collected.log_records(), timeout=20)
        yield collected


def test_compile_spans_arrive_with_their_structure(received):
    """Frame, graph, AOT and run spans arrive; each graph span is a child of a frame span."""
    spans = received.spans()
    by_id = {span.span_id: span for span in spans}
    graphs = [s for s in spans if s.name == names.SPAN_GRAPH]
    assert graphs and all(by_id[g.parent_span_id].name == names.SPAN_FRAME for g in graphs)
    assert {names.SPAN_AOT_FORWARD, names.SPAN_RUN_FORWARD, names.SPAN_RUN_BACKWARD} <= {
        s.name for s in spans
    }


def test_graph_span_attributes_arrive_typed(received):
    """A graph span's backend is a string and its op count an int on the wire."""
    graph = next(s for s in received.spans() if s.name == names.SPAN_GRAPH)
    attributes = proto_attributes(graph.attributes)
    assert attributes[names.ATTR_BACKEND] == "aot_eager"
    assert isinstance(attributes[names.ATTR_GRAPH_OP_COUNT], int)


def test_log_events_arrive_in_their_span_context(received):
    """Each log record arriving carries the trace and span id of a span that arrived too."""
    spans = {(s.trace_id, s.span_id) for s in received.spans()}
    records = received.log_records()
    assert {r.event_name for r in records} >= {names.LOG_FRAME_COMPILED, names.LOG_GRAPH_BREAK}
    assert all((r.trace_id, r.span_id) in spans for r in records)


def test_metrics_arrive(received):
    """The compile and run metrics arrive over OTLP."""
    assert wait_until(lambda: names.METRIC_COMPILES in received.metric_names(), timeout=10)
    assert {names.METRIC_RUNS, names.METRIC_GRAPHS} <= received.metric_names()


@pytest.mark.skipif(
    not phoenix_installed(),
    reason=f"no Phoenix venv at {phoenix_python()} (.ci/setup.sh installs it)",
)
def test_phoenix_stores_the_compile_trace_queryable_by_trace_id(tmp_path):
    """Phoenix returns the job's frame trace by trace id: graph span under frame span."""
    (tmp_path / "phoenix").mkdir()
    with phoenix_server(tmp_path / "phoenix") as phoenix:
        run_job(
            tmp_path,
            OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=f"{phoenix.url}/v1/traces",
            OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="http/protobuf",
            OTEL_LOGS_EXPORTER="none",
            OTEL_METRICS_EXPORTER="none",
            OTEL_RESOURCE_ATTRIBUTES="openinference.project.name=otel-dynamo-e2e",
        )
        trace_id = _first_frame_trace(tmp_path, phoenix)
        spans = _trace(phoenix, "otel-dynamo-e2e", trace_id)
    frame = next(s for s in spans if s["name"] == names.SPAN_FRAME)
    graph = next(s for s in spans if s["name"] == names.SPAN_GRAPH)
    assert frame["parent_id"] is None
    assert graph["parent_id"] == frame["context"]["span_id"]
    assert graph["attributes"][names.ATTR_BACKEND] == "aot_eager"
    assert frame["attributes"][names.ATTR_OUTCOME] == names.OUTCOME_SUCCESS


def _first_frame_trace(tmp_path: Path, phoenix) -> str:
    """Trace id of a frame span Phoenix holds (listed through its project spans API)."""
    found: list[str] = []

    def listed() -> bool:
        try:
            body = phoenix.get_json("/v1/projects/otel-dynamo-e2e/spans?limit=100")
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return False
            raise
        found.extend(
            s["context"]["trace_id"] for s in body["data"] if s["name"] == names.SPAN_FRAME
        )
        return bool(found)

    # Phoenix ingests in its own time; on a loaded 2-core machine that took over 30 s.
    assert wait_until(listed, timeout=120), "no frame span reached Phoenix"
    return found[0]


def _trace(phoenix, project: str, trace_id: str) -> list[dict]:
    query = urllib.parse.urlencode({"trace_id": trace_id})
    return phoenix.get_json(f"/v1/projects/{project}/spans?{query}")["data"]
