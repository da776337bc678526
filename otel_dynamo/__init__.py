"""otel_dynamo: OpenTelemetry traces, logs and metrics for torch.compile.

Importing this package imports neither torch nor the OpenTelemetry SDK; they load
when a traced backend is first created.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from otel_dynamo.version import __version__

if TYPE_CHECKING:
    from collections.abc import Callable

    from opentelemetry.trace import TracerProvider

__all__ = ["__version__", "traced"]


def traced(
    backend: str | Callable[..., Any] = "inductor",
    *,
    tracer_provider: TracerProvider | None = None,
    **options: Any,
) -> Callable[..., Any]:
    """A Dynamo backend that traces ``backend`` (a registered name or a compiler callable).

    Options override the OTEL_DYNAMO_* environment for this backend: ``run_spans``
    ("off", "all", "auto", "first:N"), ``capture``, ``max_attribute_length``,
    ``max_list_length``, ``top_ops``. An unknown backend name raises torch's
    ``InvalidBackend`` here, at wrap time.
    """
    from otel_dynamo import _runtime

    return _runtime.traced_backend(backend, tracer_provider=tracer_provider, options=options)
