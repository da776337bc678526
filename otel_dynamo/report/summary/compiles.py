"""Facts about one frame compile, read from its span and the spans beneath it.

A frame span's children (phases, graphs, AOT compiles) may be nested at any depth,
depending on how the recorder parents them, so the whole subtree is searched.
"""

from __future__ import annotations

import dataclasses
import re
from typing import NamedTuple

from otel_dynamo import names
from otel_dynamo.causes.remembered import remembered
from otel_dynamo.report.read.model import Attributes, AttributeValue, Span
from otel_dynamo.report.read.values import attribute, integer, seconds, strings, text
from otel_dynamo.report.summary.phases import AOT_SPANS, compile_phases, phase_name
from otel_dynamo.report.summary.schema import CompileRow, ErrorFields
from otel_dynamo.report.summary.tree import SpanTree

_RUN_KIND_OF_SPAN = {
    names.SPAN_RUN_FORWARD: names.RUN_KIND_FORWARD,
    names.SPAN_RUN_BACKWARD: names.RUN_KIND_BACKWARD,
    names.SPAN_RUN_INFERENCE: names.RUN_KIND_INFERENCE,
    names.SPAN_EXPORT_RUN: names.RUN_KIND_EXPORT,  # runs of ExportedProgram.module()
}
RUN_SPANS = frozenset(_RUN_KIND_OF_SPAN)
UNKNOWN_OUTCOME = "unknown"
NO_REASON = "(no reason recorded)"
"""What a recompile or graph break with no recorded reason shows."""


def compile_id_sort_key(compile_id: str | None) -> tuple[int, ...]:
    """Dynamo compile ids ("3/1", "!0/3/1_2") in numeric order; None last."""
    return (1 << 62,) if compile_id is None else _sort_key(compile_id)


@remembered(max_length=64, size=65536)
def _sort_key(compile_id: str) -> tuple[int, ...]:
    # More than 18 digits is no id Dynamo makes (and int() refuses 4,300): it sorts last.
    parts = re.findall(r"\d+", compile_id)
    return tuple(int(part) if len(part) <= 18 else 1 << 60 for part in parts) or (1 << 61,)


def is_recompile(frame: Span) -> bool:
    """A recompile is a compile for which torch gave a recompile reason (the guard of a
    cache entry that failed), as the recompiles counter counts them. A compile id
    "frame/N" with N above 0 alone is not one: Dynamo compiles a frame again after a
    failed compile left no cache entry, and no guard failed."""
    return bool(frame.attributes.get(names.ATTR_RECOMPILE_REASON))


def compile_row(frame: Span, tree: SpanTree) -> CompileRow:
    """The report's row for one frame compile (documented in docs/report-json.md); its
    calls are filled in from the variant-calls log events."""
    attrs = frame.attributes
    below = FrameSpans.of(tree.descendants(frame))
    graphs = below.graphs
    lazy_ns = sum(span.duration_ns for span in below.lazy_backwards(frame))
    phases = compile_phases([frame, *below.recorded_lazy_backwards], below.phases, below.aot)
    errors = error_fields(frame)
    return {
        "compile_id": text(attrs.get(names.ATTR_COMPILE_ID)),
        "function": function_of(frame, tree),
        "module": module_of(frame),
        "file": text(attrs.get(names.ATTR_CODE_FILE)),
        "line": integer(attrs.get(names.ATTR_CODE_LINE)),
        "outcome": outcome(frame),
        "start_unix_nano": frame.start_ns,
        "duration_s": seconds(frame.duration_ns),
        "lazy_backward_s": seconds(lazy_ns),
        "compile_s": seconds(frame.duration_ns + lazy_ns),
        "graphs": _graph_count(attrs, graphs),
        "discarded_graphs": integer(attrs.get(names.ATTR_FRAME_DISCARDED_GRAPH_COUNT)) or 0,
        "ops": sum(integer(span.attributes.get(names.ATTR_GRAPH_OP_COUNT)) or 0 for span in graphs),
        "guards": _guard_count(attrs),
        "cache_size": integer(attrs.get(names.ATTR_FRAME_CACHE_SIZE)),
        "is_recompile": is_recompile(frame),
        "recompile_reason": text(attrs.get(names.ATTR_RECOMPILE_REASON)),
        "graph_breaks": max(
            integer(attrs.get(names.ATTR_GRAPH_BREAK_COUNT)) or 0, len(graph_breaks(frame))
        ),
        "calls": None,
        "backward_calls": None,
        "call_share": None,
        "hot": None,
        "phases": phases.phases,
        "phase_details": phases.details,
        "dynamo_phases": phases.dynamo,
        "error_type": errors["error_type"],
        "error_message": errors["error_message"],
        "compiled_with": compiled_with(attrs),
    }


def compiled_with(attrs: Attributes) -> str | None:
    """ "inductor · max-autotune · fullgraph · dynamic=False · options {...}": the backend,
    then each setting torch.compile was given beyond its defaults; None when nothing of
    it was recorded."""
    backend = text(attrs.get(names.ATTR_BACKEND))
    mode = text(attrs.get(names.ATTR_COMPILE_MODE))
    options = text(attrs.get(names.ATTR_COMPILE_OPTIONS))
    dynamic = attrs.get(names.ATTR_COMPILE_DYNAMIC)
    parts = [
        backend,
        mode if mode not in (None, names.COMPILE_MODE_DEFAULT) else None,
        "fullgraph" if attrs.get(names.ATTR_COMPILE_FULLGRAPH) is True else None,
        f"dynamic={dynamic}" if isinstance(dynamic, bool) else None,
        f"options {options}" if options else None,
    ]
    shown = [part for part in parts if part]
    return " · ".join(shown) if shown else None


def function_of(frame: Span, tree: SpanTree) -> str | None:
    """The compiled function's name: as recorded, else the exported module's forward."""
    return text(frame.attributes.get(names.ATTR_CODE_FUNCTION)) or exported_forward(frame, tree)


def module_of(frame: Span) -> str | None:
    """The qualified class of the ``torch.nn.Module`` the compiled code ran on, if recorded
    (``torch.compile(model)``: a Hugging Face model's forward runs as the ``wrapper`` of a
    decorator, whose code name says nothing of the model)."""
    return text(frame.attributes.get(names.ATTR_COMPILE_MODULE_CLASS))


def exported_forward(frame: Span, tree: SpanTree) -> str | None:
    """``Module.forward`` for the frame compile a strict ``torch.export.export`` ran (torch
    names neither its code nor its compile id there), from the export span it ran under."""
    parent = tree.by_id.get(frame.parent_span_id)
    if parent is None or parent.name != names.SPAN_EXPORT:
        return None
    module_class = text(parent.attributes.get(names.ATTR_EXPORT_MODULE_CLASS))
    return None if module_class is None else f"{module_class}.forward"


def is_discarded(span: Span) -> bool:
    """A graph or AOT span whose work a Dynamo restart threw away."""
    return span.attributes.get(names.ATTR_DISCARDED) is True


@dataclasses.dataclass(frozen=True, slots=True)
class FrameSpans:
    """The spans beneath a frame compile that its row reads, each kind in their order:
    sorted in one pass (a large run has a million, read once each)."""

    graphs: list[Span]
    """Its graphs, but those a Dynamo restart discarded."""
    recorded_lazy_backwards: list[Span]
    aot: list[Span]
    """AOT's spans (``phases.AOT_SPANS``)."""
    phases: dict[str, list[tuple[int, int]]]
    """Its phase spans' intervals, by Dynamo's name of their phase (``phase_name``)."""

    @classmethod
    def of(cls, below: list[Span]) -> FrameSpans:
        """The spans ``below`` a frame, by kind."""
        graphs: list[Span] = []
        lazy: list[Span] = []
        aot: list[Span] = []
        phases: dict[str, list[tuple[int, int]]] = {}
        for span in below:
            name = span.name
            if name == names.SPAN_GRAPH:
                if not is_discarded(span):
                    graphs.append(span)
            elif name == names.SPAN_LAZY_BACKWARD:
                lazy.append(span)
            elif name in AOT_SPANS:
                aot.append(span)
            elif name.startswith(names.SPAN_PHASE):  # phase_name's own test, first
                phase = phase_name(span)
                if phase is not None:
                    intervals = phases.get(phase)
                    if intervals is None:
                        phases[phase] = [(span.start_ns, span.end_ns)]
                    else:
                        intervals.append((span.start_ns, span.end_ns))
        return cls(graphs, lazy, aot, phases)

    def lazy_backwards(self, frame: Span) -> list[Span]:
        """The frame's lazily compiled backwards: recorded spans, or else (telemetry from
        before they were recorded) the AOT backward compiles that ran after the frame
        span ended."""
        if self.recorded_lazy_backwards:
            return self.recorded_lazy_backwards
        frame_end = frame.start_ns + frame.duration_ns
        return [
            span
            for span in self.aot
            if span.name == names.SPAN_AOT_BACKWARD and span.start_ns >= frame_end
        ]


def outcome(frame: Span) -> str:
    recorded = text(attribute(frame.attributes, names.ATTR_OUTCOME))
    if recorded:
        return recorded
    return names.OUTCOME_FAILURE if frame.is_error else UNKNOWN_OUTCOME


def error_fields(span: Span) -> ErrorFields:
    attrs = span.attributes
    message = (
        text(attrs.get(names.ATTR_ERROR_MESSAGE))
        or text(attrs.get(names.ATTR_FRAME_FAIL_REASON))
        or span.status_message
        or None
    )
    return {"error_type": text(attrs.get(names.ATTR_ERROR_TYPE)), "error_message": message}


class BreakSeen(NamedTuple):
    """One graph break of a frame compile, as its break event recorded it."""

    reason: str
    kind: str | None
    user_stack: tuple[str, ...]
    hints: tuple[str, ...]
    """torch's own hints for the break, in its order."""
    url: str | None
    """The page torch links for this kind of break."""


def graph_breaks(frame: Span) -> list[BreakSeen]:
    """Each graph break in the frame compile."""
    events = [event for event in frame.events if event.name == names.EVENT_GRAPH_BREAK]
    if events:
        return [
            BreakSeen(
                text(event.attributes.get(names.ATTR_GRAPH_BREAK_REASON)) or NO_REASON,
                text(event.attributes.get(names.ATTR_GRAPH_BREAK_KIND)),
                tuple(strings(event.attributes.get(names.ATTR_GRAPH_BREAK_USER_STACK))),
                tuple(strings(event.attributes.get(names.ATTR_GRAPH_BREAK_HINTS))),
                text(event.attributes.get(names.ATTR_GRAPH_BREAK_URL)),
            )
            for event in events
        ]
    # Without events (e.g. span events dropped by a limit) the reasons are still known.
    return [
        BreakSeen(reason, None, (), (), None)
        for reason in strings(frame.attributes.get(names.ATTR_GRAPH_BREAK_REASONS))
    ]


def run_kind(span: Span) -> str | None:
    """forward, backward, inference or export for a run span; None for other spans."""
    kind = _RUN_KIND_OF_SPAN.get(span.name)
    if kind is None:
        return None
    return text(span.attributes.get(names.ATTR_RUN_KIND)) or kind


def _graph_count(attrs: dict[str, AttributeValue], graphs: list[Span]) -> int:
    recorded = integer(attrs.get(names.ATTR_FRAME_GRAPH_COUNT))
    return len(graphs) if recorded is None else recorded


def _guard_count(attrs: dict[str, AttributeValue]) -> int | None:
    recorded = integer(attrs.get(names.ATTR_GUARD_COUNT))
    guards = attrs.get(names.ATTR_GUARDS)
    if recorded is None and isinstance(guards, list):
        return len(guards)
    return recorded
