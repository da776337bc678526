"""torch.export traced from ``instrument_export()`` on: patched at once if imported, else
the moment it is; ``uninstrument_export()`` puts the originals back."""

from __future__ import annotations

import threading

from otel_dynamo._config.settings import Settings
from otel_dynamo._enablement import import_hooks
from otel_dynamo._providers.choice import ProviderLookup
from otel_dynamo._sources.torch_export import TORCH_EXPORT_MODULE, TorchExportInstrumentation

_lock = threading.RLock()
_current: TorchExportInstrumentation | None = None


def install(*, providers: ProviderLookup, settings: Settings) -> None:
    """Trace torch.export from now on (at once if imported, else when it is); replaces."""
    global _current
    with _lock:
        uninstall()
        _current = TorchExportInstrumentation(providers=providers, settings=settings)
        import_hooks.when_imported(TORCH_EXPORT_MODULE, _current.patch)


def uninstall() -> None:
    """Put torch.export's original function and methods back."""
    global _current
    with _lock:
        if _current is not None:
            import_hooks.cancel(TORCH_EXPORT_MODULE, _current.patch)
            _current.unpatch()
        _current = None


def is_installed() -> bool:
    return _current is not None
