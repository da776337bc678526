"""otel_dynamo/_providers/json_lines.py: the embedded default's files are OTLP/JSON, line
for line what OpenTelemetry's own JSON-file exporter writes for the same telemetry (where
the installed train has one), on any release train."""

from __future__ import annotations

import io
import json

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, Status, StatusCode

from otel_dynamo._providers.json_lines import (
    ID_FIELDS,
    JsonLinesMetricExporter,
    JsonLinesSpanExporter,
)

RESOURCE = Resource.create({"service.name": "json-lines-test", "process.pid": 7})


def _spans():
    """Finished spans with every kind of attribute value, an event, a link, a parent and
    an error status."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=RESOURCE)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("otel_dynamo.test", "1.2")
    with tracer.start_as_current_span("linked") as linked:
        pass
    attributes = {"s": "text", "i": 2**40, "f": 1.5, "b": True, "l": [1, 2], "ls": ["a"]}
    with tracer.start_as_current_span(
        "outer", attributes=attributes, links=[Link(linked.get_span_context(), {"k": "v"})]
    ) as outer:
        outer.add_event("event", {"n": 3})
        with tracer.start_as_current_span("inner") as inner:
            inner.set_status(Status(StatusCode.ERROR, "broken"))
    provider.shutdown()
    return memory.get_finished_spans()


def _metrics():
    reader = InMemoryMetricReader()
    provider = MeterProvider(resource=RESOURCE, metric_readers=[reader])
    meter = provider.get_meter("otel_dynamo.test")
    meter.create_counter("compiles", unit="{compile}").add(3, {"backend": "eager"})
    meter.create_histogram("seconds", unit="s").record(0.25, {"backend": "eager"})
    meter.create_up_down_counter("live").add(-1)
    data = reader.get_metrics_data()
    provider.shutdown()
    return data


def _lines(exporter_class, batch):
    """What an exporter of ours writes for ``batch``."""
    stream = io.StringIO()
    stream.close = lambda: None  # keep it readable after the exporter's shutdown
    exporter = exporter_class(stream)
    exporter.export(batch)
    exporter.shutdown()
    return stream.getvalue()


def test_span_line_is_the_json_file_exporters():
    """Spans: the line parses to exactly the dict OpenTelemetry's FileSpanExporter writes
    (ids in hex, enums as integers, 64-bit integers as strings)."""
    reference = pytest.importorskip("opentelemetry.exporter.otlp.json.file").FileSpanExporter
    spans = _spans()
    ours = _lines(JsonLinesSpanExporter, spans)
    stream = io.StringIO()
    reference(stream=stream).export(spans)
    theirs = stream.getvalue()
    assert ours.count("\n") == 1 and ours.endswith("\n")
    assert json.loads(ours) == json.loads(theirs)


def test_metric_line_is_the_json_file_exporters():
    """Metrics: a counter, a histogram and an up-down counter parse to exactly what
    OpenTelemetry's FileMetricExporter writes."""
    module = pytest.importorskip("opentelemetry.exporter.otlp.json.file.metric_exporter")
    data = _metrics()
    stream = io.StringIO()
    module.FileMetricExporter(stream=stream).export(data)
    assert json.loads(_lines(JsonLinesMetricExporter, data)) == json.loads(stream.getvalue())


def test_log_line_is_the_json_file_exporters():
    """Log records (body, attributes, severity, trace context) parse to exactly what
    OpenTelemetry's FileLogExporter writes."""
    module = pytest.importorskip("opentelemetry.exporter.otlp.json.file._log_exporter")
    log_export = pytest.importorskip("otel_dynamo._providers.log_export")
    from opentelemetry._logs import SeverityNumber
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    memory = InMemoryLogRecordExporter()
    provider = LoggerProvider(resource=RESOURCE)
    provider.add_log_record_processor(SimpleLogRecordProcessor(memory))
    tracer_provider = TracerProvider()
    with tracer_provider.get_tracer("t").start_as_current_span("within"):
        provider.get_logger("otel_dynamo.test").emit(
            body="graph text",
            attributes={"event.name": "x", "n": 2},
            severity_number=SeverityNumber.INFO,
        )
    records = memory.get_finished_logs()
    stream = io.StringIO()
    module.FileLogExporter(stream=stream).export(records)
    ours = _lines(log_export.JsonLinesLogExporter, records)
    assert json.loads(ours) == json.loads(stream.getvalue())


def test_ids_are_hex_of_the_spans_own_ids():
    """On any train: trace, span, parent and link ids are the lowercase hex of the span
    context's integers, 32 and 16 digits."""
    spans = {span.name: span for span in _spans()}
    request = json.loads(_lines(JsonLinesSpanExporter, list(spans.values())))
    written = {s["name"]: s for s in request["resourceSpans"][0]["scopeSpans"][0]["spans"]}
    inner, outer = written["inner"], written["outer"]
    assert inner["traceId"] == format(spans["inner"].context.trace_id, "032x")
    assert inner["spanId"] == format(spans["inner"].context.span_id, "016x")
    assert inner["parentSpanId"] == outer["spanId"]
    assert outer["links"][0]["spanId"] == format(spans["linked"].context.span_id, "016x")
    assert {"traceId", "spanId", "parentSpanId"} == ID_FIELDS
    assert outer["attributes"][1] == {"key": "i", "value": {"intValue": str(2**40)}}


def test_an_empty_batch_writes_nothing():
    """A batch that encodes to an empty request leaves the stream empty and succeeds."""
    stream = io.StringIO()
    exporter = JsonLinesSpanExporter(stream)
    assert exporter.export([]) is SpanExportResult.SUCCESS
    assert stream.getvalue() == ""


def test_after_shutdown_exports_fail_and_the_stream_is_closed():
    """shutdown() closes the stream; a later export writes nothing and fails."""
    stream = io.StringIO()
    exporter = JsonLinesSpanExporter(stream)
    exporter.shutdown()
    assert stream.closed
    assert exporter.export(_spans()) is SpanExportResult.FAILURE
