"""Real compiles report structured log events and OpenTelemetry metrics, not only spans."""

from __future__ import annotations

import pytest
import torch
from _spans import named
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.trace import format_span_id

import otel_dynamo
from otel_dynamo import names


@pytest.fixture
def reader():
    return InMemoryMetricReader()


@pytest.fixture
def traced(provider, logger_provider, reader):
    def make(backend: str = "aot_eager", **options):
        return otel_dynamo.traced(
            backend,
            tracer_provider=provider,
            logger_provider=logger_provider,
            meter_provider=MeterProvider(metric_readers=[reader], shutdown_on_exit=False),
            **options,
        )

    return make


def events(records, name: str) -> list:
    return [r.log_record for r in records.get_finished_logs() if r.log_record.event_name == name]


def points(reader) -> dict[str, list]:
    """metric name -> its data points, from one collection."""
    found: dict[str, list] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                found.setdefault(metric.name, []).extend(metric.data.data_points)
    return found


def with_break(x):
    x = x * 2
    print("break")
    return x.relu()


def train_step(fn, batch: int = 4) -> None:
    weight = torch.randn(3, requires_grad=True)
    fn(torch.randn(batch, 3) * weight).sum().backward()


def test_frame_compiled_event_carries_the_frame_span_context(traced, exporter, records):
    """Each frame compile logs torch.compile.frame_compiled in the frame span's trace context."""
    torch.compile(lambda x: x.sin() + 1, backend=traced())(torch.ones(3))
    (record,) = events(records, names.LOG_FRAME_COMPILED)
    (frame,) = named(exporter.get_finished_spans(), names.SPAN_FRAME)
    assert record.trace_id == frame.context.trace_id
    assert record.span_id == frame.context.span_id
    assert record.attributes[names.ATTR_COMPILE_ID] == "0/0"
    assert record.attributes[names.ATTR_OUTCOME] == names.OUTCOME_SUCCESS
    assert record.attributes[names.ATTR_BACKEND] == "aot_eager"
    assert isinstance(record.attributes["duration_s"], float)


def test_graph_compiled_event_names_backend_and_op_count(traced, exporter, records):
    """The backend's graph compile logs torch.compile.graph_compiled under the graph span."""
    torch.compile(lambda x: x.sin() + 1, backend=traced())(torch.ones(3))
    (record,) = events(records, names.LOG_GRAPH_COMPILED)
    (graph,) = named(exporter.get_finished_spans(), names.SPAN_GRAPH)
    assert record.span_id == graph.context.span_id
    assert record.attributes[names.ATTR_GRAPH_OP_COUNT] == 2
    assert isinstance(record.attributes[names.ATTR_GRAPH_INDEX], int)


def test_graph_break_event_has_reason_and_kind(traced, records):
    """A graph break logs torch.compile.graph_break with its reason and kind, as a warning."""
    torch.compile(with_break, backend=traced())(torch.ones(3))
    found = events(records, names.LOG_GRAPH_BREAK)
    assert len(found) == 1
    assert "print" in found[0].attributes[names.ATTR_GRAPH_BREAK_REASON].lower()
    assert isinstance(found[0].attributes[names.ATTR_GRAPH_BREAK_KIND], str)
    assert found[0].severity_text == "WARN"
    assert found[0].attributes[names.ATTR_BACKEND] == "aot_eager"


def test_recompile_event_carries_the_failed_guard(traced, records):
    """A dtype change logs torch.compile.recompile with the failed guard as its reason."""
    fn = torch.compile(lambda x: x * 2, backend=traced(), dynamic=False)
    fn(torch.ones(3))
    fn(torch.ones(3, dtype=torch.float64))
    (record,) = events(records, names.LOG_RECOMPILE)
    assert "dtype" in record.attributes[names.ATTR_RECOMPILE_REASON]
    assert record.attributes[names.ATTR_COMPILE_ID] == "0/1"
    assert record.attributes[names.ATTR_BACKEND] == "aot_eager"


def test_compile_failure_event_records_the_exception(traced, exporter, records):
    """A failing backend logs torch.compile.compile_failed with exception.* attributes."""
    fn = torch.compile(torch.relu, backend=traced("relu_compile_error_TESTING_ONLY"))
    with pytest.raises(Exception, match="ReluCompileError"):
        fn(torch.ones(3))
    (record,) = events(records, names.LOG_COMPILE_FAILED)
    (graph,) = named(exporter.get_finished_spans(), names.SPAN_GRAPH)
    assert record.span_id == graph.context.span_id
    assert record.attributes["exception.type"].endswith("ReluCompileError")
    assert record.attributes[names.ATTR_STAGE] == "compile"
    assert format_span_id(record.span_id) == format_span_id(graph.context.span_id)
    assert record.severity_text == "ERROR"


def test_run_failure_event_records_the_exception(traced, records):
    """A compiled graph that raises while running logs torch.compile.run_failed."""
    fn = torch.compile(torch.relu, backend=traced("relu_runtime_error_TESTING_ONLY"))
    with pytest.raises(Exception, match="ReluRuntimeError"):
        fn(torch.ones(3))
    (record,) = events(records, names.LOG_RUN_FAILED)
    assert record.attributes[names.ATTR_STAGE] == "run"
    assert "ReluRuntimeError" in record.attributes["exception.message"]


def test_compiles_counter_by_backend_and_outcome(traced, reader):
    """torch.compile.compiles counts frame compiles by backend and outcome."""
    fn = torch.compile(lambda x: x.cos(), backend=traced())
    fn(torch.ones(3))
    (point,) = points(reader)[names.METRIC_COMPILES]
    assert point.value == 1
    assert dict(point.attributes) == {
        names.ATTR_BACKEND: "aot_eager",
        names.ATTR_OUTCOME: names.OUTCOME_SUCCESS,
    }


def test_compile_duration_histogram_has_buckets_for_10ms_to_10min(traced, reader):
    """torch.compile.compile.duration is a histogram in seconds, buckets 10 ms .. 10 min."""
    torch.compile(lambda x: x.cos(), backend=traced())(torch.ones(3))
    (point,) = points(reader)[names.METRIC_COMPILE_DURATION]
    assert point.count == 1 and point.sum > 0
    assert point.explicit_bounds[0] == 0.01 and point.explicit_bounds[-1] == 600.0


def test_graph_break_and_recompile_counters(traced, reader):
    """Breaks are counted by kind, recompiles by backend."""
    fn = torch.compile(with_break, backend=traced(), dynamic=False)
    fn(torch.ones(3))
    fn(torch.ones(3, dtype=torch.float64))
    found = points(reader)
    breaks = found[names.METRIC_GRAPH_BREAKS]
    assert sum(p.value for p in breaks) >= 2
    assert all(names.ATTR_GRAPH_BREAK_KIND in p.attributes for p in breaks)
    assert sum(p.value for p in found[names.METRIC_RECOMPILES]) >= 1


def test_runs_counter_counts_every_run_not_only_recorded_ones(traced, reader):
    """torch.compile.runs counts all 20 runs although the default policy records a few."""
    fn = torch.compile(lambda x: x + 1, backend=traced())
    for _ in range(20):
        fn(torch.ones(3))
    runs = {p.attributes[names.ATTR_RUN_KIND]: p.value for p in points(reader)[names.METRIC_RUNS]}
    assert runs == {names.RUN_KIND_INFERENCE: 20}


def test_training_step_counts_forward_and_backward_runs(traced, reader):
    """A training step counts one forward and one backward run, with run durations recorded."""
    fn = torch.compile(lambda x: x.sin(), backend=traced())
    train_step(fn)
    found = points(reader)
    runs = {p.attributes[names.ATTR_RUN_KIND]: p.value for p in found[names.METRIC_RUNS]}
    assert runs == {names.RUN_KIND_FORWARD: 1, names.RUN_KIND_BACKWARD: 1}
    kinds = {p.attributes[names.ATTR_RUN_KIND] for p in found[names.METRIC_RUN_DURATION]}
    assert kinds == {names.RUN_KIND_FORWARD, names.RUN_KIND_BACKWARD}


def test_failures_counter_by_stage_and_error_type(traced, reader):
    """torch.compile.failures counts a compile failure with its stage and error.type."""
    fn = torch.compile(torch.relu, backend=traced("relu_compile_error_TESTING_ONLY"))
    with pytest.raises(Exception, match="ReluCompileError"):
        fn(torch.ones(3))
    (point,) = points(reader)[names.METRIC_FAILURES]
    assert point.attributes[names.ATTR_STAGE] == "compile"
    assert point.attributes[names.ATTR_ERROR_TYPE].endswith("ReluCompileError")


def test_guards_histogram_per_frame(traced, reader):
    """torch.compile.guards.per_frame records one value per frame compile."""
    torch.compile(lambda x: x.cos(), backend=traced())(torch.ones(3))
    (point,) = points(reader)[names.METRIC_GUARDS]
    assert point.count == 1 and point.sum >= 1


def test_cache_entries_histogram_counts_what_each_compile_found(traced, reader):
    """torch.compile.frame.cache_entries: a function compiled for three dtypes records 0,
    1 and 2 (the entries already cached for its code), by backend, in the 0, 1, 2 buckets."""
    compiled = torch.compile(lambda x: x + 1, backend=traced("eager"), dynamic=False)
    for dtype in (torch.float32, torch.float64, torch.int64):
        compiled(torch.ones(3, dtype=dtype))
    (point,) = points(reader)[names.METRIC_CACHE_ENTRIES]
    assert (point.count, point.sum) == (3, 3)
    assert list(point.bucket_counts[:4]) == [1, 1, 1, 0]
    assert dict(point.attributes) == {names.ATTR_BACKEND: "eager"}


def test_still_compiling_event_for_a_slow_compile(provider, logger_provider, records, monkeypatch):
    """A compile running past OTEL_DYNAMO_SLOW_COMPILE_SECONDS logs still_compiling."""
    import time

    monkeypatch.setenv("OTEL_DYNAMO_SLOW_COMPILE_SECONDS", "0.2")
    monkeypatch.setenv("OTEL_DYNAMO_LOG", "off")

    def slow_backend(gm, example_inputs):
        time.sleep(0.6)
        return gm.forward

    backend = otel_dynamo.traced(
        slow_backend, tracer_provider=provider, logger_provider=logger_provider
    )
    torch.compile(lambda x: x.tan(), backend=backend)(torch.ones(3))
    (record, *_) = events(records, names.LOG_STILL_COMPILING)
    assert record.attributes[names.ATTR_COMPILE_ID] == "0/0"
    assert record.attributes[names.ATTR_COMPILE_ELAPSED] >= 0.2


def test_compile_duration_exemplar_points_at_the_frame_span(traced, exporter, reader):
    """The compile-duration histogram carries an exemplar with the frame span's trace id."""
    torch.compile(lambda x: x.exp(), backend=traced())(torch.ones(3))
    (point,) = points(reader)[names.METRIC_COMPILE_DURATION]
    (frame,) = named(exporter.get_finished_spans(), names.SPAN_FRAME)
    assert {e.trace_id for e in point.exemplars} == {frame.context.trace_id}


def test_every_signal_names_its_scope_version_and_schema(traced, exporter, records, reader):
    """Spans, log events and metrics of a compile with a graph break all come from scope
    otel_dynamo, version the package's, schema_url names.SCHEMA_URL."""
    from otel_dynamo.version import __version__

    torch.compile(with_break, backend=traced("eager"))(torch.ones(3))
    expected = (names.INSTRUMENTATION_NAME, __version__, names.SCHEMA_URL)
    spans = exporter.get_finished_spans()
    logs = records.get_finished_logs()
    data = reader.get_metrics_data()
    metric_scopes = [
        (scope.scope.name, scope.scope.version, scope.scope.schema_url)
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
    ]
    assert spans and logs and metric_scopes
    assert {
        (
            s.instrumentation_scope.name,
            s.instrumentation_scope.version,
            s.instrumentation_scope.schema_url,
        )
        for s in spans
    } == {expected}
    assert {
        (
            r.instrumentation_scope.name,
            r.instrumentation_scope.version,
            r.instrumentation_scope.schema_url,
        )
        for r in logs
    } == {expected}
    assert set(metric_scopes) == {expected}
