"""Run a callback right after a module is imported, without importing it ourselves.

Env-var enablement must not import torch at interpreter start: ``when_imported``
calls back at once if the module is already loaded, otherwise a meta-path finder
wraps the module's loader so the callback runs when its import completes.

``otel_dynamo.pth`` imports this at every interpreter start, so it imports nothing that
``site`` has not loaded by then (logging, importlib.abc, typing and threading would add
several ms to every start): ``_thread`` for the lock and the per-thread flag, and the
finder and loader follow their protocols without the ABCs.
"""

from __future__ import annotations

import _thread
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time
    import importlib.machinery
    from collections.abc import Callable, Sequence
    from types import ModuleType
    from typing import Any

    Callback = Callable[[ModuleType], None]

_lock = _thread.allocate_lock()
_pending: dict[str, list[Callback]] = {}


def when_imported(name: str, callback: Callback) -> None:
    """``callback(module)`` now if ``name`` is loaded, else right after it loads (once,
    however often it is asked for)."""
    with _lock:
        module = sys.modules.get(name)
        if module is None:
            callbacks = _pending.setdefault(name, [])
            if callback not in callbacks:  # a .pth processed twice asks twice
                callbacks.append(callback)
            _ensure_finder()
            return
    _call(callback, module)


def cancel(name: str, callback: Callback) -> None:
    with _lock:
        callbacks = _pending.get(name, [])
        if callback in callbacks:
            callbacks.remove(callback)
        if not callbacks:
            _pending.pop(name, None)
        if not _pending:
            _remove_finder()


def _call(callback: Callback, module: ModuleType) -> None:
    try:
        callback(module)
    except Exception:
        import logging

        logging.getLogger(__name__).warning(
            "otel_dynamo: hook after importing %s failed", module.__name__, exc_info=True
        )


def _ensure_finder() -> None:
    if not any(isinstance(finder, _PostImportFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _PostImportFinder())


def _fire(module: ModuleType) -> None:
    with _lock:
        callbacks = _pending.pop(module.__name__, [])
        if not _pending:
            _remove_finder()
    for callback in callbacks:
        _call(callback, module)


def _remove_finder() -> None:
    """Nothing left to watch: no finder of ours in ``sys.meta_path``, so no import pays
    for one, and no frame of ours runs at an import inside a frame Dynamo evaluates."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _PostImportFinder)]


class _PostImportFinder:
    """Finds watched modules through the other finders and wraps their loaders."""

    def __init__(self) -> None:
        self._busy = _thread._local()

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _pending or getattr(self._busy, "active", False):
            return None
        self._busy.active = True
        try:
            spec = _find_elsewhere(self, fullname, path, target)
        finally:
            self._busy.active = False
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _NotifyingLoader(spec.loader)  # type: ignore[assignment]  # Loader by protocol
        return spec


def _find_elsewhere(
    skip: Any, fullname: str, path: Sequence[str] | None, target: ModuleType | None
) -> importlib.machinery.ModuleSpec | None:
    for finder in sys.meta_path:
        if finder is skip or not hasattr(finder, "find_spec"):
            continue
        spec = finder.find_spec(fullname, path, target)
        if spec is not None:
            return spec
    return None


class _NotifyingLoader:
    """Delegates to the real loader, then fires the module's callbacks."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        module: ModuleType | None = self._loader.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The module keeps its real loader; this one only runs the callbacks.
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        _fire(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)
