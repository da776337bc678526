"""State of one Dynamo frame compile while it runs, and the attributes it ends with."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from typing import Any

from opentelemetry.trace import Span

from otel_dynamo import names
from otel_dynamo._recording.limits import Limits
from otel_dynamo._recording.stream_events import GraphBreakReported, PhaseBoundary

_COMPILE_ID_PREFIX = re.compile(r"^\s*\d+/\d+: ")

# CompilationMetrics fields copied onto the frame span when Dynamo reports them.
CACHE_COUNTERS = {
    "aotautograd_local_cache_hit_count": names.ATTR_CACHE_AOT_HITS,
    "aotautograd_local_cache_miss_count": names.ATTR_CACHE_AOT_MISSES,
    "inductor_fx_local_cache_hit_count": names.ATTR_CACHE_FX_HITS,
    "inductor_fx_local_cache_miss_count": names.ATTR_CACHE_FX_MISSES,
}


@dataclasses.dataclass(frozen=True)
class Phase:
    name: str
    start_ns: int
    end_ns: int


@dataclasses.dataclass
class FrameState:
    compile_id: str
    span: Span | None = None
    started_ns: int = 0
    graph_count: int = 0
    backends: set[str] = dataclasses.field(default_factory=set)
    breaks: list[GraphBreakReported] = dataclasses.field(default_factory=list)
    guards: tuple[str, ...] = ()
    recompile_reasons: tuple[str, ...] = ()
    open_phases: dict[str, list[int]] = dataclasses.field(default_factory=dict)
    closed_phases: list[Phase] = dataclasses.field(default_factory=list)

    def phase(self, event: PhaseBoundary) -> None:
        starts = self.open_phases.setdefault(event.name, [])
        if event.begin:
            starts.append(event.time_ns)
        elif starts:
            self.closed_phases.append(Phase(event.name, starts.pop(), event.time_ns))

    def early_phase_starts(self) -> list[int]:
        return [start for starts in self.open_phases.values() for start in starts]


def nest_phases(phases: list[Phase]) -> Iterator[tuple[int, int | None, Phase]]:
    """(index, index of the enclosing phase or None, phase), parents before children."""
    ordered = sorted(phases, key=lambda p: (p.start_ns, -p.end_ns))
    stack: list[tuple[int, Phase]] = []
    for index, phase in enumerate(ordered):
        while stack and stack[-1][1].end_ns < phase.end_ns:
            stack.pop()
        yield index, (stack[-1][0] if stack else None), phase
        stack.append((index, phase))


def recompile_reason(frame: FrameState, metrics: Mapping[str, Any]) -> str | None:
    """The failed guard, without Dynamo's "0/0: " prefix."""
    raw = metrics.get("recompile_reason") or "\n".join(frame.recompile_reasons)
    if not raw:
        return None
    return _COMPILE_ID_PREFIX.sub("", str(raw).strip().split("\n", 1)[0])


def frame_outcome(frame: FrameState, metrics: Mapping[str, Any]) -> str:
    if any(brk.skipped_frame for brk in frame.breaks):
        return names.OUTCOME_SKIPPED
    if metrics.get("fail_type"):
        return names.OUTCOME_FAILURE
    if frame.graph_count == 0 and not metrics.get("graph_node_count"):
        return names.OUTCOME_NO_GRAPH
    return names.OUTCOME_SUCCESS


def _code_attributes(metrics: Mapping[str, Any]) -> dict[str, Any]:
    pairs = {
        names.ATTR_CODE_FUNCTION: metrics.get("co_name"),
        names.ATTR_CODE_FILE: metrics.get("co_filename"),
        names.ATTR_CODE_LINE: metrics.get("co_firstlineno"),
    }
    return {key: value for key, value in pairs.items() if value is not None}


def _optional_attributes(
    frame: FrameState, metrics: Mapping[str, Any], limits: Limits
) -> Iterator[tuple[str, Any]]:
    reason = recompile_reason(frame, metrics)
    if reason:
        yield names.ATTR_RECOMPILE_REASON, limits.text(reason)
    if frame.guards:
        yield names.ATTR_GUARDS, limits.strings(frame.guards)
    if metrics.get("restart_reasons"):
        yield names.ATTR_FRAME_RESTART_REASONS, limits.strings(metrics["restart_reasons"])
    if metrics.get("fail_reason"):
        yield names.ATTR_FRAME_FAIL_REASON, limits.text(metrics["fail_reason"])
    if frame.backends:
        yield names.ATTR_BACKEND, ",".join(sorted(frame.backends))
    for field, key in CACHE_COUNTERS.items():
        if isinstance(metrics.get(field), int):
            yield key, metrics[field]


def frame_attributes(
    frame: FrameState, metrics: Mapping[str, Any], outcome: str, limits: Limits
) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        **_code_attributes(metrics),
        names.ATTR_FRAME_OUTCOME: outcome,
        names.ATTR_FRAME_GRAPH_COUNT: frame.graph_count,
        names.ATTR_GUARD_COUNT: int(metrics.get("guard_count") or 0),
        names.ATTR_GRAPH_BREAK_COUNT: len(frame.breaks),
        names.ATTR_GRAPH_BREAK_REASONS: limits.strings(brk.reason for brk in frame.breaks),
        names.ATTR_FRAME_CACHE_SIZE: int(metrics.get("cache_size") or 0),
    }
    attributes.update(_optional_attributes(frame, metrics, limits))
    return attributes
