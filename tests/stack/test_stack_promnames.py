"""Prometheus series names derived from names.py match what the real exporter prints."""

from __future__ import annotations

import subprocess
import sys

import _stack_support
import pytest
from dashgen import catalog, promnames
from prometheus_client.parser import text_string_to_metric_families


@pytest.fixture(scope="module")
def exposition() -> list:
    """Samples printed by opentelemetry-exporter-prometheus after one value per metric."""
    out = subprocess.run(
        [sys.executable, str(_stack_support.EMITTER), "--print-once"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    return [
        s
        for family in text_string_to_metric_families(out)
        for s in family.samples
        if s.name.startswith(("torch_compile", "torch_export"))
    ]


def test_series_names_match_the_real_exporter(exposition: list) -> None:
    """Every series the exporter prints is one promnames derives, and the reverse."""
    derived = {s for spec in catalog.metric_specs() for s in promnames.all_series(spec)}
    assert {sample.name for sample in exposition} == derived


def test_label_names_match_the_real_exporter(exposition: list) -> None:
    """Attribute labels the exporter prints are promnames.label of names.py attributes."""
    printed = {label for sample in exposition for label in sample.labels} - {"le"}
    printed = {label for label in printed if not label.startswith("otel_scope_")}
    derived = {promnames.label(v) for v in catalog.values("ATTR_")}
    assert printed and printed <= derived


def test_compile_series_names_are_exact() -> None:
    """The compile counter and histogram map to their exact Prometheus series names."""
    assert (
        promnames.series("METRIC_COMPILES"),
        promnames.series("METRIC_COMPILE_DURATION", "bucket"),
    ) == ("torch_compile_compiles_total", "torch_compile_compile_duration_seconds_bucket")


def test_unit_annotation_adds_no_suffix() -> None:
    """A {annotation} unit adds nothing; seconds and bytes-per-second become words."""
    assert [promnames.unit_word(u) for u in ("{compile}", "s", "By/s", "1")] == [
        "",
        "seconds",
        "bytes_per_second",
        "",
    ]


def test_counter_has_no_histogram_parts() -> None:
    """Asking a counter for a _bucket series is an error."""
    with pytest.raises(ValueError, match="METRIC_COMPILES is a counter"):
        promnames.series("METRIC_COMPILES", "bucket")


def test_histogram_needs_a_part() -> None:
    """A histogram series needs bucket, sum or count."""
    with pytest.raises(ValueError, match="part must be one of"):
        promnames.series("METRIC_COMPILE_DURATION")


def test_label_replaces_dots() -> None:
    """Attribute keys become labels with every non-alphanumeric run replaced by '_'."""
    assert promnames.label("torch.compile.graph_break.kind") == "torch_compile_graph_break_kind"
