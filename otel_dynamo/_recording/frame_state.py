"""State of one Dynamo frame compile while it runs, and the attributes it ends with."""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterator

from opentelemetry.trace import Span
from opentelemetry.util.types import AttributeValue

from otel_dynamo import names
from otel_dynamo._recording.stream_events import (
    CodeLocation,
    CompileSettings,
    FrameEnded,
    GraphBreakReported,
    PhaseBoundary,
)


@dataclasses.dataclass(frozen=True)
class Phase:
    name: str
    start_ns: int
    end_ns: int


@dataclasses.dataclass
class CompileState:
    """A compile in progress (a frame, or a lazy backward): its span and timed phases."""

    compile_id: str
    span: Span | None = None
    step_span: Span | None = None
    """The innermost compile step span open in this compile (graph, AOT), if any."""
    started_ns: int = 0
    open_phases: dict[str, list[int]] = dataclasses.field(default_factory=dict)
    closed_phases: list[Phase] = dataclasses.field(default_factory=list)
    cache_lookups: collections.Counter[tuple[str, str]] = dataclasses.field(
        default_factory=collections.Counter
    )
    """(cache, state) -> lookups reported during this compile."""
    awaiting_code: list[str] = dataclasses.field(default_factory=list)
    """Run kinds of AOT Autograd's graph texts whose output code has not come yet, in order
    (inductor writes the forward's code, then the backward's, as AOT showed them)."""
    text_attempt: int | None = None
    """Dynamo's analysis attempt of the last graph text (a restart drops ``awaiting_code``)."""

    def text_run_kind(
        self, kind: str, run_kind: str | None, attempt: int | None, *, lazy_backward: bool
    ) -> str | None:
        """The compiled graph a graph text belongs to: the source's word where it has
        one; for output code without it (loaded from a cache, where AOT Autograd names no
        graph in progress), a lazy backward's is the backward, else the next AOT graph
        whose code has not come."""
        if attempt != self.text_attempt:
            self.awaiting_code.clear()
            self.text_attempt = attempt
        if kind != names.GRAPH_TEXT_OUTPUT_CODE:
            if run_kind is not None:
                self.awaiting_code.append(run_kind)
            return run_kind
        if run_kind is None:
            if lazy_backward:
                return names.RUN_KIND_BACKWARD
            return self.awaiting_code.pop(0) if self.awaiting_code else None
        if run_kind in self.awaiting_code:
            self.awaiting_code.remove(run_kind)
        return run_kind

    def cache_counts(self) -> dict[str, int]:
        """Hits, misses and bypasses of each cache, as span attributes."""
        return {
            key: self.cache_lookups[(cache, state)]
            for (cache, state), key in names.CACHE_COUNT_ATTRIBUTES.items()
            if self.cache_lookups[(cache, state)]
        }

    def phase(self, event: PhaseBoundary) -> None:
        starts = self.open_phases.setdefault(event.name, [])
        if event.begin:
            starts.append(event.time_ns)
        elif starts:
            self.closed_phases.append(Phase(event.name, starts.pop(), event.time_ns))

    def timed(self, name: str, start_ns: int, end_ns: int) -> None:
        """A phase timed by otel_dynamo itself (see phase_split's pseudo-phases)."""
        self.closed_phases.append(Phase(name, start_ns, end_ns))

    def early_phase_starts(self) -> list[int]:
        return [start for starts in self.open_phases.values() for start in starts]


@dataclasses.dataclass
class FrameState(CompileState):
    """A frame compile in progress: what Dynamo and the traced backend reported of it."""

    graph_count: int = 0
    discarded_graph_count: int = 0
    backends: set[str] = dataclasses.field(default_factory=set)
    breaks: list[GraphBreakReported] = dataclasses.field(default_factory=list)
    guards: tuple[str, ...] = ()
    recompile_reasons: tuple[str, ...] = ()
    code: CodeLocation | None = None
    settings: CompileSettings | None = None

    def settings_attributes(self) -> dict[str, AttributeValue]:
        """How the frame was asked to be compiled: ``torch.compile.mode``, ``options``,
        ``dynamic``, ``fullgraph``, those torch kept."""
        settings = self.settings
        if settings is None:
            return {}
        found = {
            names.ATTR_COMPILE_MODE: settings.mode,
            names.ATTR_COMPILE_OPTIONS: settings.options,
            names.ATTR_COMPILE_DYNAMIC: settings.dynamic,
            names.ATTR_COMPILE_FULLGRAPH: settings.fullgraph,
        }
        return {key: value for key, value in found.items() if value is not None}

    def code_attributes(self) -> dict[str, AttributeValue]:
        """``code.*`` of the function, and the module it was called on, as known when
        the compile started."""
        if self.code is None:
            return {}
        attributes: dict[str, AttributeValue] = {
            names.ATTR_CODE_FUNCTION: self.code.function,
            names.ATTR_CODE_FILE: self.code.file,
            names.ATTR_CODE_LINE: self.code.line,
        }
        if self.code.module_class:
            attributes[names.ATTR_COMPILE_MODULE_CLASS] = self.code.module_class
        if self.code.arguments:
            attributes[names.ATTR_CODE_ARGUMENTS] = list(self.code.arguments)
        return attributes


def nest_phases(phases: list[Phase]) -> Iterator[tuple[int, int | None, Phase]]:
    """(index, index of the enclosing phase or None, phase), parents before children."""
    ordered = sorted(phases, key=lambda p: (p.start_ns, -p.end_ns))
    stack: list[tuple[int, Phase]] = []
    for index, phase in enumerate(ordered):
        while stack and stack[-1][1].end_ns < phase.end_ns:
            stack.pop()
        yield index, (stack[-1][0] if stack else None), phase
        stack.append((index, phase))


def recompile_reason(frame: FrameState, ended: FrameEnded) -> str | None:
    """The failed guard: from the compile's metrics, else its first recompile reason."""
    if ended.recompile_reason:
        return ended.recompile_reason
    return frame.recompile_reasons[0].split("\n", 1)[0] if frame.recompile_reasons else None


def mark_skipping_break(frame: FrameState, ended: FrameEnded) -> None:
    """A frame Dynamo gave up on after a graph break was skipped for that break (torch
    before 2.12 says so only here, at the frame's end)."""
    if ended.gave_up and frame.breaks and not ended.fail_type:
        frame.breaks[-1] = frame.breaks[-1].skipping_the_frame()


def frame_outcome(frame: FrameState, ended: FrameEnded) -> str:
    if any(brk.skipped_frame for brk in frame.breaks):
        return names.OUTCOME_SKIPPED
    if ended.fail_type:
        return names.OUTCOME_FAILURE
    # A graph of placeholders only (a break at the first op) never reaches the backend.
    if frame.graph_count == 0 and not ended.graph_op_count:
        return names.OUTCOME_NO_GRAPH
    return names.OUTCOME_SUCCESS
