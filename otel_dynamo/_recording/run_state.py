"""Per compiled graph: how often it ran, which run is recorded next, what its span carries."""

from __future__ import annotations

from opentelemetry.trace import Span, SpanContext

from otel_dynamo._config.run_span_policy import RunSpanPolicy
from otel_dynamo._recording.device_time import DeviceClock
from otel_dynamo._recording.records import RunIdentity
from otel_dynamo._recording.run_spans import RunSpanParts


class RunState:
    """Per compiled graph: how often it ran and what a run span carries."""

    __slots__ = (
        "count",
        "current_span",
        "device_clock",
        "identity",
        "kind",
        "link",
        "next_recorded",
        "policy",
        "span_args",
    )

    def __init__(
        self,
        *,
        policy: RunSpanPolicy,
        identity: RunIdentity,
        link: SpanContext | None,
        device_clock: DeviceClock | None = None,
    ) -> None:
        self.kind = identity.kind
        self.policy = policy
        self.identity = identity
        self.link = link  # the graph span's context: each run span links to it
        self.count = 0
        self.next_recorded = policy.first_recorded()
        # the recorder's per-graph constants for its run spans, built at the first one
        self.span_args: RunSpanParts | None = None
        self.current_span: Span | None = None  # the span of the run in progress, when recorded
        self.device_clock = device_clock  # times recorded runs on the graph's device

    def advance(self) -> None:
        """Called after a recorded run: schedule the next one."""
        self.next_recorded = self.policy.next_recorded(self.count)
