"""Facts about one frame compile, read from its span and the spans beneath it.

A frame span's children (phases, graphs, AOT compiles) may be nested at any depth,
depending on how the recorder parents them, so everything here walks the whole subtree.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from otel_dynamo import names
from otel_dynamo.report._model import AttributeValue, Span
from otel_dynamo.report._values import integer, strings, text

PHASE_TRACING = "tracing"
PHASE_AOT = "aot"
PHASE_BACKEND = "backend"
PHASE_GUARDS = "guards"
PHASE_CATEGORIES = (PHASE_TRACING, PHASE_AOT, PHASE_BACKEND, PHASE_GUARDS)
"""The phases the report shows; AOT Autograd runs inside the backend call."""

_PHASE_CATEGORY_OF = {
    "bytecode_tracing": PHASE_TRACING,
    "backend_compile": PHASE_BACKEND,
    "build_guards": PHASE_GUARDS,
    "create_aot_dispatcher_function": PHASE_AOT,
}
_AOT_SPANS = frozenset({names.SPAN_AOT_FORWARD, names.SPAN_AOT_BACKWARD, names.SPAN_AOT_INFERENCE})
_RUN_KIND_OF_SPAN = {
    names.SPAN_RUN_FORWARD: names.RUN_KIND_FORWARD,
    names.SPAN_RUN_BACKWARD: names.RUN_KIND_BACKWARD,
    names.SPAN_RUN_INFERENCE: names.RUN_KIND_INFERENCE,
}
RUN_SPANS = frozenset(_RUN_KIND_OF_SPAN)
UNKNOWN_OUTCOME = "unknown"
_NS_PER_SECOND = 1e9


class SpanTree:
    """Parent and child links among the spans of one process."""

    def __init__(self, spans: Iterable[Span]) -> None:
        self.by_id: dict[str, Span] = {}
        self._children: dict[str, list[Span]] = defaultdict(list)
        for span in spans:
            self.by_id[span.span_id] = span
            if span.parent_span_id:
                self._children[span.parent_span_id].append(span)

    def descendants(self, frame: Span) -> list[Span]:
        """The spans beneath a frame span, without those of frames nested in it."""
        return [found for found, depth in self.walk(frame) if depth > 0]

    def walk(self, frame: Span) -> list[tuple[Span, int]]:
        """A frame span and everything beneath it, each with its depth below the frame.

        A frame compiled while another compiles is its own compile: not descended into.
        """
        span = frame
        found = [(span, 0)]
        seen = {span.span_id}  # a malformed file may hold a parent cycle
        pending = [(span.span_id, 1)]
        while pending:
            span_id, depth = pending.pop()
            for child in self._children.get(span_id, ()):
                if child.span_id not in seen and child.name != names.SPAN_FRAME:
                    seen.add(child.span_id)
                    found.append((child, depth))
                    pending.append((child.span_id, depth + 1))
        return found

    def enclosing_frame(self, span: Span) -> Span | None:
        """The frame span this span was recorded under, or that a run span links to."""
        seen: set[str] = set()
        current: Span | None = span
        while current is not None and current.span_id not in seen:
            if current.name == names.SPAN_FRAME:
                return current
            seen.add(current.span_id)
            current = self.by_id.get(current.parent_span_id) or self._linked(current)
        return None

    def _linked(self, span: Span) -> Span | None:
        return next((self.by_id[i] for i in span.linked_span_ids if i in self.by_id), None)


def seconds(duration_ns: int) -> float:
    """Nanoseconds as seconds, rounded to the microsecond (stable JSON)."""
    return round(duration_ns / _NS_PER_SECOND, 6)


def compile_id_sort_key(compile_id: str | None) -> tuple[int, ...]:
    """Dynamo compile ids ("3/1", "!0/3/1_2") in numeric order; None last."""
    if compile_id is None:
        return (1 << 62,)
    return tuple(int(part) for part in re.findall(r"\d+", compile_id)) or (1 << 61,)


def is_recompile(frame: Span) -> bool:
    """A recompile has a recorded reason, or a compile id "frame/N" with N above 0."""
    if frame.attributes.get(names.ATTR_RECOMPILE_REASON):
        return True
    compile_id = text(frame.attributes.get(names.ATTR_COMPILE_ID))
    match = re.fullmatch(r"!?(?:\d+/)?\d+/(\d+)(?:_\d+)?", compile_id or "")
    return match is not None and int(match.group(1)) > 0


def compile_row(frame: Span, tree: SpanTree) -> dict[str, Any]:
    """The report's row for one frame compile (documented in the README part)."""
    attrs = frame.attributes
    below = tree.descendants(frame)
    graphs = [span for span in below if span.name == names.SPAN_GRAPH]
    return {
        "compile_id": text(attrs.get(names.ATTR_COMPILE_ID)),
        "function": text(attrs.get(names.ATTR_CODE_FUNCTION)),
        "file": text(attrs.get(names.ATTR_CODE_FILE)),
        "line": integer(attrs.get(names.ATTR_CODE_LINE)),
        "outcome": outcome(frame),
        "start_unix_nano": frame.start_ns,
        "duration_s": seconds(frame.duration_ns),
        "graphs": _graph_count(attrs, graphs),
        "ops": sum(integer(span.attributes.get(names.ATTR_GRAPH_OP_COUNT)) or 0 for span in graphs),
        "guards": _guard_count(attrs),
        "cache_size": integer(attrs.get(names.ATTR_FRAME_CACHE_SIZE)),
        "is_recompile": is_recompile(frame),
        "recompile_reason": text(attrs.get(names.ATTR_RECOMPILE_REASON)),
        "graph_breaks": max(
            integer(attrs.get(names.ATTR_GRAPH_BREAK_COUNT)) or 0, len(graph_breaks(frame))
        ),
        "phases": phase_seconds(below),
        "dynamo_phases": dynamo_phase_seconds(below),
        **error_fields(frame),
    }


def outcome(frame: Span) -> str:
    recorded = text(frame.attributes.get(names.ATTR_FRAME_OUTCOME))
    if recorded:
        return recorded
    return names.OUTCOME_FAILURE if frame.is_error else UNKNOWN_OUTCOME


def error_fields(span: Span) -> dict[str, str | None]:
    attrs = span.attributes
    message = (
        text(attrs.get(names.ATTR_ERROR_MESSAGE))
        or text(attrs.get(names.ATTR_FRAME_FAIL_REASON))
        or span.status_message
        or None
    )
    return {"error_type": text(attrs.get(names.ATTR_ERROR_TYPE)), "error_message": message}


def graph_breaks(frame: Span) -> list[tuple[str, str | None, tuple[str, ...]]]:
    """(reason, kind, user stack) of each graph break in the frame compile."""
    events = [event for event in frame.events if event.name == names.EVENT_GRAPH_BREAK]
    if events:
        return [
            (
                text(event.attributes.get(names.ATTR_GRAPH_BREAK_REASON)) or "(no reason recorded)",
                text(event.attributes.get(names.ATTR_GRAPH_BREAK_KIND)),
                tuple(strings(event.attributes.get(names.ATTR_GRAPH_BREAK_USER_STACK))),
            )
            for event in events
        ]
    # Without events (e.g. span events dropped by a limit) the reasons are still known.
    return [
        (reason, None, ())
        for reason in strings(frame.attributes.get(names.ATTR_GRAPH_BREAK_REASONS))
    ]


def phase_seconds(spans: Iterable[Span]) -> dict[str, float | None]:
    """Seconds per report phase; None where the phase was not recorded."""
    totals: dict[str, int] = {}
    aot_spans = 0
    for span in spans:
        category = _category(span)
        if category is not None:
            totals[category] = totals.get(category, 0) + span.duration_ns
        elif span.name in _AOT_SPANS:
            aot_spans += span.duration_ns
    if PHASE_AOT not in totals and aot_spans:
        totals[PHASE_AOT] = aot_spans
    return {
        phase: seconds(totals[phase]) if phase in totals else None for phase in PHASE_CATEGORIES
    }


def dynamo_phase_seconds(spans: Iterable[Span]) -> dict[str, float]:
    """Seconds per phase span, under Dynamo's own phase names."""
    totals: dict[str, int] = {}
    for span in spans:
        phase = (
            text(span.attributes.get(names.ATTR_PHASE_NAME))
            if span.name == names.SPAN_PHASE
            else None
        )
        if phase:
            totals[phase] = totals.get(phase, 0) + span.duration_ns
    return {phase: seconds(total) for phase, total in sorted(totals.items())}


def run_kind(span: Span) -> str | None:
    """forward, backward or inference for a run span; None for other spans."""
    kind = _RUN_KIND_OF_SPAN.get(span.name)
    if kind is None:
        return None
    return text(span.attributes.get(names.ATTR_RUN_KIND)) or kind


def _category(span: Span) -> str | None:
    if span.name != names.SPAN_PHASE:
        return None
    phase = text(span.attributes.get(names.ATTR_PHASE_NAME)) or ""
    if phase in _PHASE_CATEGORY_OF:
        return _PHASE_CATEGORY_OF[phase]
    if phase.startswith("aot_"):
        return PHASE_AOT
    return PHASE_GUARDS if "guard" in phase else None


def _graph_count(attrs: dict[str, AttributeValue], graphs: list[Span]) -> int:
    recorded = integer(attrs.get(names.ATTR_FRAME_GRAPH_COUNT))
    return len(graphs) if recorded is None else recorded


def _guard_count(attrs: dict[str, AttributeValue]) -> int | None:
    recorded = integer(attrs.get(names.ATTR_GUARD_COUNT))
    guards = attrs.get(names.ATTR_GUARDS)
    if recorded is None and isinstance(guards, list):
        return len(guards)
    return recorded
