"""Which tracer, meter and logger providers a recorder reports to, signal by signal.

For each signal: the provider given explicitly (``traced``/``instrument`` arguments), else
the global one when the job set it up (a real provider, not the API's proxy or no-op),
else otel_dynamo's own. Ours are built from the environment once per process, only for
the signals that need them (no exporter, file or endpoint for a signal the job owns),
never set as globals, and carry the job's resource when the job has one: its attributes
win, ours (torchrun ranks, host, process) fill in what it lacks. When the job set up some
signals and ours take the rest, one message per process says where each went.

This module is the one place that knows the API's private placeholder classes and the
SDK's private meter provider resource.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from opentelemetry import _logs, metrics, trace
from opentelemetry.sdk.resources import Resource

from otel_dynamo._config.otel_env import join_signals
from otel_dynamo._config.otel_variables import SIGNAL_LOGS, SIGNAL_METRICS, SIGNAL_TRACES, SIGNALS
from otel_dynamo._config.settings import Settings
from otel_dynamo._providers import sdk_private
from otel_dynamo._providers.process_providers import ProcessProviders

_log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Providers:
    tracer_provider: trace.TracerProvider
    meter_provider: metrics.MeterProvider
    logger_provider: _logs.LoggerProvider

    def of(self, signal: str) -> Any:
        return {
            SIGNAL_TRACES: self.tracer_provider,
            SIGNAL_METRICS: self.meter_provider,
            SIGNAL_LOGS: self.logger_provider,
        }[signal]


ProviderLookup = Callable[[], Providers]


def _placeholder_classes() -> tuple[type, ...]:
    """The API's stand-ins for "not set up": proxies (before a global is set) and no-ops."""
    return (
        trace.ProxyTracerProvider,
        trace.NoOpTracerProvider,
        metrics.NoOpMeterProvider,
        _logs.NoOpLoggerProvider,
        *sdk_private.api_placeholder_provider_types(),
    )


_PLACEHOLDERS = _placeholder_classes()
_lock = threading.RLock()
_built: dict[str, ProcessProviders] = {}
"""Signal -> our providers that carry it (one build per request that needed new signals)."""
_announced = False


def is_set_up(provider: object) -> bool:
    """True for a real provider (an SDK's or anyone's), not the API's proxy or no-op."""
    return not isinstance(provider, _PLACEHOLDERS)


def globally_configured() -> bool:
    """True when a real (not proxy, not no-op) global tracer provider is set."""
    return is_set_up(trace.get_tracer_provider())


def global_providers() -> Providers:
    return Providers(
        trace.get_tracer_provider(), metrics.get_meter_provider(), _logs.get_logger_provider()
    )


def explicit_lookup(
    settings: Settings,
    *,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: metrics.MeterProvider | None = None,
    logger_provider: _logs.LoggerProvider | None = None,
) -> ProviderLookup:
    """Given providers; for the others the global ones the job set up, else our own
    (decided at each call, so a global installed later is honoured)."""
    given = {
        SIGNAL_TRACES: tracer_provider,
        SIGNAL_METRICS: meter_provider,
        SIGNAL_LOGS: logger_provider,
    }
    return lambda: choose(settings, given)


def environment_lookup(settings: Settings) -> ProviderLookup:
    """The global providers the job set up; our own (built once) for the other signals."""
    return lambda: choose(settings, {})


def choose(settings: Settings, given: Mapping[str, object | None]) -> Providers:
    """Per signal: ``given[signal]``, else the global provider if set up, else our own."""
    found = global_providers()
    job: dict[str, Any] = {}
    for signal in SIGNALS:
        provider = given.get(signal)
        if provider is None and is_set_up(found.of(signal)):
            provider = found.of(signal)
        if provider is not None:
            job[signal] = provider
    missing = [signal for signal in SIGNALS if signal not in job]
    own = own_signal_providers(settings, missing, job) if missing else {}
    chosen = {**job, **own}
    return Providers(chosen[SIGNAL_TRACES], chosen[SIGNAL_METRICS], chosen[SIGNAL_LOGS])


def own_signal_providers(
    settings: Settings, signals: list[str], job: Mapping[str, Any]
) -> dict[str, Any]:
    """Our providers for ``signals``, built on first need (with the resource of the job's
    providers ``job``, when it has any) and announced once when the job owns the others."""
    with _lock:
        needed = [signal for signal in signals if signal not in _built]
        if needed:
            from otel_dynamo._providers.setup import setup_providers

            resource = job_resource(job)
            build = setup_providers(settings, signals=frozenset(needed), job_resource=resource)
            _built.update(dict.fromkeys(needed, build))
            if job:
                _announce(list(job), needed, build, job_resource=resource is not None)
        return {signal: _providers_of(_built[signal]).of(signal) for signal in signals}


def _providers_of(build: ProcessProviders) -> Providers:
    return Providers(build.tracer_provider, build.meter_provider, build.logger_provider)


def job_resource(job: Mapping[str, Any]) -> Resource | None:
    """The Resource of the job's first SDK provider (traces, logs, then metrics)."""
    for signal in SIGNALS:
        provider = job.get(signal)
        resource = getattr(provider, "resource", None)  # SDK TracerProvider, LoggerProvider
        if resource is None and provider is not None:
            resource = sdk_private.meter_provider_resource(provider)
        if isinstance(resource, Resource):
            return resource
    return None


def announcement(job_signals: list[str], own: Mapping[str, str], *, job_resource: bool) -> str:
    """The one message: which signals the job set up and where ours went."""
    places = list(dict.fromkeys(own.values()))
    if len(places) == 1:
        where = places[0]
    else:
        where = "; ".join(f"{signal} to {place}" for signal, place in own.items())
    verb = "goes" if len(own) == 1 else "go"
    return (
        f"otel_dynamo: the job set up OpenTelemetry {join_signals(job_signals)}; "
        f"otel_dynamo's {join_signals(list(own))} {verb} to its own exporters: {where}"
        + (" (with the job's resource)" if job_resource else "")
    )


def _announce(
    job: list[str], needed: list[str], build: ProcessProviders, *, job_resource: bool
) -> None:
    """Warn once per process (not when OTEL_SDK_DISABLED turned everything off)."""
    global _announced
    if _announced or build.disabled:
        return
    _announced = True
    own = {signal: build.destinations.get(signal, "nothing") for signal in needed}
    ordered = [signal for signal in SIGNALS if signal in job]
    _log.warning(announcement(ordered, own, job_resource=job_resource))


def own_providers_if_built(signal: str = SIGNAL_TRACES) -> ProcessProviders | None:
    """Our providers that carry ``signal``, when built."""
    return _built.get(signal)
