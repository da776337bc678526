"""Datasource references shared by the dashboards and grafana/provisioning/datasources."""

from __future__ import annotations

from grafana_foundation_sdk.models.dashboard import DataSourceRef

PROMETHEUS_UID = "otel-dynamo-prometheus"
LOKI_UID = "otel-dynamo-loki"
TEMPO_UID = "otel-dynamo-tempo"
JAEGER_UID = "otel-dynamo-jaeger"

UIDS = {"prometheus": PROMETHEUS_UID, "loki": LOKI_UID, "tempo": TEMPO_UID, "jaeger": JAEGER_UID}


def ref(kind: str) -> DataSourceRef:
    """Reference to the provisioned datasource of one kind (prometheus, loki, tempo, jaeger)."""
    return DataSourceRef(type_val=kind, uid=UIDS[kind])
