"""The SDK sampler OTEL_TRACES_SAMPLER names (parsed in ``otel_dynamo._config.otel_env``)."""

from __future__ import annotations

from collections.abc import Callable

from opentelemetry.sdk.trace import sampling

from otel_dynamo._config.otel_env import SamplerChoice

_SAMPLERS: dict[str, Callable[[float], sampling.Sampler]] = {
    "always_on": lambda _: sampling.ALWAYS_ON,
    "always_off": lambda _: sampling.ALWAYS_OFF,
    "parentbased_always_on": lambda _: sampling.DEFAULT_ON,
    "parentbased_always_off": lambda _: sampling.DEFAULT_OFF,
    "traceidratio": sampling.TraceIdRatioBased,
    "parentbased_traceidratio": sampling.ParentBasedTraceIdRatio,
}


def build_sampler(choice: SamplerChoice) -> sampling.Sampler:
    """The SDK's sampler of that name, with its ratio where it takes one."""
    return _SAMPLERS[choice.name](choice.ratio)
