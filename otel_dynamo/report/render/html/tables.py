"""The tables of the HTML page, as data the page's script turns into <table> elements.

Each table is ``{"title", "columns", "right", "rows"}``; a cell is a string,
``[string, css_class]`` or ``[string, css_class, hover_text]`` (``table.page_table``).
Values are formatted here, with the terminal's formatting, so the page only lays them
out; the tables the terminal shows too are defined once, in ``shared_tables`` (and
``exports``).
"""

from __future__ import annotations

from otel_dynamo.report.render import exports as _exports_render
from otel_dynamo.report.render import format as _format
from otel_dynamo.report.render import shared_tables as _tables
from otel_dynamo.report.render.table import Column, PageTable, page_table
from otel_dynamo.report.summary.function_names import names_for
from otel_dynamo.report.summary.schema import ProcessSection, Summary

MAX_COMPILE_IDS_SHOWN = 20
"""Compile ids listed per graph-break row; the rest are counted."""


def overview(summary: Summary) -> list[list[str]]:
    """[label, value] pairs for the page header."""
    totals = summary["totals"]
    return [
        ["processes", str(totals["processes"])],
        ["frame compiles", str(totals["frame_compiles"])],
        ["graphs", str(totals["graphs"])],
        ["graph breaks", str(totals["graph_breaks"])],
        ["recompiles", str(totals["recompiles"])],
        ["failures", str(totals["failures"])],
        ["faults injected", str(totals["faults"])],
        ["accuracy failures", str(totals["accuracy_failures"])],
        ["recorded runs", str(totals["runs"])],
        ["compile time", _format.duration(totals["compile_seconds"])],
        ["CUDA graph skips", str(totals["cudagraph_skips"])],
        [
            "cache hits / misses / bypasses",
            f"{totals['cache_hits']} / {totals['cache_misses']} / {totals['cache_bypasses']}",
        ],
        *_exports_render.html_overview(totals),
        ["files", str(len(summary["inputs"]["files"]))],
    ]


def ranks_table(summary: Summary) -> PageTable | None:
    ranks = summary["ranks"]
    if not ranks["compared"]:
        return None
    title = "Ranks: DIVERGE" if ranks["diverged"] else "Ranks: all agree"
    return page_table(title, *_tables.ranks(summary, None))


_SLOWEST = "Slowest compiles (frame + lazy backward; the parts add up)"


def process_tables(section: ProcessSection) -> list[PageTable]:
    """Every table of one process, in the terminal's order."""
    compiles = page_table("Frame compiles", *_tables.compiles(section, None))
    compiles["note"] = _format.OPS_NOTE
    return [
        *_exports_render.html_tables(section),  # only where the process used torch.export
        compiles,
        _graph_breaks(section),
        page_table("Recompiles", *_tables.recompiles(section, None)),
        page_table("Recompile limit: code close to or at it", *_tables.near_limit(section, None)),
        page_table(_SLOWEST, *_tables.slowest(section, None)),
        page_table("Failures", *_tables.failures(section, None)),
        page_table("Compiles that never finished", *_tables.unfinished(section, None)),
        page_table("Injected faults", *_tables.faults(section, None)),
        page_table("Accuracy checks", *_tables.accuracy(section, None)),
        page_table("Device time of recorded runs, by graph", *_tables.device_time(section, None)),
        _cudagraph_skips(section),
        _cache_bypasses(section),
    ]


def process_heading(section: ProcessSection) -> str:
    totals = section["totals"]
    counts = (
        f"{_format.plural(totals['frame_compiles'], 'compile')}, "
        f"{_format.plural(totals['graph_breaks'], 'graph break')}, "
        f"{_format.plural(totals['recompiles'], 'recompile')}, "
        f"{_format.plural(totals['failures'], 'failure')}"
    )
    return f"{_format.process_heading(section)} · {counts}"


def _graph_breaks(section: ProcessSection) -> PageTable:
    """One row per stack (torch/library frames folded, stacks that then read the same
    merged), each with the compile ids that broke there; the heading counts breaks."""
    columns = [
        Column("count", right=True),
        Column("reason"),
        Column("kind"),
        Column("user stack (innermost first)"),
        Column("compile ids"),
        Column("torch's hints"),
    ]
    rows = []
    function_names = names_for(section["compiles"])
    for group in section["graph_breaks"]:
        for merged in _format.merged_stacks(group["stacks"], function_names):
            rows.append(
                [
                    str(merged.count),
                    group["reason"],
                    group["kind"] or "",
                    " ← ".join(text for text, _frames in merged.stack) or "(not recorded)",
                    _compile_ids(merged.compile_ids),
                    " · ".join(group["torch_hints"]),
                ]
            )
    table = page_table("Graph breaks", columns, rows)
    table["count"] = sum(group["count"] for group in section["graph_breaks"])
    return table


def _cudagraph_skips(section: ProcessSection) -> PageTable:
    graphs = section["cudagraphs"]
    title = f"CUDA graphs: {graphs['graphed']} of {graphs['graphs']} graphs graphed; skips"
    columns = [Column(name) for name in ("id", "function", "kind", "at", "category", "reason")]
    function_names = names_for(section["compiles"])
    rows = [
        [
            row["compile_id"],
            function_names.of_compile(row["compile_id"], row["function"]),
            row["run_kind"],
            row["at"],
            row["category"],
            _format.cudagraph_skip_reason(row["reason"], row["category"]),
        ]
        for row in graphs["skips"]
    ]
    return page_table(title, columns, rows)


def _cache_bypasses(section: ProcessSection) -> PageTable:
    columns = [Column("cache"), Column("times", right=True), Column("reason")]
    rows = [
        [row["cache"], str(row["count"]), row["reason"] or "no reason given"]
        for row in section["caches"]["bypass_reasons"]
    ]
    return page_table("Compile cache bypasses", columns, rows)


def _compile_ids(compile_ids: list[str]) -> str:
    shown = ", ".join(compile_ids[:MAX_COMPILE_IDS_SHOWN])
    hidden = len(compile_ids) - MAX_COMPILE_IDS_SHOWN
    return f"{shown} … (+{hidden})" if hidden > 0 else shown
