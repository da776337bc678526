"""Names the stack uses that otel_dynamo does not define: each is defined by a standard.

Everything else a dashboard, query or collector processor names must come from
``otel_dynamo/names.py`` (see dashgen.catalog). Keep these lists short and sourced.
"""

from __future__ import annotations

# OpenTelemetry semantic-convention resource attributes (set by the SDK or the Collector's
# resource_detection processor).
SEMCONV_RESOURCE = frozenset(
    {
        "service.name",
        "service.namespace",
        "service.instance.id",
        "service.version",
        "host.name",
        "os.type",
        "deployment.environment.name",
    }
)

# Labels Prometheus or the OTel->Prometheus translation add by themselves.
PROMETHEUS_LABELS = frozenset({"job", "instance", "le", "otel_scope_name"})

# Fields Loki's OTLP ingestion creates for every log record (labels or structured metadata).
LOKI_FIELDS = frozenset(
    {
        "service_name",
        "trace_id",
        "span_id",
        "severity_text",
        "detected_level",
        "scope_name",
    }
)

# TraceQL intrinsics (https://grafana.com/docs/tempo/latest/traceql/).
TRACEQL_INTRINSICS = frozenset(
    {
        "name",
        "status",
        "statusMessage",
        "duration",
        "kind",
        "rootName",
        "rootServiceName",
        "traceDuration",
    }
)
