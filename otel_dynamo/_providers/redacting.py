"""Spans and log records as the safe exporters hand them on: the exporters' side of the
one redaction, and the resource of the process that exports them.

Every string of a span (attributes, event attributes, status description) and of a log
record (body, attributes; ``log_export.logs_as_exported``) passes through the process's
:class:`~otel_dynamo._config.redaction.Redactor`; the resource's ``process.pid`` names
the exporting process (a forked child's, where the SDK cannot update its resource:
``resources.of_this_process``). A span or record with nothing to change is exported as
it is (no copy)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.trace import Status

from otel_dynamo._providers.resources import of_this_process

Redact = Callable[[str], str]


def redacted_value(value: Any, redact: Redact) -> Any:
    """``value`` with its strings redacted: the same object when none changed (the
    redaction returns a string it leaves alone as it is)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, (list, tuple)):
        items = [redacted_value(item, redact) for item in value]
        changed = any(new is not old for new, old in zip(items, value, strict=True))
        return type(value)(items) if changed else value
    if isinstance(value, Mapping):
        found = redacted_attributes(value, redact)
        return value if found is None else found
    return value


def redacted_attributes(
    attributes: Mapping[str, Any] | None, redact: Redact
) -> dict[str, Any] | None:
    """The attributes with their strings redacted; None when nothing changed."""
    if not attributes:
        return None
    found = {key: redacted_value(value, redact) for key, value in attributes.items()}
    changed = any(found[key] is not value for key, value in attributes.items())
    return found if changed else None


def spans_as_exported(spans: Sequence[ReadableSpan], redact: Redact) -> Sequence[ReadableSpan]:
    """``spans`` with every string redacted and the resource naming this process
    (``resources.of_this_process``); the same objects where nothing changed."""
    pid = os.getpid()
    return [_span(span, redact, pid) for span in spans]


def _span(span: ReadableSpan, redact: Redact, pid: int) -> ReadableSpan:
    attributes = redacted_attributes(span.attributes, redact)
    events = [(event, redacted_attributes(event.attributes, redact)) for event in span.events]
    description = span.status.description
    shown = redact(description) if description else description
    resource = span.resource if span.resource is None else of_this_process(span.resource, pid)
    if (
        attributes is None
        and all(found is None for _, found in events)
        and shown == description
        and resource is span.resource
    ):
        return span
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=resource,
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
