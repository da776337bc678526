"""The SDK sampler OTEL_TRACES_SAMPLER names (parsed in ``otel_dynamo._config.otel_env``),
and the id generator OTEL_PYTHON_ID_GENERATOR names: the SDK's own, or one registered in
its entry points by another package."""

from __future__ import annotations

import logging
from collections.abc import Callable

from opentelemetry.sdk.trace import sampling
from opentelemetry.sdk.trace.id_generator import IdGenerator

from otel_dynamo._config.otel_env import SamplerChoice
from otel_dynamo._config.otel_variables import (
    DEFAULT_ID_GENERATOR,
    ID_GENERATOR_GROUP,
    SAMPLER_GROUP,
)
from otel_dynamo._providers import entry_points
from otel_dynamo._providers.ids import IsolatedRandomIdGenerator

_log = logging.getLogger(__name__)

_SAMPLERS: dict[str, Callable[[float], sampling.Sampler]] = {
    "always_on": lambda _: sampling.ALWAYS_ON,
    "always_off": lambda _: sampling.ALWAYS_OFF,
    "parentbased_always_on": lambda _: sampling.DEFAULT_ON,
    "parentbased_always_off": lambda _: sampling.DEFAULT_OFF,
    "traceidratio": sampling.TraceIdRatioBased,
    "parentbased_traceidratio": sampling.ParentBasedTraceIdRatio,
}


def build_sampler(choice: SamplerChoice) -> sampling.Sampler:
    """The SDK's sampler of that name, with its ratio where it takes one; a registered
    one is called with OTEL_TRACES_SAMPLER_ARG as the SDK calls it. One that fails to
    load or build: the SDK's default, with one warning."""
    if choice.name in _SAMPLERS:
        return _SAMPLERS[choice.name](choice.ratio)
    try:
        sampler: sampling.Sampler = entry_points.load(SAMPLER_GROUP, choice.name)(choice.arg)
    except Exception as error:
        _log.warning("otel_dynamo: sampler %r failed (%r); using the default", choice.name, error)
        return sampling.DEFAULT_ON
    return sampler


def build_id_generator(name: str) -> IdGenerator:
    """``random``: ours (ids.py: never repeats across Dynamo's random-state restores);
    another registered name: that generator, built with no arguments as the SDK does."""
    if name == DEFAULT_ID_GENERATOR:
        return IsolatedRandomIdGenerator()
    try:
        generator: IdGenerator = entry_points.load(ID_GENERATOR_GROUP, name)()
    except Exception as error:
        _log.warning("otel_dynamo: id generator %r failed (%r); using random", name, error)
        return IsolatedRandomIdGenerator()
    return generator
