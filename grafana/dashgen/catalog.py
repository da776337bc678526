"""What otel_dynamo emits, read from ``otel_dynamo/names.py``, the one source of truth.

Metric kinds and units come from ``names.METRIC_INSTRUMENTS``, so a new metric needs no
second table here.
"""

from __future__ import annotations

import dataclasses

from otel_dynamo import names

PENDING_NAMES: dict[str, str] = {
    # Announced for names.py by the metrics work, used here already. Remove an entry
    # once names.py has it (tests/stack/test_stack_catalog.py reports when that happened).
}

KINDS = frozenset({"counter", "updowncounter", "histogram", "gauge"})


class CatalogError(ValueError):
    """A METRIC_* constant of names.py without its instrument in METRIC_INSTRUMENTS."""


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


def metric_specs() -> tuple[MetricSpec, ...]:
    """Every METRIC_* instrument of names.py, in ``__all__``'s order."""
    specs = []
    for constant in names.__all__:
        if not constant.startswith("METRIC_"):
            continue
        value = getattr(names, constant)
        instrument = names.METRIC_INSTRUMENTS.get(value)
        if instrument is None:
            raise CatalogError(f"{constant}: no instrument in names.METRIC_INSTRUMENTS")
        specs.append(MetricSpec(constant, value, instrument.kind, instrument.unit))
    return tuple(specs)


def metric(constant: str) -> MetricSpec:
    """The MetricSpec of one METRIC_* constant."""
    for spec in metric_specs():
        if spec.constant == constant:
            return spec
    raise KeyError(constant)
