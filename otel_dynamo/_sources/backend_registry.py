"""Source: torch's backend registry, for the ``otel_`` twins (``otel_dynamo.backends``).

Torch lists a backend not yet loaded from an entry point by name only, and one it loaded
with no tags, so ``list_backends()`` would show every twin although torch hides their
originals ("debug"). Once the first twin is built, the others are registered with
``register_backend`` (public) under their originals' tags, read with ``list_backends``
(public); from then on ``list_backends()`` hides the twins torch hides the originals of,
and ``backend="otel_…"`` finds the same twin object. The twin torch was loading gets its
tags at its first compile: where torch keeps tags on the backend (up to 2.14) the twin's
own ``_tags`` already says them; where it keeps them by name (``_BACKEND_TAGS``, 2.15)
that private table is set, and a torch with neither is left as it is.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from otel_dynamo._sources.torch_version import torch_version

_log = logging.getLogger(__name__)
HIDING_TAGS = ("debug", "experimental")
"""The tags ``list_backends()`` leaves out by default."""


def original_tags(name: str) -> tuple[str, ...]:
    """The tags among ``HIDING_TAGS`` torch gave backend ``name``, seen through the public
    ``list_backends(exclude_tags=...)``."""
    from torch._dynamo.backends.registry import list_backends

    return tuple(tag for tag in HIDING_TAGS if name not in list_backends(exclude_tags=(tag,)))


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
                register_backend(twin, name=name, tags=twin.fixed_tags or ())
            except AssertionError:  # torch's "duplicate name": loaded already
                continue
    except Exception:  # telemetry must never break a compile
        _warn("register")


def retag(name: str, tags: tuple[str, ...]) -> None:
    """Give twin ``name``, which torch registered with no tags, its original's; never raises."""
    try:
        from torch._dynamo.backends import registry

        by_name = getattr(registry, "_BACKEND_TAGS", None)
        if isinstance(by_name, dict) and name in by_name:
            by_name[name] = tags
    except Exception:
        _warn("retag")


def _warn(step: str) -> None:
    _log.warning(
        "otel_dynamo: could not %s the otel_ backends in torch %s's registry; they still "
        "work by name, and list_backends() may list them",
        step,
        torch_version(),
        exc_info=True,
    )
