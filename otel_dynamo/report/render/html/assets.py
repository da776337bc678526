"""The pages' stylesheet, script and templates: package data in ``static/``, inlined into
each page so that it loads nothing from anywhere.

Both pages are ``string.Template`` texts (``$name`` placeholders), filled in one pass:
text that came from the telemetry files is never scanned for placeholders again.

The script renders the tables and the timeline from the JSON in
``<script id="report-data">``, then records what it rendered on ``<body>``
(``data-ready``, ``data-timeline-bars``, ``data-timeline-axis`` (the tick labels, `` | ``
between them), ``data-table-rows``, ``data-visible-rows``, ``data-graph-texts``) so a
headless browser can check it. ``#filter=TEXT`` in the URL pre-fills the filter.
"""

from __future__ import annotations

from importlib import resources
from string import Template

_STATIC = resources.files(__package__).joinpath("static")


def _static_text(name: str) -> str:
    return _STATIC.joinpath(name).read_text(encoding="utf-8")


STYLE = _static_text("report.css")
"""The stylesheet both pages share."""

DURATION_SCRIPT = _static_text("duration.js")
"""How the page writes durations (``otelDynamoDuration``): as ``format.duration`` does."""

SCRIPT = DURATION_SCRIPT + "\n" + _static_text("report.js")
"""The report page's script (the diff page has none)."""

_REPORT_HEAD, _REPORT_TAIL = _static_text("report.html").split("${data}")
REPORT_PAGE_HEAD = Template(_REPORT_HEAD)
"""The report page up to its data: title, style, stats, problems, compile_time,
timeline_hint."""
REPORT_PAGE_TAIL = Template(_REPORT_TAIL)
"""The report page after its data (the JSON the script reads): script. The data is
written between the two in pieces: a large run's page is never one string."""

DIFF_PAGE = Template(_static_text("diff.html"))
"""The diff page: title, style, stats, sections."""
