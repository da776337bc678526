"""The ``torch_export`` section rendered: terminal lines and the HTML page's tables.

Shown only for a process with torch.export activity (an export or decomposition call, or
a recorded run of an exported module); a torch.compile job's report is unchanged.
"""

from __future__ import annotations

from otel_dynamo.report.render import format as _format
from otel_dynamo.report.render.table import Cell, Column, PageTable, TerminalLayout, page_table
from otel_dynamo.report.summary.schema import ExportSection, ProcessSection, Totals

MAX_OP_CHANGES_SHOWN = 3
"""Op changes of a decomposition listed in its row; the rest are counted."""

TITLE_EXPORTS = "torch.export calls"
TITLE_DECOMPOSITIONS = "torch.export decompositions"
TITLE_RUNS = "Runs of exported programs"
TITLE_FAILURES = "torch.export failures"


def has_activity(found: ExportSection) -> bool:
    """Whether the process did anything with torch.export (its section is shown)."""
    return any(found[key] for key in ("exports", "decompositions", "runs", "failures"))


def overview_items(totals: Totals) -> list[str]:
    """The overview line's torch.export part: "2 exports (1 failed)", or nothing."""
    if not totals["exports"] and not totals["decompositions"]:
        return []
    items = [_format.plural(totals["exports"], "export")]
    if totals["export_failures"]:
        items[0] += f" ({totals['export_failures']} failed)"
    if totals["decompositions"]:
        items.append(_format.plural(totals["decompositions"], "decomposition"))
    return items


# --- terminal --------------------------------------------------------------------------


def run_count(found: ExportSection) -> int:
    """The runs of exported programs, the number both views put in the runs heading."""
    return sum(row["runs"] for row in found["runs"])


def terminal(section: ProcessSection, layout: TerminalLayout) -> list[str]:
    """The process's torch.export tables; no lines when it did nothing with torch.export."""
    found: ExportSection = section["torch_export"]
    if not has_activity(found):
        return []
    lines: list[str] = []
    if found["exports"]:
        title = layout.title(TITLE_EXPORTS, len(found["exports"]))
        lines += [title, *layout.table(_EXPORT_COLUMNS, _export_cells(found))]
    if found["decompositions"]:
        title = layout.title(TITLE_DECOMPOSITIONS, len(found["decompositions"]))
        lines += [title, *layout.table(_DECOMPOSITION_COLUMNS, _decomposition_cells(found))]
    if found["runs"]:
        title = layout.title(TITLE_RUNS, run_count(found))
        lines += [title, *layout.table(_RUN_COLUMNS, _run_cells(found))]
    if found["failures"]:
        title = layout.paint(layout.title(TITLE_FAILURES, len(found["failures"])), "red")
        lines += [title, *layout.table(_FAILURE_COLUMNS, _failure_cells(found))]
    return lines


_EXPORT_COLUMNS = [
    Column("module", flexible=True, cut_left=True),
    Column("strict"),
    Column("dynamic"),
    Column("ops", right=True),
    Column("nodes", right=True),
    Column("params", right=True),
    Column("duration", right=True),
    Column("outcome"),
]
_DECOMPOSITION_COLUMNS = [
    Column("module", flexible=True, cut_left=True),
    Column("ops before", right=True),
    Column("ops after", right=True),
    Column("duration", right=True),
    Column("outcome"),
    Column("op changes", wrap=True),
]
_RUN_COLUMNS = [
    Column("module", flexible=True, cut_left=True),
    Column("runs", right=True),
    Column("failed", right=True),
    Column("run time", right=True),
]
_FAILURE_COLUMNS = [
    Column("operation"),
    Column("module", cut_left=True),
    Column("error", wrap=True),
]


def _export_cells(found: ExportSection) -> list[list[Cell | str]]:
    return [
        [
            row["module_class"] or "?",
            _yes_no(row["strict"]),
            _yes_no(row["dynamic_shapes"]),
            _format.optional(row["op_count"]),
            _format.optional(row["node_count"]),
            _format.optional(row["parameter_count"]),
            _format.duration(row["duration_s"]),
            _format.outcome_cell(row["outcome"]),
        ]
        for row in found["exports"]
    ]


def _decomposition_cells(found: ExportSection) -> list[list[Cell | str]]:
    return [
        [
            row["module_class"] or "?",
            _format.optional(row["op_count_before"]),
            _format.optional(row["op_count_after"]),
            _format.duration(row["duration_s"]),
            _format.outcome_cell(row["outcome"]),
            _op_changes([*row["ops_added"], *row["ops_removed"]]),
        ]
        for row in found["decompositions"]
    ]


def _run_cells(found: ExportSection) -> list[list[Cell | str]]:
    return [
        [
            row["module_class"] or "?",
            str(row["runs"]),
            Cell(str(row["failed"]), "red" if row["failed"] else None),
            _format.duration(row["duration_s"]),
        ]
        for row in found["runs"]
    ]


def _failure_cells(found: ExportSection) -> list[list[Cell | str]]:
    return [
        [
            Cell(row["operation"], "red"),
            row["module_class"] or "?",
            _failure_text(row["error_type"], row["error_message"], row["strict"]),
        ]
        for row in found["failures"]
    ]


def _failure_text(error_type: str | None, message: str | None, strict: bool | None) -> str:
    text = _format.error(error_type, message)
    return f"{text} (strict)" if strict else text


def _yes_no(value: bool | None) -> str:
    return "-" if value is None else "yes" if value else "no"


def _op_changes(changes: list[str]) -> str:
    """ "aten.addmm.default=+1, aten.linear.default=-1 (+2 more)"."""
    shown = ", ".join(changes[:MAX_OP_CHANGES_SHOWN])
    hidden = len(changes) - MAX_OP_CHANGES_SHOWN
    return f"{shown} (+{hidden} more)" if hidden > 0 else shown or "-"


# --- HTML ------------------------------------------------------------------------------


def html_overview(totals: Totals) -> list[list[str]]:
    """[label, value] pairs for the page header; none without torch.export calls."""
    if not totals["exports"] and not totals["decompositions"]:
        return []
    return [
        ["torch.export calls", str(totals["exports"])],
        ["export failures", str(totals["export_failures"])],
        ["decompositions", str(totals["decompositions"])],
        ["export time", _format.duration(totals["export_seconds"])],
    ]


def html_tables(section: ProcessSection) -> list[PageTable]:
    """The page's tables of the process's torch.export activity (none without any)."""
    found: ExportSection = section["torch_export"]
    if not has_activity(found):
        return []
    runs = page_table(TITLE_RUNS, _RUN_COLUMNS, _run_cells(found))
    runs["count"] = run_count(found)
    return [
        page_table(TITLE_EXPORTS, _EXPORT_COLUMNS, _export_cells(found)),
        page_table(TITLE_DECOMPOSITIONS, _DECOMPOSITION_COLUMNS, _decomposition_cells(found)),
        runs,
        page_table(TITLE_FAILURES, _FAILURE_COLUMNS, _failure_cells(found)),
    ]
