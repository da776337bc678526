"""A diff as one self-contained HTML page in the report's style (no script, no network):
the same sections as the terminal, every item, nothing cut."""

from __future__ import annotations

import html
from collections.abc import Sequence

from otel_dynamo.causes.guards import plain_reason
from otel_dynamo.report.diff.items import (
    UNDER_MIN_CHANGE,
    ItemView,
    change_text,
    keyed_parts,
    number_text,
    threshold_text,
    variant_parts,
)
from otel_dynamo.report.diff.schema import (
    Change,
    Diff,
    FunctionChange,
    ProcessChange,
    VariantChange,
    Verdict,
)
from otel_dynamo.report.render import format as _format
from otel_dynamo.report.render.format import TOTAL_TITLES
from otel_dynamo.report.render.html.assets import DIFF_PAGE, STYLE
from otel_dynamo.report.summary import COUNT_TOTALS, TIME_TOTALS
from otel_dynamo.report.summary.phases import PHASE_CATEGORIES as PHASES
from otel_dynamo.report.summary.phases import PHASE_TITLES

PAGE_TITLE = "otel-dynamo diff"


def render_diff_html(diff: Diff, verdicts: list[Verdict]) -> str:
    """The page; every text from the files is escaped."""
    # the verdict first: it is what a CI run's reader came for
    sections = [*([_verdicts_table(verdicts)] if verdicts else []), *_diff_tables(diff)]
    base, new = diff["inputs"]["base"], diff["inputs"]["new"]
    stats = (
        f"<div>base <b>{_format.plural(base['processes'], 'process', 'processes')}, "
        f"{_format.plural(base['files'], 'file')}</b></div>"
        f"<div>new <b>{_format.plural(new['processes'], 'process', 'processes')}, "
        f"{_format.plural(new['files'], 'file')}</b></div>"
        f"<div>{html.escape(threshold_text(diff['min_change']))}</div>"
    )
    return DIFF_PAGE.substitute(
        title=html.escape(PAGE_TITLE), style=STYLE, stats=stats, sections="".join(sections)
    )


def _verdicts_table(verdicts: list[Verdict]) -> str:
    rows = [
        [v["condition"], v["compared"], _value(v["value"]), "FAILED" if v["failed"] else "ok"]
        for v in verdicts
    ]
    return _table("Fail-on conditions", ["condition", "compared", "value", "verdict"], rows)


def _diff_tables(diff: Diff) -> list[str]:
    """The diff's tables, in the page's order."""
    tables = [_table("Totals", ["", "base", "new", "change"], _total_rows(diff["totals"]))]
    for part in keyed_parts(diff):
        rows = [_item_row(item) for item in part.items]
        columns = ["base", "new", "what", "where"]
        tables.append(_table(part.title, columns, rows, count=part.occurrences))
    functions = [_function_row(row) for row in diff["functions"]]
    columns = ["function", "file", "compiles", "graphs", "compile time", "change"]
    tables.append(_table("Functions that changed", columns, functions))
    for title, variants in variant_parts(diff["variants"]):
        columns = ["function", "file", "calls", "share", "compiled for"]
        tables.append(_table(title, columns, [_variant_row(item) for item in variants]))
    phases = [_phase_row(phase, diff["phases"][phase]) for phase in PHASES]
    tables.append(_table("Compile time by phase", ["phase", "base", "new", "change"], phases))
    processes = [_process_row(row) for row in diff["processes"]]
    columns = ["process", "in", "compiles", "graph breaks", "recompiles", "failures"]
    tables.append(_table("Per process", [*columns, "compile time"], processes))
    return tables


def _value(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _total_rows(totals: dict[str, Change]) -> list[list[str]]:
    return [
        [
            TOTAL_TITLES[key].strip(),
            number_text(key, totals[key]["base"]),
            number_text(key, totals[key]["new"]),
            change_text(key, totals[key]),
        ]
        for key in (*COUNT_TOTALS, *TIME_TOTALS)
    ]


def _item_row(item: ItemView) -> list[_Cell]:
    what: _Cell = (item.what, item.guard) if item.guard else item.what
    return [str(item.base_count), str(item.new_count), what, item.where]


def _function_row(row: FunctionChange) -> list[str]:
    time = row["compile_seconds"]
    return [
        row["function"],
        row["file"],
        f"{row['frame_compiles']['base']:g} → {row['frame_compiles']['new']:g}",
        f"{row['graphs']['base']:g} → {row['graphs']['new']:g}",
        f"{_format.duration(time['base'])} → {_format.duration(time['new'])}",
        change_text("compile_seconds", time) if row["time_significant"] else UNDER_MIN_CHANGE,
    ]


_Cell = str | tuple[str, str]
"""A cell's text, or its text and the raw text shown on hover."""


def _reason(reason: str | None) -> _Cell:
    """A recompile reason in plain words, Dynamo's raw guard on hover."""
    return (plain_reason(reason) or reason, reason) if reason else ""


def _variant_row(item: VariantChange) -> list[_Cell]:
    return [
        item["function"],
        item["file"],
        f"{item['base_calls']:,} → {item['new_calls']:,}",
        f"{item['base_share']:.0%} → {item['new_share']:.0%}",
        _reason(item["reason"]) or "first compile",
    ]


def _phase_row(phase: str, entry: Change) -> list[str]:
    change = change_text("compile_seconds", entry) if entry["significant"] else UNDER_MIN_CHANGE
    title = PHASE_TITLES[phase]
    return [title, _format.duration(entry["base"]), _format.duration(entry["new"]), change]


def _process_row(row: ProcessChange) -> list[str]:
    totals = row["totals"]
    counts = [
        f"{totals[k]['base']:g} → {totals[k]['new']:g}"
        for k in ("frame_compiles", "graph_breaks", "recompiles", "failures")
    ]
    return [
        row["process"],
        row["in"],
        *counts,
        change_text("compile_seconds", totals["compile_seconds"]),
    ]


def _table(
    title: str, columns: list[str], rows: Sequence[Sequence[_Cell]], *, count: int | None = None
) -> str:
    shown = len(rows) if count is None else count
    heading = f"<h3>{html.escape(title)} ({shown})</h3>"
    if not rows:
        return f'<section>{heading}<p class="empty">none</p></section>'
    head = "".join(f"<th>{html.escape(column)}</th>" for column in columns)
    body = "".join("<tr>" + "".join(_td(cell) for cell in row) + "</tr>" for row in rows)
    table = (
        f'<div class="table-scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )
    return f"<section>{heading}{table}</section>"


def _td(cell: _Cell) -> str:
    if isinstance(cell, tuple):
        text, hover = cell
        return f'<td title="{html.escape(hover)}">{html.escape(text)}</td>'
    return f"<td>{html.escape(str(cell))}</td>"
