"""Traced twins of torch's backends, registered as ``otel_<name>`` through the
``torch_dynamo_backends`` entry-point group: ``torch.compile(fn, backend="otel_eager")``
works without importing otel_dynamo first.

Each twin is ``otel_dynamo.traced(<name>)``, created on first lookup, configured by the
OTEL_DYNAMO_* environment and reporting to the global tracer provider.
"""

from __future__ import annotations

import functools
from typing import Any

PREFIX = "otel_"

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

__all__ = [PREFIX + name for name in TWINNED_BACKENDS]

_twins: dict[str, Any] = {}
_siblings_registered = False


def twin(name: str) -> Any:
    """The traced twin of backend ``name`` (one per process). The first one built also
    registers the others with torch, each tagged as its original (list_backends() then
    hides the twins of torch's debug backends, as it hides those)."""
    global _siblings_registered
    made = _twins.get(name)
    if made is None:
        made = _twins[name] = _make(name)
        if not _siblings_registered:
            _siblings_registered = True
            _register_all_but(name)
            # torch registers this one itself once it is loaded, with no tags
            made.first_call = functools.partial(_retag, name, made.fixed_tags)
    return made


def _retag(name: str, tags: tuple[str, ...]) -> None:
    from otel_dynamo._sources import backend_registry

    backend_registry.retag(PREFIX + name, tags)


def _make(name: str) -> Any:
    from otel_dynamo._enablement import traced
    from otel_dynamo._sources import backend_registry

    made = traced.environment_backend(name)
    made.fixed_tags = backend_registry.original_tags(name)
    return made


def _register_all_but(loading: str) -> None:
    """Every twin but ``loading`` (torch registers that one itself, having loaded it)."""
    from otel_dynamo._sources import backend_registry

    backend_registry.register_twins(
        {
            PREFIX + other: functools.partial(twin, other)
            for other in TWINNED_BACKENDS
            if other != loading
        }
    )


def __getattr__(attribute: str) -> Any:
    name = attribute.removeprefix(PREFIX)
    if attribute.startswith(PREFIX) and name in TWINNED_BACKENDS:
        return twin(name)
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
