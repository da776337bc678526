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


def isolate_ids(holder: object) -> bool:
    """Make an SDK TracerProvider's (or Tracer's) ids come from our generator where they
    come from the SDK's global-random one.

    A provider hands its generator object to every tracer it makes, so the draws of that
    object are redirected in place (its ``generate_span_id`` and ``generate_trace_id``
    become an IsolatedRandomIdGenerator's): tracers made before follow, on every release
    train, without a list of them. Returns whether anything was redirected now; anything
    else (a proxy, a no-op, a custom generator, one redirected already) is left alone.
    """
    generator = getattr(holder, "id_generator", None)
    if type(generator) is not RandomIdGenerator or "generate_span_id" in vars(generator):
        return False
    isolated = IsolatedRandomIdGenerator()
    generator.generate_span_id = isolated.generate_span_id  # type: ignore[method-assign]
    generator.generate_trace_id = isolated.generate_trace_id  # type: ignore[method-assign]
    return True
