"""Run spans built from per-graph parts are the spans the SDK's start_span would give."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import Span as SdkSpan
from opentelemetry.sdk.trace import SpanLimits, SpanProcessor, TracerProvider, sampling
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_dynamo import names
from otel_dynamo._recording.boundary import SafeTracer
from otel_dynamo._recording.run_spans import LeanRunSpans, StandardRunSpans, run_spans_for

GRAPH_ATTRIBUTES = {
    names.ATTR_COMPILE_ID: "0/0",
    names.ATTR_BACKEND: "aot_eager",
    names.ATTR_RUN_KIND: names.RUN_KIND_FORWARD,
    names.ATTR_AOT_GRAPH_NAME: "model__0_forward_1",
}
ID_AND_TIME_KEYS = ("trace_id", "span_id", "start_time", "end_time")


def traced_setup(**provider_options: Any) -> tuple[trace.Tracer, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(**provider_options)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("test"), exporter


def compile_link(tracer: trace.Tracer) -> trace.SpanContext:
    compile_span = tracer.start_span(names.SPAN_GRAPH)
    compile_span.end()
    return compile_span.get_span_context()


def one_run(run_spans: Any, tracer: trace.Tracer, *, index: int = 3) -> trace.Span:
    parts = run_spans.parts(names.SPAN_RUN_FORWARD, GRAPH_ATTRIBUTES, compile_link(tracer))
    span = run_spans.start(parts, index)
    span.end()
    return span


def without_ids(exported: Any) -> dict[str, Any]:
    """The exported JSON form, ids and times blanked (they differ span to span)."""
    data = json.loads(exported.to_json())
    for key in ("context", "parent_id", "start_time", "end_time"):
        data.pop(key, None)
    for link in data["links"]:
        link.pop("context")
    return data


def test_sdk_tracer_with_sdk_sampler_gets_lean_run_spans() -> None:
    """An SDK tracer with the default sampler (also behind SafeTracer) is served lean."""
    tracer, _ = traced_setup()
    assert isinstance(run_spans_for(tracer), LeanRunSpans)
    assert isinstance(run_spans_for(SafeTracer(tracer)), LeanRunSpans)


def test_lean_span_exports_what_start_span_exports() -> None:
    """Same name, kind, attributes, link, resource, scope and status as the SDK's own span."""
    tracer, exporter = traced_setup()
    with tracer.start_as_current_span("step"):
        one_run(LeanRunSpans(tracer, fallback=StandardRunSpans(tracer)), tracer)
        one_run(StandardRunSpans(tracer), tracer)
    lean, standard = (s for s in exporter.get_finished_spans() if s.name == names.SPAN_RUN_FORWARD)
    assert without_ids(lean) == without_ids(standard)
    assert dict(lean.attributes) == {**GRAPH_ATTRIBUTES, names.ATTR_RUN_INDEX: 3}
    assert isinstance(lean.attributes[names.ATTR_RUN_INDEX], int)


def test_lean_span_is_a_child_of_the_current_span_and_links_its_compile() -> None:
    """Parent: the user's current span (same trace); link: the span that compiled the graph."""
    tracer, exporter = traced_setup()
    lean = LeanRunSpans(tracer, fallback=StandardRunSpans(tracer))
    with tracer.start_as_current_span("step") as step:
        link = compile_link(tracer)
        span = lean.start(lean.parts(names.SPAN_RUN_FORWARD, GRAPH_ATTRIBUTES, link), 0)
        span.end()
    exported = next(s for s in exporter.get_finished_spans() if s.name == names.SPAN_RUN_FORWARD)
    assert exported.parent.span_id == step.get_span_context().span_id
    assert exported.context.trace_id == step.get_span_context().trace_id
    assert [linked.context for linked in exported.links] == [link]
    assert exported.context.trace_flags.sampled


def test_root_lean_span_starts_its_own_trace_with_the_sdk_flags() -> None:
    """No current span: a new trace id, no parent, sampled and random-trace-id flags."""
    tracer, _ = traced_setup()
    lean = LeanRunSpans(tracer, fallback=StandardRunSpans(tracer))
    first, second = one_run(lean, tracer), one_run(lean, tracer)
    standard = one_run(StandardRunSpans(tracer), tracer)
    assert first.parent is None
    assert first.get_span_context().trace_id != second.get_span_context().trace_id
    assert first.get_span_context().trace_flags == standard.get_span_context().trace_flags


def test_every_lean_span_has_its_own_span_id() -> None:
    """A thousand run spans of one graph: a thousand span ids."""
    tracer, exporter = traced_setup()
    lean = LeanRunSpans(tracer, fallback=StandardRunSpans(tracer))
    parts = lean.parts(names.SPAN_RUN_FORWARD, GRAPH_ATTRIBUTES, compile_link(tracer))
    for index in range(1000):
        lean.start(parts, index).end()
    runs = [s for s in exporter.get_finished_spans() if s.name == names.SPAN_RUN_FORWARD]
    assert len({s.context.span_id for s in runs}) == 1000
    assert sorted(s.attributes[names.ATTR_RUN_INDEX] for s in runs) == list(range(1000))


class AnnotatingProcessor(SpanProcessor):
    """Sets an attribute at span start, as baggage or enrichment processors do."""

    def __init__(self) -> None:
        self.started: list[Any] = []

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        self.started.append(span)
        span.set_attribute("team", "training")


def test_span_processors_see_a_mutable_span_at_start() -> None:
    """on_start gets the live span (and may annotate it); on_end gets the finished one."""
    tracer, exporter = traced_setup()
    annotating = AnnotatingProcessor()
    tracer.span_processor.add_span_processor(annotating)
    lean = LeanRunSpans(tracer, fallback=StandardRunSpans(tracer))
    span = one_run(lean, tracer)
    assert span in annotating.started
    assert isinstance(span, SdkSpan)
    assert exporter.get_finished_spans()[-1].attributes["team"] == "training"


def test_lean_span_takes_annotations_and_errors_until_it_ends() -> None:
    """set_attribute and set_status work while running; the ended span's attributes are frozen."""
    tracer, exporter = traced_setup()
    lean = LeanRunSpans(tracer, fallback=StandardRunSpans(tracer))
    parts = lean.parts(names.SPAN_RUN_FORWARD, GRAPH_ATTRIBUTES, None)
    span = lean.start(parts, 0)
    span.set_attribute(names.ATTR_ERROR_TYPE, "RuntimeError")
    span.set_status(trace.Status(trace.StatusCode.ERROR, "boom"))
    span.end()
    with pytest.raises(TypeError):
        span.attributes["late"] = 1  # type: ignore[index]
    exported = exporter.get_finished_spans()[-1]
    assert exported.attributes[names.ATTR_ERROR_TYPE] == "RuntimeError"
    assert exported.status.status_code is trace.StatusCode.ERROR
    assert exported.links == ()


def test_always_off_sampler_records_nothing() -> None:
    """ALWAYS_OFF: a non-recording span and nothing exported, as with start_span."""
    tracer, exporter = traced_setup(sampler=sampling.ALWAYS_OFF)
    lean = run_spans_for(tracer)
    assert isinstance(lean, LeanRunSpans)
    span = one_run(lean, tracer)
    assert not span.is_recording()
    assert [s.name for s in exporter.get_finished_spans()] == []


def test_parent_based_sampler_follows_the_parent() -> None:
    """Default ParentBased sampler: unsampled parent, unsampled run; sampled parent, sampled."""
    tracer, exporter = traced_setup()
    lean = LeanRunSpans(tracer, fallback=StandardRunSpans(tracer))
    unsampled = trace.SpanContext(7, 9, is_remote=True, trace_flags=trace.TraceFlags(0))
    with trace.use_span(trace.NonRecordingSpan(unsampled)):
        dropped = one_run(lean, tracer)
    assert not dropped.is_recording()
    assert dropped.get_span_context().trace_id == 7
    with tracer.start_as_current_span("step"):
        kept = one_run(lean, tracer)
    assert kept.get_span_context().trace_flags.sampled
    assert [s.name for s in exporter.get_finished_spans()].count(names.SPAN_RUN_FORWARD) == 1


def test_trace_id_ratio_sampler_is_asked_for_every_span() -> None:
    """Ratio 0.5: each root run span is kept exactly when the sampler keeps its trace id
    (no answer is reused across trace ids), and both answers occur."""
    sampler = sampling.TraceIdRatioBased(0.5)
    tracer, exporter = traced_setup(sampler=sampler)
    lean = run_spans_for(tracer)
    assert isinstance(lean, LeanRunSpans)
    spans = [one_run(lean, tracer) for _ in range(200)]

    def kept(span: trace.Span) -> bool:
        trace_id = span.get_span_context().trace_id
        return sampler.should_sample(None, trace_id, "run").decision.is_sampled()

    assert [isinstance(span, SdkSpan) for span in spans] == [kept(span) for span in spans]
    runs = [s for s in exporter.get_finished_spans() if s.name == names.SPAN_RUN_FORWARD]
    assert 0 < len(runs) < 200
    assert len(runs) == sum(kept(span) for span in spans)


class TaggingSampler(sampling.Sampler):
    """A user's sampler that adds an attribute to every span it samples."""

    def should_sample(  # noqa: PLR0917 (the SDK's signature)
        self, parent_context, trace_id, name, kind=None, attributes=None, links=None
    ):
        return sampling.SamplingResult(
            sampling.Decision.RECORD_AND_SAMPLE, {**(attributes or {}), "sampled.by": "tagger"}
        )

    def get_description(self) -> str:
        return "TaggingSampler"


def test_a_custom_sampler_gets_the_sdk_start_span() -> None:
    """A sampler of the user's own may rewrite attributes: start_span is used, and it can."""
    tracer, exporter = traced_setup(sampler=TaggingSampler())
    run_spans = run_spans_for(tracer)
    assert isinstance(run_spans, StandardRunSpans)
    one_run(run_spans, tracer)
    assert exporter.get_finished_spans()[-1].attributes["sampled.by"] == "tagger"


def test_attribute_limits_apply_as_in_the_sdk() -> None:
    """Count and length limits: the same attributes kept, truncated and dropped as start_span."""
    limits = SpanLimits(max_span_attributes=3, max_span_attribute_length=5)
    tracer, exporter = traced_setup(span_limits=limits)
    one_run(LeanRunSpans(tracer, fallback=StandardRunSpans(tracer)), tracer)
    one_run(StandardRunSpans(tracer), tracer)
    lean, standard = (s for s in exporter.get_finished_spans() if s.name == names.SPAN_RUN_FORWARD)
    assert dict(lean.attributes) == dict(standard.attributes)
    assert lean.dropped_attributes == standard.dropped_attributes == 2
    assert lean.attributes[names.ATTR_RUN_INDEX] == 3


def test_a_non_sdk_tracer_gets_its_own_start_span() -> None:
    """The API's no-op tracer (or any other implementation) is used through start_span."""
    assert isinstance(run_spans_for(trace.NoOpTracer()), StandardRunSpans)


def test_an_sdk_span_with_unknown_fields_turns_the_lean_path_off(monkeypatch) -> None:
    """If the SDK's Span grows a field the lean path does not set, start_span is used."""
    original_init = SdkSpan.__init__

    def init_with_new_field(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self._new_sdk_field = None

    monkeypatch.setattr(SdkSpan, "__init__", init_with_new_field)
    tracer, _ = traced_setup()
    assert isinstance(run_spans_for(tracer), StandardRunSpans)


def test_a_lean_path_failure_falls_back_to_start_span(monkeypatch, caplog) -> None:
    """An error inside the lean path is logged once and the span still comes, from start_span."""
    tracer, exporter = traced_setup()
    lean = LeanRunSpans(tracer, fallback=StandardRunSpans(tracer))
    monkeypatch.setattr(lean, "_build", lambda *args: 1 / 0)
    with caplog.at_level(logging.DEBUG, logger="otel_dynamo"):
        one_run(lean, tracer)
        one_run(lean, tracer)
    runs = [s for s in exporter.get_finished_spans() if s.name == names.SPAN_RUN_FORWARD]
    assert [s.attributes[names.ATTR_RUN_INDEX] for s in runs] == [3, 3]
    failures = [r for r in caplog.records if "lean run spans failed" in r.getMessage()]
    assert len(failures) == 1


class FailingStartProcessor(SpanProcessor):
    def on_start(self, span: Any, parent_context: Any = None) -> None:
        raise RuntimeError("processor bug")


def test_a_processor_failing_at_start_gives_a_no_op_span() -> None:
    """A span processor raising in on_start is reported; the run gets a no-op span."""
    tracer, exporter = traced_setup()
    lean = LeanRunSpans(tracer, fallback=StandardRunSpans(SafeTracer(tracer)))
    parts = lean.parts(names.SPAN_RUN_FORWARD, GRAPH_ATTRIBUTES, compile_link(tracer))
    tracer.span_processor.add_span_processor(FailingStartProcessor())
    assert lean.start(parts, 0) is trace.INVALID_SPAN
    assert lean.start(parts, 1) is trace.INVALID_SPAN
    assert [s.name for s in exporter.get_finished_spans()] == [names.SPAN_GRAPH]
