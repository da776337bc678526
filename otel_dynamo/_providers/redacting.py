"""The exporters' side of the one redaction: every string of a span (attributes, event
attributes, status description) and of a log record (body, attributes) passes through
the process's :class:`~otel_dynamo._config.redaction.Redactor` before it is exported.
A span or record with nothing to redact is exported as it is (no copy)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.trace import Status

Redact = Callable[[str], str]


def _value(value: Any, redact: Redact) -> Any:
    """``value`` with its strings redacted: the same object when none changed (the
    redaction returns a string it leaves alone as it is)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, (list, tuple)):
        items = [_value(item, redact) for item in value]
        changed = any(new is not old for new, old in zip(items, value, strict=True))
        return type(value)(items) if changed else value
    if isinstance(value, Mapping):
        found = _attributes(value, redact)
        return value if found is None else found
    return value


def _attributes(attributes: Mapping[str, Any] | None, redact: Redact) -> dict[str, Any] | None:
    """The attributes with their strings redacted; None when nothing changed."""
    if not attributes:
        return None
    found = {key: _value(value, redact) for key, value in attributes.items()}
    changed = any(found[key] is not value for key, value in attributes.items())
    return found if changed else None


def redacted_spans(spans: Sequence[ReadableSpan], redact: Redact) -> Sequence[ReadableSpan]:
    """``spans`` with every string redacted; the same objects where nothing was."""
    return [_span(span, redact) for span in spans]


def _span(span: ReadableSpan, redact: Redact) -> ReadableSpan:
    attributes = _attributes(span.attributes, redact)
    events = [(event, _attributes(event.attributes, redact)) for event in span.events]
    description = span.status.description
    shown = redact(description) if description else description
    if attributes is None and all(found is None for _, found in events) and shown == description:
        return span
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=attributes if attributes is not None else span.attributes,
        events=[
            event if found is None else Event(event.name, found, event.timestamp)
            for event, found in events
        ],
        links=span.links,
        kind=span.kind,
        status=Status(span.status.status_code, shown),
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


def redacted_logs(
    batch: Sequence[ReadableLogRecord], redact: Redact
) -> Sequence[ReadableLogRecord]:
    """``batch`` with every string of each record redacted; the same objects where
    nothing was."""
    return [_log(record, redact) for record in batch]


def _log(record: ReadableLogRecord, redact: Redact) -> ReadableLogRecord:
    log_record = record.log_record
    body = _value(log_record.body, redact)
    attributes = _attributes(log_record.attributes, redact)
    if attributes is None and body == log_record.body:
        return record
    shown = copy.copy(log_record)
    shown.body = body
    if attributes is not None:
        shown.attributes = attributes
    return ReadableLogRecord(
        shown,
        resource=record.resource,
        instrumentation_scope=record.instrumentation_scope,
        limits=record.limits,
    )
