"""What the OpenTelemetry SDK's entry-point groups hold in this environment.

The SDK finds exporters, samplers, id generators and resource detectors by name through
entry points (``opentelemetry_traces_exporter``, ``opentelemetry_traces_sampler``, ...):
a package installed beside it adds names without any code here knowing them. Read with
``importlib.metadata`` only, so checking a name imports nothing.
"""

from __future__ import annotations

import functools
from importlib import metadata

__all__ = ["exporter_group", "installed", "names_in"]


def exporter_group(signal: str) -> str:
    """The SDK's entry-point group of ``signal``'s exporters."""
    return f"opentelemetry_{signal}_exporter"


@functools.cache
def names_in(group: str) -> frozenset[str]:
    """Every name registered in entry-point ``group``."""
    try:
        return frozenset(entry.name for entry in metadata.entry_points(group=group))
    except Exception:  # a broken distribution's metadata must not stop the job
        return frozenset()


def installed(distribution: str) -> bool:
    """Whether the distribution is installed (its metadata is readable)."""
    try:
        metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return False
    return True
