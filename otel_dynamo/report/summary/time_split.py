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

import dataclasses
from collections.abc import Iterable
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


@dataclasses.dataclass
class _FunctionTime:
    compiles: int
    recompiles: int
    ns: int
    processes: int


_SUMMED = (
    "total_ns",
    "lazy_ns",
    "compiles",
    "warm_frames",
    "warm_ns",
    "cache_hits",
    "cache_misses",
    "cache_bypasses",
)
"""Tally's fields that add up as they are."""

FunctionKey = tuple[str | None, str | None, int | None, str | None]
"""A compiled function: its name, file, first line and module."""


@dataclasses.dataclass
class Tally:
    """The whole nanoseconds and counts a split is made of: the tallies of several
    processes add up to theirs together, exactly (the report's worker processes tally
    their own processes; the reading process adds the tallies)."""

    total_ns: int = 0
    lazy_ns: int = 0
    compiles: int = 0
    phase_ns: dict[str, int] = dataclasses.field(
        default_factory=lambda: dict.fromkeys(PHASE_CATEGORIES, 0)
    )
    step_ns: dict[str, int] = dataclasses.field(default_factory=dict)
    """Per named backend step, in the order the steps were first met."""
    warm_frames: int = 0
    warm_ns: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    cache_bypasses: int = 0
    functions: dict[FunctionKey, _FunctionTime] = dataclasses.field(default_factory=dict)

    def add(self, other: Tally) -> None:
        """Add ``other``'s processes (none of them tallied here already)."""
        for name in _SUMMED:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for phase, ns in other.phase_ns.items():
            self.phase_ns[phase] += ns
        for step, ns in other.step_ns.items():
            self.step_ns[step] = self.step_ns.get(step, 0) + ns
        for key, entry in other.functions.items():
            mine = self.functions.setdefault(key, _FunctionTime(0, 0, 0, 0))
            mine.compiles += entry.compiles
            mine.recompiles += entry.recompiles
            mine.ns += entry.ns
            mine.processes += entry.processes


def tally(section: CompileParts) -> Tally:
    """One process section's tally (its ``totals`` already made)."""
    totals, caches = section["totals"], section["caches"]
    found = Tally(
        total_ns=_ns(totals["compile_seconds"]),
        lazy_ns=_ns(totals["lazy_backward_seconds"]),
        compiles=len(section["compiles"]),
        warm_frames=caches["warm_frames"],
        warm_ns=_ns(caches["warm_compile_s"]),
        cache_hits=totals["cache_hits"],
        cache_misses=totals["cache_misses"],
        cache_bypasses=totals["cache_bypasses"],
    )
    for row in section["compiles"]:
        for phase, ns in _exclusive_ns(row).items():
            found.phase_ns[phase] += ns
        for step in PHASE_DETAILS:
            value = row["phase_details"].get(step)
            if value is not None:
                found.step_ns[step] = found.step_ns.get(step, 0) + _ns(value)
        # By module too: one decorator's wrapper is the same code for two models' forwards.
        key = (row["function"], row["file"], row["line"], row["module"])
        entry = found.functions.get(key)
        if entry is None:  # made only here: most rows add to a function met before
            entry = found.functions[key] = _FunctionTime(0, 0, 0, 1)
        entry.compiles += 1
        entry.recompiles += 1 if row["is_recompile"] else 0
        entry.ns += _ns(row["compile_s"])
    return found


def combine(tallies: Iterable[Tally]) -> CompileTime:
    """Where all processes' compile time went; a function compiled by several processes
    is one row (``processes`` counts them)."""
    whole = Tally()
    for each in tallies:
        whole.add(each)
    return split(whole)


def split(found: Tally) -> CompileTime:
    """Where the compile time ``found`` tallies went."""
    total_ns = found.total_ns
    phase_ns = dict(found.phase_ns)
    rest = total_ns - sum(phase_ns.values())
    if rest < 0:  # rounding each compile's parts left a few nanoseconds too many
        largest = max(phase_ns, key=lambda phase: phase_ns[phase])
        phase_ns[largest] += rest
    phase_ns[PHASE_UNRECORDED] = max(rest, 0)
    return {
        "compile_seconds": _seconds(total_ns),
        "frame_seconds": _seconds(total_ns - found.lazy_ns),
        "lazy_backward_seconds": _seconds(found.lazy_ns),
        "phases": [
            {"phase": phase, "seconds": _seconds(ns), "share": _share(ns, total_ns)}
            for phase, ns in phase_ns.items()
        ],
        "steps": [
            {"step": step, "seconds": _seconds(ns), "share": _share(ns, total_ns)}
            for step, ns in found.step_ns.items()
        ],
        "cache": {
            "warm_compiles": found.warm_frames,
            "warm_seconds": _seconds(found.warm_ns),
            "cold_compiles": found.compiles - found.warm_frames,
            "cold_seconds": _seconds(total_ns - found.warm_ns),
            "cache_hits": found.cache_hits,
            "cache_misses": found.cache_misses,
            "cache_bypasses": found.cache_bypasses,
        },
        "slowest_functions": _functions(found.functions, total_ns),
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


def _functions(found: dict[FunctionKey, _FunctionTime], total_ns: int) -> list[FunctionRow]:
    ranked = sorted(
        found.items(),
        key=lambda item: (
            -item[1].ns,
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
            "compiles": entry.compiles,
            "recompiles": entry.recompiles,
            "compile_seconds": _seconds(entry.ns),
            "share": _share(entry.ns, total_ns),
            "processes": entry.processes,
        }
        for (function, file, line, module), entry in ranked[:TOP_FUNCTIONS]
    ]


def _ns(value: float) -> int:
    return round(value * 1e9)


def _seconds(ns: int) -> float:
    return round(ns / 1e9, 6)


def _share(ns: int, total_ns: int) -> float | None:
    return None if total_ns <= 0 else round(ns / total_ns, 4)
