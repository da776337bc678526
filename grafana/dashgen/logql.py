"""LogQL builders for the log records otel_dynamo exports (Loki native OTLP ingestion).

Loki keeps the record body as the log line (otel_dynamo's event name, a LOG_* value) and
turns record attributes into structured metadata with "." replaced by "_".
"""

from __future__ import annotations

import re

from dashgen import catalog, promnames


def field(constant: str) -> str:
    """Loki structured-metadata key of an ATTR_*/RESOURCE_* constant."""
    return promnames.label(catalog.name(constant))


def stream(service_matcher: str) -> str:
    """Stream selector on the service_name label Loki derives from service.name."""
    return f"{{service_name{service_matcher}}}"


def event(constant: str) -> str:
    """Line filter keeping one log event (a LOG_* constant)."""
    return f'|= "{catalog.name(constant)}"'


def events(*constants: str) -> str:
    """Line filter keeping any of several log events (a regex of their exact names)."""
    alternatives = "|".join(re.escape(catalog.name(c)) for c in constants)
    return f"|~ `(?:{alternatives})`"


def top_values(k: int, stream_expr: str, constant: str) -> str:
    """The ``k`` most frequent values of one field over the dashboard's time range."""
    key = field(constant)
    counted = f'count_over_time({stream_expr} | {key} != "" [$__range])'
    return f"topk({k}, sum by ({key}) ({counted}))"
