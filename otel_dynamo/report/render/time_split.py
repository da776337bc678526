"""Where compile time went (``summary.time_split``), for the terminal and the page: the
report's opening answer to "why is my job compiling slowly"."""

from __future__ import annotations

import html

from otel_dynamo.report.render import format as _format
from otel_dynamo.report.render.table import (
    NO_BREAK_SPACE,
    Column,
    format_table,
    paint,
    shown_name,
    truncate,
    wrapped,
)
from otel_dynamo.report.summary.function_names import function_label
from otel_dynamo.report.summary.phases import PHASE_TITLES
from otel_dynamo.report.summary.schema import CompileTime, FunctionRow, PhaseRow
from otel_dynamo.report.summary.time_split import PHASE_UNRECORDED

TERMINAL_FUNCTIONS = 5
"""Slowest functions the terminal shows (``--json`` and the page have all of them)."""
MIN_UNRECORDED_SHOWN = 0.001
"""Unrecorded time below this (seconds) is rounding, left out of the views."""
STEP_TITLES = {
    "aot.joint_graph": "AOT joint graph",
    "aot.partition": "AOT partition",
    "backend.lowering": "backend lowering",
    "backend.codegen": "backend codegen",
    "backend.compile": "backend compile (C++/Triton)",
    "backend.autotune": "backend autotune",
}


def phase_title(phase: str) -> str:
    return PHASE_TITLES.get(phase, "not split (no phase recorded)")


def _shown(row: PhaseRow) -> bool:
    """Whether a phase row is worth a place: time, and for the unrecorded rest more than
    what rounding each compile's parts leaves (a few microseconds)."""
    floor = MIN_UNRECORDED_SHOWN if row["phase"] == PHASE_UNRECORDED else 0.0
    return bool(row["seconds"] > floor)


def _percent(share: float | None) -> str:
    return "" if share is None else f"{share:.0%}"


def headline(split: CompileTime) -> str:
    """ "AOT 54% · tracing 20% · …": the phases with time, largest first."""
    timed = [row for row in split["phases"] if _shown(row)]
    ranked = sorted(timed, key=lambda row: -row["seconds"])
    return " · ".join(
        f"{phase_title(row['phase'])} {_format.duration(row['seconds'])} ({_percent(row['share'])})"
        for row in ranked
    )


def cache_line(split: CompileTime) -> str:
    """ "cold 3 compiles 2.10 s · from cache 1 compile 40.0 ms · 2 hits, 3 misses, 0 bypasses"."""
    cache = split["cache"]
    counts = (cache["cache_hits"], cache["cache_misses"], cache["cache_bypasses"])
    if not any(counts) and not cache["warm_compiles"]:
        cold = cache["cold_compiles"]
        return "no compile cache used: " + (
            "the 1 compile cold" if cold == 1 else f"all {cold} compiles cold"
        )
    return " · ".join(
        [
            f"cold {_format.plural(cache['cold_compiles'], 'compile')} "
            f"{_format.duration(cache['cold_seconds'])}",
            f"from cache {_format.plural(cache['warm_compiles'], 'compile')} "
            f"{_format.duration(cache['warm_seconds'])}",
            _format.lookups(*counts),
        ]
    )


def terminal_lines(split: CompileTime, *, width: int, color: bool) -> list[str]:
    """The terminal's "Where compile time went" block (nothing when nothing compiled)."""
    if not split["compile_seconds"]:
        return []
    title = f"Where compile time went ({_format.duration(split['compile_seconds'])})"
    lines = [paint(truncate(title, width), "bold", color=color)]
    lines += _labelled("by phase", headline(split), width)
    steps = " · ".join(
        f"{STEP_TITLES.get(row['step'], row['step'])} {_format.duration(row['seconds'])}"
        for row in split["steps"]
        if row["seconds"] > 0
    )
    if steps:
        lines += _labelled("of which", steps, width)
    if split["lazy_backward_seconds"]:
        lazy = (
            f"frame compiles {_format.duration(split['frame_seconds'])}, lazy backward "
            f"compiles {_format.duration(split['lazy_backward_seconds'])}"
        )
        lines += _labelled("kind", lazy, width)
    lines += _labelled("cold/warm", cache_line(split), width)
    functions = split["slowest_functions"][:TERMINAL_FUNCTIONS]
    if functions:
        columns = [
            Column("function", whole=True),
            Column("location", flexible=True, cut_left=True),
            Column("compiles", right=True, leave_out=1),
            Column("recompiles", right=True, leave_out=1),
            Column("compile time", right=True),
            Column("share", right=True, leave_out=1),
        ]
        rows = [
            [shown_name(name, width), *cells]
            for name, *cells in (_function_cells(row) for row in functions)
        ]
        lines += ["  slowest functions", *format_table(columns, rows, width=width, color=color)]
    return lines


def _labelled(label: str, text: str, width: int) -> list[str]:
    """ "  by phase  AOT 1.2 s (54%) · …", continued under the text, broken between parts
    (after a separator, never before one: no line starts with "·")."""
    indent = 2 + 10 + 2
    bound = f"{NO_BREAK_SPACE}· ".join(
        part.replace(" ", NO_BREAK_SPACE) if len(part) <= width - indent else part
        for part in text.split(" · ")
    )
    body = wrapped(bound, width - indent)
    first = f"  {label.ljust(10)}  {body[0]}"
    return [first, *(" " * indent + line for line in body[1:])]


def _function_cells(row: FunctionRow) -> list[str]:
    """One slowest function: label, location, compiles, recompiles, time, share."""
    return [
        function_label(row["function"], row["module"]),
        _format.location(row["file"], row["line"]),
        str(row["compiles"]),
        str(row["recompiles"]),
        _format.duration(row["compile_seconds"]),
        _percent(row["share"]),
    ]


def html_block(split: CompileTime) -> str:
    """The page's "Where compile time went" section: phases, steps, cache, functions."""
    if not split["compile_seconds"]:
        return ""
    total = _format.duration(split["compile_seconds"])
    phases = [
        [phase_title(row["phase"]), _format.duration(row["seconds"]), _percent(row["share"])]
        for row in split["phases"]
        if _shown(row)
    ]
    steps = [
        [STEP_TITLES.get(row["step"], row["step"]), _format.duration(row["seconds"]),
         _percent(row["share"])]
        for row in split["steps"]
        if row["seconds"] > 0
    ]  # fmt: skip
    cache = split["cache"]
    cache_rows = [
        ["cold", str(cache["cold_compiles"]), _format.duration(cache["cold_seconds"])],
        ["served from cache", str(cache["warm_compiles"]), _format.duration(cache["warm_seconds"])],
    ]
    functions = [_function_cells(row) for row in split["slowest_functions"]]
    lazy = ""
    if split["lazy_backward_seconds"]:
        lazy = (
            f" Frame compiles {_format.duration(split['frame_seconds'])}, lazy backward "
            f"compiles {_format.duration(split['lazy_backward_seconds'])}."
        )
    lookups = _format.lookups(cache["cache_hits"], cache["cache_misses"], cache["cache_bypasses"])
    counts = f" Cache lookups: {lookups}."
    return (
        '<section id="compile-time"><h2>'
        f"Where compile time went ({html.escape(total)})</h2>"
        f'<p class="hint">{html.escape(lazy + counts)}</p>'
        '<div class="split">'
        + _html_table("By phase", ["phase", "time", "share"], phases)
        + (_html_table("Named steps", ["step", "time", "share"], steps) if steps else "")
        + _html_table("Cold or from cache", ["", "compiles", "time"], cache_rows)
        + "</div>"
        + _html_table(
            "Slowest functions (compiles and recompiles summed)",
            ["function", "location", "compiles", "recompiles", "compile time", "share"],
            functions,
        )
        + "</section>"
    )


def _html_table(title: str, columns: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(column)}</th>" for column in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return (
        f"<div><h3>{html.escape(title)}</h3>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )
