"""Render: a summary (and, for the page and the trace, the records) as the terminal
view, JSON, one self-contained HTML page, a Perfetto trace or graph-text files.

The third step of the report's flow (read → summary → render).
"""

from __future__ import annotations

from otel_dynamo.report.render.causes import CauseCounts
from otel_dynamo.report.render.format import json_chunks, printable, render_json
from otel_dynamo.report.render.graph_texts import GraphText, GraphTextCollector, GraphTextFiles
from otel_dynamo.report.render.html import render_html, render_page
from otel_dynamo.report.render.perfetto import PerfettoWriter
from otel_dynamo.report.render.table import DEFAULT_ROW_LIMIT, DEFAULT_WIDTH, TerminalLayout
from otel_dynamo.report.render.terminal import color_enabled, render_terminal

__all__ = [
    "DEFAULT_ROW_LIMIT",
    "DEFAULT_WIDTH",
    "CauseCounts",
    "GraphText",
    "GraphTextCollector",
    "GraphTextFiles",
    "PerfettoWriter",
    "TerminalLayout",
    "color_enabled",
    "json_chunks",
    "printable",
    "render_html",
    "render_json",
    "render_page",
    "render_terminal",
]
