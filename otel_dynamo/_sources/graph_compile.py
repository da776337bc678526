"""One backend call on one graph: the state its AOT hooks and run wrappers report to."""

from __future__ import annotations

from typing import Any, TypeVar

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanContext

from otel_dynamo import names
from otel_dynamo._recording.device_time import DeviceClock
from otel_dynamo._recording.recorder import Recorder
from otel_dynamo._recording.records import GraphIdentity, RunIdentity
from otel_dynamo._recording.run_state import RunState
from otel_dynamo._sources import cudagraphs
from otel_dynamo._sources.runs import RunRecorder

T = TypeVar("T")


def is_control_flow(exc: BaseException) -> bool:
    """Dynamo's restart-analysis and skip-frame exceptions steer compilation; no failure."""
    from torch._dynamo import exc as dynamo_exc

    flow = tuple(
        cls
        for cls in (
            getattr(dynamo_exc, "RestartAnalysis", None),
            getattr(dynamo_exc, "SkipFrame", None),
        )
        if cls is not None
    )
    return isinstance(exc, flow)


class GraphCompile:
    """One backend call on one graph: what AOT hooks and run wrappers report to."""

    def __init__(self, recorder: Recorder, *, compile_id: str | None, backend: str) -> None:
        self.recorder = recorder
        self.compile_id = compile_id or ""
        self.backend = backend
        self.context: Context | None = None  # the graph span's, for spans of its AOT steps
        self.link: SpanContext | None = None  # the graph span's, for links from run spans
        self.run_kind: str | None = None
        self.graph_name: str | None = None
        self.records_first_run = False
        """A debugging aid acts on the first run (a fault, a check): record it whatever
        the run-span policy."""
        self.device_clock: DeviceClock | None = None
        self.input_devices: frozenset[str] = frozenset()
        """The device types of the graph's tensor inputs (where a CUDA-graph skip of a
        graph loaded from a cache, with no compiled graph to read, happened)."""
        """Times the graph's recorded runs on its device (None on the CPU)."""
        self.cudagraph_requested = False
        """CUDA graphs were asked for when the graph compiled (inductor's config)."""
        self.cudagraph_forward: str | None = None
        """Inductor's CUDA-graph decision for the forward (or inference) graph."""
        self.inner_output: Any = None
        """What the forward's inner compiler returned, kept only with CUDA graphs asked for."""

    def enter(self, span: Span) -> None:
        self.context = trace.set_span_in_context(span)
        self.link = span.get_span_context()

    def inner_compiled(self, kind: str, graph_name: str | None) -> None:
        if kind != names.RUN_KIND_BACKWARD:
            self.run_kind, self.graph_name = kind, graph_name

    def cudagraph_decided(
        self, span: Span | None, kind: str, watch: cudagraphs.Watch, compiled: Any
    ) -> None:
        """Record inductor's CUDA-graph decision for this graph (or its backward)."""
        made = cudagraphs.decided(watch, compiled, self.input_devices)
        if kind != names.RUN_KIND_BACKWARD:
            self.cudagraph_forward = made.decision
        fields = {
            names.ATTR_COMPILE_ID: self.compile_id,
            names.ATTR_RUN_KIND: kind,
            names.ATTR_CUDAGRAPH_AT: names.CUDAGRAPH_AT_COMPILE,
        }
        self.recorder.cudagraph_decided(
            span,
            fields,
            decision=made.decision,
            reason=made.reason,
            category=made.category,
            partitions=made.partitions,
        )

    def run_recorder(self) -> RunRecorder:
        """What records this graph's runs: with CUDA graphs asked for, skips cudagraph
        trees decide at a recorded run land on its span too."""
        if self.cudagraph_requested:
            return cudagraphs.SkipAwareRecorder(self.recorder)
        return self.recorder

    def run_state(self, kind: str, graph_name: str | None) -> RunState:
        identity = RunIdentity(
            kind, GraphIdentity(self.compile_id, self.backend), graph_name=graph_name
        )
        state = RunState(
            policy=self.recorder.settings.run_spans,
            identity=identity,
            link=self.link,
            device_clock=self.device_clock,
        )
        self.recorder.metrics.track_run(state)
        if self.records_first_run:
            state.next_recorded = 1
        return state
