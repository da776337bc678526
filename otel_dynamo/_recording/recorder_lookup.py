"""The recorders traced backends report to, and the log-event and metric sinks they use.

One recorder per traced backend and tracer provider; one pair of sinks per meter and
logger provider. Which recorder a frame compile reports to is decided by the torch-facing
sources (``otel_dynamo._sources.routing``), for that compile.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import weakref
from collections.abc import Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.util.types import AttributeValue

from otel_dynamo import names
from otel_dynamo._config.otel_variables import SIGNAL_METRICS
from otel_dynamo._config.redaction import REDACT_SHAPES
from otel_dynamo._config.settings import Settings, load_settings
from otel_dynamo._lifecycle import termination
from otel_dynamo._lifecycle.flush_soon import FlushSoon
from otel_dynamo._lifecycle.watchdog import Watchdog
from otel_dynamo._providers.choice import ProviderLookup, Providers, own_providers_if_built
from otel_dynamo._providers.ids import isolate_ids
from otel_dynamo._providers.resources import detected_attributes
from otel_dynamo._recording.boundary import SafeTracer
from otel_dynamo._recording.limits import Limits
from otel_dynamo._recording.log_events import CompileLogEvents
from otel_dynamo._recording.metrics import CompileMetrics
from otel_dynamo._recording.recorder import Recorder
from otel_dynamo._recording.sinks import NULL_LOG_EVENTS, NULL_METRICS, LogEventSink, MetricsSink
from otel_dynamo._recording.structured_log import EventLogger
from otel_dynamo._recording.variant_report import VariantReport
from otel_dynamo.version import __version__


@dataclasses.dataclass(frozen=True)
class Sinks:
    log_events: LogEventSink
    metrics: MetricsSink
    variants: VariantReport
    """Writes the calls each variant served before each flush (held here: it is
    registered weakly)."""


_lock = threading.Lock()
_sinks: dict[tuple[Any, ...], tuple[Providers, Sinks]] = {}


def tracer_for(tracer_provider: trace.TracerProvider | None) -> trace.Tracer:
    provider = tracer_provider or trace.get_tracer_provider()
    isolate_ids(provider)
    tracer = provider.get_tracer(
        names.INSTRUMENTATION_NAME, __version__, schema_url=names.SCHEMA_URL
    )
    isolate_ids(tracer)  # a tracer given another provider's generator by a custom provider
    return SafeTracer(tracer)


class RecorderLookup:
    """Builds the recorder a traced backend reports to, following its provider source.

    The source is read at each compile, so a global provider installed after
    ``traced()`` was called is still used; a new tracer provider means a new recorder.
    """

    def __init__(self, *, providers: ProviderLookup, settings: Settings, backend: str) -> None:
        self._providers = providers
        self._settings = settings
        self._backend = backend
        self._recorder: Recorder | None = None
        self._provider: object = None

    def __deepcopy__(self, memo: dict[int, Any]) -> RecorderLookup:
        # Dynamo's debug wrapper copies a backend's __dict__ (functools.wraps) and torch's
        # repro runner deep-copies it: the copy reports to the same recorder.
        return self

    def __call__(self) -> Recorder:
        providers = self._providers()
        if self._recorder is None or providers.tracer_provider is not self._provider:
            self._provider = providers.tracer_provider
            sinks = sinks_for(self._settings, providers)
            self._recorder = make_recorder(
                tracer_provider=providers.tracer_provider,
                settings=self._settings,
                log_events=sinks.log_events,
                metrics=sinks.metrics,
                backend=self._backend,
            )
        return self._recorder


_live_recorders: weakref.WeakSet[Recorder] = weakref.WeakSet()


def _interrupt_all(signal_name: str) -> None:
    for recorder in list(_live_recorders):
        recorder.interrupt_open(signal_name)


termination.on_interrupt(_interrupt_all)


def make_recorder(
    *,
    tracer_provider: trace.TracerProvider | None = None,
    settings: Settings | None = None,
    log_events: LogEventSink = NULL_LOG_EVENTS,
    metrics: MetricsSink = NULL_METRICS,
    backend: str | None = None,
) -> Recorder:
    recorder = Recorder(
        tracer=tracer_for(tracer_provider),
        settings=settings or load_settings(),
        log_events=log_events,
        metrics=metrics,
        backend=backend,
    )
    _live_recorders.add(recorder)  # a terminating signal ends its open frame spans
    return recorder


def sinks_for(settings: Settings, providers: Providers) -> Sinks:
    """Event and metric sinks for these providers (one pair per provider and log target)."""
    key = (id(providers.meter_provider), id(providers.logger_provider), settings)
    with _lock:
        # The cache holds the providers it was built for, so their ids cannot be reused.
        held, sinks = _sinks.get(key, (None, None))
        if held is None or sinks is None:
            sinks = _build_sinks(settings, providers)
            _sinks[key] = (providers, sinks)
        return sinks


def _build_sinks(settings: Settings, providers: Providers) -> Sinks:
    own = own_providers_if_built(SIGNAL_METRICS)
    logger = EventLogger.from_settings(
        settings,
        logger_provider=providers.logger_provider,
        redact=own.redact if own is not None else REDACT_SHAPES,
        **event_context(os.environ),
    )
    log_events = CompileLogEvents(
        logger,
        limits=Limits.from_settings(settings),
        watchdog=Watchdog.from_settings(settings, logger),
    )
    is_own = own is not None and providers.meter_provider is own.meter_provider
    # Not with a Prometheus reader: each flush queues a snapshot there until a scrape.
    pushes_only = own is not None and not own.pull_readers
    flush_soon = (
        FlushSoon(providers.meter_provider, settle_timeout_s=own.shutdown_timeout_s)
        if own is not None and is_own and pushes_only
        else None
    )
    metrics = CompileMetrics(providers.meter_provider, flush_soon=flush_soon)
    variants = VariantReport(metrics.run_counts, log_events)
    return Sinks(log_events=log_events, metrics=metrics, variants=variants)


def event_context(environ: Mapping[str, str]) -> dict[str, AttributeValue]:
    """Fields bound to every event: the torchrun rank, when there is one."""
    detected = detected_attributes(environ)
    rank = detected.get(names.RESOURCE_RANK)
    return {} if rank is None else {names.RESOURCE_RANK: rank}
