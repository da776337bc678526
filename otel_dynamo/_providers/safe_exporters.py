"""Exporter wrappers that never raise, report failures once, and survive fork.

Each wrapper holds a factory for the real exporter (OTLP, file, console) and builds it
in the process that uses it: when telemetry is set up, on the thread setting it up, and
again in a child created by ``os.fork`` at the child's first export. The child so gets
its own exporter (its own gRPC channel, its own ``<signal>-<host>-<child pid>-...jsonl``
file) instead of writing through the parent's, whose locks may have been held at the
fork.

The first build is never left to an export thread: building imports the exporter's
modules (gRPC's channel, the OTLP encoders), and a fork (a DataLoader worker) while
another thread is importing a module leaves that module's import lock held for ever in
the child, whose own build then waits on it until its exit flush runs out of time.

Metrics are not exported from a forked child at all: its meter state is a copy of the
parent's cumulative counts, and exporting it would count the parent's work twice.

At shutdown, :meth:`SafeExport.close` shortens the real exporter's timeout to what is left
of the shutdown budget, so its retry loop gives up instead of sleeping through a
backoff, and a signal already known to be failing is not retried at all.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from otel_dynamo._providers import sdk_private
from otel_dynamo._providers.export_health import (
    ExportHealth,
    install_quiet_filter,
    quiet,
    record_collector,
)
from otel_dynamo._providers.files import disarm_inherited_stream
from otel_dynamo._providers.redacting import spans_as_exported

NO_REASON = "the exporter reported a failure"

_safe_exports: weakref.WeakSet[SafeExport] = weakref.WeakSet()


class SafeExport:
    """One real exporter per process, called with SDK logging diverted: built by
    :meth:`build` in the process that sets telemetry up, and at its first export in a
    forked child."""

    def __init__(
        self,
        factory: Callable[[], Any],
        *,
        signal: str,
        target: str,
        health: ExportHealth,
        export_in_child: bool = True,
    ) -> None:
        self._factory = factory
        self.signal = signal
        self.target = target
        self._health = health
        health.register(signal, target)
        self._export_in_child = export_in_child
        self._origin_pid = os.getpid()
        self._lock = threading.Lock()
        self._inner: Any = None
        self._closing = False
        self._close_deadline = 0.0
        self._inherited: list[Any] = []
        _safe_exports.add(self)

    def build(self) -> bool:
        """Build the real exporter now, on this thread; False where it cannot be (the
        failure is reported as an export's would be, and the first export tries again)."""
        return self._report(self._attempt(lambda inner: None, lambda result: True))

    def redact(self, text: str) -> str:
        """The process's one redaction (its known secrets and URL shapes)."""
        return self._health.redact(text)

    def inner(self) -> Any:
        if self._inner is None:
            with self._lock:
                if self._inner is None:
                    self._inner = self._factory()
                    install_quiet_filter()
        return self._inner

    def run(self, call: Callable[[Any], Any], succeeded: Callable[[Any], bool]) -> bool:
        """Call the real exporter; any exception or failure result is reported, not raised."""
        if os.getpid() != self._origin_pid and not self._export_in_child:
            return True  # dropped on purpose, not a failure
        if self._closing and self._health.is_failing(self.signal, self.target):
            return False  # known down: don't spend the shutdown budget on it
        return self._report(self._attempt(call, succeeded))

    def _attempt(
        self, call: Callable[[Any], Any], succeeded: Callable[[Any], bool]
    ) -> tuple[bool, list[str]]:
        """Whether ``call`` on the real exporter (built first where it is not) succeeded,
        and the reasons the SDK logged or the exception raised meanwhile."""
        reasons: list[str] = []
        try:
            with quiet(record_collector(reasons, self._health.redact)):
                return succeeded(call(self._ready_inner())), reasons
        except Exception as error:
            return False, [*reasons, self._health.redact(f"{type(error).__name__}: {error}")]

    def _report(self, attempt: tuple[bool, list[str]]) -> bool:
        ok, reasons = attempt
        if ok:
            self._health.succeeded(self.signal, self.target)
        else:
            self._health.failed(self.signal, self.target, failure_reason(reasons))
        return ok

    def _ready_inner(self) -> Any:
        inner = self.inner()
        if self._closing:  # built after close(), or hurried again for the time left now
            sdk_private.hurry_otlp_exporter(inner, self._close_deadline - time.monotonic())
        return inner

    def close(self, remaining_s: float) -> None:
        """Shutdown begins: no more retries, and no export longer than the time left."""
        self._close_deadline = time.monotonic() + remaining_s
        self._closing = True
        if self._inner is not None:
            sdk_private.hurry_otlp_exporter(self._inner, remaining_s)

    def shutdown(self) -> None:
        inner = self._inner
        if inner is None:
            return
        with contextlib.suppress(Exception), quiet(record_collector([], self._health.redact)):
            inner.shutdown()

    def after_fork_in_child(self) -> None:
        """The parent's exporter (channel, file) is not ours: set it aside, unflushable."""
        self._lock = threading.Lock()
        inherited, self._inner = self._inner, None
        if inherited is not None:
            _disarm(inherited)
            self._inherited.append(inherited)  # never finalized here


def _disarm(exporter: Any) -> None:
    """A file exporter's inherited buffer must not be flushed into the parent's file."""
    stream = sdk_private.owned_file_stream(exporter)
    if stream is not None:
        disarm_inherited_stream(stream)


def failure_reason(messages: Sequence[str]) -> str:
    """The most telling of the SDK's messages about one failed export.

    The last message is the verdict; when it is only "failed due to timeout, max
    retries or shutdown", the first one (the original error) says more.
    """
    if not messages:
        return NO_REASON
    last = messages[-1]
    generic = any(phrase in last for phrase in sdk_private.GENERIC_EXPORT_FAILURES)
    reason = messages[0] if generic else last
    without_retry = sdk_private.RETRY_NOTE.sub("", reason)
    return without_retry.removeprefix(sdk_private.TRANSIENT_ERROR_PREFIX).rstrip(".")


def _after_fork_in_child() -> None:
    for safe_export in list(_safe_exports):
        safe_export.after_fork_in_child()


os.register_at_fork(after_in_child=_after_fork_in_child)


class SafeSpanExporter(SpanExporter):
    def __init__(self, safe_export: SafeExport) -> None:
        self.safe_export = safe_export

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        shown = spans_as_exported(spans, self.safe_export.redact)
        ok = self.safe_export.run(lambda e: e.export(shown), result_is(SpanExportResult.SUCCESS))
        return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE

    def shutdown(self) -> None:
        self.safe_export.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class SafeMetricExporter(MetricExporter):
    """Takes temporality and aggregation preferences from the real exporter, which setup
    has built (one that could not be built gets no reader)."""

    def __init__(self, safe_export: SafeExport) -> None:
        temporality, aggregation = sdk_private.exporter_preferences(safe_export.inner())
        super().__init__(preferred_temporality=temporality, preferred_aggregation=aggregation)
        self.safe_export = safe_export

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        def call(exporter: Any) -> Any:
            return exporter.export(metrics_data, timeout_millis=timeout_millis)

        ok = self.safe_export.run(call, result_is(MetricExportResult.SUCCESS))
        return MetricExportResult.SUCCESS if ok else MetricExportResult.FAILURE

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self.safe_export.shutdown()

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True


def result_is(expected: object) -> Callable[[object], bool]:
    return lambda result: result is expected
