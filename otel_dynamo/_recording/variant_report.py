"""Calls each compiled variant served, written as log events before each flush.

The counts live in :class:`~otel_dynamo._recording.metrics.RunCounts` (bare integers the
compiled runs bump); before each flush (``_lifecycle.exit_steps``), and so at exit, on
SIGTERM and at the end of a ``multiprocessing`` child, one ``torch.compile.variant_calls``
event is written per variant that served calls since the last one. The last event of a
compile id therefore holds its count, which the report reads.
"""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.util.types import AttributeValue

from otel_dynamo import names
from otel_dynamo._lifecycle import exit_steps, forks
from otel_dynamo._recording.metrics import RunCounts, VariantKey
from otel_dynamo._recording.sinks import LogEventSink


class VariantReport:
    """Writes a variant's call count when it changed since the last flush."""

    def __init__(self, counts: RunCounts, log_events: LogEventSink) -> None:
        self._counts = counts
        self._log_events = log_events
        self._written: dict[VariantKey, int] = {}
        self._inherited: dict[VariantKey, int] = {}
        """Calls a forked child's counters started from (its parent's): not its own."""
        exit_steps.before_flush(self.settle)
        forks.reset_in_child(self._forget_parent_calls)

    def settle(self, final: bool) -> None:
        for variant in self._counts.variants():
            key = (variant.compile_id, variant.kind)
            calls = variant.calls - self._inherited.get(key, 0)
            if calls <= 0 or self._written.get(key) == calls:
                continue
            self._written[key] = calls
            span = None if variant.link is None else trace.NonRecordingSpan(variant.link)
            fields: dict[str, AttributeValue] = {
                names.ATTR_COMPILE_ID: variant.compile_id,
                names.ATTR_RUN_KIND: variant.kind,
                names.ATTR_VARIANT_CALLS: calls,
            }
            self._log_events.variant_calls(span, fields)

    def _forget_parent_calls(self) -> None:
        """A forked child writes only the calls it served itself."""
        self._inherited = {(v.compile_id, v.kind): v.calls for v in self._counts.variants()}
        self._written = {}
