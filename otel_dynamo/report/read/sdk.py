"""Finished OpenTelemetry SDK spans (``ReadableSpan``) as report spans.

Lets the report's summaries run over spans still in memory, e.g. from an
``InMemorySpanExporter``, exactly as over the files an exporter wrote. Read by
attribute (duck typing), so the report still imports neither torch nor the SDK.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from otel_dynamo.report.read.decode import process_from_attributes
from otel_dynamo.report.read.model import Attributes, AttributeValue, Process, Span, SpanEvent

IN_MEMORY = "<in-memory spans>"
"""What names the process of spans whose resource says nothing about it."""

_REQUIRED = ("name", "context", "start_time", "attributes")


def is_sdk_span(value: object) -> bool:
    """Whether ``value`` looks like a finished SDK span."""
    return all(hasattr(value, field) for field in _REQUIRED)


def spans_from_sdk(spans: Iterable[Any]) -> list[Span]:
    """Report spans of finished SDK spans; TypeError naming the first that is not one."""
    processes: dict[int, Process] = {}
    found = []
    for index, span in enumerate(spans):
        if not is_sdk_span(span):
            raise TypeError(
                f"item {index} is a {type(span).__name__}, not a finished OpenTelemetry span "
                "(expected e.g. InMemorySpanExporter.get_finished_spans() items)"
            )
        resource = getattr(span, "resource", None)
        if id(resource) not in processes:
            processes[id(resource)] = _process(resource)
        found.append(_span(span, processes[id(resource)]))
    return found


def _process(resource: Any) -> Process:
    return process_from_attributes(_attributes(getattr(resource, "attributes", None)), IN_MEMORY)


def _span(span: Any, process: Process) -> Span:
    status = getattr(span, "status", None)
    start = span.start_time or 0
    return Span(
        process=process,
        trace_id=_hex(span.context.trace_id, 32),
        span_id=_hex(span.context.span_id, 16),
        parent_span_id=_hex(span.parent.span_id, 16) if span.parent is not None else "",
        name=str(span.name),
        start_ns=start,
        end_ns=span.end_time or start,
        attributes=_attributes(span.attributes),
        events=tuple(
            SpanEvent(
                name=event.name, time_ns=event.timestamp, attributes=_attributes(event.attributes)
            )
            for event in getattr(span, "events", ())
        ),
        linked_span_ids=tuple(
            _hex(link.context.span_id, 16) for link in getattr(span, "links", ())
        ),
        status_code=_status_code(status),
        status_message=str(getattr(status, "description", None) or ""),
    )


def _hex(value: int, digits: int) -> str:
    return f"{value:0{digits}x}"


def _status_code(status: Any) -> int:
    """The OTLP status code: the SDK's StatusCode values are the same numbers."""
    code = getattr(status, "status_code", None)
    value = getattr(code, "value", 0)
    return value if isinstance(value, int) else 0


def _attributes(attributes: Mapping[str, Any] | None) -> Attributes:
    return {str(key): _value(value) for key, value in (attributes or {}).items()}


def _value(value: Any) -> AttributeValue:
    # The SDK keeps sequences as tuples; decoded files hold lists.
    if isinstance(value, (tuple, list)):
        return [_value(item) for item in value]
    scalar: AttributeValue = value  # already of an attribute value type: the SDK checked it
    return scalar
