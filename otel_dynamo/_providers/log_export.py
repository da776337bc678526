"""The log signal of otel_dynamo's own providers: the safe log exporter, its bounded batch
processor, the JSON Lines file writer, and the redaction and size limit of each export.

Everything that names the SDK's logs classes is here, since the logs SDK is still
experimental and renamed them in OpenTelemetry 1.39: what an exporter receives was
``LogData`` (the record and its scope) and is ``ReadableLogRecord`` (the record, its
resource, scope and limits); ``LogExporter``, ``LogExportResult`` and
``ConsoleLogExporter`` became ``LogRecordExporter``, ``LogRecordExportResult`` and
``ConsoleLogRecordExporter``; processors receive a ``ReadWriteLogRecord``. The names
below stand for the installed train's classes.
``setup`` imports this module only when a logger provider of ours is built; should a
later train rename them again, it says so once and exports no log events itself.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

import opentelemetry.sdk._logs as sdk_logs
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource

from otel_dynamo._config.otel_env import BatchOptions
from otel_dynamo._providers import sdk_private
from otel_dynamo._providers.batch import Bounded
from otel_dynamo._providers.export_health import RecordSink, quiet
from otel_dynamo._providers.json_lines import LineWriter
from otel_dynamo._providers.redacting import Redact, redacted_attributes, redacted_value
from otel_dynamo._providers.resources import of_this_process
from otel_dynamo._providers.safe_exporters import SafeExport, result_is

if TYPE_CHECKING:  # typed as the newest train has them
    from opentelemetry.sdk._logs import ReadableLogRecord, ReadWriteLogRecord
    from opentelemetry.sdk._logs.export import (
        ConsoleLogRecordExporter,
        LogRecordExporter,
        LogRecordExportResult,
    )
else:  # the installed train's: 1.39's names, else 1.38's (the same roles)
    from opentelemetry.sdk._logs import export as _exports

    ReadableLogRecord = getattr(sdk_logs, "ReadableLogRecord", None) or sdk_logs.LogData
    ReadWriteLogRecord = getattr(sdk_logs, "ReadWriteLogRecord", None) or sdk_logs.LogData
    LogRecordExporter = getattr(_exports, "LogRecordExporter", None) or _exports.LogExporter
    LogRecordExportResult = (
        getattr(_exports, "LogRecordExportResult", None) or _exports.LogExportResult
    )
    ConsoleLogRecordExporter = (
        getattr(_exports, "ConsoleLogRecordExporter", None) or _exports.ConsoleLogExporter
    )

RECORD_KEEPS_ITS_RESOURCE = hasattr(sdk_logs, "ReadableLogRecord")
"""Whether an exported record carries resource and limits beside the SDK LogRecord (1.39
on); 1.38's LogData holds the record (with its resource) and the scope only."""


__all__ = [
    "MAX_EXPORT_TEXT",
    "BoundedBatchLogRecordProcessor",
    "ConsoleLogRecordExporter",
    "JsonLinesLogExporter",
    "SafeLogExporter",
    "logs_as_exported",
    "record_text_size",
    "safe_logger_provider",
    "size_chunks",
]

MAX_EXPORT_TEXT = 2 * 1024 * 1024
"""Characters of text one log export request carries at most (one larger record goes
alone): graph texts (up to 256 Ki characters each) batched 512 at a time would exceed the
4 MiB an OTLP/gRPC receiver accepts by default, and the whole batch would be refused."""


def safe_logger_provider(
    resource: Resource,
    safe_exports: Sequence[SafeExport],
    options: BatchOptions,
    *,
    on_sdk_record: RecordSink,
    shutdown_millis: float,
) -> tuple[LoggerProvider, list[BoundedBatchLogRecordProcessor]]:
    """An SDK LoggerProvider of ours (never shut down by the SDK's own exit hook) with a
    bounded batch processor per exporter, and those processors."""
    provider = LoggerProvider(resource=resource, shutdown_on_exit=False)
    processors = [
        BoundedBatchLogRecordProcessor(
            SafeLogExporter(safe_export),
            options,
            on_sdk_record=on_sdk_record,
            shutdown_millis=shutdown_millis,
        )
        for safe_export in safe_exports
    ]
    for processor in processors:
        provider.add_log_record_processor(processor)
    return provider, processors


def logs_as_exported(
    batch: Sequence[ReadableLogRecord], redact: Redact
) -> Sequence[ReadableLogRecord]:
    """``batch`` with every string of each record redacted and the resource naming this
    process (``resources.of_this_process``); the same objects where nothing changed."""
    pid = os.getpid()
    return [_log(record, redact, pid) for record in batch]


def _log(record: ReadableLogRecord, redact: Redact, pid: int) -> ReadableLogRecord:
    log_record = record.log_record
    body = redacted_value(log_record.body, redact)
    attributes = redacted_attributes(log_record.attributes, redact)
    # 1.38's SDK LogRecord holds the resource; from 1.39 the exported record does
    held: Resource | None = (
        record.resource if RECORD_KEEPS_ITS_RESOURCE else getattr(log_record, "resource", None)
    )
    resource = held if held is None else of_this_process(held, pid)
    if attributes is None and body == log_record.body and resource is held:
        return record
    shown = copy.copy(log_record)
    shown.body = body
    if attributes is not None:
        shown.attributes = attributes
    if not RECORD_KEEPS_ITS_RESOURCE:  # 1.38: LogData holds the record and its scope
        sdk_record: Any = shown
        sdk_record.resource = resource
        log_data: Any = copy.copy(record)  # its __init__ warns that LogData is deprecated
        log_data.log_record = shown
        built: ReadableLogRecord = log_data
        return built
    return ReadableLogRecord(
        shown,
        resource=record.resource if resource is None else resource,
        instrumentation_scope=record.instrumentation_scope,
        limits=record.limits,
    )


def record_text_size(record: ReadableLogRecord) -> int:
    """Characters of the record's body and string attributes (what dominates its size)."""
    log_record = record.log_record
    size = len(log_record.body) if isinstance(log_record.body, str) else 0
    for value in (log_record.attributes or {}).values():
        if isinstance(value, str):
            size += len(value)
    return size


def size_chunks(
    batch: Sequence[ReadableLogRecord], limit: int = MAX_EXPORT_TEXT
) -> list[Sequence[ReadableLogRecord]]:
    """``batch`` in consecutive pieces of at most ``limit`` characters of text each."""
    chunks: list[Sequence[ReadableLogRecord]] = []
    start, size = 0, 0
    for index, record in enumerate(batch):
        record_size = record_text_size(record)
        if index > start and size + record_size > limit:
            chunks.append(batch[start:index])
            start, size = index, 0
        size += record_size
    if start < len(batch):
        chunks.append(batch[start:])
    return chunks


class SafeLogExporter(LogRecordExporter):
    def __init__(self, safe_export: SafeExport) -> None:
        self.safe_export = safe_export

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        for chunk in size_chunks(logs_as_exported(batch, self.safe_export.redact)):
            if not self._send(chunk):  # a collector that refused one piece: stop there
                return LogRecordExportResult.FAILURE
        return LogRecordExportResult.SUCCESS

    def _send(self, chunk: Sequence[ReadableLogRecord]) -> bool:
        return self.safe_export.run(
            lambda exporter: exporter.export(chunk), result_is(LogRecordExportResult.SUCCESS)
        )

    def shutdown(self) -> None:
        self.safe_export.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class BoundedBatchLogRecordProcessor(Bounded[LogRecordExporter], BatchLogRecordProcessor):
    _flush_thread_name = "otel_dynamo-flush-logs"

    def __init__(
        self,
        exporter: LogRecordExporter,
        options: BatchOptions,
        *,
        on_sdk_record: RecordSink,
        shutdown_millis: float,
    ) -> None:
        super().__init__(
            exporter, options, on_sdk_record=on_sdk_record, shutdown_millis=shutdown_millis
        )

    def on_emit(self, log_record: ReadWriteLogRecord) -> None:
        with quiet(self._on_sdk_record):
            super().on_emit(log_record)


class JsonLinesLogExporter(LogRecordExporter):
    """The embedded default's log file writer (``json_lines``)."""

    def __init__(self, stream: IO[str]) -> None:
        encode = sdk_private.otlp_log_encoder()
        self.writer: LineWriter[Sequence[ReadableLogRecord]] = LineWriter(stream, encode)

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        ok = self.writer.write(batch)
        return LogRecordExportResult.SUCCESS if ok else LogRecordExportResult.FAILURE

    def shutdown(self) -> None:
        self.writer.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
