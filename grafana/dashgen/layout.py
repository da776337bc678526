"""Assemble a dashboard from rows of panels, with stable panel ids and shared links."""

from __future__ import annotations

import json
from collections.abc import Sequence

from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import DashboardCursorSync, DashboardLinkType

from dashgen import datasources

TAG = "otel-dynamo"
Section = tuple[str, Sequence[object]]


def build(
    uid: str, title: str, description: str, variables: Sequence[object], sections: Sequence[Section]
) -> dict[str, object]:
    """Dashboard model (a JSON-ready dict) with rows, panels and the otel-dynamo links."""
    dash = (
        db.Dashboard(title)
        .uid(uid)
        .description(description)
        .tags([TAG])
        .time("now-1h", "now")
        .refresh("30s")
        .timezone("browser")
        .editable()
        .tooltip(DashboardCursorSync.CROSSHAIR)
        .link(_links())
    )
    for variable in variables:
        dash = dash.with_variable(variable)
    panel_id = 0
    for row_title, panels in sections:
        panel_id += 1
        dash = dash.with_row(db.Row(row_title).id(panel_id))
        for panel in panels:
            panel_id += 1
            dash = dash.with_panel(panel.id(panel_id))
    model: dict[str, object] = json.loads(json.dumps(dash.build(), cls=JSONEncoder))
    return _with_datasource_variables(model)


def _with_datasource_variables(model: dict[str, object]) -> dict[str, object]:
    """The model with, first among its variables, one datasource variable per kind its
    panels and variables reference (``datasources.ref``)."""
    text = json.dumps(model)
    kinds = [
        kind for kind in datasources.UIDS if "${" + datasources.variable_name(kind) + "}" in text
    ]
    templating = model.setdefault("templating", {})
    assert isinstance(templating, dict)
    found = [datasources.variable(kind) for kind in kinds]
    templating["list"] = found + list(templating.get("list") or [])
    return model


def _links() -> db.DashboardLink:
    return (
        db.DashboardLink("otel_dynamo dashboards")
        .type(DashboardLinkType.DASHBOARDS)
        .tags([TAG])
        .as_dropdown(True)
        .include_vars(True)
        .keep_time(True)
    )


def dumps(model: dict[str, object]) -> str:
    """Canonical JSON text of a dashboard (sorted keys, 2-space indent, final newline)."""
    return json.dumps(model, indent=2, sort_keys=True) + "\n"
