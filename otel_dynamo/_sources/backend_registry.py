"""Source: torch's backend registry, for the ``otel_`` twins (``otel_dynamo.backends``).

Torch lists a backend loaded from an entry point with no tags, and one not yet loaded by
name only, so ``list_backends()`` would show every twin although torch hides their
originals ("debug"). Once the first twin is built, the others are registered with
``register_backend`` (public), each keeping its original's tags: from then on
``list_backends()`` hides the twins torch hides the originals of, and ``backend="otel_…"``
finds the same twin object.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from otel_dynamo._sources.torch_version import torch_version

_log = logging.getLogger(__name__)


def original_tags(backend: Any) -> tuple[str, ...]:
    """The registry tags of a backend torch registered (``()`` when it has none)."""
    tags = getattr(backend, "_tags", ())
    return tuple(tags) if isinstance(tags, tuple | list) else ()


def register_twins(twins: Mapping[str, Callable[[], Any]]) -> None:
    """Register each not-yet-registered twin by name (``make()`` builds it; a twin whose
    original this torch lacks is left out); never raises."""
    try:
        from torch._dynamo.backends.registry import register_backend

        for name, make in twins.items():
            try:
                twin = make()
            except Exception:  # its original is not in this torch (invoke_subgraph on 2.8)
                continue
            try:
                register_backend(twin, name=name)
            except AssertionError:  # torch's "duplicate name": loaded already
                continue
    except Exception:  # telemetry must never break a compile
        _log.warning(
            "otel_dynamo: could not register the otel_ backends with torch %s's registry; "
            "they still work by name, and list_backends() may list them all",
            torch_version(),
            exc_info=True,
        )
