"""Reading a Collector config: files, component ids, pipelines."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

SIGNALS = ("traces", "metrics", "logs")
SECTIONS = ("receivers", "processors", "exporters", "connectors", "extensions")
ROOT = Path(__file__).resolve().parent.parent
CONFIG_FILES = (
    "agent.yaml",
    "gateway.yaml",
    "single-node.yaml",
    "replay.yaml",
    "add-to-your-collector.yaml",
)
SCHEMA_FILE = ROOT / "schema" / "otelcol-config.schema.json"
ALLOWLIST_FILE = ROOT / "otelcol-contrib-0.136.0.components.yaml"

Config = dict[str, Any]


def load(path: Path) -> Config:
    """Parse one config file; a file that is not a YAML mapping raises ValueError."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a YAML mapping")
    return data


def merged(first: Config, then: Config) -> Config:
    """Two configs as the Collector merges its ``--config`` files: mappings key by key,
    anything else (a list, a scalar) taken whole from the later file."""
    result = dict(first)
    for key, value in then.items():
        earlier = result.get(key)
        if isinstance(earlier, dict) and isinstance(value, dict):
            result[key] = merged(earlier, value)
        else:
            result[key] = value
    return result


def shipped() -> dict[str, Path]:
    """The Collector configs shipped in collector-config/, by file name."""
    return {name: ROOT / name for name in CONFIG_FILES}


def type_of(component_id: str) -> str:
    """``otlp/jaeger`` -> ``otlp``."""
    return component_id.split("/", 1)[0]


def signal_of(pipeline_id: str) -> str:
    """``traces/sampling`` -> ``traces``."""
    return pipeline_id.split("/", 1)[0]


def section(config: Config, name: str) -> dict[str, Any]:
    """One top-level section as a dict (missing or null -> empty)."""
    value = config.get(name)
    return value if isinstance(value, dict) else {}


def pipelines(config: Config) -> Iterator[tuple[str, dict[str, list[str]]]]:
    """(pipeline id, pipeline) for each pipeline under service.pipelines."""
    service = config.get("service") if isinstance(config.get("service"), dict) else {}
    for pipeline_id, pipeline in (service.get("pipelines") or {}).items():
        if isinstance(pipeline, dict):
            yield pipeline_id, pipeline
