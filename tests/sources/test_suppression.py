"""OpenTelemetry's suppress_instrumentation(): compiles and runs inside it record nothing
and behave as untraced; the same code outside it is traced as usual."""

from __future__ import annotations

import torch
from _spans import named
from opentelemetry.instrumentation.utils import suppress_instrumentation

import otel_dynamo
from otel_dynamo import names


def _double_relu(x: torch.Tensor) -> torch.Tensor:
    return (x * 2).relu()


def test_a_compile_inside_suppression_records_nothing(provider, exporter):
    """Compiled and run while suppressed: no span at all and the eager result; compiled
    again (after a reset) outside: frame, graph and run spans."""
    backend = otel_dynamo.traced("aot_eager", tracer_provider=provider, run_spans="all")
    x = torch.randn(8)
    with suppress_instrumentation():
        result = torch.compile(_double_relu, backend=backend)(x)
    assert torch.equal(result, _double_relu(x))
    assert exporter.get_finished_spans() == ()
    torch._dynamo.reset()
    torch.compile(_double_relu, backend=backend)(x)
    found = {span.name for span in exporter.get_finished_spans()}
    assert {names.SPAN_FRAME, names.SPAN_GRAPH, names.SPAN_RUN_INFERENCE} <= found


def test_runs_inside_suppression_record_no_run_span(provider, exporter):
    """A function compiled outside: its run inside suppress_instrumentation() gets no run
    span, the runs before and after do."""
    backend = otel_dynamo.traced("aot_eager", tracer_provider=provider, run_spans="all")
    compiled = torch.compile(_double_relu, backend=backend)
    x = torch.randn(8)
    compiled(x)
    with suppress_instrumentation():
        assert torch.equal(compiled(x), _double_relu(x))
    compiled(x)
    runs = named(exporter.get_finished_spans(), names.SPAN_RUN_INFERENCE)
    assert [span.attributes[names.ATTR_RUN_INDEX] for span in runs] == [1, 3]
