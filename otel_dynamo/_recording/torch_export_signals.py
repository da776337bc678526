"""Log events and metrics of torch.export calls (export and run_decompositions).

Events share the compile events' EventLogger (one writer per log target); the
instruments are created once per meter provider.
"""

from __future__ import annotations

import threading

from opentelemetry import metrics

from otel_dynamo import names
from otel_dynamo._recording.instruments import counter, histogram
from otel_dynamo._recording.log_events import DURATION_DECIMALS, FIELD_DURATION_S, in_span
from otel_dynamo._recording.records import ExportEnded
from otel_dynamo._recording.structured_log import EventLogger
from otel_dynamo.version import __version__

EXPORT_DURATION_BUCKETS_S = (
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 60.0, 120.0, 300.0, 600.0,
)  # fmt: skip
"""Export-duration histogram boundaries: 50 ms to 10 min, about 2.5x apart."""

_EVENTS = {
    (names.EXPORT_OPERATION_EXPORT, True): names.LOG_EXPORTED,
    (names.EXPORT_OPERATION_EXPORT, False): names.LOG_EXPORT_FAILED,
    (names.EXPORT_OPERATION_DECOMPOSITIONS, True): names.LOG_DECOMPOSED,
    (names.EXPORT_OPERATION_DECOMPOSITIONS, False): names.LOG_DECOMPOSITION_FAILED,
}
_LIST_VALUED = (list, tuple)


class TorchExportEvents:
    """One log event per export call, in the trace context of its span."""

    def __init__(self, events: EventLogger | None) -> None:
        self._events = events

    def ended(self, record: ExportEnded) -> None:
        if self._events is None:
            return
        # List-valued attributes (top ops, op changes) stay on the span only.
        fields = {
            key: value
            for key, value in record.description.items()
            if not isinstance(value, _LIST_VALUED)
        }
        fields[FIELD_DURATION_S] = round(record.duration_s, DURATION_DECIMALS)
        succeeded = record.error is None
        level = "info" if succeeded else "error"
        event = _EVENTS[record.operation, succeeded]
        with in_span(record.span):
            self._events.emit(event, level=level, exc=record.error, **fields)


class TorchExportMetrics:
    """torch.export.exports (counter) and torch.export.duration (histogram)."""

    def __init__(self, meter_provider: metrics.MeterProvider) -> None:
        meter = meter_provider.get_meter(
            names.INSTRUMENTATION_NAME, __version__, schema_url=names.SCHEMA_URL
        )
        self._calls = counter(meter, names.METRIC_EXPORTS)
        self._duration = histogram(meter, names.METRIC_EXPORT_DURATION, EXPORT_DURATION_BUCKETS_S)

    def ended(self, record: ExportEnded) -> None:
        labels = {
            names.ATTR_EXPORT_OPERATION: record.operation,
            names.ATTR_EXPORT_OUTCOME: record.outcome,
        }
        self._calls.add(1, labels)
        self._duration.record(max(record.duration_s, 0.0), labels)


_lock = threading.Lock()
_metrics: dict[int, tuple[metrics.MeterProvider, TorchExportMetrics]] = {}


def torch_export_metrics(meter_provider: metrics.MeterProvider) -> TorchExportMetrics:
    """The TorchExportMetrics of this meter provider (created at the first call)."""
    with _lock:
        # The cache holds the provider it was built for, so its id cannot be reused.
        held = _metrics.get(id(meter_provider))
        if held is None:
            held = _metrics[id(meter_provider)] = (
                meter_provider,
                TorchExportMetrics(meter_provider),
            )
        return held[1]
