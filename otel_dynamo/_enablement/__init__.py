"""Enablement: what turns tracing on. ``instrument()``, interpreter start-up through
``otel_dynamo.pth`` (``OTEL_DYNAMO_ENABLED``), import hooks, and the traced backends
built from the public API's arguments.
"""
