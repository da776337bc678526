"""The recorder's LogEventSink: structured log events for compiles, breaks and failures.

Each event is emitted in the trace context of the span it belongs to, so its
``trace_id`` / ``span_id`` (JSON lines) and its OpenTelemetry log record point at
that span. Field names are the span attribute keys of ``otel_dynamo.names``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span

from otel_dynamo import names
from otel_dynamo._lifecycle.watchdog import Watchdog
from otel_dynamo._recording.frame_state import FrameState
from otel_dynamo._recording.limits import Limits
from otel_dynamo._recording.stream_events import GraphBreakReported
from otel_dynamo._recording.structured_log import EventLogger

FRAME_FIELDS = (
    names.ATTR_CODE_FUNCTION,
    names.ATTR_CODE_FILE,
    names.ATTR_CODE_LINE,
    names.ATTR_OUTCOME,
    names.ATTR_FRAME_GRAPH_COUNT,
    names.ATTR_GUARD_COUNT,
    names.ATTR_GRAPH_BREAK_COUNT,
    names.ATTR_BACKEND,
)
GRAPH_FIELDS = (
    names.ATTR_COMPILE_ID,
    names.ATTR_BACKEND,
    names.ATTR_GRAPH_INDEX,
    names.ATTR_GRAPH_OP_COUNT,
    names.ATTR_GRAPH_NODE_COUNT,
)
FAILURE_EVENTS = {"compile": names.LOG_COMPILE_FAILED, "run": names.LOG_RUN_FAILED}
DURATION_DECIMALS = 6
FIELD_DURATION_S = "duration_s"


@contextlib.contextmanager
def in_span(span: Span | None) -> Iterator[None]:
    """Make ``span`` current for the events emitted inside (no-op for None)."""
    if span is None:
        yield
        return
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        yield
    finally:
        otel_context.detach(token)


def pick(attributes: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: attributes[key] for key in keys if key in attributes}


class CompileLogEvents:
    """Turns recorder callbacks into log events; watches running compiles."""

    def __init__(self, events: EventLogger, *, limits: Limits, watchdog: Watchdog) -> None:
        self._events = events
        self._limits = limits
        self._watchdog = watchdog

    @property
    def logger(self) -> EventLogger:
        """The event logger, shared with torch.export's events (one writer per target)."""
        return self._events

    def frame_started(self, frame: FrameState) -> None:
        described = {names.ATTR_COMPILE_ID: frame.compile_id, **frame.code_attributes()}
        self._watchdog.watch(frame.compile_id, lambda: dict(described), span=frame.span)

    def frame_ended(
        self, frame: FrameState, attributes: Mapping[str, Any], outcome: str, duration_s: float
    ) -> None:
        self._watchdog.unwatch(frame.compile_id)
        fields = {names.ATTR_COMPILE_ID: frame.compile_id, **pick(attributes, FRAME_FIELDS)}
        fields[FIELD_DURATION_S] = round(duration_s, DURATION_DECIMALS)
        fields.update(
            (key, value)
            for key, value in attributes.items()
            if key.startswith(names.ATTR_TIME_PREFIX)
        )
        level = "error" if outcome == names.OUTCOME_FAILURE else "info"
        with in_span(frame.span):
            self._events.emit(names.LOG_FRAME_COMPILED, level=level, **fields)
            reason = attributes.get(names.ATTR_RECOMPILE_REASON)
            if reason:
                self._recompiled(frame.compile_id, attributes, reason)

    def _recompiled(self, compile_id: str, attributes: Mapping[str, Any], reason: str) -> None:
        fields: dict[str, Any] = {
            names.ATTR_COMPILE_ID: compile_id,
            names.ATTR_RECOMPILE_REASON: reason,
            **pick(
                attributes,
                (names.ATTR_CODE_FUNCTION, names.ATTR_FRAME_CACHE_SIZE, names.ATTR_BACKEND),
            ),
        }
        self._events.emit(names.LOG_RECOMPILE, level="warning", **fields)

    def graph_compiled(self, attributes: Mapping[str, Any], span: Span) -> None:
        with in_span(span):
            self._events.emit(names.LOG_GRAPH_COMPILED, **pick(attributes, GRAPH_FIELDS))

    def graph_break(
        self, event: GraphBreakReported, span: Span | None, backend: str | None
    ) -> None:
        fields = {names.ATTR_COMPILE_ID: event.compile_id, **self._limits.break_attributes(event)}
        if backend:
            fields[names.ATTR_BACKEND] = backend
        with in_span(span):
            self._events.emit(names.LOG_GRAPH_BREAK, level="warning", **fields)

    def failure(
        self, stage: str, exc: BaseException, span: Span, attributes: Mapping[str, Any]
    ) -> None:
        fields = {names.ATTR_STAGE: stage, **pick(attributes, GRAPH_FIELDS)}
        fields.update(pick(attributes, (names.ATTR_RUN_KIND, names.ATTR_ERROR_TYPE)))
        with in_span(span):
            event = FAILURE_EVENTS.get(stage, names.LOG_COMPILE_FAILED)
            self._events.emit(event, level="error", exc=exc, **fields)

    def fault_injected(self, kind: str, target: str, span: Span | None, **fields: Any) -> None:
        fields.update({names.ATTR_FAULT_KIND: kind, names.ATTR_FAULT_TARGET: target})
        with in_span(span):
            self._events.emit(names.LOG_FAULT_INJECTED, level="warning", **fields)

    def accuracy_checked(self, passed: bool, span: Span | None, **fields: Any) -> None:
        with in_span(span):
            level = "info" if passed else "error"
            self._events.emit(names.LOG_ACCURACY_CHECKED, level=level, **fields)

    def repro_written(self, span: Span | None, **fields: Any) -> None:
        with in_span(span):
            self._events.emit(names.LOG_REPRO_WRITTEN, level="warning", **fields)

    def graph_text(self, span: Span | None, fields: Mapping[str, Any]) -> None:
        with in_span(span):
            self._events.emit(names.LOG_GRAPH_TEXT, **fields)

    def cudagraph_skipped(self, span: Span | None, fields: Mapping[str, Any]) -> None:
        with in_span(span):
            self._events.emit(names.LOG_CUDAGRAPH_SKIPPED, level="warning", **fields)

    def cache_bypassed(self, span: Span | None, fields: Mapping[str, Any]) -> None:
        with in_span(span):
            self._events.emit(names.LOG_CACHE_BYPASSED, level="warning", **fields)

    def variant_calls(self, span: Span | None, fields: Mapping[str, Any]) -> None:
        with in_span(span):
            self._events.emit(names.LOG_VARIANT_CALLS, **fields)
