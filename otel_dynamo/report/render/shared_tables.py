"""The tables that the terminal and the page both show (torch.export's aside, in
``exports``), each defined once: its columns and its cells. They are made for a
terminal's layout (its first rows, names cut to its one width) or, where ``layout`` is
None, for the page (every row, names whole, the columns only the page has). The terminal
lays them out to its width (``TerminalLayout.table``); the page takes them as they are
(``table.page_table``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple, TypeVar

from otel_dynamo.causes.guards import guard_text
from otel_dynamo.report.render import format as _format
from otel_dynamo.report.render.table import Cell, CellLike, Column, TerminalLayout, whole_parts
from otel_dynamo.report.summary.build import LIMIT_REACHED
from otel_dynamo.report.summary.compiles import NO_REASON
from otel_dynamo.report.summary.function_names import function_label, names_for
from otel_dynamo.report.summary.phases import PHASE_CATEGORIES, PHASE_TITLES
from otel_dynamo.report.summary.schema import (
    CompileRow,
    ProcessSection,
    RankRow,
    RecompileRow,
    Summary,
)

_Row = TypeVar("_Row")


class TableCells(NamedTuple):
    """A table's columns and its rows of cells, before any view lays them out."""

    columns: list[Column]
    rows: list[list[CellLike]]


def ranks(summary: Summary, layout: TerminalLayout | None) -> TableCells:
    """Each rank's counts, those that diverge marked: on a terminal also by a "!" (colour
    may be off) and first where its table is cut; on the page with how they diverge."""
    rows, page = summary["ranks"]["rows"], layout is None
    # a cut table still shows every diverging rank
    if layout is not None and 0 < layout.limit < len(rows):
        rows = [row for row in rows if row["diverges"]] + [
            row for row in rows if not row["diverges"]
        ]
    counts = ["compiles", "graphs", "recompiles", "guards", "breaks", "failures", "compile time"]
    columns = [
        Column("process", flexible=True),
        *(Column(name, right=True) for name in counts),
        *([Column("diverges")] if page else []),
    ]
    return TableCells(columns, [_rank_cells(row, page=page) for row in rows])


def _rank_cells(row: RankRow, *, page: bool) -> list[CellLike]:
    def flagged(key: str, value: int) -> CellLike:
        mark = "" if page else " !"
        return Cell(f"{value}{mark}", "red_bold") if key in row["diverges"] else str(value)

    first = row["first_difference"]
    verdict = ", ".join(row["diverges"])
    if first is not None:
        verdict += f" (first at {first['compile_id']})"
    return [
        Cell(row["process"], "red_bold" if row["diverges"] and not page else None),
        str(row["frame_compiles"]),
        flagged("graphs", row["graphs"]),
        flagged("recompiles", row["recompiles"]),
        flagged("guards", row["guards"]),
        str(row["graph_breaks"]),
        str(row["failures"]),
        _format.duration(row["compile_seconds"]),
        *([Cell(f"DIVERGES: {verdict}", "red") if row["diverges"] else ""] if page else []),
    ]


def compiles(section: ProcessSection, layout: TerminalLayout | None) -> TableCells:
    """Every frame compile; the page also says how each was asked for, where that varies
    (the terminal lists that below the table)."""
    rows, page = section["compiles"], layout is None
    with_calls = page or _any_calls(rows)
    with_how = page and _format.settings_vary(rows)
    columns = [
        Column("id"),
        Column("function", whole=True),
        Column("location", flexible=True, cut_left=True),
        Column("outcome"),
        Column("duration", right=True),
        Column("graphs", right=True, leave_out=2),
        Column("ops", right=True, leave_out=3),
        Column("guards", right=True, leave_out=1),
        *([Column("calls", right=True)] if with_calls else []),
        *([Column("compiled with")] if with_how else []),
    ]
    cells: list[list[CellLike]] = [
        [
            row["compile_id"] or "?",
            _name(function_label(row["function"], row["module"]), layout),
            _format.location(row["file"], row["line"]),
            _format.outcome_cell(row["outcome"]),
            _format.duration(row["duration_s"]),
            str(row["graphs"]),
            str(row["ops"]),
            _format.optional(row["guards"]),
            *([_calls(row, layout)] if with_calls else []),
            *([row["compiled_with"] or ""] if with_how else []),
        ]
        for row in _shown(rows, layout)
    ]
    return TableCells(columns, cells)


def recompiles(section: ProcessSection, layout: TerminalLayout | None) -> TableCells:
    """Every recompile and its reason in plain words: on the page with Dynamo's guard on
    hover, on the terminal with the guard on a line of its own below."""
    rows, page = section["recompiles"], layout is None
    with_calls = page or _any_calls(rows)
    columns = [
        Column("id"),
        Column("function", whole=True),
        Column("location", flexible=True, cut_left=True),
        Column("cache size" if page else "cache", right=True, leave_out=1),
        *([Column("calls", right=True, leave_out=1)] if with_calls else []),
        Column("reason", wrap=True),
    ]
    cells: list[list[CellLike]] = []
    for row in _shown(rows, layout):
        reason = row["reason"]
        cells.append(
            [
                row["compile_id"] or "?",
                _name(function_label(row["function"], row["module"]), layout),
                _format.location(row["file"], row["line"]),
                _format.optional(row["cache_size"]),
                *([_calls(row, layout)] if with_calls else []),
                _reason(row, page=page),
            ]
        )
        if not page and reason and row["reason_plain"] != reason:
            guard = Cell(f"guard: {guard_text(reason)}", "dim")
            cells.append([*[""] * (len(columns) - 1), guard])
    return TableCells(columns, cells)


def _reason(row: RecompileRow, *, page: bool) -> CellLike:
    """A recompile's reason in plain words; on the page, Dynamo's guard on hover (where
    there are no plain words, the guard itself)."""
    reason = row["reason"]
    if not reason:
        return NO_REASON
    if page:
        return Cell(row["reason_plain"] or reason, hover=reason)
    return row["reason_plain"] or NO_REASON


def near_limit(section: ProcessSection, layout: TerminalLayout | None) -> TableCells:
    """Code close to the recompile limit, or at it."""
    columns = [
        Column("status"),
        Column("function", whole=True),
        Column("location", flexible=True, cut_left=True),
        Column("compiles", right=True, leave_out=1),
        Column("cache entries", right=True),
        Column("limit", right=True),
    ]
    function_names = names_for(section["compiles"])
    cells: list[list[CellLike]] = [
        [
            Cell("AT LIMIT", "red_bold")
            if row["status"] == LIMIT_REACHED
            else Cell("near limit", "yellow"),
            _name(function_names.of_location(row), layout),
            _format.location(row["file"], row["line"]),
            str(row["compiles"]),
            str(row["cache_entries"]),
            str(row["limit"]),
        ]
        for row in section["near_recompile_limit"]
    ]
    return TableCells(columns, cells)


def slowest(section: ProcessSection, layout: TerminalLayout | None) -> TableCells:
    """The slowest compiles and where their time went: on the page each part in a column
    of its own (the parts add up), on a terminal the largest parts first, in one."""
    page = layout is None
    parts = [Column(PHASE_TITLES[phase], right=True) for phase in PHASE_CATEGORIES]
    columns = [
        Column("id"),
        Column("function", whole=True),
        *([Column("location")] if page else []),
        Column("compile", right=True),
        Column("lazy backward" if page else "lazy bwd", right=True, leave_out=1),  # in compile
        *(parts if page else [Column("largest parts", wrap=True)]),
    ]
    cells: list[list[CellLike]] = [
        [
            row["compile_id"] or "?",
            _name(function_label(row["function"], row["module"]), layout),
            *([_format.location(row["file"], row["line"])] if page else []),
            _format.duration(row["compile_s"]),
            _format.duration(row["lazy_backward_s"] or None),
            *(
                [_format.duration(row["phases"][phase]) for phase in PHASE_CATEGORIES]
                if page
                else [_largest_parts(row["phases"])]
            ),
        ]
        for row in section["slowest"]
    ]
    return TableCells(columns, cells)


def _largest_parts(phases: Mapping[str, float | None]) -> str:
    """The compile's phases with time, largest first: "backend 1.20 s · tracing 300.0 ms"."""
    timed = [(value, phase) for phase, value in phases.items() if value]
    ranked = sorted(timed, key=lambda item: (-item[0], PHASE_CATEGORIES.index(item[1])))
    return whole_parts(
        f"{PHASE_TITLES[phase]} {_format.duration(value)}" for value, phase in ranked
    )


def failures(section: ProcessSection, layout: TerminalLayout | None) -> TableCells:
    """Each failure; the page also names the span that failed."""
    page = layout is None
    columns = [
        Column("stage"),
        Column("id"),
        Column("function", whole=True),
        *([Column("span")] if page else []),
        Column("error", wrap=True),
    ]
    function_names = names_for(section["compiles"])
    cells: list[list[CellLike]] = [
        [
            Cell(row["stage"], "red"),
            row["compile_id"] or "?",
            _name(function_names.of_compile(row["compile_id"], row["function"]), layout),
            *([row["span"]] if page else []),
            _format.error(row["error_type"], row["error_message"]),
        ]
        for row in section["failures"]
    ]
    return TableCells(columns, cells)


def unfinished(section: ProcessSection, layout: TerminalLayout | None) -> TableCells:
    """Compiles that never finished; the page marks each id, the terminal its title (and
    aligns how long each ran as its other durations)."""
    page = layout is None
    columns = [
        Column("id"),
        Column("function", whole=True),
        Column("location", flexible=True, cut_left=True),
        Column("running for", right=not page),
    ]
    function_names = names_for(section["compiles"])
    cells: list[list[CellLike]] = [
        [
            Cell(row["compile_id"], "red" if page else None),
            _name(function_names.of_location(row), layout),
            _format.location(row["file"], row["line"]),
            "?" if row["elapsed_s"] is None else f"≥ {_format.duration(row['elapsed_s'])}",
        ]
        for row in section["unfinished"]
    ]
    return TableCells(columns, cells)


def faults(section: ProcessSection, layout: TerminalLayout | None) -> TableCells:
    """Each fault injected, where it was recorded."""
    columns = [Column("kind"), Column("target", flexible=True), Column("id"), Column("recorded on")]
    cells: list[list[CellLike]] = [
        [row["kind"] or "?", row["target"] or "", row["compile_id"] or "", row["source"]]
        for row in section["faults"]
    ]
    return TableCells(columns, cells)


def accuracy(section: ProcessSection, layout: TerminalLayout | None) -> TableCells:
    """Each accuracy check of a compiled graph against eager, and its errors."""
    columns = [
        Column("id"),
        Column("result"),
        Column("max abs error", right=True),
        Column("max rel error", right=True),
        Column("recorded on", flexible=True),
    ]
    cells: list[list[CellLike]] = [
        [
            row["compile_id"] or "?",
            Cell("passed", "green") if row["passed"] else Cell("FAILED", "red_bold"),
            _format.number(row["max_abs_error"]),
            _format.number(row["max_rel_error"]),
            row["source"],
        ]
        for row in section["accuracy"]
    ]
    return TableCells(columns, cells)


def device_time(section: ProcessSection, layout: TerminalLayout | None) -> TableCells:
    """Each graph's timed runs on its device."""
    columns = [
        Column("id"),
        Column("kind"),
        Column("device"),
        Column("timed runs", right=True),
        Column("device total", right=True),
        Column("mean", right=True),
        Column("max", right=True),
    ]
    cells: list[list[CellLike]] = [
        [
            row["compile_id"] or "?",
            row["run_kind"],
            row["device"],
            str(row["timed_runs"]),
            _format.duration(row["device_s"]),
            _format.duration(row["mean_device_s"]),
            _format.duration(row["max_device_s"]),
        ]
        for row in section["device_time"]
    ]
    return TableCells(columns, cells)


def _name(function: str, layout: TerminalLayout | None) -> str:
    return function if layout is None else layout.name(function)


def _shown(rows: Sequence[_Row], layout: TerminalLayout | None) -> Sequence[_Row]:
    return rows if layout is None else layout.shown(rows)


def _any_calls(rows: Sequence[CompileRow] | Sequence[RecompileRow]) -> bool:
    """Whether any variant's calls were recorded (telemetry may predate them)."""
    return any(row["calls"] is not None for row in rows)


def _calls(row: CompileRow | RecompileRow, layout: TerminalLayout | None) -> CellLike:
    """The calls a variant served, on a terminal dimmed when cold (the page has no class
    for dim: its text alone, no cell to convert)."""
    if layout is None:
        return _format.calls(row)
    return Cell(_format.calls(row), None if row["hot"] else "dim")
