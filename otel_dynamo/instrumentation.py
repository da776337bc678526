"""``TorchCompileInstrumentor``: otel_dynamo as an OpenTelemetry instrumentor.

Registered under the ``opentelemetry_instrumentor`` entry point, so
``opentelemetry-instrument python train.py`` traces every torch.compile; in code::

    from otel_dynamo.instrumentation import TorchCompileInstrumentor
    TorchCompileInstrumentor().instrument(tracer_provider=provider)
    ...
    TorchCompileInstrumentor().uninstrument()

Importing this module imports neither torch nor the OpenTelemetry SDK.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]  # the module opts out of typing

__all__ = ["TORCH_REQUIREMENT", "TorchCompileInstrumentor"]

TORCH_REQUIREMENT = "torch >= 2.8, < 2.16"
"""The torch versions this instrumentation supports (pyproject.toml states the same)."""


class TorchCompileInstrumentor(BaseInstrumentor):  # type: ignore[misc]  # BaseInstrumentor is untyped (Any)
    """Traces every ``torch.compile`` / ``nn.Module.compile`` in the process.

    ``instrument()`` accepts ``tracer_provider``, ``meter_provider``, ``logger_provider``
    and the options of ``otel_dynamo.traced`` (``run_spans``, ``capture``, ...).
    Per signal, telemetry without a provider goes to the global provider if the
    application set one up, else to otel_dynamo's own, configured from the environment.
    """

    def instrumentation_dependencies(self) -> Collection[str]:
        return (TORCH_REQUIREMENT,)

    def _instrument(self, **kwargs: Any) -> None:
        from otel_dynamo._enablement.instrument import instrument

        instrument(**kwargs)

    def _uninstrument(self, **kwargs: Any) -> None:
        from otel_dynamo._enablement.instrument import uninstrument

        uninstrument()
