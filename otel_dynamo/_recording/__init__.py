"""Recording: typed events from the torch-facing sources become spans, structured log
events and metric updates. Knows OpenTelemetry, not torch internals.
"""
