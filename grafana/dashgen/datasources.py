"""Datasource references shared by the dashboards and grafana/provisioning/datasources.

Panels and queries never name a datasource uid: they name a datasource variable
(``${ds_prometheus}``, ...), one per kind a dashboard uses, whose default is the shipped
stack's provisioned datasource. Imported into any other Grafana, the variable falls back
to that Grafana's datasource of the kind (or the one picked), so the panels have data.
"""

from __future__ import annotations

from grafana_foundation_sdk.models.dashboard import DataSourceRef

PROMETHEUS_UID = "otel-dynamo-prometheus"
LOKI_UID = "otel-dynamo-loki"
TEMPO_UID = "otel-dynamo-tempo"
JAEGER_UID = "otel-dynamo-jaeger"

UIDS = {"prometheus": PROMETHEUS_UID, "loki": LOKI_UID, "tempo": TEMPO_UID, "jaeger": JAEGER_UID}


VARIABLE_PREFIX = "ds_"
"""A datasource variable is named ``ds_<kind>``."""
LABELS = {"prometheus": "Prometheus", "loki": "Loki", "tempo": "Tempo", "jaeger": "Jaeger"}


def variable_name(kind: str) -> str:
    return VARIABLE_PREFIX + kind


def ref(kind: str) -> DataSourceRef:
    """Reference to the datasource of one kind (prometheus, loki, tempo, jaeger): its
    dashboard variable, never a fixed uid."""
    if kind not in UIDS:
        raise KeyError(kind)
    return DataSourceRef(type_val=kind, uid="${" + variable_name(kind) + "}")


def variable(kind: str) -> dict[str, object]:
    """The datasource variable of one kind (Grafana's dashboard JSON), defaulting to the
    shipped stack's datasource."""
    return {
        "type": "datasource",
        "name": variable_name(kind),
        "label": f"{LABELS[kind]} datasource",
        "query": kind,
        "regex": "",
        "refresh": 1,
        "hide": 0,
        "multi": False,
        "includeAll": False,
        "current": {"selected": False, "text": UIDS[kind], "value": UIDS[kind]},
        "options": [],
    }
