"""OpenTelemetry's suppress-instrumentation key: code inside
``opentelemetry.instrumentation.utils.suppress_instrumentation()`` is not traced.

Instrumentations check it so that an exporter's own HTTP calls, or any block a user marks,
record nothing. Here a frame compiled, a graph compiled or a compiled graph run while it is
set records nothing: the compile or run itself goes on exactly as untraced.
"""

from __future__ import annotations

from opentelemetry.instrumentation.utils import is_instrumentation_enabled

__all__ = ["suppressed"]


def suppressed() -> bool:
    """Whether the current context asks instrumentations to stay quiet."""
    try:
        return not is_instrumentation_enabled()
    except Exception:  # never the reason a compile fails
        return False
