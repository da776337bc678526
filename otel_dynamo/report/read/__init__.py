"""Read: OTLP/JSON Lines files (or the SDK's in-memory spans) into plain records.

The first step of the report's flow (read → summary → render, and diff over two
summaries). Nothing here knows the report's layout.
"""

from __future__ import annotations

from otel_dynamo.report.read.files import TELEMETRY_SUFFIXES, ProgressCallback, load_telemetry
from otel_dynamo.report.read.jaeger import (
    JaegerAddress,
    JaegerError,
    JaegerRun,
    JaegerSettings,
    fetch_run,
    is_jaeger_address,
)
from otel_dynamo.report.read.model import (
    FileStats,
    LogRecord,
    Problem,
    Process,
    Span,
    SpanEvent,
    Telemetry,
)
from otel_dynamo.report.read.progress import TerminalProgress
from otel_dynamo.report.read.sdk import spans_from_sdk

__all__ = [
    "TELEMETRY_SUFFIXES",
    "FileStats",
    "JaegerAddress",
    "JaegerError",
    "JaegerRun",
    "JaegerSettings",
    "LogRecord",
    "Problem",
    "Process",
    "ProgressCallback",
    "Span",
    "SpanEvent",
    "Telemetry",
    "TerminalProgress",
    "fetch_run",
    "is_jaeger_address",
    "load_telemetry",
    "spans_from_sdk",
]
