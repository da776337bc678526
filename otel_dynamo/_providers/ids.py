"""Span and trace ids that Dynamo's save/restore of the global ``random`` state can't repeat.

Dynamo saves and restores Python's global random state around every frame compile;
the SDK's RandomIdGenerator draws from that global state, so spans created during
different compiles can get the same ids. This generator owns its own ``random.Random``,
seeded from the OS, and reseeds in a forked child (so parent and child never share a
sequence either).
"""

from __future__ import annotations

import os
import random
import weakref

from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.trace import INVALID_SPAN_ID, INVALID_TRACE_ID

from otel_dynamo._providers import sdk_private

SEED_BYTES = 32
"""Bytes of OS randomness each generator is seeded with."""

_generators: weakref.WeakSet[IsolatedRandomIdGenerator] = weakref.WeakSet()


class IsolatedRandomIdGenerator(IdGenerator):
    """RandomIdGenerator's distribution from a private, OS-seeded random source."""

    def __init__(self) -> None:
        self._random = random.Random(os.urandom(SEED_BYTES))
        _generators.add(self)

    def reseed(self) -> None:
        self._random.seed(os.urandom(SEED_BYTES))

    def generate_span_id(self) -> int:
        span_id = self._random.getrandbits(64)
        while span_id == INVALID_SPAN_ID:
            span_id = self._random.getrandbits(64)
        return span_id

    def generate_trace_id(self) -> int:
        trace_id = self._random.getrandbits(128)
        while trace_id == INVALID_TRACE_ID:
            trace_id = self._random.getrandbits(128)
        return trace_id

    def is_trace_id_random(self) -> bool:
        return True


def _reseed_all_after_fork() -> None:
    for generator in list(_generators):
        generator.reseed()


os.register_at_fork(after_in_child=_reseed_all_after_fork)


def isolate_ids(tracer_provider: object) -> bool:
    """Give an SDK TracerProvider our generator if it uses the SDK's global-random one.

    Tracers the provider already handed out keep a reference to the old generator, so
    they are switched too. Returns whether anything was replaced; any other provider
    (a proxy, a no-op, a custom generator) is left alone.
    """
    if type(getattr(tracer_provider, "id_generator", None)) is not RandomIdGenerator:
        return False
    generator = IsolatedRandomIdGenerator()
    tracer_provider.id_generator = generator  # type: ignore[attr-defined]  # an SDK provider (checked)
    for tracer in sdk_private.handed_out_tracers(tracer_provider):
        if type(getattr(tracer, "id_generator", None)) is RandomIdGenerator:
            tracer.id_generator = generator
    return True
