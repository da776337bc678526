"""Attribute keys the report reads that ``otel_dynamo.names`` does not declare yet.

Fault injection and accuracy checks are recorded by other parts of otel_dynamo (or by
other tools following the same format). Their keys belong in ``names.py``; until they
are there, this is the one place that spells them, so moving them is a one-line change.
"""

from __future__ import annotations

ATTR_FAULT_KIND = "torch.compile.fault.kind"
"""What kind of fault was injected (e.g. "compile_error")."""

ATTR_FAULT_TARGET = "torch.compile.fault.target"
"""What the injected fault was aimed at (a backend, a graph, an op...)."""

ATTR_ACCURACY_PASSED = "torch.compile.accuracy.passed"
"""Whether the compiled result matched eager within tolerance (bool)."""

ATTR_ACCURACY_MAX_ABS_ERROR = "torch.compile.accuracy.max_abs_error"
"""Largest absolute difference between compiled and eager outputs."""

ATTR_ACCURACY_MAX_REL_ERROR = "torch.compile.accuracy.max_rel_error"
"""Largest relative difference between compiled and eager outputs."""

# Resource attributes of the OpenTelemetry semantic conventions (not otel_dynamo's own).
RESOURCE_SERVICE_NAME = "service.name"
RESOURCE_SERVICE_INSTANCE = "service.instance.id"
RESOURCE_HOST_NAME = "host.name"
RESOURCE_PROCESS_PID = "process.pid"
