"""IsolatedRandomIdGenerator and isolate_ids: ids that Dynamo's random save/restore can't repeat."""

from __future__ import annotations

import os
import random

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

from otel_dynamo._providers.ids import IsolatedRandomIdGenerator, isolate_ids


def test_restoring_global_random_state_does_not_repeat_ids():
    """Span ids stay distinct when the global random state is restored between draws."""
    generator = IsolatedRandomIdGenerator()
    state = random.getstate()
    first = generator.generate_span_id()
    random.setstate(state)  # what Dynamo does around every frame compile
    second = generator.generate_span_id()
    assert first != second


def test_sdk_generator_repeats_ids_under_the_same_restore():
    """The SDK's RandomIdGenerator does repeat them (why ours exists)."""
    generator = RandomIdGenerator()
    state = random.getstate()
    first = generator.generate_span_id()
    random.setstate(state)
    assert generator.generate_span_id() == first


def test_ids_are_valid_and_sized():
    """Trace ids are non-zero 128-bit and span ids non-zero 64-bit integers."""
    generator = IsolatedRandomIdGenerator()
    trace_ids = [generator.generate_trace_id() for _ in range(1000)]
    span_ids = [generator.generate_span_id() for _ in range(1000)]
    assert all(0 < value < 2**128 for value in trace_ids)
    assert all(0 < value < 2**64 for value in span_ids)
    assert len(set(span_ids)) == 1000


def test_isolated_generator_reports_random_trace_ids():
    """is_trace_id_random is True (W3C random trace-id flag), like the SDK's."""
    assert IsolatedRandomIdGenerator().is_trace_id_random() is True


def test_isolate_ids_redirects_the_generator_of_the_provider_and_its_tracers():
    """After isolate_ids, a tracer made before draws span ids that a restore of the global
    random state cannot repeat, through the same generator object as its provider's."""
    provider = TracerProvider(shutdown_on_exit=False)
    tracer = provider.get_tracer("early")
    assert isolate_ids(provider) is True
    assert tracer.id_generator is provider.id_generator
    state = random.getstate()
    first = tracer.id_generator.generate_span_id()
    random.setstate(state)
    assert tracer.id_generator.generate_span_id() != first


def test_isolate_ids_redirects_once():
    """A second call finds the generator redirected already and changes nothing."""
    provider = TracerProvider(shutdown_on_exit=False)
    assert isolate_ids(provider) is True
    draw = provider.id_generator.generate_span_id
    assert isolate_ids(provider) is False
    assert provider.id_generator.generate_span_id == draw


def test_isolate_ids_leaves_custom_generator_alone():
    """A provider with a non-default generator is not touched."""
    custom = IsolatedRandomIdGenerator()
    provider = TracerProvider(shutdown_on_exit=False, id_generator=custom)
    assert isolate_ids(provider) is False
    assert provider.id_generator is custom


def test_isolate_ids_ignores_non_sdk_providers():
    """Proxy or no-op providers have no generator: nothing happens, no error."""
    from opentelemetry.trace import NoOpTracerProvider

    assert isolate_ids(NoOpTracerProvider()) is False


def test_forked_child_draws_a_different_sequence():
    """After os.fork the child's generator is reseeded: its next id differs from the parent's."""
    generator = IsolatedRandomIdGenerator()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.write(write_end, generator.generate_span_id().to_bytes(8, "big"))
        os._exit(0)
    os.close(write_end)
    child_id = int.from_bytes(os.read(read_end, 8), "big")
    os.waitpid(pid, 0)
    os.close(read_end)
    assert child_id != generator.generate_span_id()
