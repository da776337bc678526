"""A diff as terminal text (at most ``width`` columns): the totals, then what is new, gone
or changed (graph breaks, recompiles, failures), functions and phases whose compile time
moved past the threshold, per process where there are several, and the ``--fail-on``
verdicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from otel_dynamo.causes.guards import plain_reason
from otel_dynamo.report.diff.compare import compiled_another_way
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
    Side,
    VariantChanges,
    Verdict,
)
from otel_dynamo.report.render import format as _format
from otel_dynamo.report.render.format import TOTAL_TITLES
from otel_dynamo.report.render.table import Cell, Column, format_table, paint, shown_name, wrapped
from otel_dynamo.report.summary import COUNT_TOTALS, TIME_TOTALS
from otel_dynamo.report.summary.phases import PHASE_CATEGORIES as PHASES
from otel_dynamo.report.summary.phases import PHASE_TITLES


def render_diff(diff: Diff, verdicts: list[Verdict], *, width: int, color: bool) -> str:
    """The diff for a terminal; made printable (text from the files never reaches the
    terminal raw)."""
    diff = _format.printable_values(diff)
    lines = _heading(diff, width)
    lines += ["", *_totals_table(diff["totals"], width, color)]
    lines += _parts(diff, width, color)
    lines += _functions(diff["functions"], width, color)
    lines += _variants(diff["variants"], width, color)
    lines += _phases(diff["phases"], width, color)
    if len(diff["processes"]) > 1 or any(row["in"] != "both" for row in diff["processes"]):
        lines += _processes(diff["processes"], width, color)
    lines += _verdicts(verdicts, color)
    return "\n".join(lines) + "\n"


def _heading(diff: Diff, width: int) -> list[str]:
    base, new = diff["inputs"]["base"], diff["inputs"]["new"]
    said = (
        f"otel-dynamo diff: base {_side(base)} → new {_side(new)}",
        threshold_text(diff["min_change"]),
    )
    return [line for text in said for line in wrapped(text, width)]


def _side(side: Side) -> str:
    """ "1 process (3 files)"."""
    processes = _format.plural(side["processes"], "process", "processes")
    return f"{processes} ({_format.plural(side['files'], 'file')})"


def _change(key: str, entry: Change) -> Cell:
    if entry["change"] == 0:
        return Cell("0", "dim")
    shown = change_text(key, entry)
    if not entry.get("significant", True):  # a time inside --min-change: shown, not news
        return Cell(f"{shown} {UNDER_MIN_CHANGE}", "dim")
    return Cell(shown, "red" if entry["change"] > 0 else "green")


def _totals_table(totals: dict[str, Change], width: int, color: bool) -> list[str]:
    columns = [
        Column("", flexible=True),  # each total's name whole
        Column("base", right=True),
        Column("new", right=True),
        Column("change", right=True),
    ]
    rows: list[list[Cell | str]] = [
        [
            TOTAL_TITLES[key],
            number_text(key, totals[key]["base"]),
            number_text(key, totals[key]["new"]),
            _change(key, totals[key]),
        ]
        for key in (*COUNT_TOTALS, *TIME_TOTALS)
    ]
    return format_table(columns, rows, width=width, color=color)


def _parts(diff: Diff, width: int, color: bool) -> list[str]:
    lines: list[str] = []
    for part in keyed_parts(diff):
        if not part.items:
            continue
        lines += ["", paint(f"{part.title} ({part.occurrences})", "bold", color=color)]
        style = _PART_STYLES[part.part]
        for item in part.items:
            lines += _item_lines(item, width, color, style)
    return lines


_PART_STYLES = {"new": "red", "gone": "green", "changed": "yellow"}


def _item_lines(item: ItemView, width: int, color: bool, style: str) -> list[str]:
    counts = f"{item.base_count}x → {item.new_count}x"
    body = wrapped(item.what, width - 16)
    lines = [f"  {paint(counts.rjust(12), style, color=color)}  {body[0]}"]
    lines += [" " * 16 + line for line in body[1:]]
    if item.guard:
        guard = wrapped(f"guard: {item.guard}", width - 16)
        lines += [paint(" " * 16 + line, "dim", color=color) for line in guard]
    if item.where:
        where = wrapped(item.where, width - 16)
        lines += [paint(" " * 16 + line, "dim", color=color) for line in where]
    return lines


def _functions(rows: list[FunctionChange], width: int, color: bool) -> list[str]:
    if not rows:
        return []
    columns = [
        Column("function", whole=True),
        # at a narrow width the counts, then the file, go before a name is cut further
        Column("file", flexible=True, cut_left=True, leave_out=1),
        Column("compiles", right=True, leave_out=2),
        Column("graphs", right=True, leave_out=3),
        Column("compile time", right=True),
        Column("change", right=True),
    ]
    table = [
        [
            shown_name(row["function"], width),
            row["file"],
            _arrow(row["frame_compiles"]),
            _arrow(row["graphs"]),
            f"{_format.duration(row['compile_seconds']['base'])} → "
            f"{_format.duration(row['compile_seconds']['new'])}",
            _change("compile_seconds", row["compile_seconds"])
            if row["time_significant"]
            else Cell(UNDER_MIN_CHANGE, "dim"),
        ]
        for row in rows
    ]
    lines = _titled(f"Functions that changed ({len(rows)})", columns, table, width, color)
    return lines + _settings_changes(rows, width, color)


def _settings_changes(rows: list[FunctionChange], width: int, color: bool) -> list[str]:
    """Functions asked to be compiled another way (mode, options, fullgraph, dynamic)."""
    changed = [row for row in rows if compiled_another_way(row["compiled_with"])]
    if not changed:
        return []
    lines = ["", paint(f"Compiled another way ({len(changed)})", "bold", color=color)]
    for row in changed:
        before = "; ".join(row["compiled_with"]["base"])
        after = "; ".join(row["compiled_with"]["new"])
        text = f"{row['function']} ({row['file']}): {before} → {after}"
        lines += [f"  {line}" for line in wrapped(text, width - 2)]
    return lines


VARIANTS_NOT_COMPARED = "Variants not compared: a run recorded no calls per variant"


def _variants(changes: VariantChanges, width: int, color: bool) -> list[str]:
    if not changes["compared"]:
        return ["", paint(VARIANTS_NOT_COMPARED, "dim", color=color)]
    lines: list[str] = []
    for title, items in variant_parts(changes):
        if not items:
            continue
        columns = [
            Column("function", whole=True),
            Column("file", flexible=True, cut_left=True),
            Column("calls", right=True),
            Column("share", right=True),
            Column("compiled for", wrap=True),
        ]
        table = [
            [
                shown_name(item["function"], width),
                item["file"],
                f"{item['base_calls']:,} → {item['new_calls']:,}",
                f"{item['base_share']:.0%} → {item['new_share']:.0%}",
                plain_reason(item["reason"]) or "first compile",
            ]
            for item in items
        ]
        lines += _titled(f"{title} ({len(items)})", columns, table, width, color)
    return lines


def _titled(
    title: str, columns: list[Column], rows: Sequence[Sequence[Any]], width: int, color: bool
) -> list[str]:
    """A blank line, the bold title, then the table."""
    return [
        "",
        paint(title, "bold", color=color),
        *format_table(columns, rows, width=width, color=color),
    ]


def _arrow(entry: Change) -> str:
    return f"{entry['base']:g}" if entry["change"] == 0 else f"{entry['base']:g} → {entry['new']:g}"


def _phases(phases: dict[str, Change], width: int, color: bool) -> list[str]:
    moved = [phase for phase in PHASES if phases[phase]["significant"]]
    if not moved:
        return []
    columns = [
        Column("phase", flexible=True),
        Column("base", right=True),
        Column("new", right=True),
        Column("change", right=True),
    ]
    rows: list[list[Cell | str]] = [
        [
            PHASE_TITLES[phase],
            _format.duration(phases[phase]["base"]),
            _format.duration(phases[phase]["new"]),
            _change("compile_seconds", phases[phase]),
        ]
        for phase in moved
    ]
    return _titled("Compile time by phase (changed)", columns, rows, width, color)


def _processes(rows: list[ProcessChange], width: int, color: bool) -> list[str]:
    columns = [
        Column("process", flexible=True),
        Column("in"),
        Column("compiles", right=True, leave_out=1),
        Column("breaks", right=True, leave_out=2),
        Column("recompiles", right=True),
        Column("failures", right=True, leave_out=3),
        Column("compile time", right=True),
    ]
    table = [
        [
            row["process"],
            row["in"],
            *(
                _arrow(row["totals"][key])
                for key in ("frame_compiles", "graph_breaks", "recompiles", "failures")
            ),
            _change("compile_seconds", row["totals"]["compile_seconds"]),
        ]
        for row in rows
    ]
    return _titled("Per process", columns, table, width, color)


def _verdicts(verdicts: list[Verdict], color: bool) -> list[str]:
    if not verdicts:
        return []
    lines = ["", paint("Fail-on conditions", "bold", color=color)]
    for verdict in verdicts:
        mark = paint("FAILED", "red_bold", color=color) if verdict["failed"] else "ok    "
        value = "-" if verdict["value"] is None else f"{verdict['value']:g}"
        lines.append(f"  {mark}  {verdict['condition']} ({verdict['compared']} {value})")
    return lines
