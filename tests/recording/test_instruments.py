"""Metric instruments are made as names.METRIC_INSTRUMENTS states them: the unit from
there, the kind checked; no unit is written anywhere else."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from otel_dynamo import names
from otel_dynamo._recording import instruments
from otel_dynamo._recording.metrics import CompileMetrics
from otel_dynamo._recording.torch_export_signals import TorchExportMetrics

RECORDING = Path(instruments.__file__).parent


def test_no_recording_module_but_instruments_states_a_unit():
    """No ``unit=`` keyword in _recording outside instruments.py."""
    stated = [
        f"{path.name}:{node.lineno}"
        for path in sorted(RECORDING.glob("*.py"))
        if path.name != "instruments.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.keyword) and node.arg == "unit"
    ]
    assert stated == []


def test_an_instrument_of_another_kind_is_refused():
    """Asking for a counter under a histogram's name raises ValueError naming both."""
    meter = MeterProvider().get_meter("test")
    with pytest.raises(ValueError, match=r"is a histogram .* not a counter"):
        instruments.counter(meter, names.METRIC_COMPILE_DURATION)


def test_exported_units_are_the_tables():
    """Every instrument the compile and export metrics hold, given one value each,
    exports with the unit names.METRIC_INSTRUMENTS gives its name."""
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    for held in (CompileMetrics(provider), TorchExportMetrics(provider)):
        for instrument in vars(held).values():
            record = getattr(instrument, "add", None) or getattr(instrument, "record", None)
            if record is not None and hasattr(instrument, "unit"):
                record(1)
    made = {
        metric.name: metric.unit
        for resource in reader.get_metrics_data().resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }
    provider.shutdown()
    assert made, "nothing collected"
    assert made == {name: names.METRIC_INSTRUMENTS[name].unit for name in made}
