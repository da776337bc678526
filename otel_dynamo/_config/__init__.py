"""Configuration, read once at the door: ``OTEL_DYNAMO_*`` and the standard ``OTEL_*``
variables, and the keyword options of the public API, parsed into immutable settings.

It imports nothing else of otel_dynamo: every other layer sits above it.
"""
