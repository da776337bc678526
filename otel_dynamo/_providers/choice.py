"""Which tracer, meter and logger providers a recorder reports to.

Explicit providers win. Otherwise, when the application (or ``opentelemetry-instrument``)
configured a global SDK tracer provider, the global providers are used. Otherwise
otel_dynamo builds its own from the environment once per process (the embedded
OTLP/JSON Lines files by default) without touching the globals.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable

from opentelemetry import _logs, metrics, trace

from otel_dynamo._config.settings import Settings
from otel_dynamo._providers.process_providers import ProcessProviders


@dataclasses.dataclass(frozen=True)
class Providers:
    tracer_provider: trace.TracerProvider
    meter_provider: metrics.MeterProvider
    logger_provider: _logs.LoggerProvider


ProviderLookup = Callable[[], Providers]

_lock = threading.RLock()
_own: ProcessProviders | None = None


def globally_configured() -> bool:
    """True when a real (not proxy, not no-op) global tracer provider is set."""
    provider = trace.get_tracer_provider()
    return not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)


def global_providers() -> Providers:
    return Providers(
        trace.get_tracer_provider(), metrics.get_meter_provider(), _logs.get_logger_provider()
    )


def explicit_lookup(
    *,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: metrics.MeterProvider | None = None,
    logger_provider: _logs.LoggerProvider | None = None,
) -> ProviderLookup:
    """Given providers; the global ones (read at each call) for those not given."""

    def resolve() -> Providers:
        found = global_providers()
        return Providers(
            tracer_provider or found.tracer_provider,
            meter_provider or found.meter_provider,
            logger_provider or found.logger_provider,
        )

    return resolve


def environment_lookup(settings: Settings) -> ProviderLookup:
    """The global providers if configured, else this process's own (built once)."""

    def resolve() -> Providers:
        if globally_configured():
            return global_providers()
        own = own_providers(settings)
        return Providers(own.tracer_provider, own.meter_provider, own.logger_provider)

    return resolve


def own_providers(settings: Settings) -> ProcessProviders:
    """otel_dynamo's own providers, set up from the environment on first use."""
    global _own
    with _lock:
        if _own is None:
            from otel_dynamo._providers.setup import setup_providers

            _own = setup_providers(settings)
        return _own


def own_providers_if_built() -> ProcessProviders | None:
    return _own
