"""The report as one self-contained HTML page: stats, a filter, the timeline, the tables
and the graph texts (page data in ``static/``)."""

from __future__ import annotations

from otel_dynamo.report.render.html.page import render_html, render_page

__all__ = ["render_html", "render_page"]
