"""Prometheus names of otel_dynamo's metrics, derived from the names.py constants.

Follows the OpenTelemetry -> Prometheus compatibility rules that both
opentelemetry-exporter-prometheus and the Collector's prometheus exporters apply:
invalid characters become "_", the unit (without {annotations}) is appended as a word,
monotonic counters get "_total", histograms expose _bucket/_sum/_count. Tested against
what the real exporter prints (tests/stack/test_stack_promnames.py); never hand-spell a series.
"""

from __future__ import annotations

import re

from dashgen.catalog import MetricSpec, metric

_INVALID_NAME = re.compile(r"[^a-zA-Z0-9:]+")
_INVALID_LABEL = re.compile(r"[^a-zA-Z0-9]+")
_ANNOTATION = re.compile(r"\{[^}]*\}")
_UNIT_WORDS = {
    "d": "days",
    "h": "hours",
    "min": "minutes",
    "s": "seconds",
    "ms": "milliseconds",
    "us": "microseconds",
    "ns": "nanoseconds",
    "By": "bytes",
    "KiBy": "kibibytes",
    "MiBy": "mebibytes",
    "GiBy": "gibibytes",
    "1": "",
    "%": "percent",
}
_PER_WORDS = {"s": "second", "m": "minute", "h": "hour", "d": "day"}
HISTOGRAM_PARTS = ("bucket", "sum", "count")


def _sanitize(text: str, pattern: re.Pattern[str]) -> str:
    if text[:1].isdigit():
        text = "_" + text[1:]
    return pattern.sub("_", text)


def unit_word(unit: str) -> str:
    """The suffix word of a UCUM unit: "s" -> "seconds", "{compile}" -> "", "By/s" -> ..."""
    bare = _ANNOTATION.sub("", unit)
    if bare in _UNIT_WORDS:
        return _UNIT_WORDS[bare]
    top, _, bottom = bare.partition("/")
    if bottom:
        top_word = _UNIT_WORDS.get(top, _sanitize(top, _INVALID_NAME)) if top else ""
        per = _PER_WORDS.get(bottom, _sanitize(bottom, _INVALID_NAME))
        return f"{top_word}_per_{per}" if top_word else f"per_{per}"
    return _sanitize(bare, _INVALID_NAME).strip("_") if bare else ""


def family(spec: MetricSpec) -> str:
    """Metric family name, e.g. torch_compile_compile_duration_seconds, ..._compiles_total."""
    base = _sanitize(spec.name, _INVALID_NAME)
    word = unit_word(spec.unit)
    if word and not base.endswith("_" + word):
        base = f"{base}_{word}"
    if spec.kind == "counter" and not base.endswith("_total"):
        base += "_total"
    return base


def series(constant: str, part: str = "") -> str:
    """Series name of a METRIC_* constant; ``part`` is bucket/sum/count for histograms."""
    spec = metric(constant)
    name = family(spec)
    if spec.kind != "histogram":
        if part:
            raise ValueError(f"{constant} is a {spec.kind}: it has no _{part} series")
        return name
    if part not in HISTOGRAM_PARTS:
        raise ValueError(f"{constant} is a histogram: part must be one of {HISTOGRAM_PARTS}")
    return f"{name}_{part}"


def all_series(spec: MetricSpec) -> tuple[str, ...]:
    """Every series name one instrument produces."""
    name = family(spec)
    if spec.kind == "histogram":
        return tuple(f"{name}_{part}" for part in HISTOGRAM_PARTS)
    return (name,)


def label(attribute: str) -> str:
    """Prometheus label (and Loki structured-metadata key) of an attribute key."""
    return _sanitize(attribute, _INVALID_LABEL)
