"""What torch says about a recompile or a graph break, read, and what to do about it.

Below recording and the report alike (it imports only ``otel_dynamo.names``, never torch
or OpenTelemetry): the recorder writes a fix's summary on the events it records, the
report derives the whole fix record from the same facts read back, so both say the same.
"""
