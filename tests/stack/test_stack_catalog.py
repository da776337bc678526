"""The stack reads what otel_dynamo emits from otel_dynamo/names.py (dashgen.catalog)."""

from __future__ import annotations

import _stack_support  # noqa: F401 - puts grafana/ on sys.path
import pytest
from dashgen import catalog

from otel_dynamo import names


def test_every_metric_constant_has_a_kind_and_a_unit() -> None:
    """Each METRIC_* of names.__all__ yields a spec whose kind and unit are its entry in
    names.METRIC_INSTRUMENTS."""
    specs = {spec.constant: spec for spec in catalog.metric_specs()}
    metric_constants = {key for key in names.__all__ if key.startswith("METRIC_")}
    assert set(specs) == metric_constants
    assert all(spec.kind in catalog.KINDS and spec.unit for spec in specs.values())
    assert set(names.METRIC_INSTRUMENTS) == {spec.name for spec in specs.values()}


def test_metric_specs_keep_exact_names_kinds_and_units() -> None:
    """The compile counter and compile-time histogram are read exactly as names.py states."""
    assert (catalog.metric("METRIC_COMPILES"), catalog.metric("METRIC_COMPILE_DURATION")) == (
        catalog.MetricSpec("METRIC_COMPILES", names.METRIC_COMPILES, "counter", "{compile}"),
        catalog.MetricSpec(
            "METRIC_COMPILE_DURATION", names.METRIC_COMPILE_DURATION, "histogram", "s"
        ),
    )


def test_a_metric_without_its_instrument_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    """A METRIC_* constant missing from names.METRIC_INSTRUMENTS raises CatalogError."""
    monkeypatch.delitem(names.METRIC_INSTRUMENTS, names.METRIC_GRAPHS)
    with pytest.raises(catalog.CatalogError, match="METRIC_GRAPHS: no instrument"):
        catalog.metric_specs()


def test_pending_names_that_landed_keep_their_value() -> None:
    """A pending constant that names.py now defines has the value the stack already uses."""
    landed = {k: v for k, v in catalog.PENDING_NAMES.items() if hasattr(names, k)}
    assert {k: getattr(names, k) for k in landed} == landed


def test_pending_names_have_landed_in_names_py() -> None:
    """Every name the stack uses ahead of names.py is now in names.py (else: skipped, listed)."""
    missing = catalog.pending_missing()
    if missing:
        pytest.skip(f"not yet in otel_dynamo/names.py: {sorted(missing.values())}")
    assert missing == {}


def _recorded_instruments() -> dict[str, tuple[str, str]]:
    """name -> (kind, unit) of every instrument CompileMetrics records, from a real reader."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import (
        Histogram,
        InMemoryMetricReader,
        Sum,
    )

    from otel_dynamo._recording.frame_state import FrameState
    from otel_dynamo._recording.metrics import CompileMetrics
    from otel_dynamo._recording.records import FrameCompiled, GraphIdentity, RunIdentity
    from otel_dynamo._recording.stream_events import FrameEnded

    reader = InMemoryMetricReader()
    recorder = CompileMetrics(MeterProvider(metric_readers=[reader], shutdown_on_exit=False))
    recorder.frame_compiled(
        FrameCompiled.of(
            FrameState("0/1"),
            FrameEnded("0/1", 1, cache_size=1),
            outcome=names.OUTCOME_SUCCESS,
            backend="eager",
            duration_s=0.5,
            time_split={names.TIME_TRACING: 0.4},
            recompile_reason="x",
        )
    )
    recorder.graph_compiled("eager")
    recorder.graph_break("print")
    recorder.failure("run", "RuntimeError")
    recorder.fault("compile")

    class Span:
        start_time, end_time = 0, 1000

    class Run:
        kind, count, link = names.RUN_KIND_FORWARD, 3, None
        identity = RunIdentity(names.RUN_KIND_FORWARD, GraphIdentity("0/0", "eager"))

    recorder.track_run(Run())
    recorder.run_recorded(Run(), Span(), 1e-6)
    recorder.device_time(Run.identity, "cuda:0", 1e-4)
    recorder.device_time_dropped(names.DROP_PROCESS_EXIT)
    recorder.cudagraph_decided(names.CUDAGRAPH_SKIPPED, "cpu_device")
    recorder.cache_lookup(names.CACHE_INDUCTOR_FX, names.CACHE_HIT)
    kinds = {Sum: "counter", Histogram: "histogram"}
    return {
        metric.name: (kinds[type(metric.data)], metric.unit)
        for resource in reader.get_metrics_data().resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }


def test_recorded_instruments_are_exactly_the_documented_metrics() -> None:
    """What otel_dynamo._recording.metrics records equals the torch.compile.* specs in names."""
    documented = {
        spec.name: (spec.kind, spec.unit)
        for spec in catalog.metric_specs()
        if spec.name.startswith("torch.compile.")
    }
    assert _recorded_instruments() == documented
