"""Traced backends configured from the environment (twins, and env-var enablement)."""

from __future__ import annotations

from typing import Any

from otel_dynamo import _runtime


def traced_for_environment(backend: Any) -> Any:
    """``traced(backend)`` reporting to the global providers, as the environment says."""
    return _runtime.traced_backend(backend, tracer_provider=None, options={})
