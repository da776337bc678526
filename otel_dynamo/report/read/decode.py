"""Decode one OTLP/JSON export request (a parsed line) into report records.

Follows the OTLP/JSON mapping leniently, because files may come from other SDKs or the
Collector: 64-bit integers may be strings or numbers, any field may be missing, and
camelCase or snake_case field names are both accepted.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypedDict

from otel_dynamo import names
from otel_dynamo.report.read.model import (
    Attributes,
    AttributeValue,
    LogRecord,
    Process,
    Span,
    SpanEvent,
)

SIGNAL_TRACES = "traces"
SIGNAL_LOGS = "logs"
SIGNAL_METRICS = "metrics"

REQUEST_KEYS = {
    "resourceSpans": SIGNAL_TRACES,
    "resource_spans": SIGNAL_TRACES,
    "resourceLogs": SIGNAL_LOGS,
    "resource_logs": SIGNAL_LOGS,
    "resourceMetrics": SIGNAL_METRICS,
    "resource_metrics": SIGNAL_METRICS,
}
"""Top-level key of an export request, to the signal it carries."""

UNREADABLE_RECORD = (RecursionError, ValueError, OverflowError, TypeError, AttributeError)
"""What decoding a hostile record can raise; the line becomes a problem."""

_METRIC_DATA_KINDS = ("gauge", "sum", "histogram", "exponentialHistogram", "summary")


def field(message: Mapping[str, Any], camel: str, snake: str | None = None) -> Any:
    """A message field under its camelCase (OTLP/JSON) or snake_case (protobuf) name."""
    value = message.get(camel)
    if value is None and snake is not None:
        value = message.get(snake)
    return value


def signal_of(request: object) -> tuple[str, list[Any]] | None:
    """The signal and resource list of an export request, or None if it is not one."""
    if not isinstance(request, dict):
        return None
    for key, signal in REQUEST_KEYS.items():
        if key in request:
            resources = request[key]
            return signal, resources if isinstance(resources, list) else []
    return None


INT64_MIN, UINT64_MAX = -(1 << 63), (1 << 64) - 1
"""What an OTLP integer field can hold; anything outside is not a value (the default)."""


def to_int(value: object, default: int = 0) -> int:
    """An OTLP int64 field, which OTLP/JSON writes as a string."""
    found: int | None
    if type(value) is str:  # the usual form: one C call
        try:
            found = int(value)
        except ValueError:
            found = _parse_int(value)
    else:
        found = _parse_int(value)
    return found if found is not None and INT64_MIN <= found <= UINT64_MAX else default


def _parse_int(value: object) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if not isinstance(value, (str, float)):
        return None
    try:
        return int(value)
    except (ValueError, OverflowError):  # also more digits than int() takes
        pass
    try:  # "1.7e+18": some writers format int64 fields as floats
        return int(float(value))
    except (ValueError, OverflowError):
        return None


def any_value(value: object) -> AttributeValue:
    """Decode an OTLP AnyValue (``{"stringValue": ...}`` and friends)."""
    if not isinstance(value, dict) or not value:
        return None
    kind, raw = next(iter(value.items()))
    decode = _ANY_VALUE_KINDS.get(kind)
    return None if decode is None else decode(raw)


def _bool(raw: object) -> bool:
    return raw if isinstance(raw, bool) else str(raw).lower() == "true"


def _array(raw: object) -> list[AttributeValue]:
    decoded: list[AttributeValue] = []
    for item in _list(raw, "values"):
        if type(item) is dict and len(item) == 1:  # a string: most items, without a call
            found = item.get("stringValue")
            if type(found) is str:
                decoded.append(found)
                continue
        decoded.append(any_value(item))
    return decoded


def _kvlist(raw: object) -> Attributes:
    return attributes(_list(raw, "values"))


INTERNED_LENGTH = 64
"""Strings up to this long are interned: keys, names, ids, outcomes and backends repeat
on every span, and one copy each keeps a large input's decoded form small."""


def shared(text: str) -> str:
    """One copy of a short, repeated string (``sys.intern``)."""
    return sys.intern(text) if len(text) <= INTERNED_LENGTH else text


def attributes(items: object) -> Attributes:
    """Decode an OTLP KeyValue list into a dict."""
    if not isinstance(items, list):
        return {}
    decoded: Attributes = {}
    intern = sys.intern
    for item in items:
        if not isinstance(item, dict):
            continue
        key = item.get("key")
        if not isinstance(key, str):
            continue
        decoded[intern(key) if len(key) <= INTERNED_LENGTH else key] = attribute_value(
            item.get("value")
        )
    return decoded


def attribute_value(value: object) -> AttributeValue:
    """An attribute's value (an AnyValue) decoded, a string up to ``INTERNED_LENGTH``
    interned."""
    # Most values are one string (read here, without a further call) or one integer.
    if value.__class__ is dict and len(value) == 1:
        raw = value.get("stringValue")
        if raw.__class__ is str:
            return sys.intern(raw) if len(raw) <= INTERNED_LENGTH else raw
        raw = value.get("intValue")
        if raw.__class__ is str:
            return to_int(raw)
    found = any_value(value)
    if isinstance(found, str) and len(found) <= INTERNED_LENGTH:
        return sys.intern(found)
    return found


def process_of(resource: object, path: str) -> Process:
    """The process a resource describes; ``path`` names it when nothing else does."""
    attrs = attributes(resource.get("attributes")) if isinstance(resource, dict) else {}
    return process_from_attributes(attrs, path)


class _Facts(TypedDict):
    """What tells processes apart: ``_identity``'s and ``Process``'s keyword arguments."""

    rank: int | None
    run_id: str | None
    host: str | None
    pid: int | None
    service: str | None
    instance: str | None


def process_from_attributes(attrs: Attributes, path: str) -> Process:
    """The process decoded resource attributes describe; ``path`` names it as a last resort."""
    facts: _Facts = {
        "rank": _optional_int(attrs.get(names.RESOURCE_RANK)),
        "run_id": _optional_str(attrs.get(names.RESOURCE_RUN_ID)),
        "host": _optional_str(attrs.get(names.RESOURCE_HOST_NAME)),
        "pid": _optional_int(attrs.get(names.RESOURCE_PROCESS_PID)),
        "service": _optional_str(attrs.get(names.RESOURCE_SERVICE_NAME)),
        "instance": _optional_str(attrs.get(names.RESOURCE_SERVICE_INSTANCE_ID)),
    }
    key, label = _identity(path, **facts)
    return Process(
        key=key,
        label=label,
        local_rank=_optional_int(attrs.get(names.RESOURCE_LOCAL_RANK)),
        world_size=_optional_int(attrs.get(names.RESOURCE_WORLD_SIZE)),
        node_rank=_optional_int(attrs.get(names.RESOURCE_NODE_RANK)),
        torch_version=_optional_str(attrs.get(names.RESOURCE_TORCH_VERSION)),
        **facts,
    )


def spans_of(resource_spans: Mapping[str, Any], process: Process) -> Iterator[Span]:
    """The spans of one ResourceSpans entry."""
    for scope in _list(resource_spans, "scopeSpans", "scope_spans"):
        for raw in _list(scope, "spans"):
            if isinstance(raw, dict):
                yield _span(raw, process)


def log_records_of(resource_logs: Mapping[str, Any], process: Process) -> Iterator[LogRecord]:
    """The log records of one ResourceLogs entry."""
    for scope in _list(resource_logs, "scopeLogs", "scope_logs"):
        for raw in _list(scope, "logRecords", "log_records"):
            if isinstance(raw, dict):
                yield _log_record(raw, process)


def count_metric_points(resource_metrics: Mapping[str, Any]) -> int:
    """How many data points one ResourceMetrics entry holds (the report only counts them)."""
    points = 0
    for scope in _list(resource_metrics, "scopeMetrics", "scope_metrics"):
        for metric in _list(scope, "metrics"):
            points += sum(
                len(_list(metric.get(kind), "dataPoints", "data_points"))
                for kind in _METRIC_DATA_KINDS
            )
    return points


def _span(raw: Mapping[str, Any], process: Process) -> Span:
    get = raw.get
    code, message = status_of(get("status"))
    return Span(
        process,
        shared(str(field(raw, "traceId", "trace_id") or "")),
        str(field(raw, "spanId", "span_id") or ""),
        shared(str(field(raw, "parentSpanId", "parent_span_id") or "")),
        shared(str(get("name") or "")),
        to_int(field(raw, "startTimeUnixNano", "start_time_unix_nano")),
        to_int(field(raw, "endTimeUnixNano", "end_time_unix_nano")),
        attributes(get("attributes")),
        events_of(get("events")),
        linked_span_ids(get("links")),
        code,
        message,
    )


def events_of(events: object) -> tuple[SpanEvent, ...]:
    """A span's ``events`` field decoded (entries that are not messages are skipped)."""
    if not isinstance(events, list) or not events:
        return ()
    return tuple(_event(event) for event in events if isinstance(event, dict))


def linked_span_ids(links: object) -> tuple[str, ...]:
    """The span ids of a span's ``links`` field."""
    if not isinstance(links, list) or not links:
        return ()
    return tuple(
        str(field(link, "spanId", "span_id") or "") for link in links if isinstance(link, dict)
    )


def status_of(status: object) -> tuple[int, str]:
    """A span's ``status`` field: (code, message)."""
    if not isinstance(status, dict):
        return 0, ""
    code = status.get("code")
    return 0 if code is None else _status_code(code), str(status.get("message") or "")


def _event(raw: Mapping[str, Any]) -> SpanEvent:
    return SpanEvent(
        name=shared(str(raw.get("name") or "")),
        time_ns=to_int(field(raw, "timeUnixNano", "time_unix_nano")),
        attributes=attributes(raw.get("attributes")),
    )


def _log_record(raw: Mapping[str, Any], process: Process) -> LogRecord:
    attrs = attributes(raw.get("attributes"))
    event_name = field(raw, "eventName", "event_name") or attrs.get("event.name") or ""
    time_ns = to_int(field(raw, "timeUnixNano", "time_unix_nano"))
    return LogRecord(
        process=process,
        time_ns=time_ns or to_int(field(raw, "observedTimeUnixNano", "observed_time_unix_nano")),
        event_name=str(event_name),
        body=any_value(raw.get("body")),
        attributes=attrs,
        span_id=str(field(raw, "spanId", "span_id") or ""),
    )


def _identity(
    path: str,
    *,
    rank: int | None,
    run_id: str | None,
    host: str | None,
    pid: int | None,
    service: str | None,
    instance: str | None,
) -> tuple[tuple[str, ...], str]:
    """The key that groups a process's records, and its label."""
    if rank is not None:
        return ("rank", run_id or "", str(rank)), f"rank {rank}"
    if pid is not None:
        return (
            "process",
            host or "",
            str(pid),
        ), f"pid {pid}" if host is None else f"{host} pid {pid}"
    if instance is not None:
        return ("instance", instance), service or f"instance {instance[:8]}"
    if service is not None:
        return ("service", service), service
    return ("file", path), path


def _status_code(code: object) -> int:
    # Some writers use the enum's name instead of its number.
    if code == "STATUS_CODE_ERROR":
        return 2
    if code == "STATUS_CODE_OK":
        return 1
    return to_int(code)


def _list(message: object, camel: str, snake: str | None = None) -> list[Any]:
    if not isinstance(message, dict):
        return []
    value = field(message, camel, snake)
    return value if isinstance(value, list) else []


def _to_float(raw: object) -> float | None:
    """A finite double ("Infinity" and "NaN" are not values a count or a time can take)."""
    try:
        value = float(raw)  # type: ignore[arg-type]  # any object: TypeError, caught
    except (TypeError, ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def _optional_int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    found = _parse_int(value)
    return found if found is not None and INT64_MIN <= found <= UINT64_MAX else None


def _optional_str(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


_ANY_VALUE_KINDS: dict[str, Callable[[Any], AttributeValue]] = {
    "stringValue": str,
    "string_value": str,
    "bytesValue": str,
    "bytes_value": str,
    "intValue": to_int,
    "int_value": to_int,
    "boolValue": _bool,
    "bool_value": _bool,
    "doubleValue": _to_float,
    "double_value": _to_float,
    "arrayValue": _array,
    "array_value": _array,
    "kvlistValue": _kvlist,
    "kvlist_value": _kvlist,
}
"""How each kind of AnyValue is decoded (camelCase or snake_case); another kind is None."""
