"""The metric instruments of otel_dynamo, created as ``names.METRIC_INSTRUMENTS`` states
them: each name's unit from there, and its kind checked against the instrument asked for
(a mismatch is a programming error, raised where the meter is first used)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Observation

from otel_dynamo import names


def _unit(name: str, kind: str) -> str:
    instrument = names.METRIC_INSTRUMENTS[name]
    if instrument.kind != kind:
        raise ValueError(f"{name} is a {instrument.kind} (names.METRIC_INSTRUMENTS), not a {kind}")
    return instrument.unit


def counter(meter: metrics.Meter, name: str) -> metrics.Counter:
    return meter.create_counter(name, unit=_unit(name, "counter"))


def histogram(meter: metrics.Meter, name: str, buckets: Sequence[float]) -> metrics.Histogram:
    """A histogram with ``buckets`` as its advised explicit bucket boundaries."""
    return meter.create_histogram(
        name, unit=_unit(name, "histogram"), explicit_bucket_boundaries_advisory=buckets
    )


def observable_counter(
    meter: metrics.Meter,
    name: str,
    callback: Callable[[CallbackOptions], Iterable[Observation]],
) -> metrics.ObservableCounter:
    return meter.create_observable_counter(name, callbacks=[callback], unit=_unit(name, "counter"))
