"""Builds traced backends from the public API's arguments (imports torch and the SDK)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opentelemetry import _logs, metrics, trace

from otel_dynamo._config.options import TRACED, BackendOptions
from otel_dynamo._config.settings import Settings, load_settings
from otel_dynamo._enablement.instrument import checked_settings
from otel_dynamo._providers.choice import ProviderLookup, environment_lookup, explicit_lookup
from otel_dynamo._recording.recorder_lookup import RecorderLookup
from otel_dynamo._sources.traced_backend import TracedBackend, backend_name

BACKEND_ACCEPTED = "a registered backend's name (torch._dynamo.list_backends()) or a callable"
"""What ``traced()`` takes as its backend, as its message says."""


def traced_backend(
    backend: str | Callable[..., Any],
    *,
    tracer_provider: trace.TracerProvider | None,
    meter_provider: metrics.MeterProvider | None = None,
    logger_provider: _logs.LoggerProvider | None = None,
    options: BackendOptions,
) -> TracedBackend:
    """``traced()``: the given providers; for those not given the global ones the job set
    up, else otel_dynamo's own. A ``backend`` that is neither a name nor a callable is
    refused here (torch would take it and fail at the first compile)."""
    if not isinstance(backend, str) and not callable(backend):
        raise TypeError(
            f"{TRACED}: backend={backend!r} is not valid (of type {type(backend).__name__}); "
            f"accepted: {BACKEND_ACCEPTED}"
        )
    checked = checked_settings(
        TRACED,
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        logger_provider=logger_provider,
        settings=None,
        options=options,
    )
    providers = explicit_lookup(
        checked.settings,
        tracer_provider=checked.tracer_provider,
        meter_provider=checked.meter_provider,
        logger_provider=checked.logger_provider,
    )
    return backend_with(backend, providers, checked.settings)


def environment_backend(backend: Any, *, settings: Settings | None = None) -> TracedBackend:
    """Twins and env-var enablement: per signal, the global provider if set up, else ours."""
    settings = settings or load_settings()
    return backend_with(backend, environment_lookup(settings), settings)


def backend_with(
    backend: str | Callable[..., Any],
    providers: ProviderLookup,
    settings: Settings,
    *,
    name: str | None = None,
) -> TracedBackend:
    """``backend`` traced; ``name`` is the backend's name in telemetry (default: its own)."""
    name = name or backend_name(backend)
    lookup = RecorderLookup(providers=providers, settings=settings, backend=name)
    return TracedBackend(backend, recorder_lookup=lookup, name=name)
