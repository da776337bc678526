"""The embedded default's OTLP/JSON Lines writers: each export request is one line of
OTLP/JSON, the encoding the Collector's ``otlp_json_file`` receiver and ``otel-dynamo
report`` read.

A request is built by the OTLP exporters' own encoders (``opentelemetry-exporter-otlp-
proto-common``, on every release train otel_dynamo supports) and written in the OTLP/JSON
encoding: protobuf's JSON mapping with field names in lowerCamelCase, enums as integers,
64-bit integers as decimal strings, and trace and span ids as hex strings (the one place
OTLP/JSON departs from protobuf's mapping, which gives bytes in base64). An empty request
writes nothing. The writers raise what the stream raises; ``SafeExport`` reports it.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Sequence
from typing import IO, Any, Generic, TypeVar

from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from otel_dynamo._providers import sdk_private

__all__ = [
    "ID_FIELDS",
    "JsonLinesMetricExporter",
    "JsonLinesSpanExporter",
    "LineWriter",
    "request_line",
]

ID_FIELDS = frozenset({"traceId", "spanId", "parentSpanId"})
"""OTLP/JSON fields written as hex (spans, links, log records, exemplars)."""

Batch = TypeVar("Batch")


def request_line(request: Message) -> str:
    """``request`` as one line of OTLP/JSON (with its newline); "" for an empty request."""
    data = MessageToDict(request, use_integers_for_enums=True)
    if not data:
        return ""
    _hex_ids(data)
    return json.dumps(data, separators=(",", ":")) + "\n"


def _hex_ids(node: Any) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ID_FIELDS and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            elif isinstance(value, (dict, list)):
                _hex_ids(value)
    elif isinstance(node, list):
        for item in node:
            _hex_ids(item)


class LineWriter(Generic[Batch]):
    """Encodes each batch into one request and writes it as one line of ``stream``.

    ``stream`` is the writer's to close at shutdown (``files.LineFile``: created at the
    first write); after shutdown, exports write nothing and fail.
    """

    def __init__(self, stream: IO[str], encode: Callable[[Batch], Message]) -> None:
        self.stream = stream
        self._encode = encode
        self._lock = threading.Lock()
        self._shut_down = False

    def write(self, batch: Batch) -> bool:
        if self._shut_down:
            return False
        line = request_line(self._encode(batch))
        with self._lock:
            if line:
                self.stream.write(line)
            self.stream.flush()
        return True

    def shutdown(self) -> None:
        with self._lock:
            if not self._shut_down:
                self._shut_down = True
                self.stream.close()


class JsonLinesSpanExporter(SpanExporter):
    def __init__(self, stream: IO[str]) -> None:
        self.writer: LineWriter[Sequence[ReadableSpan]] = LineWriter(stream, encode_spans)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        ok = self.writer.write(spans)
        return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE

    def shutdown(self) -> None:
        self.writer.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class JsonLinesMetricExporter(MetricExporter):
    """Prefers the temporality and aggregation the OTLP metric exporters take from
    ``OTEL_EXPORTER_OTLP_METRICS_*`` (cumulative by default), so a file holds what a
    Collector would receive."""

    def __init__(self, stream: IO[str]) -> None:
        temporality, aggregation = sdk_private.otlp_metric_preferences()
        super().__init__(preferred_temporality=temporality, preferred_aggregation=aggregation)
        self.writer: LineWriter[MetricsData] = LineWriter(stream, encode_metrics)

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        ok = self.writer.write(metrics_data)
        return MetricExportResult.SUCCESS if ok else MetricExportResult.FAILURE

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self.writer.shutdown()

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True
