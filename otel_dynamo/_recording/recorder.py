"""The recorder: per-compile-id state turned into spans, log events and metric updates.

It knows OpenTelemetry, not torch internals: sources hand it plain events
(``otel_dynamo._recording.stream_events``) and ask it for span contexts to parent their own spans.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from otel_dynamo import names
from otel_dynamo._config.settings import Settings
from otel_dynamo._recording.boundary import class_name, end_span
from otel_dynamo._recording.device_time import DeviceTimer
from otel_dynamo._recording.frame_span import frame_attributes
from otel_dynamo._recording.frame_state import (
    CompileState,
    FrameState,
    frame_outcome,
    mark_skipping_break,
    nest_phases,
    recompile_reason,
)
from otel_dynamo._recording.limits import Limits
from otel_dynamo._recording.pass_through import passes_through
from otel_dynamo._recording.phase_split import split_seconds, time_attributes
from otel_dynamo._recording.records import (
    Failure,
    FrameCompiled,
    GraphIdentity,
    LazyBackwardCompiled,
    RunIdentity,
)
from otel_dynamo._recording.run_spans import RunSpanParts, RunSpans
from otel_dynamo._recording.run_state import RunState
from otel_dynamo._recording.sinks import NULL_LOG_EVENTS, NULL_METRICS, LogEventSink, MetricsSink
from otel_dynamo._recording.stream_events import (
    CacheLookup,
    CodeLocation,
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

_log = logging.getLogger(__name__)

MAX_OPEN_FRAMES = 256
"""Frames whose end we never saw are dropped past this many, oldest first."""
MAX_KNOWN_CODES = 4096
"""Code locations remembered by frame (code object), for compiles torch tells none of."""

_device_timer_lock = threading.Lock()


def frame_key(compile_id: str) -> str:
    """The part of a compile id that names the code object: "0/3" -> "0", "!1/0/2_1" ->
    "!1/0" (Dynamo numbers a code object's compiles after it)."""
    return compile_id.rsplit("/", 1)[0]


def first_line(exc: BaseException, limit: int) -> str:
    text = str(exc).strip().split("\n", 1)[0]
    return text[:limit]


class Recorder:
    """Receives source events; owns the open frame spans."""

    def __init__(
        self,
        *,
        tracer: trace.Tracer,
        settings: Settings,
        log_events: LogEventSink = NULL_LOG_EVENTS,
        metrics: MetricsSink = NULL_METRICS,
        backend: str | None = None,
    ) -> None:
        self.tracer = tracer
        self._run_spans = RunSpans(tracer)
        self.backend = backend
        self.settings = settings
        self.limits = Limits.from_settings(settings)
        self.log_events = log_events
        self.metrics = metrics
        self._frames: OrderedDict[str, FrameState] = OrderedDict()
        self._lazy_backwards: dict[str, CompileState] = {}
        self._device_timer: DeviceTimer | None = None
        self._codes: OrderedDict[str, CodeLocation] = OrderedDict()
        """Code location by frame key: a compile that hits the recompile limit has none."""
        self._ended: OrderedDict[str, tuple[trace.SpanContext, str | None]] = OrderedDict()
        """Span context and backend of recently ended frames: lazy backwards parent there."""

    # --- stream sink ---------------------------------------------------------------

    def wants_guard_text(self) -> bool:
        return "guards" in self.settings.capture

    def wants_graph_text(self) -> bool:
        return self.limits.graph_text_length > 0

    def graph_text(self, event: GraphTextReported) -> None:
        """A log record in the span of the compile step that made the text (the frame
        span for Dynamo's graph and guards, made before the backend is called)."""
        state = self._open_compile(event.compile_id)
        fields: dict[str, AttributeValue] = {names.ATTR_COMPILE_ID: event.compile_id}
        fields.update(self.limits.graph_text_attributes(event))
        run_kind = event.run_kind
        if state is not None:
            lazy_backward = not isinstance(state, FrameState)
            run_kind = state.text_run_kind(
                event.kind, run_kind, event.attempt, lazy_backward=lazy_backward
            )
        if run_kind is not None:
            fields[names.ATTR_RUN_KIND] = run_kind
        if event.attempt is not None:
            fields[names.ATTR_COMPILE_ATTEMPT] = event.attempt
        if isinstance(state, FrameState):
            # Dynamo's graph comes before its graph span: it gets the next index.
            is_next = event.kind == names.GRAPH_TEXT_DYNAMO
            index = state.graph_count if is_next else state.graph_count - 1
            if event.kind != names.GRAPH_TEXT_GUARDS and index >= 0:
                fields[names.ATTR_GRAPH_INDEX] = index
        span = None if state is None else state.step_span or state.span
        self.log_events.graph_text(span, fields)

    def _frame(self, compile_id: str) -> FrameState:
        frame = self._frames.get(compile_id)
        if frame is None:
            frame = self._frames[compile_id] = FrameState(compile_id)
            while len(self._frames) > MAX_OPEN_FRAMES:
                self._frames.popitem(last=False)
        return frame

    def frame_started(self, event: FrameStarted) -> None:
        frame = self._frame(event.compile_id)
        frame.code = frame.code or event.code or self._codes.get(frame_key(event.compile_id))
        frame.settings = frame.settings or event.settings
        self._remember_code(frame.compile_id, frame.code)
        if frame.span is None:
            self._start_frame_span(frame, event.time_ns)

    def _start_frame_span(self, frame: FrameState, time_ns: int) -> None:
        start = min([time_ns, *frame.early_phase_starts()])
        frame.span = self.tracer.start_span(
            names.SPAN_FRAME,
            start_time=start,
            attributes={
                names.ATTR_COMPILE_ID: frame.compile_id,
                **frame.code_attributes(),
                **frame.settings_attributes(),
                **thread_attributes(),
            },
        )
        frame.started_ns = start
        self.log_events.frame_started(frame)

    def graph_break(self, event: GraphBreakReported) -> None:
        frame = self._frame(event.compile_id)
        event = dataclasses.replace(event, reason=self.limits.reason(event.reason))
        frame.breaks.append(event)
        self.metrics.graph_break(event.kind)
        self.log_events.graph_break(event, frame.span, self.backend)

    def recompile(self, event: RecompileReported) -> None:
        reasons = tuple(self.limits.reason(reason) for reason in event.reasons)
        self._frame(event.compile_id).recompile_reasons = reasons

    def cache_lookup(self, event: CacheLookup) -> None:
        """A cache lookup: on the compile step that made it (its state, a bypass's
        reason), counted in its compile (frame or lazy backward) and as a metric; a
        bypass is also a log event."""
        state = self._open_compile(event.compile_id)
        span = None if state is None else state.step_span or state.span
        if state is not None:
            state.cache_lookups[(event.cache, event.state)] += 1
        key = names.CACHE_STATE_ATTRIBUTES.get(event.cache)
        if span is not None and key is not None:
            span.set_attribute(key, event.state)
        self.metrics.cache_lookup(event.cache, event.state)
        if event.state != names.CACHE_BYPASS:
            return
        reason = self.limits.text(event.reason or "")
        if span is not None and reason:
            span.set_attribute(names.ATTR_CACHE_BYPASS_REASON, reason)
        fields = {
            names.ATTR_COMPILE_ID: event.compile_id,
            names.ATTR_CACHE_NAME: event.cache,
            names.ATTR_CACHE_BYPASS_REASON: reason,
        }
        self.log_events.cache_bypassed(span, fields)

    def cudagraph_decided(
        self,
        span: Span | None,
        fields: Mapping[str, AttributeValue],
        *,
        decision: str,
        reason: str | None,
        category: str | None,
        partitions: int = 0,
    ) -> None:
        """What inductor decided on CUDA graphs for one graph (``fields``: its compile
        id and kind, and when it was decided): on its span, as a metric, and a skip as a
        log event."""
        attributes: dict[str, AttributeValue] = {names.ATTR_CUDAGRAPH_DECISION: decision}
        if names.ATTR_RUN_KIND in fields:
            attributes[names.ATTR_RUN_KIND] = fields[names.ATTR_RUN_KIND]
        if partitions:
            attributes[names.ATTR_CUDAGRAPH_PARTITIONS] = partitions
        if decision == names.CUDAGRAPH_SKIPPED:
            attributes[names.ATTR_CUDAGRAPH_SKIP_REASON] = self.limits.text(reason or "")
            attributes[names.ATTR_CUDAGRAPH_SKIP_CATEGORY] = category or ""
        if span is not None:
            span.set_attributes(attributes)
        self.metrics.cudagraph_decided(decision, category)
        if decision == names.CUDAGRAPH_SKIPPED:
            self.log_events.cudagraph_skipped(span, {**fields, **attributes})

    def guards(self, event: GuardsReported) -> None:
        guards = tuple(self.limits.reason(guard) for guard in event.guards)
        self._frame(event.compile_id).guards = guards

    def phase(self, event: PhaseBoundary) -> None:
        self._compile_in_progress(event.compile_id).phase(event)

    def timed(self, compile_id: str, name: str, start_ns: int, end_ns: int) -> None:
        """A phase a source timed itself (an AOT inner compiler call, a partition)."""
        self._compile_in_progress(compile_id).timed(name, start_ns, end_ns)

    def _open_compile(self, compile_id: str | None) -> CompileState | None:
        """The open frame of this compile id, else its open lazy backward compile."""
        if not compile_id:
            return None
        return self._frames.get(compile_id) or self._lazy_backwards.get(compile_id)

    def _compile_in_progress(self, compile_id: str) -> CompileState:
        """The open frame of this compile id, else its lazy backward compile, else a new
        frame (Dynamo may time a phase before it says the frame started)."""
        frame = self._frames.get(compile_id)
        if frame is None:
            lazy = self._lazy_backwards.get(compile_id)
            if lazy is not None:
                return lazy
        return frame or self._frame(compile_id)

    def frame_ended(self, event: FrameEnded) -> None:
        if event.recompile_reason:
            event = dataclasses.replace(
                event, recompile_reason=self.limits.reason(event.recompile_reason)
            )
        frame = self._frames.pop(event.compile_id, None) or FrameState(event.compile_id)
        if frame.span is None:
            self._start_frame_span(frame, event.start_ns or event.time_ns)
        self._finish_frame(frame, event)

    def _remember_code(self, compile_id: str, code: CodeLocation | None) -> None:
        if code is None:
            return
        key = frame_key(compile_id)
        # Another compile of the same code may run it on another module (a decorator's
        # wrapper is one code for many models' forwards): only the location is kept.
        self._codes[key] = dataclasses.replace(code, module_class=None)
        self._codes.move_to_end(key)
        while len(self._codes) > MAX_KNOWN_CODES:
            self._codes.popitem(last=False)

    def _with_code(self, frame: FrameState, event: FrameEnded) -> FrameEnded:
        """The end of a frame compile with its code location: torch's, else the one its
        start or an earlier compile of the same code object (its frame key) gave."""
        if event.function is not None:
            self._remember_code(
                event.compile_id, CodeLocation(event.function, event.file or "", event.line or 0)
            )
            return event
        code = frame.code or self._codes.get(frame_key(event.compile_id))
        if code is None:
            return event
        return dataclasses.replace(event, function=code.function, file=code.file, line=code.line)

    def _finish_frame(self, frame: FrameState, event: FrameEnded) -> None:
        span = frame.span
        assert span is not None
        event = self._with_code(frame, event)
        mark_skipping_break(frame, event)
        duration_ns = max(event.time_ns - frame.started_ns, 0)
        reason = recompile_reason(frame, event)
        record = FrameCompiled.of(
            frame,
            event,
            outcome=frame_outcome(frame, event),
            backend=",".join(sorted(frame.backends)) or self.backend,
            duration_s=duration_ns / 1e9,
            time_split=split_seconds(frame.closed_phases, duration_ns),
            recompile_reason=self.limits.text(reason) if reason else None,
        )
        if event.fail_type and record.outcome == names.OUTCOME_FAILURE:
            span.set_status(Status(StatusCode.ERROR, self.limits.text(event.fail_reason)))
            span.set_attribute(names.ATTR_ERROR_TYPE, event.fail_type)
        span.set_attributes(frame_attributes(record, self.limits))
        for brk in frame.breaks:
            span.add_event(names.EVENT_GRAPH_BREAK, self.limits.break_attributes(brk))
        span.set_attributes(time_attributes(record.time_split))
        self._emit_phases(frame)
        end_span(span, event.time_ns)
        self._remember_ended(frame, record.backend)
        self.metrics.frame_compiled(record)
        self.log_events.frame_ended(record)

    def interrupt_open(self, signal_name: str) -> None:
        """The process is being stopped by ``signal_name``: end every open frame and lazy
        backward span now, outcome interrupted, so the flush that follows exports them."""
        now = time.time_ns()
        open_states = [*self._frames.values(), *self._lazy_backwards.values()]
        self._frames.clear()
        self._lazy_backwards.clear()
        for state in open_states:
            if state.span is None:
                continue
            state.span.set_attributes(
                {
                    names.ATTR_OUTCOME: names.OUTCOME_INTERRUPTED,
                    names.ATTR_ERROR_TYPE: signal_name,
                }
            )
            state.span.set_status(Status(StatusCode.ERROR, f"interrupted by {signal_name}"))
            end_span(state.span, now)

    def _remember_ended(self, frame: FrameState, backend: Any) -> None:
        assert frame.span is not None
        self._ended[frame.compile_id] = (frame.span.get_span_context(), backend)
        self._ended.move_to_end(frame.compile_id)
        while len(self._ended) > MAX_OPEN_FRAMES:
            self._ended.popitem(last=False)

    # --- lazy backward compiles ---------------------------------------------------------

    def lazy_backward_started(self, event: LazyBackwardStarted) -> None:
        if event.compile_id in self._lazy_backwards:
            return
        frame_context = self._ended.get(event.compile_id, (None, None))[0]
        attributes: dict[str, AttributeValue] = {names.ATTR_COMPILE_ID: event.compile_id}
        attributes.update(thread_attributes())
        backend = self._backend_of(event.compile_id)
        if backend:
            attributes[names.ATTR_BACKEND] = backend
        parent = trace.NonRecordingSpan(frame_context) if frame_context is not None else None
        state = CompileState(event.compile_id, started_ns=event.time_ns)
        state.span = self.tracer.start_span(
            names.SPAN_LAZY_BACKWARD,
            context=trace.set_span_in_context(parent) if parent is not None else None,
            start_time=event.time_ns,
            attributes=attributes,
        )
        self._lazy_backwards[event.compile_id] = state
        while len(self._lazy_backwards) > MAX_OPEN_FRAMES:
            del self._lazy_backwards[next(iter(self._lazy_backwards))]

    def _backend_of(self, compile_id: str) -> str | None:
        """The backend of an ended frame's compile (for its lazy backward)."""
        backend = self._ended.get(compile_id, (None, None))[1] or self.backend
        return None if backend is None else str(backend)

    def lazy_backward_ended(self, event: LazyBackwardEnded) -> None:
        state = self._lazy_backwards.pop(event.compile_id, None)
        backend = self._backend_of(event.compile_id)
        if state is None or state.span is None:
            return
        duration_ns = max(event.time_ns - state.started_ns, 0)
        record = LazyBackwardCompiled(
            compile_id=event.compile_id,
            backend=backend,
            duration_s=duration_ns / 1e9,
            time_split=split_seconds(state.closed_phases, duration_ns),
            span=state.span,
        )
        state.span.set_attributes({**time_attributes(record.time_split), **state.cache_counts()})
        self._emit_phases(state)
        end_span(state.span, event.time_ns)
        self.metrics.lazy_backward_compiled(record)

    def _emit_phases(self, frame: CompileState) -> None:
        assert frame.span is not None
        parents: dict[int, Span] = {}
        for index, parent_index, phase in nest_phases(frame.closed_phases):
            parent = frame.span if parent_index is None else parents[parent_index]
            span = self.tracer.start_span(
                f"{names.SPAN_PHASE} {phase.name}",
                context=trace.set_span_in_context(parent),
                start_time=phase.start_ns,
                attributes={
                    names.ATTR_PHASE_NAME: phase.name,
                    names.ATTR_COMPILE_ID: frame.compile_id,
                },
            )
            end_span(span, phase.end_ns)
            parents[index] = span

    # --- graph compiles --------------------------------------------------------------

    def frame_context(self, compile_id: str | None) -> otel_context.Context | None:
        """Context whose current span is the open frame span of this compile id."""
        frame = self._frames.get(compile_id) if compile_id else None
        if frame is None or frame.span is None:
            return None
        return trace.set_span_in_context(frame.span)

    def note_graph(self, compile_id: str | None, backend: str) -> int:
        """Count a graph of this frame; returns its index within the frame."""
        if not compile_id:
            return 0
        frame = self._frame(compile_id)
        frame.backends.add(backend)
        frame.graph_count += 1
        return frame.graph_count - 1

    def discard_graph(self, compile_id: str | None) -> None:
        """A graph noted for this frame was thrown away by a Dynamo restart: uncount it
        (the retry's graph takes its index)."""
        frame = self._frames.get(compile_id) if compile_id else None
        if frame is not None and frame.graph_count > 0:
            frame.graph_count -= 1
            frame.discarded_graph_count += 1

    def compile_span(
        self,
        name: str,
        attributes: dict[str, AttributeValue],
        *,
        graph: GraphIdentity,
        context: otel_context.Context | None = None,
        is_control_flow: Callable[[BaseException], bool] = lambda exc: False,
        phase: str | None = None,
    ) -> CompileStep:
        """A current span around a compile step of ``graph`` (``CompileStep``)."""
        return CompileStep(
            self,
            name,
            attributes,
            graph=graph,
            context=context,
            is_control_flow=is_control_flow,
            phase=phase,
        )

    def mark_failed(
        self,
        span: Span,
        exc: BaseException,
        *,
        stage: str,
        graph: GraphIdentity | None = None,
        run: RunIdentity | None = None,
    ) -> None:
        """Status ERROR, error.type, a log record and a counter; never raises. A failed
        run names its graph through ``run``; a failed compile step, ``graph``."""
        try:
            kind = class_name(exc)
            message = first_line(exc, self.limits.text_length)
            span.set_status(Status(StatusCode.ERROR, message))
            span.set_attribute(names.ATTR_ERROR_TYPE, kind)
            span.set_attribute(names.ATTR_ERROR_MESSAGE, message)
            if run is not None:
                failure = Failure(stage, kind, exc, run.graph, run.kind)
            else:
                failure = Failure(stage, kind, exc, graph)
            self.metrics.failure(stage, kind)
            self.log_events.failure(failure, span)
        except Exception:
            _log.warning("otel_dynamo: could not record a failure", exc_info=True)

    # --- runs --------------------------------------------------------------------------

    @passes_through
    def record_run(
        self, run: RunState, compiled: Callable[..., Any], args: Any, kwargs: dict[str, Any]
    ) -> Any:
        """Execute one run inside a span (the run-span policy chose this one).

        The span is started with the user's current span as parent but not made
        current itself (attaching a context costs on every recorded run); what annotates
        the run finds it as ``run.current_span``.
        """
        span = self.start_run_span(run)  # the SafeTracer never raises
        run.current_span = span  # for checks that annotate this run (accuracy, faults)
        clock = run.device_clock
        timing = None if clock is None else self.device_timer().start(clock, span)
        start_ns = time.perf_counter_ns()
        try:
            return compiled(*args, **kwargs)
        except BaseException as exc:
            self.mark_failed(span, exc, stage="run", run=run.identity)
            raise
        finally:
            duration_s = (time.perf_counter_ns() - start_ns) / 1e9
            run.current_span = None
            if timing is None:
                end_span(span)
            else:  # ended when the device time is known
                self.device_timer().finish(timing, span, run.identity)
            run.advance()
            self.metrics.run_recorded(run, span, duration_s)

    def device_timer(self) -> DeviceTimer:
        """The timer of this recorder's runs on a device (made at the first timed run)."""
        timer = self._device_timer
        if timer is None:
            with _device_timer_lock:
                timer = self._device_timer
                if timer is None:
                    timer = self._device_timer = DeviceTimer(
                        on_time=self.metrics.device_time, on_drop=self.metrics.device_time_dropped
                    )
        return timer

    def start_run_span(self, run: RunState) -> Span:
        """The span of the run in progress (also for runs the policy skipped but a fault
        or check must record)."""
        parts = run.span_args or self._prepare_run_spans(run)
        return self._run_spans.start(parts, run.count)

    def _prepare_run_spans(self, run: RunState) -> RunSpanParts:
        run.span_args = self._run_spans.parts(
            run_span_name(run.kind), run.identity.attributes(), run.link
        )
        return run.span_args


_RUN_SPAN_NAMES = {
    names.RUN_KIND_FORWARD: names.SPAN_RUN_FORWARD,
    names.RUN_KIND_BACKWARD: names.SPAN_RUN_BACKWARD,
    names.RUN_KIND_INFERENCE: names.SPAN_RUN_INFERENCE,
    names.RUN_KIND_EXPORT: names.SPAN_EXPORT_RUN,
}


def run_span_name(kind: str) -> str:
    return _RUN_SPAN_NAMES[kind]


def thread_attributes() -> dict[str, AttributeValue]:
    """``thread.id`` and ``thread.name`` of the calling thread (the one compiling)."""
    current = threading.current_thread()
    return {names.ATTR_THREAD_ID: threading.get_native_id(), names.ATTR_THREAD_NAME: current.name}


class CompileStep:
    """A current span around a compile step; errors set status and re-raise unchanged.

    A control-flow exception (a Dynamo restart) marks the span discarded, not failed.
    With ``phase``, the step's interval is also a phase of its compile (phase_split).
    A class of ours rather than a ``contextlib`` generator: a pass-through frame
    (``_recording.pass_through``) may enter it without showing Dynamo a frame of the
    standard library's.
    """

    def __init__(
        self,
        recorder: Recorder,
        name: str,
        attributes: dict[str, AttributeValue],
        *,
        graph: GraphIdentity,
        context: otel_context.Context | None,
        is_control_flow: Callable[[BaseException], bool],
        phase: str | None,
    ) -> None:
        self._recorder = recorder
        self._name = name
        self._attributes = attributes
        self._graph = graph
        self._context = context
        self._is_control_flow = is_control_flow
        self._phase = phase
        self._start_ns = 0
        self._state: CompileState | None = None
        self._outer_step: Span | None = None
        self._token: object = None
        self.span: Span = trace.INVALID_SPAN

    def __enter__(self) -> Span:
        recorder, attributes = self._recorder, self._attributes
        self._start_ns = time.time_ns() if self._phase is not None else 0
        span = recorder.tracer.start_span(self._name, context=self._context, attributes=attributes)
        self.span = span
        self._state = recorder._open_compile(self._graph.compile_id)
        if self._state is not None:
            self._outer_step = self._state.step_span
            self._state.step_span = span
        self._token = otel_context.attach(trace.set_span_in_context(span))
        return span

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        span, recorder = self.span, self._recorder
        try:
            otel_context.detach(self._token)  # type: ignore[arg-type]  # attach's own token
            if exc is not None:
                if self._is_control_flow(exc):
                    span.set_attributes(
                        {names.ATTR_DISCARDED: True, names.ATTR_DISCARDED_BY: class_name(exc)}
                    )
                else:
                    recorder.mark_failed(span, exc, stage="compile", graph=self._graph)
        finally:
            if self._state is not None:
                self._state.step_span = self._outer_step
            end_ns = time.time_ns()
            end_span(span, end_ns)
            compile_id = self._graph.compile_id
            if self._phase is not None and compile_id:
                recorder.timed(compile_id, self._phase, self._start_ns, end_ns)
