"""Reading a Collector config: the shipped files, component ids, sections."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
CONFIG_FILES = (
    "agent.yaml",
    "gateway.yaml",
    "single-node.yaml",
    "replay.yaml",
    "add-to-your-collector.yaml",
)

Config = dict[str, Any]


def load(path: Path) -> Config:
    """Parse one config file; a file that is not a YAML mapping raises ValueError."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a YAML mapping")
    return data


def shipped() -> dict[str, Path]:
    """The Collector configs shipped in collector-config/, by file name."""
    return {name: ROOT / name for name in CONFIG_FILES}


def type_of(component_id: str) -> str:
    """``otlp/jaeger`` -> ``otlp``."""
    return component_id.split("/", 1)[0]


def section(config: Config, name: str) -> dict[str, Any]:
    """One top-level section as a dict (missing or null -> empty)."""
    value = config.get(name)
    return value if isinstance(value, dict) else {}
