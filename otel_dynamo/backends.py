"""Traced twins of torch's backends, registered as ``otel_<name>`` through the
``torch_dynamo_backends`` entry-point group: ``torch.compile(fn, backend="otel_eager")``
works without importing otel_dynamo first.

Each twin is ``otel_dynamo.traced(<name>)``, created on first lookup, configured by the
OTEL_DYNAMO_* environment and reporting to the global tracer provider.
"""

from __future__ import annotations

from typing import Any

from otel_dynamo._sources.backend_registry import TWIN_PREFIX, TWINNED_BACKENDS, hide_twins

PREFIX = TWIN_PREFIX
__all__ = [PREFIX + name for name in TWINNED_BACKENDS]

_twins: dict[str, Any] = {}


def twin(name: str) -> Any:
    """The traced twin of backend ``name`` (one per process). Building one also makes
    ``list_backends()`` list each twin exactly when it lists the original, should
    ``otel_dynamo.pth`` not have done so (an install that skips it)."""
    made = _twins.get(name)
    if made is None:
        from otel_dynamo._enablement import traced

        made = _twins[name] = traced.environment_backend(name)
        hide_twins()
    return made


def __getattr__(attribute: str) -> Any:
    name = attribute.removeprefix(PREFIX)
    if attribute.startswith(PREFIX) and name in TWINNED_BACKENDS:
        return twin(name)
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
