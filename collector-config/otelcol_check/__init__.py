"""Static checks for otel_dynamo's OpenTelemetry Collector configs.

No Collector binary is needed: a JSON-Schema check (schema/otelcol-config.schema.json),
cross-references against an allow-list of the pinned otelcol-contrib version's components
(otelcol-contrib-<version>.components.yaml), environment references, secrets, and the
telemetry names the processors use. ``python collector-config/check_configs.py`` runs them all.
"""
