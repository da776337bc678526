"""Offline report over otel_dynamo telemetry files (OTLP/JSON Lines); never imports torch.

Typical use::

    from otel_dynamo import report

    telemetry = report.load_telemetry(["./otel-dynamo"])
    summary = report.summarize(telemetry)
    print(report.render_terminal(summary, color=False))
    html = report.render_html(telemetry, summary)

    # many ranks' files, a few processes at a time (forked readers from 64 MiB), each
    # process's terminal lines made where it was read:
    done = report.read_report(["./otel-dynamo"], layout=report.TerminalLayout(width=100))
    print(done.terminal_text())
    print(report.explain(["./otel-dynamo"]))  # torch._dynamo.explain's summary, no reset

    # a run read back from Jaeger (headers, TLS, timeout from OTEL_DYNAMO_JAEGER_*):
    address = report.JaegerAddress.parse("http://jaeger:16686/?service=train&lookback=1h")
    done = report.read_jaeger_report(address, settings=report.JaegerSettings.from_environment())
    print(done.summary["source"])  # raises report.JaegerError (one line) when unreadable

The flow, one subpackage each: ``read`` (files to records) → ``summary`` (records to a
typed :class:`Summary`) → ``render`` (terminal, HTML, JSON, Perfetto, graph texts); ``diff``
compares two summaries. ``summarize`` returns plain JSON data typed as :class:`Summary`, the
same that ``otel-dynamo report --json`` prints (docs/report-json.md).
"""

from __future__ import annotations

from otel_dynamo.report.read import (
    TELEMETRY_SUFFIXES,
    FileStats,
    JaegerAddress,
    JaegerError,
    JaegerRun,
    JaegerSettings,
    LogRecord,
    Problem,
    Process,
    ProgressCallback,
    Span,
    SpanEvent,
    Telemetry,
    TerminalProgress,
    fetch_run,
    is_jaeger_address,
    load_telemetry,
)
from otel_dynamo.report.render import (
    DEFAULT_ROW_LIMIT,
    DEFAULT_WIDTH,
    CauseCounts,
    GraphText,
    GraphTextCollector,
    GraphTextFiles,
    PerfettoWriter,
    TerminalLayout,
    color_enabled,
    json_chunks,
    printable,
    render_html,
    render_json,
    render_page,
    render_terminal,
)
from otel_dynamo.report.stream import (
    PARALLEL_MIN_BYTES,
    GroupVisitor,
    ProcessRead,
    Report,
    Visitors,
    collection_paused,
    default_workers,
    read_jaeger_report,
    read_report,
)
from otel_dynamo.report.summary import (
    DEFAULT_RECOMPILE_LIMIT,
    DEFAULT_SLOWEST,
    SCHEMA_VERSION,
    BreakReason,
    ExplainSource,
    ExplainSummary,
    Summary,
    compiled_run_seconds,
    explain,
    summarize,
)

__all__ = [
    "DEFAULT_RECOMPILE_LIMIT",
    "DEFAULT_ROW_LIMIT",
    "DEFAULT_SLOWEST",
    "DEFAULT_WIDTH",
    "PARALLEL_MIN_BYTES",
    "SCHEMA_VERSION",
    "TELEMETRY_SUFFIXES",
    "BreakReason",
    "CauseCounts",
    "ExplainSource",
    "ExplainSummary",
    "FileStats",
    "GraphText",
    "GraphTextCollector",
    "GraphTextFiles",
    "GroupVisitor",
    "JaegerAddress",
    "JaegerError",
    "JaegerRun",
    "JaegerSettings",
    "LogRecord",
    "PerfettoWriter",
    "Problem",
    "Process",
    "ProcessRead",
    "ProgressCallback",
    "Report",
    "Span",
    "SpanEvent",
    "Summary",
    "Telemetry",
    "TerminalLayout",
    "TerminalProgress",
    "Visitors",
    "collection_paused",
    "color_enabled",
    "compiled_run_seconds",
    "default_workers",
    "explain",
    "fetch_run",
    "is_jaeger_address",
    "json_chunks",
    "load_telemetry",
    "printable",
    "read_jaeger_report",
    "read_report",
    "render_html",
    "render_json",
    "render_page",
    "render_terminal",
    "summarize",
]
