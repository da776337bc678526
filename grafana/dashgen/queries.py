"""Find every query in dashboard JSON: targets of panels (rows included) and variables."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from typing import Any

_VARIABLE = re.compile(r"\$\{([A-Za-z0-9_]+)(?::[a-z]+)?\}|\$([A-Za-z0-9_]+)")
GRAFANA_INTERVALS = {
    "__rate_interval": "1m",
    "__range": "1h",
    "__interval": "15s",
    "__range_s": "3600",
    "__interval_ms": "15000",
}


@dataclasses.dataclass(frozen=True)
class Query:
    """One query of a dashboard: where it is, its datasource kind and uid, and its text."""

    dashboard: str
    where: str
    kind: str
    uid: str
    text: str


def _panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in panels:
        yield panel
        yield from _panels(panel.get("panels") or [])


def _text(target: dict[str, Any]) -> str:
    return str(target.get("expr") or target.get("query") or "")


def queries(model: dict[str, Any]) -> Iterator[Query]:
    """Every panel target and query variable of one dashboard model."""
    title = str(model.get("title", "?"))
    for panel in _panels(model.get("panels") or []):
        panel_ds = panel.get("datasource") or {}
        for target in panel.get("targets") or []:
            ds = target.get("datasource") or panel_ds
            where = f"panel '{panel.get('title')}' ref {target.get('refId')}"
            yield Query(title, where, str(ds.get("type")), str(ds.get("uid")), _text(target))
    for variable in (model.get("templating") or {}).get("list") or []:
        if variable.get("type") == "query":
            ds = variable.get("datasource") or {}
            query = variable.get("query")
            text = query.get("query", "") if isinstance(query, dict) else str(query or "")
            yield Query(
                title,
                f"variable '{variable.get('name')}'",
                str(ds.get("type")),
                str(ds.get("uid")),
                text,
            )


def datasource_refs(model: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(where, type, uid) of every datasource reference in a dashboard model."""
    for panel in _panels(model.get("panels") or []):
        for node in [panel, *(panel.get("targets") or [])]:
            ds = node.get("datasource")
            if isinstance(ds, dict):
                yield f"panel '{panel.get('title')}'", str(ds.get("type")), str(ds.get("uid"))
    for variable in (model.get("templating") or {}).get("list") or []:
        ds = variable.get("datasource")
        if isinstance(ds, dict):
            yield f"variable '{variable.get('name')}'", str(ds.get("type")), str(ds.get("uid"))


def render(text: str, values: dict[str, str]) -> str:
    """Replace Grafana variables: built-in intervals, then ``values`` (KeyError if unknown)."""
    merged = {**GRAFANA_INTERVALS, **values}
    return _VARIABLE.sub(lambda m: merged[m.group(1) or m.group(2)], text)
