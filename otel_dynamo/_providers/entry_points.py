"""Loading what the SDK's entry-point groups register by name (names are checked, without
importing, in ``otel_dynamo._config.registered``)."""

from __future__ import annotations

from importlib import metadata
from typing import Any

__all__ = ["load"]


def load(group: str, name: str) -> Any:
    """The object entry point ``name`` of ``group`` refers to (imports its module)."""
    (entry,) = (entry for entry in metadata.entry_points(group=group) if entry.name == name)
    return entry.load()
