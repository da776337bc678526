"""Configuration, read once at the door: ``OTEL_DYNAMO_*`` and the standard ``OTEL_*``
variables, and the keyword options of the public API, parsed into immutable settings.

The lowest layer: it imports nothing else of otel_dynamo but ``names``.
"""
