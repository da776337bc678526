"""The tables of the HTML page, as data the page's script turns into <table> elements.

Each table is ``{"title", "columns", "right", "rows"}``; a cell is a string,
``[string, css_class]`` or ``[string, css_class, hover_text]``. Values are formatted here,
with the terminal's formatting, so the page only lays them out.
"""

from __future__ import annotations

from collections.abc import Sequence

from otel_dynamo.causes.guards import plain_reason
from otel_dynamo.report.render import exports as _exports_render
from otel_dynamo.report.render import format as _format
from otel_dynamo.report.render.table import PageCell, PageTable
from otel_dynamo.report.summary.build import LIMIT_REACHED
from otel_dynamo.report.summary.compiles import NO_REASON
from otel_dynamo.report.summary.function_names import function_label, names_for
from otel_dynamo.report.summary.phases import PHASE_CATEGORIES, PHASE_TITLES
from otel_dynamo.report.summary.schema import Location, ProcessSection, RankRow, Summary

MAX_COMPILE_IDS_SHOWN = 20
"""Compile ids listed per graph-break row; the rest are counted."""

Table = PageTable


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


def ranks_table(summary: Summary) -> Table | None:
    ranks = summary["ranks"]
    if not ranks["compared"]:
        return None
    title = "Ranks: DIVERGE" if ranks["diverged"] else "Ranks: all agree"
    columns = [
        "process",
        "compiles",
        "graphs",
        "recompiles",
        "guards",
        "breaks",
        "failures",
        "compile time",
        "diverges",
    ]
    rows = [_rank_row(row) for row in ranks["rows"]]
    return _table(title, columns, rows, right=range(1, 8))


def _rank_row(row: RankRow) -> list[PageCell]:
    def flagged(key: str, value: int) -> PageCell:
        return [str(value), "bad"] if key in row["diverges"] else str(value)

    first = row["first_difference"]
    verdict = ", ".join(row["diverges"])
    if first is not None:
        verdict += f" (first at {first['compile_id']})"
    return [
        row["process"],
        str(row["frame_compiles"]),
        flagged("graphs", row["graphs"]),
        flagged("recompiles", row["recompiles"]),
        flagged("guards", row["guards"]),
        str(row["graph_breaks"]),
        str(row["failures"]),
        _format.duration(row["compile_seconds"]),
        [f"DIVERGES: {verdict}", "bad"] if row["diverges"] else "",
    ]


def process_tables(section: ProcessSection) -> list[Table]:
    """Every table of one process, in the terminal's order."""
    return [
        *_exports_render.html_tables(section),  # only where the process used torch.export
        _compiles(section),
        _graph_breaks(section),
        _recompiles(section),
        _near_limit(section),
        _slowest(section),
        _failures(section),
        _unfinished(section),
        _faults(section),
        _accuracy(section),
        _device_time(section),
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


def _compiles(section: ProcessSection) -> Table:
    with_how = _format.settings_vary(section["compiles"])
    columns = [
        "id", "function", "location", "outcome", "duration", "graphs", "ops", "guards", "calls",
        *(["compiled with"] if with_how else []),
    ]  # fmt: skip
    rows = [
        [
            row["compile_id"] or "?",
            function_label(row["function"], row["module"]),
            _location(row),
            [row["outcome"], _format.severity(row["outcome"])],
            _format.duration(row["duration_s"]),
            str(row["graphs"]),
            str(row["ops"]),
            _format.optional(row["guards"]),
            _format.calls(row),
            *([row["compiled_with"] or ""] if with_how else []),
        ]
        for row in section["compiles"]
    ]
    table = _table("Frame compiles", columns, rows, right=range(4, 9))
    table["note"] = _format.OPS_NOTE
    return table


def _graph_breaks(section: ProcessSection) -> Table:
    """One row per stack (torch/library frames folded, stacks that then read the same
    merged), each with the compile ids that broke there; the heading counts breaks."""
    columns = [
        "count",
        "reason",
        "kind",
        "user stack (innermost first)",
        "compile ids",
        "torch's hints",
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
    table = _table("Graph breaks", columns, rows, right=range(1))
    table["count"] = sum(group["count"] for group in section["graph_breaks"])
    return table


def _recompiles(section: ProcessSection) -> Table:
    columns = ["id", "function", "location", "cache size", "calls", "reason"]
    rows = [
        [
            row["compile_id"] or "?",
            function_label(row["function"], row["module"]),
            _location(row),
            _format.optional(row["cache_size"]),
            _format.calls(row),
            _reason_cell(row["reason"]),
        ]
        for row in section["recompiles"]
    ]
    return _table("Recompiles", columns, rows, right=range(3, 5))


def _near_limit(section: ProcessSection) -> Table:
    columns = ["status", "function", "location", "compiles", "cache entries", "limit"]
    function_names = names_for(section["compiles"])
    rows = [
        [
            ["AT LIMIT", "bad"] if row["status"] == LIMIT_REACHED else ["near limit", "warn"],
            function_names.of_location(row),
            _location(row),
            str(row["compiles"]),
            str(row["cache_entries"]),
            str(row["limit"]),
        ]
        for row in section["near_recompile_limit"]
    ]
    return _table("Recompile limit: code close to or at it", columns, rows, right=range(3, 6))


def _slowest(section: ProcessSection) -> Table:
    columns = [
        "id",
        "function",
        "location",
        "compile",
        "lazy backward",
        *(PHASE_TITLES[phase] for phase in PHASE_CATEGORIES),
    ]
    rows = [
        [
            row["compile_id"] or "?",
            function_label(row["function"], row["module"]),
            _location(row),
            _format.duration(row["compile_s"]),
            _format.duration(row["lazy_backward_s"] or None),
            *(_format.duration(row["phases"][phase]) for phase in PHASE_CATEGORIES),
        ]
        for row in section["slowest"]
    ]
    title = "Slowest compiles (frame + lazy backward; the parts add up)"
    return _table(title, columns, rows, right=range(3, len(columns)))


def _failures(section: ProcessSection) -> Table:
    columns = ["stage", "id", "function", "span", "error"]
    function_names = names_for(section["compiles"])
    rows = [
        [
            [row["stage"], "bad"],
            row["compile_id"] or "?",
            function_names.of_compile(row["compile_id"], row["function"]),
            row["span"],
            _format.error(row["error_type"], row["error_message"]),
        ]
        for row in section["failures"]
    ]
    return _table("Failures", columns, rows)


def _unfinished(section: ProcessSection) -> Table:
    columns = ["id", "function", "location", "running for"]
    function_names = names_for(section["compiles"])
    rows = [
        [
            [row["compile_id"], "bad"],
            function_names.of_location(row),
            _format.location(row["file"], row["line"]),
            "?" if row["elapsed_s"] is None else f"≥ {_format.duration(row['elapsed_s'])}",
        ]
        for row in section["unfinished"]
    ]
    return _table("Compiles that never finished", columns, rows)


def _faults(section: ProcessSection) -> Table:
    columns = ["kind", "target", "id", "recorded on"]
    rows = [
        [row["kind"] or "?", row["target"] or "", row["compile_id"] or "", row["source"]]
        for row in section["faults"]
    ]
    return _table("Injected faults", columns, rows)


def _accuracy(section: ProcessSection) -> Table:
    columns = ["id", "result", "max abs error", "max rel error", "recorded on"]
    rows = [
        [
            row["compile_id"] or "?",
            ["passed", "ok"] if row["passed"] else ["FAILED", "bad"],
            _format.number(row["max_abs_error"]),
            _format.number(row["max_rel_error"]),
            row["source"],
        ]
        for row in section["accuracy"]
    ]
    return _table("Accuracy checks", columns, rows, right=range(2, 4))


def _device_time(section: ProcessSection) -> Table:
    columns = ["id", "kind", "device", "timed runs", "device total", "mean", "max"]
    rows = [_format.device_time_cells(row) for row in section["device_time"]]
    return _table("Device time of recorded runs, by graph", columns, rows, right=range(3, 7))


def _cudagraph_skips(section: ProcessSection) -> Table:
    graphs = section["cudagraphs"]
    title = f"CUDA graphs: {graphs['graphed']} of {graphs['graphs']} graphs graphed; skips"
    columns = ["id", "function", "kind", "at", "category", "reason"]
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
    return _table(title, columns, rows)


def _cache_bypasses(section: ProcessSection) -> Table:
    columns = ["cache", "times", "reason"]
    rows = [
        [row["cache"], str(row["count"]), row["reason"] or "no reason given"]
        for row in section["caches"]["bypass_reasons"]
    ]
    return _table("Compile cache bypasses", columns, rows, right=range(1, 2))


def _table(
    title: str,
    columns: list[str],
    rows: Sequence[Sequence[PageCell]],
    *,
    right: range = range(0),
) -> Table:
    return {
        "title": title,
        "columns": columns,
        "right": list(right),
        "rows": [list(row) for row in rows],
    }


def _reason_cell(reason: str | None) -> str | list[str]:
    """A recompile reason in plain words, Dynamo's raw guard on hover (the third item)."""
    if not reason:
        return NO_REASON
    return [plain_reason(reason) or reason, "", reason]


def _location(row: Location) -> str:
    return _format.location(row["file"], row["line"])


def _compile_ids(compile_ids: list[str]) -> str:
    shown = ", ".join(compile_ids[:MAX_COMPILE_IDS_SHOWN])
    hidden = len(compile_ids) - MAX_COMPILE_IDS_SHOWN
    return f"{shown} … (+{hidden})" if hidden > 0 else shown
