"""Batch processors whose every blocking call has a deadline.

The SDK's BatchSpanProcessor / BatchLogRecordProcessor (``log_export``) shut down with a
30 s default and flush without any bound (``force_flush`` ignores its timeout). These subclasses
shut down within the time they are given, flush in a helper thread that is abandoned
at the deadline, and divert the SDK's per-item "Queue full" log lines into the one
warning of :mod:`otel_dynamo._providers.export_health`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

from otel_dynamo._config.otel_env import BatchOptions
from otel_dynamo._providers import sdk_private
from otel_dynamo._providers.export_health import RecordSink, quiet

DEFAULT_SHUTDOWN_MILLIS = 500.0
DEFAULT_FLUSH_MILLIS = 30_000
"""force_flush()'s deadline when none is given: the SDK's own default."""


def run_bounded(call: Callable[[], object], timeout_s: float, *, name: str) -> bool:
    """Run ``call`` in a daemon thread; True if it finished within ``timeout_s``."""
    thread = threading.Thread(target=call, name=name, daemon=True)
    try:
        thread.start()
    except RuntimeError:  # no new threads at interpreter shutdown (Python >= 3.12)
        call()
        return True
    thread.join(max(0.0, timeout_s))
    return not thread.is_alive()


ExporterT = TypeVar("ExporterT")
"""A span exporter, or the logs SDK's record exporter (its class name differs by train:
``log_export``)."""


class Bounded(Generic[ExporterT]):
    """What both processors add to their SDK base: construction from BatchOptions, bounded
    shutdown and flush, quiet queue.

    Mixed in before the SDK class, whose worker it shuts down directly
    (:func:`sdk_private.shutdown_batch_worker`).
    """

    _flush_thread_name = "otel_dynamo-flush"

    def __init__(
        self,
        exporter: ExporterT,
        options: BatchOptions,
        *,
        on_sdk_record: RecordSink,
        shutdown_millis: float = DEFAULT_SHUTDOWN_MILLIS,
    ) -> None:
        super().__init__(  # type: ignore[call-arg]  # the SDK batch processor's
            exporter,
            max_queue_size=options.max_queue_size,
            schedule_delay_millis=options.schedule_delay_ms,
            max_export_batch_size=options.max_export_batch_size,
            export_timeout_millis=options.export_timeout_ms,
        )
        self._on_sdk_record = on_sdk_record
        self._shutdown_millis = shutdown_millis

    def shutdown(self, timeout_millis: float | None = None) -> None:
        millis = self._shutdown_millis if timeout_millis is None else timeout_millis
        with quiet(self._on_sdk_record):
            sdk_private.shutdown_batch_worker(self, timeout_millis=millis)

    def force_flush(self, timeout_millis: int | None = None) -> bool:
        """Flush within ``timeout_millis`` (None: the SDK's default of 30 s), never longer."""
        millis = DEFAULT_FLUSH_MILLIS if timeout_millis is None else timeout_millis
        flush = super().force_flush  # type: ignore[misc]  # the SDK class after the mixin has it
        return run_bounded(flush, millis / 1000, name=self._flush_thread_name)


class BoundedBatchSpanProcessor(Bounded[SpanExporter], BatchSpanProcessor):
    _flush_thread_name = "otel_dynamo-flush-spans"

    def on_end(self, span: ReadableSpan) -> None:
        with quiet(self._on_sdk_record):
            super().on_end(span)
