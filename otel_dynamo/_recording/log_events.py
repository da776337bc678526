"""The recorder's LogEventSink: structured log events for compiles, breaks and failures.

Each event is emitted in the trace context of the span it belongs to, so its
``trace_id`` / ``span_id`` (JSON lines) and its OpenTelemetry log record point at
that span. Field names are the span attribute keys of ``otel_dynamo.names``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span
from opentelemetry.util.types import AttributeValue

from otel_dynamo import names
from otel_dynamo._lifecycle.watchdog import Watchdog
from otel_dynamo._recording.frame_state import FrameState
from otel_dynamo._recording.limits import Limits, recompile_code
from otel_dynamo._recording.phase_split import time_attributes
from otel_dynamo._recording.records import Failure, FrameCompiled, GraphIdentity
from otel_dynamo._recording.stream_events import GraphBreakReported
from otel_dynamo._recording.structured_log import EventLogger
from otel_dynamo.causes import fixes

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

    def frame_ended(self, record: FrameCompiled) -> None:
        self._watchdog.unwatch(record.compile_id)
        fields: dict[str, AttributeValue] = {
            names.ATTR_COMPILE_ID: record.compile_id,
            **record.code_fields(),
            names.ATTR_OUTCOME: record.outcome,
            names.ATTR_FRAME_GRAPH_COUNT: record.graph_count,
            names.ATTR_GUARD_COUNT: record.ended.guard_count,
            names.ATTR_GRAPH_BREAK_COUNT: len(record.breaks),
        }
        if record.backend:
            fields[names.ATTR_BACKEND] = record.backend
        fields[FIELD_DURATION_S] = round(record.duration_s, DURATION_DECIMALS)
        fields.update(time_attributes(record.time_split))
        level = "error" if record.outcome == names.OUTCOME_FAILURE else "info"
        with in_span(record.span):
            self._events.emit(names.LOG_FRAME_COMPILED, fields, level=level)
            if record.recompile_reason:
                self._recompiled(record, record.recompile_reason)

    def _recompiled(self, record: FrameCompiled, reason: str) -> None:
        fields: dict[str, AttributeValue] = {
            names.ATTR_COMPILE_ID: record.compile_id,
            names.ATTR_RECOMPILE_REASON: reason,
        }
        if record.ended.function is not None:
            fields[names.ATTR_CODE_FUNCTION] = record.ended.function
        if record.ended.cache_size is not None:
            fields[names.ATTR_FRAME_CACHE_SIZE] = record.ended.cache_size
        if record.backend:
            fields[names.ATTR_BACKEND] = record.backend
        summary = fixes.recompile_summary(reason, recompile_code(record))
        if summary:
            fields[names.ATTR_FIX_SUMMARY] = self._limits.text(summary)
        self._events.emit(names.LOG_RECOMPILE, fields, level="warning")

    def graph_compiled(self, graph: GraphIdentity, span: Span) -> None:
        with in_span(span):
            self._events.emit(names.LOG_GRAPH_COMPILED, graph.fields())

    def graph_break(
        self, event: GraphBreakReported, span: Span | None, backend: str | None
    ) -> None:
        fields = {names.ATTR_COMPILE_ID: event.compile_id, **self._limits.break_attributes(event)}
        if backend:
            fields[names.ATTR_BACKEND] = backend
        with in_span(span):
            self._events.emit(names.LOG_GRAPH_BREAK, fields, level="warning")

    def failure(self, failure: Failure, span: Span) -> None:
        fields: dict[str, AttributeValue] = {names.ATTR_STAGE: failure.stage}
        if failure.graph is not None:
            fields.update(failure.graph.fields())
        if failure.run_kind is not None:
            fields[names.ATTR_RUN_KIND] = failure.run_kind
        fields[names.ATTR_ERROR_TYPE] = failure.error_type
        with in_span(span):
            event = FAILURE_EVENTS.get(failure.stage, names.LOG_COMPILE_FAILED)
            self._events.emit(event, fields, level="error", exc=failure.exception)

    def fault_injected(
        self, kind: str, target: str, span: Span | None, fields: Mapping[str, AttributeValue]
    ) -> None:
        fields = {**fields, names.ATTR_FAULT_KIND: kind, names.ATTR_FAULT_TARGET: target}
        with in_span(span):
            self._events.emit(names.LOG_FAULT_INJECTED, fields, level="warning")

    def accuracy_checked(
        self, passed: bool, span: Span | None, fields: Mapping[str, AttributeValue]
    ) -> None:
        with in_span(span):
            level = "info" if passed else "error"
            self._events.emit(names.LOG_ACCURACY_CHECKED, fields, level=level)

    def repro_written(self, span: Span | None, fields: Mapping[str, AttributeValue]) -> None:
        with in_span(span):
            self._events.emit(names.LOG_REPRO_WRITTEN, fields, level="warning")

    def graph_text(self, span: Span | None, fields: Mapping[str, AttributeValue]) -> None:
        with in_span(span):
            self._events.emit(names.LOG_GRAPH_TEXT, fields)

    def cudagraph_skipped(self, span: Span | None, fields: Mapping[str, AttributeValue]) -> None:
        with in_span(span):
            self._events.emit(names.LOG_CUDAGRAPH_SKIPPED, fields, level="warning")

    def cache_bypassed(self, span: Span | None, fields: Mapping[str, AttributeValue]) -> None:
        with in_span(span):
            self._events.emit(names.LOG_CACHE_BYPASSED, fields, level="warning")

    def variant_calls(self, span: Span | None, fields: Mapping[str, AttributeValue]) -> None:
        with in_span(span):
            self._events.emit(names.LOG_VARIANT_CALLS, fields)
