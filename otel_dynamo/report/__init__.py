"""Offline report over otel_dynamo telemetry files (OTLP/JSON Lines); never imports torch.

Typical use::

    from otel_dynamo import report

    telemetry = report.load_telemetry(["./otel-dynamo"])
    summary = report.summarize(telemetry)
    print(report.render_terminal(summary, color=False))
    html = report.render_html(telemetry, summary)
    print(report.explain(["./otel-dynamo"]))  # torch._dynamo.explain's summary, no reset

``summarize`` returns plain data (dicts, lists, strings, numbers), the same that
``otel-dynamo report --json`` prints; its keys are documented in docs/report-json.md.
"""

from __future__ import annotations

from otel_dynamo.report._explain import BreakReason, ExplainSource, ExplainSummary, explain
from otel_dynamo.report._format import json_chunks, printable, render_json
from otel_dynamo.report._graph_texts import GraphText, GraphTextCollector, GraphTextFiles
from otel_dynamo.report._html import render_html, render_page
from otel_dynamo.report._model import (
    FileStats,
    LogRecord,
    Problem,
    Process,
    Span,
    SpanEvent,
    Telemetry,
)
from otel_dynamo.report._perfetto import PerfettoWriter
from otel_dynamo.report._progress import TerminalProgress
from otel_dynamo.report._read import TELEMETRY_SUFFIXES, ProgressCallback, load_telemetry
from otel_dynamo.report._stream import GroupVisitor, Report, Visitors, read_report
from otel_dynamo.report._summary import (
    DEFAULT_RECOMPILE_LIMIT,
    DEFAULT_SLOWEST,
    SCHEMA_VERSION,
    summarize,
)
from otel_dynamo.report._terminal import (
    DEFAULT_ROW_LIMIT,
    DEFAULT_WIDTH,
    color_enabled,
    render_terminal,
)

__all__ = [
    "DEFAULT_RECOMPILE_LIMIT",
    "DEFAULT_ROW_LIMIT",
    "DEFAULT_SLOWEST",
    "DEFAULT_WIDTH",
    "SCHEMA_VERSION",
    "TELEMETRY_SUFFIXES",
    "BreakReason",
    "ExplainSource",
    "ExplainSummary",
    "FileStats",
    "GraphText",
    "GraphTextCollector",
    "GraphTextFiles",
    "GroupVisitor",
    "LogRecord",
    "PerfettoWriter",
    "Problem",
    "Process",
    "ProgressCallback",
    "Report",
    "Span",
    "SpanEvent",
    "Telemetry",
    "TerminalProgress",
    "Visitors",
    "color_enabled",
    "explain",
    "json_chunks",
    "load_telemetry",
    "printable",
    "read_report",
    "render_html",
    "render_json",
    "render_page",
    "render_terminal",
    "summarize",
]
