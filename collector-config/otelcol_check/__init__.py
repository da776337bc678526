"""Checks of otel_dynamo's OpenTelemetry Collector configs that no Collector makes.

The Collector itself judges what it can (every key, component type, pipeline, signal and
OTTL statement: ``validate``, and starting it, in tests/stack/test_stack_otelcol.py, with
the Collector built from collector-config/build). What stays here it cannot know: that
no secret is written in a file, that every ``${env:...}`` reference has one default and
is documented, and that every name a processor matches on is one otel_dynamo emits (the
same names the dashboards and alert rules read). ``python collector-config/check_configs.py``
runs both: these, and the built Collector's ``validate`` where it was built.
"""
