"""What ``otel_dynamo.pth`` runs at every interpreter start: cheap, and torch is never
imported here.

Always: once torch's backend registry is imported (if it ever is), ``list_backends()``
lists each ``otel_`` twin exactly when it lists the original
(``_sources/backend_registry.py``), so the twins of torch's debug backends stay out of it
as those do, before any twin is loaded. When OTEL_DYNAMO_ENABLED is set to anything but a
false value, tracing starts (``startup.start``, which parses the variable for real).
"""

from __future__ import annotations

import os
import sys

from otel_dynamo._enablement import import_hooks

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (see import_hooks)
    from types import ModuleType

ENV_ENABLED = "OTEL_DYNAMO_ENABLED"
OFF_VALUES = ("", "0", "false", "no", "off")
"""Values that leave tracing off without loading the settings parser."""
REGISTRY_MODULE = "torch._dynamo.backends.registry"


def run() -> None:
    """Called by the ``.pth`` line; never raises (``site`` would print a traceback)."""
    try:
        import_hooks.when_imported(REGISTRY_MODULE, hide_twins)
        if os.environ.get(ENV_ENABLED, "").strip().lower() not in OFF_VALUES:
            from otel_dynamo._enablement import startup

            startup.start()
    except Exception as error:
        sys.stderr.write(f"otel_dynamo: start-up hook failed: {error!r}\n")


def hide_twins(registry: ModuleType) -> None:
    from otel_dynamo._sources import backend_registry

    backend_registry.hide_twins(registry)
