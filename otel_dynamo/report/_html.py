"""Render the report as one self-contained HTML page (no network, no external files)."""

from __future__ import annotations

import datetime
import html
import json
import re
from collections.abc import Mapping
from typing import Any

from otel_dynamo.report import _html_tables, _time_split
from otel_dynamo.report._graph_texts import GraphTextCollector
from otel_dynamo.report._html_assets import SCRIPT, STYLE
from otel_dynamo.report._html_timeline import timeline_data
from otel_dynamo.report._model import Telemetry

PAGE_TITLE = "otel-dynamo report"

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy"
      content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>@TITLE@</title>
<style>@STYLE@</style>
</head>
<body>
<header>
<h1>@TITLE@</h1>
<div class="stats">@STATS@</div>
<input id="filter" type="search" autocomplete="off"
       placeholder="Filter tables and timeline: compile id, function, file, reason, rank…">
<span id="filter-count"></span>
</header>
@PROBLEMS@
@COMPILE_TIME@
<section>
<h2>Timeline</h2>
<p class="hint">@TIMELINE_HINT@</p>
<div id="timeline-wrap"><canvas id="timeline" height="40"></canvas><div id="tooltip"></div></div>
<div id="legend" class="legend"></div>
</section>
<section id="ranks"></section>
<main id="processes"></main>
<noscript><p>The tables and the timeline need JavaScript;
<code>otel-dynamo report --json</code> has the same data.</p></noscript>
<script type="application/json" id="report-data">@DATA@</script>
<script>@SCRIPT@</script>
</body>
</html>
"""


def render_html(telemetry: Telemetry, summary: Mapping[str, Any]) -> str:
    """The report page: stats, a filter box, the timeline, every table and the graphs."""
    graphs = GraphTextCollector()
    graphs.add(telemetry)
    return render_page(summary, timeline_data(telemetry), graphs)


def render_page(
    summary: Mapping[str, Any],
    timeline: Mapping[str, Any],
    graphs: GraphTextCollector | None = None,
) -> str:
    """The report page from a summary, its timeline (``TimelineBuilder``) and the graph
    texts the run captured, if collected."""
    # Each process's tables become JSON text at once: a large run's tables never all
    # exist as objects beside its summary.
    processes = ",".join(
        _script_json(
            {
                "heading": _html_tables.process_heading(section),
                "tables": _html_tables.process_tables(section),
                "graphs": graphs.page_data(section["process"]) if graphs else [],
            }
        )
        for section in summary["processes"]
    )
    data = (
        f'{{"ranks":{_script_json(_html_tables.ranks_table(summary))},'
        f'"processes":[{processes}],"timeline":{_script_json(timeline)}}}'
    )
    replacements = {
        "@TITLE@": html.escape(PAGE_TITLE),
        "@STYLE@": STYLE,
        "@STATS@": _stats(summary),
        "@PROBLEMS@": _problems(summary),
        "@COMPILE_TIME@": _time_split.html_block(summary["compile_time"]),
        "@TIMELINE_HINT@": html.escape(_timeline_hint(timeline)),
        "@DATA@": data,
        "@SCRIPT@": SCRIPT,
    }
    # One pass: text that came from the files is never scanned for placeholders again.
    return _PLACEHOLDER.sub(lambda match: replacements[match.group(0)], _PAGE)


_PLACEHOLDER = re.compile("@(?:TITLE|STYLE|STATS|PROBLEMS|COMPILE_TIME|TIMELINE_HINT|DATA|SCRIPT)@")


def _stats(summary: Mapping[str, Any]) -> str:
    return "".join(
        f"<div>{html.escape(label)} <b>{html.escape(value)}</b></div>"
        for label, value in _html_tables.overview(summary)
    )


def _problems(summary: Mapping[str, Any]) -> str:
    problems = summary["inputs"]["problems"]
    if not problems:
        return ""
    items = "".join(f"<li>{html.escape(_problem_text(problem))}</li>" for problem in problems)
    return f'<section class="problems"><h2>Input problems</h2><ul>{items}</ul></section>'


def _problem_text(problem: Mapping[str, Any]) -> str:
    where = problem["path"] if problem["line"] is None else f"{problem['path']}:{problem['line']}"
    return f"{where}: {problem['message']}"


def _timeline_hint(timeline: Mapping[str, Any]) -> str:
    origin = datetime.datetime.fromtimestamp(
        timeline["origin_unix_nano"] / 1e9, tz=datetime.timezone.utc
    )
    return (
        f"Compile and run spans per process; time from {origin:%Y-%m-%d %H:%M:%S} UTC. "
        "Wheel: zoom, drag: pan, double-click: reset, hover: details."
    )


def _script_json(data: Any) -> str:
    """JSON safe inside <script>: no "</script>" or "<!--" can close or confuse it."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
