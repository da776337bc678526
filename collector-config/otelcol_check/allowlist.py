"""The allow-list of components of the pinned otelcol-contrib version."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from otelcol_check.model import ALLOWLIST_FILE


@dataclasses.dataclass(frozen=True)
class AllowList:
    """Component types by section, with the signals each supports, and deprecated ones."""

    version: str
    image: str
    signals: dict[str, dict[str, frozenset[str]]]
    connectors: dict[str, dict[str, frozenset[str]]]
    extensions: frozenset[str]
    deprecated: dict[str, dict[str, str]]

    def known(self, section: str, component_type: str) -> bool:
        if section == "extensions":
            return component_type in self.extensions
        if section == "connectors":
            return component_type in self.connectors
        return component_type in self.signals.get(section, {})


def load_allowlist(path: Path = ALLOWLIST_FILE) -> AllowList:
    """Parse an allow-list data file."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    signals = {
        section: {t: frozenset(s) for t, s in (data.get(section) or {}).items()}
        for section in ("receivers", "processors", "exporters")
    }
    connectors = {
        t: {src: frozenset(dst) for src, dst in routes.items()}
        for t, routes in (data.get("connectors") or {}).items()
    }
    return AllowList(
        version=str(data["version"]),
        image=str(data["image"]),
        signals=signals,
        connectors=connectors,
        extensions=frozenset(data.get("extensions") or ()),
        deprecated={k: dict(v) for k, v in (data.get("deprecated") or {}).items()},
    )
