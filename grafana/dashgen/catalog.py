"""What otel_dynamo emits, read from ``otel_dynamo/names.py``, the one source of truth.

Metric kinds and units come from each METRIC_* constant's docstring ("Counter of ...
Unit {compile}."), so a new metric needs no second table here.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
import re
from pathlib import Path

from otel_dynamo import names

PENDING_NAMES: dict[str, str] = {
    # Announced for names.py by the metrics work, used here already. Remove an entry
    # once names.py has it (tests/stack/test_stack_catalog.py reports when that happened).
}

KINDS = {
    "Counter": "counter",
    "UpDownCounter": "updowncounter",
    "Histogram": "histogram",
    "Gauge": "gauge",
}
_UNIT_RE = re.compile(r"Unit (\S+?)\.?\s*$")


class CatalogError(ValueError):
    """A names.py constant whose docstring does not state its metric kind or unit."""


@dataclasses.dataclass(frozen=True)
class MetricSpec:
    """One OTel instrument otel_dynamo records: its names.py constant, name, kind, unit."""

    constant: str
    name: str
    kind: str
    unit: str


def constants() -> dict[str, str]:
    """Every exported names.py constant, plus the pending ones names.py does not have yet."""
    found = {key: getattr(names, key) for key in names.__all__}
    for key, value in PENDING_NAMES.items():
        found.setdefault(key, value)
    return found


def name(constant: str) -> str:
    """Value of one constant (names.py first, then the pending list); KeyError if unknown."""
    return constants()[constant]


def values(*prefixes: str) -> frozenset[str]:
    """Values of the constants whose Python name starts with one of ``prefixes``."""
    return frozenset(v for k, v in constants().items() if k.startswith(prefixes))


def pending_missing() -> dict[str, str]:
    """Pending names that names.py still lacks (by value, whatever the constant is called)."""
    present = {getattr(names, key) for key in names.__all__}
    return {k: v for k, v in PENDING_NAMES.items() if v not in present}


def _documented_constants(source: str) -> list[tuple[str, str, str]]:
    """(NAME, value, docstring) for each ``NAME = "value"`` followed by a string literal."""
    body = ast.parse(source).body
    found = []
    for stmt, nxt in itertools.pairwise(body):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target, value = stmt.targets[0], stmt.value
        if not (isinstance(target, ast.Name) and isinstance(value, ast.Constant)):
            continue
        doc = ""
        if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant):
            doc = str(nxt.value.value)
        found.append((target.id, str(value.value), doc))
    return found


def parse_metric_doc(constant: str, value: str, doc: str) -> MetricSpec:
    """Build a MetricSpec from a docstring such as "Counter of ... Unit {compile}."."""
    first = doc.split(" ", 1)[0]
    if first not in KINDS:
        raise CatalogError(f"{constant}: docstring must start with one of {sorted(KINDS)}")
    unit = _UNIT_RE.search(doc.strip())
    if unit is None:
        raise CatalogError(f"{constant}: docstring must end with 'Unit <unit>.'")
    return MetricSpec(constant, value, KINDS[first], unit.group(1))


def metric_specs(source: str | None = None) -> tuple[MetricSpec, ...]:
    """Every METRIC_* instrument declared in names.py (or in ``source``, a names.py text)."""
    text = source if source is not None else Path(names.__file__).read_text(encoding="utf-8")
    return tuple(
        parse_metric_doc(key, value, doc)
        for key, value, doc in _documented_constants(text)
        if key.startswith("METRIC_")
    )


def metric(constant: str) -> MetricSpec:
    """The MetricSpec of one METRIC_* constant."""
    for spec in metric_specs():
        if spec.constant == constant:
            return spec
    raise KeyError(constant)
