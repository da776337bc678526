"""Run spans: started by the tracer's own public start_span from a graph's shared parts,
with the run index added."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import Span as SdkSpan
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider, sampling
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_dynamo import names
from otel_dynamo._recording.boundary import SafeTracer
from otel_dynamo._recording.run_spans import RunSpanParts, RunSpans

GRAPH_ATTRIBUTES = {
    names.ATTR_COMPILE_ID: "0/0",
    names.ATTR_BACKEND: "aot_eager",
    names.ATTR_RUN_KIND: names.RUN_KIND_FORWARD,
    names.ATTR_AOT_GRAPH_NAME: "model__0_forward_1",
}


def traced_setup(**provider_options: Any) -> tuple[trace.Tracer, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(**provider_options)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("test"), exporter


def compile_link(tracer: trace.Tracer) -> trace.SpanContext:
    compile_span = tracer.start_span(names.SPAN_GRAPH)
    compile_span.end()
    return compile_span.get_span_context()


def runs(exporter: InMemorySpanExporter) -> list[Any]:
    return [s for s in exporter.get_finished_spans() if s.name == names.SPAN_RUN_FORWARD]


def test_parts_hold_the_name_attributes_and_the_link_to_the_compile() -> None:
    """A graph's parts: its run span name, its attributes as given, one link to the span
    that compiled it (none for an invalid context)."""
    tracer, _ = traced_setup()
    link = compile_link(tracer)
    run_spans = RunSpans(tracer)
    parts = run_spans.parts(names.SPAN_RUN_FORWARD, GRAPH_ATTRIBUTES, link)
    assert type(parts) is RunSpanParts
    assert (parts.name, dict(parts.attributes)) == (names.SPAN_RUN_FORWARD, GRAPH_ATTRIBUTES)
    assert [each.context for each in parts.links] == [link]
    unlinked = run_spans.parts(names.SPAN_RUN_FORWARD, GRAPH_ATTRIBUTES, trace.INVALID_SPAN_CONTEXT)
    assert unlinked.links == ()


def test_a_run_span_is_a_child_of_the_current_span_with_its_index() -> None:
    """Parent: the user's current span (same trace); attributes: the graph's and the run
    index, an int; link: the compile."""
    tracer, exporter = traced_setup()
    run_spans = RunSpans(tracer)
    with tracer.start_as_current_span("step") as step:
        link = compile_link(tracer)
        run_spans.start(run_spans.parts(names.SPAN_RUN_FORWARD, GRAPH_ATTRIBUTES, link), 3).end()
    (exported,) = runs(exporter)
    assert exported.parent.span_id == step.get_span_context().span_id
    assert exported.context.trace_id == step.get_span_context().trace_id
    assert dict(exported.attributes) == {**GRAPH_ATTRIBUTES, names.ATTR_RUN_INDEX: 3}
    assert type(exported.attributes[names.ATTR_RUN_INDEX]) is int
    assert [linked.context for linked in exported.links] == [link]


def test_every_run_span_has_its_own_span_id() -> None:
    """A thousand run spans of one graph: a thousand span ids and indexes."""
    tracer, exporter = traced_setup()
    run_spans = RunSpans(tracer)
    parts = run_spans.parts(names.SPAN_RUN_FORWARD, GRAPH_ATTRIBUTES, compile_link(tracer))
    for index in range(1000):
        run_spans.start(parts, index).end()
    spans = runs(exporter)
    assert len({s.context.span_id for s in spans}) == 1000
    assert sorted(s.attributes[names.ATTR_RUN_INDEX] for s in spans) == list(range(1000))


class AnnotatingProcessor(SpanProcessor):
    """Sets an attribute at span start, as baggage or enrichment processors do."""

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        span.set_attribute("team", "training")


def test_span_processors_see_a_mutable_span_and_the_run_takes_its_errors() -> None:
    """on_start may annotate the span; the run sets its error type and status until it
    ends; the exported span has all three."""
    tracer, exporter = traced_setup()
    tracer.span_processor.add_span_processor(AnnotatingProcessor())
    run_spans = RunSpans(tracer)
    span = run_spans.start(run_spans.parts(names.SPAN_RUN_FORWARD, GRAPH_ATTRIBUTES, None), 0)
    assert isinstance(span, SdkSpan)
    span.set_attribute(names.ATTR_ERROR_TYPE, "RuntimeError")
    span.set_status(trace.Status(trace.StatusCode.ERROR, "boom"))
    span.end()
    (exported,) = runs(exporter)
    assert exported.attributes["team"] == "training"
    assert exported.attributes[names.ATTR_ERROR_TYPE] == "RuntimeError"
    assert exported.status.status_code is trace.StatusCode.ERROR


def test_the_tracers_sampler_decides() -> None:
    """ALWAYS_OFF: a non-recording span and nothing exported."""
    tracer, exporter = traced_setup(sampler=sampling.ALWAYS_OFF)
    run_spans = RunSpans(tracer)
    span = run_spans.start(run_spans.parts(names.SPAN_RUN_FORWARD, GRAPH_ATTRIBUTES, None), 0)
    span.end()
    assert not span.is_recording()
    assert exporter.get_finished_spans() == ()


class FailingStartProcessor(SpanProcessor):
    def on_start(self, span: Any, parent_context: Any = None) -> None:
        raise RuntimeError("processor bug")


def test_a_processor_failing_at_start_gives_a_no_op_span() -> None:
    """Through SafeTracer, a span processor raising in on_start is reported and the run
    gets a non-recording span; nothing raises into the job."""
    tracer, exporter = traced_setup()
    tracer.span_processor.add_span_processor(FailingStartProcessor())
    run_spans = RunSpans(SafeTracer(tracer))
    span = run_spans.start(run_spans.parts(names.SPAN_RUN_FORWARD, GRAPH_ATTRIBUTES, None), 0)
    assert not span.is_recording()
    assert runs(exporter) == []


def test_a_non_sdk_tracer_gets_its_own_start_span() -> None:
    """Any API tracer serves: the no-op tracer's spans do not record."""
    run_spans = RunSpans(trace.NoOpTracer())
    span = run_spans.start(run_spans.parts(names.SPAN_RUN_FORWARD, GRAPH_ATTRIBUTES, None), 0)
    assert not span.is_recording()


@pytest.mark.parametrize("index", [0, 7])
def test_the_graphs_attributes_are_not_changed_by_a_run(index: int) -> None:
    """Adding the run index leaves the parts' attributes as they were."""
    tracer, _ = traced_setup()
    run_spans = RunSpans(tracer)
    parts = run_spans.parts(names.SPAN_RUN_FORWARD, GRAPH_ATTRIBUTES, None)
    run_spans.start(parts, index).end()
    assert dict(parts.attributes) == GRAPH_ATTRIBUTES
