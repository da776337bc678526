"""Which tracer, meter and logger providers a recorder reports to, and its sinks.

Explicit providers win. Otherwise, when the application (or ``opentelemetry-instrument``)
configured a global SDK tracer provider, the global providers are used. Otherwise
otel_dynamo builds its own from the environment once per process (the embedded
OTLP/JSON Lines files by default) without touching the globals.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable
from typing import Any

from opentelemetry import _logs, metrics, trace

from otel_dynamo import names
from otel_dynamo._compile_events import CompileEvents
from otel_dynamo._config import Settings
from otel_dynamo._events import EventLogger
from otel_dynamo._limits import Limits
from otel_dynamo._metrics import CompileMetrics
from otel_dynamo._resource import detected_attributes
from otel_dynamo._sinks import EventSink, MetricsSink
from otel_dynamo._telemetry import Telemetry
from otel_dynamo._watchdog import Watchdog


@dataclasses.dataclass(frozen=True)
class Providers:
    tracer_provider: trace.TracerProvider
    meter_provider: metrics.MeterProvider
    logger_provider: _logs.LoggerProvider


@dataclasses.dataclass(frozen=True)
class Sinks:
    events: EventSink
    metrics: MetricsSink


ProviderSource = Callable[[], Providers]

_lock = threading.RLock()
_own: Telemetry | None = None
_sinks: dict[tuple[Any, ...], tuple[Providers, Sinks]] = {}


def globally_configured() -> bool:
    """True when a real (not proxy, not no-op) global tracer provider is set."""
    provider = trace.get_tracer_provider()
    return not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)


def global_providers() -> Providers:
    return Providers(
        trace.get_tracer_provider(), metrics.get_meter_provider(), _logs.get_logger_provider()
    )


def explicit_source(
    *,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: metrics.MeterProvider | None = None,
    logger_provider: _logs.LoggerProvider | None = None,
) -> ProviderSource:
    """Given providers; the global ones (read at each call) for those not given."""

    def resolve() -> Providers:
        found = global_providers()
        return Providers(
            tracer_provider or found.tracer_provider,
            meter_provider or found.meter_provider,
            logger_provider or found.logger_provider,
        )

    return resolve


def environment_source(settings: Settings) -> ProviderSource:
    """The global providers if configured, else this process's own (built once)."""

    def resolve() -> Providers:
        if globally_configured():
            return global_providers()
        telemetry = own_telemetry(settings)
        return Providers(
            telemetry.tracer_provider, telemetry.meter_provider, telemetry.logger_provider
        )

    return resolve


def own_telemetry(settings: Settings) -> Telemetry:
    """otel_dynamo's own providers, set up from the environment on first use."""
    global _own
    with _lock:
        if _own is None:
            from otel_dynamo._exporters import setup_telemetry

            _own = setup_telemetry(settings)
        return _own


def own_telemetry_if_built() -> Telemetry | None:
    return _own


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
    logger = EventLogger.from_settings(
        settings, logger_provider=providers.logger_provider, **event_context(os.environ)
    )
    events = CompileEvents(
        logger,
        limits=Limits.from_settings(settings),
        watchdog=Watchdog.from_settings(settings, logger),
    )
    return Sinks(events=events, metrics=CompileMetrics(providers.meter_provider))


def event_context(environ: Any) -> dict[str, Any]:
    """Fields bound to every event: the torchrun rank, when there is one."""
    detected = detected_attributes(environ)
    rank = detected.get(names.RESOURCE_RANK)
    return {} if rank is None else {names.RESOURCE_RANK: rank}
