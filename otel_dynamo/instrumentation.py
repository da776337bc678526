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

import importlib.metadata
import re
from collections.abc import Collection
from typing import Any

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]  # the module opts out of typing

__all__ = ["TORCH_REQUIREMENT", "TorchCompileInstrumentor"]

_DISTRIBUTION = "otel-dynamo"
_NAME = re.compile(r"[A-Za-z0-9._-]+")


def _torch_requirement(requires: list[str] | None) -> str:
    """The torch requirement among a distribution's ``Requires-Dist`` lines (extras'
    left out); plain "torch" (any version) when there are none to read."""
    for line in requires or ():
        name = _NAME.match(line)
        if name is not None and name.group(0).lower() == "torch" and ";" not in line:
            return line.strip()
    return "torch"


def _installed_requires() -> list[str] | None:
    try:
        return importlib.metadata.requires(_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:  # run from a checkout, not installed
        return None


TORCH_REQUIREMENT = _torch_requirement(_installed_requires())
"""The torch versions this instrumentation supports, as the installed distribution's
metadata states them (from pyproject.toml, the one place the range is written):
"torch<2.16,>=2.8"."""


_BASE_INSTRUMENTOR_FLAGS = ("skip_dep_check", "raise_exception_on_conflict")
"""``BaseInstrumentor.instrument``'s own keywords (older releases pass them on)."""


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
        """Every argument checked (naming this method) before anything is patched; the
        dependency-check flags ``BaseInstrumentor.instrument`` takes are its own."""
        from otel_dynamo._config.options import INSTRUMENTOR, PROVIDER_NAMES
        from otel_dynamo._enablement.instrument import instrument_as

        for flag in _BASE_INSTRUMENTOR_FLAGS:
            kwargs.pop(flag, None)
        given = {name: kwargs.pop(name, None) for name in (*PROVIDER_NAMES, "settings")}
        instrument_as(INSTRUMENTOR, **given, options=kwargs)

    def _uninstrument(self, **kwargs: Any) -> None:
        from otel_dynamo._enablement.instrument import uninstrument

        uninstrument()
