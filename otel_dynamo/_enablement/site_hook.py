"""What ``otel_dynamo.pth`` runs at interpreter start when OTEL_DYNAMO_ENABLED is set to
anything but a false value (with it unset or false, the line imports nothing:
``startup.pth_line``). torch is never imported here.

Tracing starts (``startup.start``, which parses the variable for real), and once torch's
backend registry is imported, ``list_backends()`` lists each ``otel_`` twin exactly when
it lists the original (``_sources/backend_registry.py``), so the twins of torch's debug
backends stay out of it as those do, before any twin is loaded.
"""

from __future__ import annotations

import sys

from otel_dynamo._enablement import import_hooks

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (see import_hooks)
    from types import ModuleType

REGISTRY_MODULE = "torch._dynamo.backends.registry"


def run() -> None:
    """Called by the ``.pth`` line; never raises (``site`` would print a traceback)."""
    try:
        import_hooks.when_imported(REGISTRY_MODULE, hide_twins)
        from otel_dynamo._enablement import startup

        startup.start()
    except Exception as error:
        sys.stderr.write(f"otel_dynamo: start-up hook failed: {error!r}\n")


def hide_twins(registry: ModuleType) -> None:
    from otel_dynamo._sources import backend_registry

    backend_registry.hide_twins(registry)
