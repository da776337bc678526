"""Prometheus series from otel_dynamo's OTLP/JSON metric files, as the shipped Collector
would write them: what a test feeds ``promtool test rules`` to check that an alert fires
on what real processes exported.

The Collector (collector-config/single-node.yaml) copies the resource attributes its
``transform/rank_labels`` processor names onto each data point, and its Prometheus
exporters name the series (dashgen.promnames) and set ``job`` to ``service.name``. Only
counters are converted: their last cumulative value per label set.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import _stack_support  # noqa: F401 - puts grafana/ and collector-config/ on sys.path
import yaml
from dashgen import catalog, promnames

COLLECTOR_CONFIG = Path(__file__).resolve().parents[1] / "collector-config" / "single-node.yaml"
RANK_LABELS_PROCESSOR = "transform/rank_labels"
SERVICE_NAME = "service.name"
_COPY = re.compile(r'set\(attributes\["([^"]+)"\], resource\.attributes\["\1"\]\)')


@dataclasses.dataclass(frozen=True)
class Series:
    """One Prometheus series and its last value."""

    name: str
    labels: tuple[tuple[str, str], ...]
    value: float

    def selector(self) -> str:
        inside = ",".join(f'{key}="{value}"' for key, value in self.labels)
        return f"{self.name}{{{inside}}}"


def copied_resource_attributes(config: Path = COLLECTOR_CONFIG) -> tuple[str, ...]:
    """The resource attributes the Collector's transform/rank_labels copies onto points."""
    processor = yaml.safe_load(config.read_text())["processors"][RANK_LABELS_PROCESSOR]
    statements = [
        statement for group in processor["metric_statements"] for statement in group["statements"]
    ]
    return tuple(match[1] for s in statements if (match := _COPY.search(s)))


def counter_series(files: Iterable[Path]) -> list[Series]:
    """The last value of every counter data point in ``files``, as Prometheus series."""
    specs = {spec.name: spec for spec in catalog.metric_specs() if spec.kind == "counter"}
    copied = copied_resource_attributes()
    last: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for path in files:
        for line in path.read_text().splitlines():
            for resource_metrics in json.loads(line).get("resourceMetrics", []):
                resource = _attributes(resource_metrics.get("resource", {}).get("attributes"))
                common = {"job": resource.get(SERVICE_NAME, "")}
                common.update({key: resource[key] for key in copied if key in resource})
                for scope in resource_metrics.get("scopeMetrics", []):
                    for metric in scope.get("metrics", []):
                        spec = specs.get(metric["name"])
                        if spec is None or "sum" not in metric:
                            continue
                        for point in metric["sum"].get("dataPoints", []):
                            labels = {**common, **_attributes(point.get("attributes"))}
                            key = tuple(sorted((promnames.label(k), v) for k, v in labels.items()))
                            value = point.get("asInt", point.get("asDouble", 0))
                            last[(promnames.family(spec), key)] = float(value)
    return [Series(name, labels, value) for (name, labels), value in sorted(last.items())]


def _attributes(raw: list[dict[str, Any]] | None) -> dict[str, str]:
    """OTLP attributes as the label values Prometheus gets: every value a string."""
    found = {}
    for item in raw or []:
        value = item.get("value", {})
        for kind in ("stringValue", "intValue", "boolValue", "doubleValue"):
            if kind in value:
                text = str(value[kind])
                found[item["key"]] = text.lower() if kind == "boolValue" else text
    return found
