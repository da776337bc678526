"""Compile phases: where a compile's time went, by category.

The recorder splits each frame compile and each lazy backward compile into categories
(``torch.compile.time.<category>`` attributes, adding up to the span's duration); the
report adds them up. Telemetry recorded before that split existed is grouped from Dynamo's
phase spans instead: a phase's time is the union of its spans' intervals (nested spans of
the same phase never count twice, repeated ones add up), AOT including its inner compilers.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import NamedTuple

from otel_dynamo import names
from otel_dynamo.causes.remembered import remembered
from otel_dynamo.report.read.model import Span
from otel_dynamo.report.read.values import seconds, text

PHASE_TRACING = "tracing"
PHASE_AOT = "aot"
PHASE_BACKEND = "backend"
PHASE_GUARDS = "guards"
PHASE_CACHE = "cache"
PHASE_CACHE_LOAD = "cache_load"
PHASE_OTHER = "other"
PHASE_CATEGORIES = (
    PHASE_TRACING,
    PHASE_AOT,
    PHASE_BACKEND,
    PHASE_GUARDS,
    PHASE_CACHE,
    PHASE_CACHE_LOAD,
    PHASE_OTHER,
)
"""The phases the report shows: exclusive, they add up to the compile time."""
PHASE_TITLES = {
    PHASE_TRACING: "tracing",
    PHASE_AOT: "AOT",
    PHASE_BACKEND: "backend",
    PHASE_GUARDS: "guards",
    PHASE_CACHE: "cache lookups",
    PHASE_CACHE_LOAD: "loading from cache",
    PHASE_OTHER: "other",
}
PHASE_DETAILS = (
    names.TIME_AOT_JOINT_GRAPH,
    names.TIME_AOT_PARTITION,
    names.TIME_BACKEND_LOWERING,
    names.TIME_BACKEND_CODEGEN,
    names.TIME_BACKEND_COMPILE,
    names.TIME_BACKEND_AUTOTUNE,
)
"""The parts of AOT and backend time the report names."""

_CATEGORY_OF_PHASE = {
    "bytecode_tracing": PHASE_TRACING,
    "backend_compile": PHASE_BACKEND,
    "build_guards": PHASE_GUARDS,
    "create_aot_dispatcher_function": PHASE_AOT,
}
AOT_SPANS = frozenset(
    {
        names.SPAN_AOT_PARTITION,
        names.SPAN_AOT_FORWARD,
        names.SPAN_AOT_BACKWARD,
        names.SPAN_AOT_INFERENCE,
    }
)
"""AOT's spans: where no AOT phase was recorded, their union is its time."""


_NAMED_PHASE_PREFIX = names.SPAN_PHASE + " "


def phase_name(span: Span) -> str | None:
    """Dynamo's name of a phase span ("torch.compile.phase" or "torch.compile.phase NAME")."""
    if span.name != names.SPAN_PHASE and not span.name.startswith(_NAMED_PHASE_PREFIX):
        return None
    recorded = span.attributes.get(names.ATTR_PHASE_NAME)
    if recorded.__class__ is str and recorded:  # as text() reads it, without its call
        return recorded
    return text(recorded) or span.name[len(names.SPAN_PHASE) :].strip() or None


_IS_TIME_KEY = operator.methodcaller("startswith", names.ATTR_TIME_PREFIX)


def recorded_split(compiles: Iterable[Span]) -> dict[str, float] | None:
    """Seconds per category (``names.TIME_*``) the recorder put on these compile spans,
    summed; None when none carries a split (telemetry from before it existed)."""
    total: dict[str, int] = {}
    found = False
    prefix = names.ATTR_TIME_PREFIX
    for span in compiles:
        if not any(map(_IS_TIME_KEY, span.attributes)):  # no split here: one C pass
            continue
        for key, value in span.attributes.items():
            if key.startswith(prefix) and isinstance(value, (int, float)):
                found = True
                category = key[len(prefix) :]
                total[category] = total.get(category, 0) + round(float(value) * 1e9)
    return {key: seconds(value) for key, value in total.items()} if found else None


def split_phases(split: dict[str, float]) -> dict[str, float | None]:
    """The report's phases from a recorded split: each category under its top-level part."""
    parts: dict[str, list[float]] = {}
    for key, value in split.items():
        parts.setdefault(key.split(".", 1)[0], []).append(value)
    return {
        category: round(sum(parts[category]), 6) if category in parts else None
        for category in PHASE_CATEGORIES
    }


def split_details(split: dict[str, float]) -> dict[str, float | None]:
    return {detail: split.get(detail) for detail in PHASE_DETAILS}


class CompilePhases(NamedTuple):
    """A compile's three phase tables (``compile_phases``)."""

    phases: dict[str, float | None]
    """Seconds per report phase (``PHASE_CATEGORIES``); None where not recorded."""
    details: dict[str, float | None]
    """The named parts of AOT and backend time (``PHASE_DETAILS``)."""
    dynamo: dict[str, float]
    """Seconds per phase under Dynamo's own names, sorted by name."""


def compile_phases(
    compile_spans: list[Span],
    intervals: dict[str, list[tuple[int, int]]],
    aot_spans: list[Span],
) -> CompilePhases:
    """The phase tables of a compile: its ``compile_spans`` (the frame and its lazy
    backwards) carry the recorder's split, if any; ``intervals`` are its phase spans'
    intervals by Dynamo's name of their phase; its ``aot_spans`` (``AOT_SPANS``) tell
    AOT's time where neither a split nor an AOT phase was recorded. A phase's time is the
    length of its intervals' union, worked out once for both tables that show it."""
    named = {name: seconds(covered(found)) for name, found in intervals.items()}
    plan = _plan(tuple(intervals))
    dynamo = {name: named[name] for name in plan.sorted_names}
    split = recorded_split(compile_spans)
    if split is not None:
        return CompilePhases(split_phases(split), split_details(split), dynamo)
    found: dict[str, float] = {}
    for category, members in plan.categories:
        if len(members) == 1:
            found[category] = named[members[0]]
        else:
            found[category] = seconds(
                covered([part for name in members for part in intervals[name]])
            )
    if PHASE_AOT not in found and aot_spans:  # no AOT phase: the AOT spans tell it
        found[PHASE_AOT] = seconds(covered([(span.start_ns, span.end_ns) for span in aot_spans]))
    phases = {phase: found.get(phase) for phase in PHASE_CATEGORIES}
    return CompilePhases(phases, dict.fromkeys(PHASE_DETAILS), dynamo)


class _Plan(NamedTuple):
    """How a compile's phase names make its tables: the same for every compile that
    recorded the same phases in the same order (a run's compiles repeat a few)."""

    sorted_names: tuple[str, ...]
    categories: tuple[tuple[str, tuple[str, ...]], ...]
    """Each report phase that some of the names fall in, with those names."""


PLANS_KEPT = 1024
"""How many plans ``_plan`` keeps (the most recently used): a run records a few."""
PLAN_KEPT_CHARACTERS = 4096
"""The most characters a kept plan's phase names hold together."""


@remembered(max_length=PLAN_KEPT_CHARACTERS, size=PLANS_KEPT)
def _plan(phase_names: tuple[str, ...]) -> _Plan:
    """The plan of a compile's phase names, in the order its spans named them."""
    by_category: dict[str, list[str]] = {}
    for name in phase_names:
        category = _category(name)
        if category is not None:
            by_category.setdefault(category, []).append(name)
    categories = tuple((category, tuple(members)) for category, members in by_category.items())
    return _Plan(tuple(sorted(phase_names)), categories)


def covered(intervals: list[tuple[int, int]]) -> int:
    """Length of the union of [start, end) intervals."""
    if len(intervals) == 1:  # most phases of a compile: one span
        start, end = intervals[0]
        return max(0, end - start)
    total, reach = 0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            total += max(0, end - start)
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def _category(name: str) -> str | None:
    if name in _CATEGORY_OF_PHASE:
        return _CATEGORY_OF_PHASE[name]
    if name.startswith("aot_"):
        return PHASE_AOT
    return PHASE_GUARDS if "guard" in name else None
