"""Where compile time went: the report's opening answer to "why is my job compiling slowly".

From a process section's compile rows (and its cache counts): the compile seconds split
by phase (the exclusive phases of ``_phases``, which add up to each compile's time), by
named backend step, cold against served from cache, and the functions whose compiles and
recompiles took the most, summed per code location. Every split adds up to
``compile_seconds``, the same number as ``totals.compile_seconds``; what no phase holds
(telemetry with no recorded split, lazy backwards whose frame was not read) is
``unrecorded``. Rendered for the terminal and the page here too; keys in
docs/report-json.md.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypedDict

from otel_dynamo.report import _format
from otel_dynamo.report._phases import (
    PHASE_AOT,
    PHASE_BACKEND,
    PHASE_CATEGORIES,
    PHASE_DETAILS,
    PHASE_TITLES,
)
from otel_dynamo.report._table import (
    NO_BREAK_SPACE,
    Column,
    format_table,
    paint,
    truncate,
    wrapped,
)

PHASE_UNRECORDED = "unrecorded"
"""The part of the compile time no phase holds."""
TOP_FUNCTIONS = 10
"""Functions listed in ``slowest_functions`` (the terminal shows the first
TERMINAL_FUNCTIONS of them)."""
TERMINAL_FUNCTIONS = 5
ROUNDING_NS = 10_000
"""Phases that exceed their compile's time by at most this much do so by rounding each
part to the microsecond, and are kept as they are."""
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


class PhaseRow(TypedDict):
    """Seconds of one phase over all compiles, and its share of the compile time."""

    phase: str
    seconds: float
    share: float | None


class StepRow(TypedDict):
    """Seconds of one named AOT or backend step (a part of its phase)."""

    step: str
    seconds: float
    share: float | None


class CacheSplit(TypedDict):
    """Compile time of frame compiles served from cache against the rest (cold)."""

    warm_compiles: int
    warm_seconds: float
    cold_compiles: int
    cold_seconds: float
    cache_hits: int
    cache_misses: int
    cache_bypasses: int


class FunctionRow(TypedDict):
    """One code location: its compiles and recompiles and their compile seconds."""

    function: str | None
    file: str | None
    line: int | None
    compiles: int
    recompiles: int
    compile_seconds: float
    share: float | None
    processes: int


class CompileTime(TypedDict):
    """Where the compile time of a process (or of all of them) went."""

    compile_seconds: float
    frame_seconds: float
    lazy_backward_seconds: float
    phases: list[PhaseRow]
    backend_steps: list[StepRow]
    cache: CacheSplit
    slowest_functions: list[FunctionRow]


def process_split(section: Mapping[str, Any]) -> CompileTime:
    """Where one process section's compile time went (its ``totals`` already made)."""
    return _split([section])


def combine(sections: Sequence[Mapping[str, Any]]) -> CompileTime:
    """Where all processes' compile time went; a function compiled by several processes
    is one row (``processes`` counts them)."""
    return _split(sections)


def _split(sections: Sequence[Mapping[str, Any]]) -> CompileTime:
    totals = [section["totals"] for section in sections]
    total_ns = sum(_ns(part["compile_seconds"]) for part in totals)
    lazy_ns = sum(_ns(part["lazy_backward_seconds"]) for part in totals)
    compiles = [row for section in sections for row in section["compiles"]]
    phase_ns = dict.fromkeys(PHASE_CATEGORIES, 0)
    for row in compiles:
        for phase, ns in _exclusive_ns(row).items():
            phase_ns[phase] += ns
    rest = total_ns - sum(phase_ns.values())
    if rest < 0:  # rounding each compile's parts left a few nanoseconds too many
        largest = max(phase_ns, key=lambda phase: phase_ns[phase])
        phase_ns[largest] += rest
    phase_ns[PHASE_UNRECORDED] = max(rest, 0)
    step_ns: dict[str, int] = {}
    for row in compiles:
        for step in PHASE_DETAILS:
            value = row["phase_details"].get(step)
            if value is not None:
                step_ns[step] = step_ns.get(step, 0) + _ns(value)
    warm_frames = sum(section["caches"]["warm_frames"] for section in sections)
    warm_ns = sum(_ns(section["caches"]["warm_compile_s"]) for section in sections)
    return {
        "compile_seconds": _seconds(total_ns),
        "frame_seconds": _seconds(total_ns - lazy_ns),
        "lazy_backward_seconds": _seconds(lazy_ns),
        "phases": [
            {"phase": phase, "seconds": _seconds(ns), "share": _share(ns, total_ns)}
            for phase, ns in phase_ns.items()
        ],
        "backend_steps": [
            {"step": step, "seconds": _seconds(ns), "share": _share(ns, total_ns)}
            for step, ns in step_ns.items()
        ],
        "cache": {
            "warm_compiles": warm_frames,
            "warm_seconds": _seconds(warm_ns),
            "cold_compiles": len(compiles) - warm_frames,
            "cold_seconds": _seconds(total_ns - warm_ns),
            "cache_hits": sum(part["cache_hits"] for part in totals),
            "cache_misses": sum(part["cache_misses"] for part in totals),
            "cache_bypasses": sum(part["cache_bypasses"] for part in totals),
        },
        "slowest_functions": _functions(sections, total_ns),
    }


def _exclusive_ns(row: Mapping[str, Any]) -> dict[str, int]:
    """A compile's phases in nanoseconds, never more than its compile time together.

    A recorded split is exclusive already. Telemetry from before it has Dynamo's phase
    spans only, where AOT runs inside the backend compile: the backend is then what AOT
    leaves of it, and what still overlaps is scaled down to the compile's time."""
    phases = {phase: _ns(row["phases"].get(phase) or 0.0) for phase in PHASE_CATEGORIES}
    limit = _ns(row["compile_s"])
    overlap = sum(phases.values()) > limit + ROUNDING_NS
    if overlap and phases[PHASE_AOT] and phases[PHASE_BACKEND]:
        phases[PHASE_BACKEND] = max(0, phases[PHASE_BACKEND] - phases[PHASE_AOT])
    total = sum(phases.values())
    if total > limit + ROUNDING_NS:
        phases = {phase: ns * limit // total for phase, ns in phases.items()}
    return phases


def _functions(sections: Iterable[Mapping[str, Any]], total_ns: int) -> list[FunctionRow]:
    found: dict[tuple[Any, ...], dict[str, Any]] = {}
    for index, section in enumerate(sections):
        for row in section["compiles"]:
            key = (row["function"], row["file"], row["line"])
            entry = found.setdefault(
                key, {"compiles": 0, "recompiles": 0, "ns": 0, "processes": set()}
            )
            entry["compiles"] += 1
            entry["recompiles"] += 1 if row["is_recompile"] else 0
            entry["ns"] += _ns(row["compile_s"])
            entry["processes"].add(index)
    ranked = sorted(
        found.items(),
        key=lambda item: (-item[1]["ns"], item[0][1] or "", item[0][2] or 0, item[0][0] or ""),
    )
    return [
        {
            "function": function,
            "file": file,
            "line": line,
            "compiles": entry["compiles"],
            "recompiles": entry["recompiles"],
            "compile_seconds": _seconds(entry["ns"]),
            "share": _share(entry["ns"], total_ns),
            "processes": len(entry["processes"]),
        }
        for (function, file, line), entry in ranked[:TOP_FUNCTIONS]
    ]


def _ns(value: float) -> int:
    return round(value * 1e9)


def _seconds(ns: int) -> float:
    return round(ns / 1e9, 6)


def _share(ns: int, total_ns: int) -> float | None:
    return None if total_ns <= 0 else round(ns / total_ns, 4)


# --- views -------------------------------------------------------------------------


def phase_title(phase: str) -> str:
    return PHASE_TITLES.get(phase, "not split (no phase recorded)")


def _shown(row: Mapping[str, Any]) -> bool:
    """Whether a phase row is worth a place: time, and for the unrecorded rest more than
    what rounding each compile's parts leaves (a few microseconds)."""
    floor = MIN_UNRECORDED_SHOWN if row["phase"] == PHASE_UNRECORDED else 0.0
    return bool(row["seconds"] > floor)


def _percent(share: float | None) -> str:
    return "" if share is None else f"{share:.0%}"


def headline(split: Mapping[str, Any]) -> str:
    """ "AOT 54% · tracing 20% · …": the phases with time, largest first."""
    timed = [row for row in split["phases"] if _shown(row)]
    ranked = sorted(timed, key=lambda row: -row["seconds"])
    return " · ".join(
        f"{phase_title(row['phase'])} {_format.duration(row['seconds'])} ({_percent(row['share'])})"
        for row in ranked
    )


def cache_line(split: Mapping[str, Any]) -> str:
    """ "cold 3 compiles 2.10 s · from cache 1 compile 40.0 ms · 2 hits, 3 misses, 0 bypasses"."""
    cache = split["cache"]
    counts = (cache["cache_hits"], cache["cache_misses"], cache["cache_bypasses"])
    if not any(counts) and not cache["warm_compiles"]:
        cold = _format.plural(cache["cold_compiles"], "compile")
        return f"no compile cache used: all {cold} cold"
    return " · ".join(
        [
            f"cold {_format.plural(cache['cold_compiles'], 'compile')} "
            f"{_format.duration(cache['cold_seconds'])}",
            f"from cache {_format.plural(cache['warm_compiles'], 'compile')} "
            f"{_format.duration(cache['warm_seconds'])}",
            f"{_format.plural(counts[0], 'hit')}, {_format.plural(counts[1], 'miss', 'misses')}, "
            f"{_format.plural(counts[2], 'bypass', 'bypasses')}",
        ]
    )


def terminal_lines(split: Mapping[str, Any], *, width: int, color: bool) -> list[str]:
    """The terminal's "Where compile time went" block (nothing when nothing compiled)."""
    if not split["compile_seconds"]:
        return []
    title = f"Where compile time went ({_format.duration(split['compile_seconds'])})"
    lines = [paint(truncate(title, width), "bold", color=color)]
    lines += _labelled("by phase", headline(split), width)
    steps = " · ".join(
        f"{STEP_TITLES.get(row['step'], row['step'])} {_format.duration(row['seconds'])}"
        for row in split["backend_steps"]
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
    lines += _labelled("cache", cache_line(split), width)
    functions = split["slowest_functions"][:TERMINAL_FUNCTIONS]
    if functions:
        columns = [
            Column("slowest functions", flexible=True),
            Column("location", flexible=True, cut_left=True),
            Column("compiles", right=True),
            Column("recompiles", right=True),
            Column("compile time", right=True),
            Column("share", right=True),
        ]
        rows: list[list[Any]] = [
            [
                row["function"] or "?",
                _format.location(row["file"], row["line"]),
                str(row["compiles"]),
                str(row["recompiles"]),
                _format.duration(row["compile_seconds"]),
                _percent(row["share"]),
            ]
            for row in functions
        ]
        lines += format_table(columns, rows, width=width, color=color)
    return lines


def _labelled(label: str, text: str, width: int) -> list[str]:
    """ "  by phase  AOT 1.2 s (54%) · …", continued under the text, broken between parts."""
    indent = 2 + 10 + 2
    bound = " · ".join(
        part.replace(" ", NO_BREAK_SPACE) if len(part) <= width - indent else part
        for part in text.split(" · ")
    )
    body = wrapped(bound, width - indent)
    first = f"  {label.ljust(10)}  {body[0]}"
    return [first, *(" " * indent + line for line in body[1:])]


def html_block(split: Mapping[str, Any]) -> str:
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
        for row in split["backend_steps"]
        if row["seconds"] > 0
    ]  # fmt: skip
    cache = split["cache"]
    cache_rows = [
        ["cold", str(cache["cold_compiles"]), _format.duration(cache["cold_seconds"])],
        ["served from cache", str(cache["warm_compiles"]), _format.duration(cache["warm_seconds"])],
    ]
    functions = [
        [
            row["function"] or "?",
            _format.location(row["file"], row["line"]),
            str(row["compiles"]),
            str(row["recompiles"]),
            _format.duration(row["compile_seconds"]),
            _percent(row["share"]),
        ]
        for row in split["slowest_functions"]
    ]
    lazy = ""
    if split["lazy_backward_seconds"]:
        lazy = (
            f" Frame compiles {_format.duration(split['frame_seconds'])}, lazy backward "
            f"compiles {_format.duration(split['lazy_backward_seconds'])}."
        )
    counts = (
        f" Cache hits / misses / bypasses: {cache['cache_hits']} / {cache['cache_misses']} / "
        f"{cache['cache_bypasses']}."
    )
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
