"""Every use of OpenTelemetry's private names, in one place.

The SDK and its exporters offer no public way to do a few things otel_dynamo's embedded
default needs (stop an exporter's retries at exit, follow a fork, read what the SDK logs
about a failed export). Each such access is one small function here, saying what it reads or
writes and why no public API does it; tests/providers/test_sdk_private.py holds a canary
for each that fails when the installed SDK changes it. docs/architecture.md lists the
upstream changes that would make each one unnecessary.

Every function tolerates an object without the private name (a custom exporter or provider,
another SDK version): it returns None, an empty result, or does nothing. Imports of the
SDK's private modules happen inside the functions: this module loads with every traced job.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, MutableMapping
from typing import IO, Any

__all__ = [
    "EXPORT_QUEUE_FULL_PREFIX",
    "GENERIC_EXPORT_FAILURES",
    "RESOURCE_PAIR_WARNING_PREFIX",
    "RETRY_NOTE",
    "TRANSIENT_ERROR_PREFIX",
    "api_placeholder_provider_types",
    "exporter_preferences",
    "hurry_otlp_exporter",
    "keep_only_otlp_headers",
    "meter_provider_resource",
    "metric_lock_holders",
    "otlp_log_encoder",
    "otlp_metric_preferences",
    "owned_file_stream",
    "renew_locks",
    "shutdown_batch_worker",
    "update_provider_resource",
    "updates_resource",
]

# --- The SDK's log messages (the OTLP exporters, the batch processor, the resource detector)

RETRY_NOTE = re.compile(r",? retrying in [0-9.]+s\.?")
"""The OTLP exporters' ", retrying in 1.23s." in a transient-error warning: dropped from a
reason, which is about what failed, not what the exporter did next."""

TRANSIENT_ERROR_PREFIX = "Transient error "
"""How the OTLP exporters open a retryable failure's warning."""

GENERIC_EXPORT_FAILURES = (
    "due to timeout, max retries or shutdown",
    "Shutdown in progress",
    "Exporter already shutdown",
)
"""Phrases of the OTLP exporters' final warnings that say nothing about the cause."""

EXPORT_QUEUE_FULL_PREFIX = "Queue full"
"""How the SDK's batch processor opens its warning when it drops a span or record."""

RESOURCE_PAIR_WARNING_PREFIX = "Invalid key value resource attribute pair"
"""How the SDK's ``OTELResourceDetector`` opens its warning about an
OTEL_RESOURCE_ATTRIBUTES item with no ``=`` (it logs it at every ``Resource.create``)."""

# --- Exporters


def owned_file_stream(exporter: object) -> IO[str] | None:
    """The file a JSON-file exporter opened itself (``exporter._exporter._stream`` when its
    ``_owns_stream``), else None.

    Read after a fork, to disarm the buffer the child inherited so it is never flushed into
    the parent's file. The exporter offers no public way to reach its stream, nor a fork hook.
    """
    file_exporter = getattr(exporter, "_exporter", None)
    if file_exporter is None or getattr(file_exporter, "_owns_stream", False) is not True:
        return None
    stream: IO[str] | None = getattr(file_exporter, "_stream", None)
    return stream


_OTLP_SHUTDOWN_EVENTS = ("_shutdown_in_progress", "_shutdown_event")


def hurry_otlp_exporter(exporter: object, remaining_s: float) -> None:
    """Cap an OTLP exporter's per-export deadline at ``remaining_s`` and end its retries.

    Writes ``_timeout`` and sets the ``_shutdown_in_progress`` event (gRPC exporters, and
    HTTP on 1.38) or the same two on their ``_client`` (HTTP from 1.39:
    ``_shutdown_event``), which cuts a retry backoff
    short. Used at exit, when the job must end within its shutdown budget: the exporters'
    ``shutdown`` waits for a running export (up to its full timeout with retries), and no
    public API shortens an export already under way. Other exporters are left as they are.
    """
    holders: tuple[Any, ...] = (exporter, getattr(exporter, "_client", None))
    for holder in holders:
        if holder is None:
            continue
        current = getattr(holder, "_timeout", None)
        if isinstance(current, (int, float)) and not isinstance(current, bool):
            holder._timeout = max(0.0, min(float(current), remaining_s))
        for name in _OTLP_SHUTDOWN_EVENTS:
            event = getattr(holder, name, None)
            if isinstance(event, threading.Event):
                event.set()


def keep_only_otlp_headers(
    exporter: object, headers: tuple[tuple[str, str], ...], read_by_the_exporter: Iterable[str]
) -> None:
    """Make an OTLP exporter send ``headers`` and none of those it read itself.

    The OTLP exporters read ``OTEL_EXPORTER_OTLP_*HEADERS`` from ``os.environ`` even when
    given headers: gRPC when given none (its metadata, ``_headers``, is set to
    ``headers``); HTTP from 1.39 always, merging them under the ones given into
    ``_client._headers``; HTTP on 1.38 when given none, into ``_headers`` and its requests
    session's ``_session.headers``. From each such map the keys in ``read_by_the_exporter``
    that ``headers`` lacks are taken out (the exporter's own content type and user agent
    stay). The configuration otel_dynamo parsed may not be ``os.environ``, and hiding the
    variables while an exporter is built would change the environment every thread sees:
    no public parameter says "these headers, and no others".
    """
    if isinstance(getattr(exporter, "_headers", None), tuple):  # gRPC
        exporter._headers = tuple(headers)  # type: ignore[attr-defined]
        return
    maps = (
        getattr(getattr(exporter, "_client", None), "_headers", None),  # HTTP, 1.39 on
        getattr(exporter, "_headers", None),  # HTTP, 1.38
        getattr(getattr(exporter, "_session", None), "headers", None),
    )
    unwanted = set(read_by_the_exporter) - {key for key, _ in headers}
    for sent in maps:
        if isinstance(sent, MutableMapping):
            for key in unwanted:
                sent.pop(key, None)


def otlp_metric_preferences() -> tuple[dict[type, Any], dict[type, Any]]:
    """The temporality and aggregation per instrument class that this SDK's OTLP metric
    exporters take from ``OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`` and
    ``OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION`` (their mixin,
    ``..._internal.metrics_encoder.OTLPMetricExporterMixin``, reads them; nothing public
    does). The JSON Lines file writer prefers the same, so a file holds what a Collector
    would receive. Where the mixin is missing: the SDK's defaults (cumulative)."""
    try:
        from opentelemetry.exporter.otlp.proto.common._internal.metrics_encoder import (
            OTLPMetricExporterMixin,
        )

        mixin: Any = OTLPMetricExporterMixin()
        return dict(mixin._get_temporality({})), dict(mixin._get_aggregation({}))
    except (ImportError, AttributeError, TypeError):
        return {}, {}


def otlp_log_encoder() -> Callable[[Any], Any]:
    """This SDK's OTLP log encoder, ``encode_logs(batch)`` -> ExportLogsServiceRequest: the
    exporters import it from ``opentelemetry.exporter.otlp.proto.common._log_encoder``,
    a module whose name is private (its spans and metrics twins are public)."""
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs

    encode: Callable[[Any], Any] = encode_logs
    return encode


def exporter_preferences(exporter: object) -> tuple[Any, Any]:
    """A metric exporter's ``_preferred_temporality`` and ``_preferred_aggregation``.

    A wrapper exporter must hand the reader the preferences of the exporter it wraps; the
    SDK's MetricExporter keeps them only under these private names (the reader reads them
    there too).
    """
    return exporter._preferred_temporality, exporter._preferred_aggregation  # type: ignore[attr-defined]


# --- Batch processors


def shutdown_batch_worker(processor: object, *, timeout_millis: float) -> None:
    """Shut down a batch processor's worker (``processor._batch_processor``) within
    ``timeout_millis``.

    The public ``BatchSpanProcessor.shutdown`` takes no timeout and waits for the export
    in flight for as long as it takes; the worker's own ``shutdown`` takes one.
    """
    processor._batch_processor.shutdown(timeout_millis=timeout_millis)  # type: ignore[attr-defined]


# --- Providers


def updates_resource(provider: object) -> bool:
    """Whether an SDK provider has ``_update_resource`` (see :func:`update_provider_resource`)."""
    return callable(getattr(provider, "_update_resource", None))


def update_provider_resource(provider: object, resource: object) -> None:
    """Merge ``resource`` into an SDK provider's Resource (``provider._update_resource``).

    Used in a forked child so ``process.pid`` names the child. Providers take their Resource
    once, at construction; no public API changes it.
    """
    provider._update_resource(resource)  # type: ignore[attr-defined]


def meter_provider_resource(provider: object) -> object | None:
    """An SDK MeterProvider's Resource (``provider._sdk_config.resource``), else None.

    TracerProvider and LoggerProvider have a public ``resource``; MeterProvider has not.
    """
    return getattr(getattr(provider, "_sdk_config", None), "resource", None)


def api_placeholder_provider_types() -> tuple[type, ...]:
    """The API's proxy classes that stand for "no provider set yet": the meter proxy
    (``opentelemetry.metrics._internal._ProxyMeterProvider``) and the logger proxy
    (``opentelemetry._logs._internal.ProxyLoggerProvider``). The API exports the tracer
    proxy only; without these a proxy would be taken for a user's own provider."""
    from opentelemetry._logs._internal import ProxyLoggerProvider
    from opentelemetry.metrics._internal import _ProxyMeterProvider

    return (_ProxyMeterProvider, ProxyLoggerProvider)


_LOCK_ATTRIBUTES = ("_lock", "_export_lock")
_LOCK_TYPES: dict[type, Callable[[], object]] = {
    type(threading.Lock()): threading.Lock,
    type(threading.RLock()): threading.RLock,
}


def metric_lock_holders(provider: object) -> list[object]:
    """The SDK MeterProvider's measurement consumer, reader storages, view matches and
    aggregations (``_measurement_consumer._reader_storages[...]
    ._instrument_view_instrument_matches[...]._attributes_aggregation``).

    Each holds a lock a fork can leave locked in the child (see :func:`renew_locks`); the
    SDK renews none of them after a fork and names none of them publicly.
    """
    consumer = getattr(provider, "_measurement_consumer", None)
    holders: list[object] = [consumer]
    for storage in list(getattr(consumer, "_reader_storages", {}).values()):
        holders.append(storage)
        for matches in list(getattr(storage, "_instrument_view_instrument_matches", {}).values()):
            for match in matches:
                holders.append(match)
                holders.extend(list(getattr(match, "_attributes_aggregation", {}).values()))
    return holders


def renew_locks(holder: object) -> None:
    """Give ``holder`` new ``_lock`` and ``_export_lock`` (a metric reader, or one of
    :func:`metric_lock_holders`), of the type each had; anything else is left alone.

    Run in a forked child: a lock another thread of the parent held at the fork stays held
    for ever there. The SDK renews its providers' locks after a fork, not these.
    """
    for name in _LOCK_ATTRIBUTES:
        make = _LOCK_TYPES.get(type(getattr(holder, name, None)))
        if make is not None:
            setattr(holder, name, make())
