"""Traced backends configured from the environment (twins, and env-var enablement)."""

from __future__ import annotations

from typing import Any

from otel_dynamo import _runtime


def traced_for_environment(backend: Any) -> Any:
    """``backend`` traced to the global providers if configured, else to our own."""
    return _runtime.environment_backend(backend)
