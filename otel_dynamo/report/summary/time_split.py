"""Where compile time went: the report's opening answer to "why is my job compiling slowly".

From a process section's compile rows (and its cache counts): the compile seconds split
by phase (the exclusive phases of ``_phases``, which add up to each compile's time), by
named backend step, cold against served from cache, and the functions whose compiles and
recompiles took the most, summed per code location. Every split adds up to
``compile_seconds``, the same number as ``totals.compile_seconds``; what no phase holds
(telemetry with no recorded split, lazy backwards whose frame was not read) is
``unrecorded``. Keys in docs/report-json.md; render/time_split.py shows it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypedDict

from otel_dynamo.report.summary.phases import (
    PHASE_AOT,
    PHASE_BACKEND,
    PHASE_CATEGORIES,
    PHASE_DETAILS,
)
from otel_dynamo.report.summary.schema import (
    Caches,
    CompileRow,
    CompileTime,
    FunctionRow,
    ProcessTotals,
)


class CompileParts(TypedDict):
    """What the split reads of a process section (its totals already made)."""

    compiles: list[CompileRow]
    caches: Caches
    totals: ProcessTotals


PHASE_UNRECORDED = "unrecorded"
"""The part of the compile time no phase holds."""
TOP_FUNCTIONS = 10
"""Functions listed in ``slowest_functions``."""
ROUNDING_NS = 10_000
"""Phases that exceed their compile's time by at most this much do so by rounding each
part to the microsecond, and are kept as they are."""


def process_split(section: CompileParts) -> CompileTime:
    """Where one process section's compile time went (its ``totals`` already made)."""
    return _split([section])


def combine(sections: Sequence[CompileParts]) -> CompileTime:
    """Where all processes' compile time went; a function compiled by several processes
    is one row (``processes`` counts them)."""
    return _split(sections)


def _split(sections: Sequence[CompileParts]) -> CompileTime:
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
        "steps": [
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


def _exclusive_ns(row: CompileRow) -> dict[str, int]:
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


def _functions(sections: Iterable[CompileParts], total_ns: int) -> list[FunctionRow]:
    # By module too: one decorator's wrapper is the same code for two models' forwards.
    found: dict[tuple[str | None, str | None, int | None, str | None], _FunctionTime] = {}
    for index, section in enumerate(sections):
        for row in section["compiles"]:
            key = (row["function"], row["file"], row["line"], row["module"])
            entry = found.setdefault(
                key, {"compiles": 0, "recompiles": 0, "ns": 0, "processes": set()}
            )
            entry["compiles"] += 1
            entry["recompiles"] += 1 if row["is_recompile"] else 0
            entry["ns"] += _ns(row["compile_s"])
            entry["processes"].add(index)
    ranked = sorted(
        found.items(),
        key=lambda item: (
            -item[1]["ns"],
            item[0][1] or "",
            item[0][2] or 0,
            item[0][0] or "",
            item[0][3] or "",
        ),
    )
    return [
        {
            "function": function,
            "module": module,
            "file": file,
            "line": line,
            "compiles": entry["compiles"],
            "recompiles": entry["recompiles"],
            "compile_seconds": _seconds(entry["ns"]),
            "share": _share(entry["ns"], total_ns),
            "processes": len(entry["processes"]),
        }
        for (function, file, line, module), entry in ranked[:TOP_FUNCTIONS]
    ]


def _ns(value: float) -> int:
    return round(value * 1e9)


def _seconds(ns: int) -> float:
    return round(ns / 1e9, 6)


def _share(ns: int, total_ns: int) -> float | None:
    return None if total_ns <= 0 else round(ns / total_ns, 4)


class _FunctionTime(TypedDict):
    compiles: int
    recompiles: int
    ns: int
    processes: set[int]
