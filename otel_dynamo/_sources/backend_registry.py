"""Source: torch's backend registry, for the ``otel_`` twins (``otel_dynamo.backends``).

Torch lists every name of the ``torch_dynamo_backends`` entry-point group, loaded or not,
and hides only loaded backends tagged "debug" or "experimental". The twins are entry
points (``backend="otel_eager"`` works in a process that never imported otel_dynamo), so
torch would list all of them although it hides their originals. ``list_backends`` (public)
is therefore wrapped where torch's registry defines it and where ``torch._dynamo``
re-exports it: a twin is listed exactly when its original is, in the same call, whatever
tags this torch gives the original. ``otel_dynamo.pth`` installs the wrapper as the
registry module is imported (``_enablement/site_hook.py``); a traced twin installs it too,
for installs that skip the ``.pth``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Collection
from types import ModuleType
from typing import Any

from otel_dynamo._recording.pass_through import passes_through
from otel_dynamo._sources import patching
from otel_dynamo._sources.torch_version import torch_version

_log = logging.getLogger(__name__)

TWIN_PREFIX = "otel_"
TWINNED_BACKENDS = (
    "inductor",
    "eager",
    "aot_eager",
    "eager_noexcept",
    "eager_debug",
    "pre_dispatch_eager",
    "invoke_subgraph",
    "aot_eager_default_partitioner",
    "aot_eager_decomp_partition",
    "aot_eager_decomp_partition_crossref",
    "ts",
    "aot_ts",
    "relu_compile_error_TESTING_ONLY",
    "relu_runtime_error_TESTING_ONLY",
    "relu_accuracy_error_TESTING_ONLY",
    "non_leaf_compile_error_TESTING_ONLY",
)
"""Every backend of torch/_dynamo/backends/{debugging,inductor}.py selectable by name."""

REGISTRY_MODULE = "torch._dynamo.backends.registry"
RE_EXPORTING_MODULES = ("torch._dynamo",)
"""Where modules bind ``list_backends`` by name: ``torch._dynamo`` re-exports it
(``torch.compiler.list_backends`` calls ``torch._dynamo.list_backends`` at each call)."""
_LISTING = "list_backends"
_ORIGINAL_OF = {TWIN_PREFIX + name: name for name in TWINNED_BACKENDS}


def twin_hidden(name: str, listed: Collection[str]) -> bool:
    """Whether ``name`` is a twin whose original is not among ``listed``."""
    original = _ORIGINAL_OF.get(name)
    return original is not None and original not in listed


@passes_through
def _list_twins_as_originals(
    wrapped: Any, _instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """``list_backends`` with each twin listed exactly when its original is."""
    listed = wrapped(*args, **kwargs)
    try:
        shown = frozenset(listed)
        return [name for name in listed if not twin_hidden(name, shown)]
    except Exception:  # an answer we do not understand: torch's own, untouched
        _warn()
        return listed


def hide_twins(registry: ModuleType | None = None) -> None:
    """Wrap ``list_backends`` in torch's registry and where it was bound by name (once;
    never raises). ``registry`` is the module, if already imported (None: look it up)."""
    try:
        registry = registry or sys.modules.get(REGISTRY_MODULE)
        if registry is None:
            return
        original = getattr(registry, _LISTING)
        listing = patching.patch(registry, _LISTING, _list_twins_as_originals)
        if listing is not original:
            patching.rebind(original, listing, _LISTING, RE_EXPORTING_MODULES)
    except Exception:  # telemetry must never break an import of torch
        _warn()


def _warn() -> None:
    _log.warning(
        "otel_dynamo: could not hide the otel_ twins of hidden backends in torch %s's "
        "list_backends(); they still work by name, and list_backends() may list them",
        torch_version(),
        exc_info=True,
    )
