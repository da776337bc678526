"""The recorder's interfaces: what it offers Dynamo's event stream, and what it reports to
besides spans (structured log events and metrics).

The recorder depends only on these protocols; ``log_events`` and ``metrics``
implement them, and the null objects here keep the recorder usable without either.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from opentelemetry.trace import Span
from opentelemetry.util.types import AttributeValue

from otel_dynamo._recording.frame_state import FrameState
from otel_dynamo._recording.records import (
    Failure,
    FrameCompiled,
    GraphIdentity,
    LazyBackwardCompiled,
    RunIdentity,
)
from otel_dynamo._recording.run_state import RunState
from otel_dynamo._recording.stream_events import (
    CacheLookup,
    FrameEnded,
    FrameStarted,
    GraphBreakReported,
    GraphTextReported,
    GuardsReported,
    LazyBackwardEnded,
    LazyBackwardStarted,
    PhaseBoundary,
    RecompileReported,
)


class StreamRecorder(Protocol):
    """What the recorder offers Dynamo's event stream."""

    def frame_started(self, event: FrameStarted) -> None: ...
    def frame_ended(self, event: FrameEnded) -> None: ...
    def graph_break(self, event: GraphBreakReported) -> None: ...
    def recompile(self, event: RecompileReported) -> None: ...
    def guards(self, event: GuardsReported) -> None: ...
    def phase(self, event: PhaseBoundary) -> None: ...
    def lazy_backward_started(self, event: LazyBackwardStarted) -> None: ...
    def lazy_backward_ended(self, event: LazyBackwardEnded) -> None: ...
    def wants_guard_text(self) -> bool: ...
    def wants_graph_text(self) -> bool: ...
    def graph_text(self, event: GraphTextReported) -> None: ...
    def cache_lookup(self, event: CacheLookup) -> None: ...


class LogEventSink(Protocol):
    def frame_started(self, frame: FrameState) -> None: ...
    def frame_ended(self, record: FrameCompiled) -> None: ...
    def graph_compiled(self, graph: GraphIdentity, span: Span) -> None: ...
    def graph_break(
        self, event: GraphBreakReported, span: Span | None, backend: str | None
    ) -> None: ...
    def failure(self, failure: Failure, span: Span) -> None: ...
    def fault_injected(
        self, kind: str, target: str, span: Span | None, fields: Mapping[str, AttributeValue]
    ) -> None: ...
    def accuracy_checked(
        self, passed: bool, span: Span | None, fields: Mapping[str, AttributeValue]
    ) -> None: ...
    def repro_written(self, span: Span | None, fields: Mapping[str, AttributeValue]) -> None: ...
    def graph_text(self, span: Span | None, fields: Mapping[str, AttributeValue]) -> None: ...
    def cudagraph_skipped(
        self, span: Span | None, fields: Mapping[str, AttributeValue]
    ) -> None: ...
    def cache_bypassed(self, span: Span | None, fields: Mapping[str, AttributeValue]) -> None: ...
    def variant_calls(self, span: Span | None, fields: Mapping[str, AttributeValue]) -> None: ...


class MetricsSink(Protocol):
    def frame_compiled(self, record: FrameCompiled) -> None: ...
    def lazy_backward_compiled(self, record: LazyBackwardCompiled) -> None: ...
    def graph_compiled(self, backend: str) -> None: ...
    def graph_break(self, kind: str) -> None: ...
    def failure(self, stage: str, error_type: str) -> None: ...
    def fault(self, kind: str) -> None: ...
    def track_run(self, run: RunState) -> None: ...
    def run_recorded(self, run: RunState, span: Span, duration_s: float) -> None: ...
    def device_time(self, run: RunIdentity, device: str, seconds: float) -> None: ...
    def device_time_dropped(self, reason: str) -> None: ...
    def cudagraph_decided(self, decision: str, category: str | None) -> None: ...
    def cache_lookup(self, cache: str, state: str) -> None: ...


class _NullLogEvents:
    def frame_started(self, frame: FrameState) -> None:
        pass

    def frame_ended(self, record: FrameCompiled) -> None:
        pass

    def graph_compiled(self, graph: GraphIdentity, span: Span) -> None:
        pass

    def graph_break(
        self, event: GraphBreakReported, span: Span | None, backend: str | None
    ) -> None:
        pass

    def failure(self, failure: Failure, span: Span) -> None:
        pass

    def fault_injected(
        self, kind: str, target: str, span: Span | None, fields: Mapping[str, AttributeValue]
    ) -> None:
        pass

    def accuracy_checked(
        self, passed: bool, span: Span | None, fields: Mapping[str, AttributeValue]
    ) -> None:
        pass

    def repro_written(self, span: Span | None, fields: Mapping[str, AttributeValue]) -> None:
        pass

    def graph_text(self, span: Span | None, fields: Mapping[str, AttributeValue]) -> None:
        pass

    def cudagraph_skipped(self, span: Span | None, fields: Mapping[str, AttributeValue]) -> None:
        pass

    def cache_bypassed(self, span: Span | None, fields: Mapping[str, AttributeValue]) -> None:
        pass

    def variant_calls(self, span: Span | None, fields: Mapping[str, AttributeValue]) -> None:
        pass


class _NullMetrics:
    def frame_compiled(self, record: FrameCompiled) -> None:
        pass

    def lazy_backward_compiled(self, record: LazyBackwardCompiled) -> None:
        pass

    def graph_compiled(self, backend: str) -> None:
        pass

    def graph_break(self, kind: str) -> None:
        pass

    def failure(self, stage: str, error_type: str) -> None:
        pass

    def fault(self, kind: str) -> None:
        pass

    def track_run(self, run: RunState) -> None:
        pass

    def run_recorded(self, run: RunState, span: Span, duration_s: float) -> None:
        pass

    def device_time(self, run: RunIdentity, device: str, seconds: float) -> None:
        pass

    def device_time_dropped(self, reason: str) -> None:
        pass

    def cudagraph_decided(self, decision: str, category: str | None) -> None:
        pass

    def cache_lookup(self, cache: str, state: str) -> None:
        pass


NULL_LOG_EVENTS: LogEventSink = _NullLogEvents()
NULL_METRICS: MetricsSink = _NullMetrics()
