"""Render the report as one self-contained HTML page (no network, no external files)."""

from __future__ import annotations

import datetime
import html
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from otel_dynamo.report.read.model import Problem, Telemetry
from otel_dynamo.report.render import causes, time_split
from otel_dynamo.report.render import format as _format
from otel_dynamo.report.render.graph_texts import GraphTextCollector
from otel_dynamo.report.render.html import tables as _html_tables
from otel_dynamo.report.render.html.assets import (
    REPORT_PAGE_HEAD,
    REPORT_PAGE_TAIL,
    SCRIPT,
    STYLE,
)
from otel_dynamo.report.render.html.timeline import timeline_data
from otel_dynamo.report.summary.schema import ProcessSection, Summary

PAGE_TITLE = "otel-dynamo report"


def render_html(telemetry: Telemetry, summary: Summary) -> str:
    """The report page: stats, a filter box, the timeline, every table and the graphs."""
    graphs = GraphTextCollector()
    graphs.add(telemetry)
    return render_page(summary, timeline_data(telemetry), graphs)


def render_page(
    summary: Summary,
    timeline: Mapping[str, Any],
    graphs: GraphTextCollector | None = None,
) -> str:
    """The report page from a summary, its timeline (``TimelineBuilder``) and the graph
    texts the run captured, if collected. Each process's tables are made here, as
    ``stream.read_report`` makes them where it reads the files (``Report.page_text``)."""
    # Each process's tables become JSON text at once: a large run's tables never all
    # exist as objects beside its summary.
    tables = (page_tables(section) for section in summary["processes"])
    return "".join(page_chunks(summary, timeline, graphs, tables, causes.summary_causes(summary)))


def page_chunks(
    summary: Summary,
    timeline: Mapping[str, Any],
    graphs: GraphTextCollector | None,
    tables: Iterable[str],
    counts: causes.CauseCounts,
) -> Iterator[str]:
    """The report page of ``summary`` from its processes' ``tables`` (``page_tables`` of
    each, in the summary's order) and the ``counts`` of its causes
    (``causes.process_causes`` of each, added up), in pieces, each process's tables one
    of them: written as they come, a large run's page is never one string beside them."""
    fields = {
        "title": html.escape(PAGE_TITLE),
        "style": STYLE,
        "stats": _stats(summary),
        "problems": _source(summary) + _problems(summary),
        "compile_time": causes.what_to_do_html(summary)
        + time_split.html_block(summary["compile_time"])
        + causes.html_block(counts),
        "timeline_hint": html.escape(_timeline_hint(timeline)),
        "script": SCRIPT,
    }
    yield REPORT_PAGE_HEAD.substitute(fields)
    # the data as _script_json writes {"ranks": ..., "processes": [...], "timeline": ...}
    yield f'{{"ranks":{_script_json(_html_tables.ranks_table(summary))},"processes":['
    processes = zip(summary["processes"], tables, strict=True)
    for index, (section, table_text) in enumerate(processes):
        heading = _script_json(_html_tables.process_heading(section))
        yield f'{"," if index else ""}{{"heading":{heading},"tables":'
        yield table_text
        yield f',"graphs":{_script_json(graphs.page_data(section["process"]) if graphs else [])}}}'
    yield f'],"timeline":{_script_json(timeline)}}}'
    yield REPORT_PAGE_TAIL.substitute(fields)


def page_tables(section: ProcessSection) -> str:
    """One process's tables as the page's data holds them (JSON text): the same whatever
    the process's label, so that the process that summarized it may make them."""
    return _script_json(_html_tables.process_tables(section))


def _stats(summary: Summary) -> str:
    return "".join(
        f"<div>{html.escape(label)} <b>{html.escape(value)}</b></div>"
        for label, value in _html_tables.overview(summary)
    )


def _source(summary: Summary) -> str:
    return _listed("Source", _format.source_lines(summary["source"]))


def _problems(summary: Summary) -> str:
    rows = summary["inputs"]["problems"]
    problems = [Problem(row["path"], row["line"], row["message"]) for row in rows]
    return _listed("Input problems", [str(problem) for problem in problems])


def _listed(title: str, lines: list[str]) -> str:
    """A section of the page's header listing ``lines``; nothing without any."""
    if not lines:
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
    return f'<section class="problems"><h2>{html.escape(title)}</h2><ul>{items}</ul></section>'


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
