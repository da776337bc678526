"""Builds traced backends from the public API's arguments (imports torch and the SDK)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opentelemetry.trace import TracerProvider

from otel_dynamo._backend import TracedBackend
from otel_dynamo._config import load_settings
from otel_dynamo._hub import RecorderSource
from otel_dynamo._options import apply_options


def traced_backend(
    backend: str | Callable[..., Any],
    *,
    tracer_provider: TracerProvider | None,
    options: dict[str, Any],
) -> TracedBackend:
    settings = apply_options(load_settings(), options)
    source = RecorderSource(tracer_provider=tracer_provider, settings=settings)
    return TracedBackend(backend, recorder_factory=source)
