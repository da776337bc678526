"""OpenTelemetry setup: the tracer, meter and logger providers a recorder reports to, and
everything they export through (OTLP, OTLP/JSON Lines files, Prometheus), bounded and
never raising. "Export" in otel_dynamo means OpenTelemetry export, and lives here.
"""
