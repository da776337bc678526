"""OpenTelemetry's suppress-instrumentation key: code inside
``opentelemetry.instrumentation.utils.suppress_instrumentation()`` is not traced.

Instrumentations check it so that an exporter's own HTTP calls, or any block a user marks,
record nothing. Here a frame compiled, a graph compiled or a compiled graph run while it is
set records nothing: the compile or run itself goes on exactly as untraced.

The check reads the context keys themselves, as ``is_instrumentation_enabled`` does,
rather than importing ``opentelemetry.instrumentation.utils``: that module pulls in wrapt
and the propagators (which scan every installed distribution's entry points), about 30 ms
at the start of every traced job. The key object lives in the API's context module under a
private name; where a version lacks it, the plain string key older instrumentations set
is still honoured.
"""

from __future__ import annotations

from opentelemetry import context

from otel_dynamo._providers import sdk_private

__all__ = ["suppressed"]

_KEYS = sdk_private.suppress_instrumentation_keys()


def suppressed() -> bool:
    """Whether the current context asks instrumentations to stay quiet."""
    try:
        return any(context.get_value(key) for key in _KEYS)
    except Exception:  # never the reason a compile fails
        return False
