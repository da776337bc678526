"""The process-wide torch taps, in one place: installed once, removed together.

Each tap replaces one torch function or method with a wrapper that forwards to the
original; ``torch._dynamo.reset()`` leaves them in place. A tap that does not fit the
torch it meets (a class moved, a signature changed) stays off: one warning names the
torch version and what is not recorded, and nothing is raised into the user's code.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from otel_dynamo._sources import cudagraphs, dynamo_exclusion
from otel_dynamo._sources.aot import AotTap
from otel_dynamo._sources.dynamo_stream import StreamTap
from otel_dynamo._sources.routing import current_code, current_recorder, current_settings
from otel_dynamo._sources.torch_version import torch_version
from otel_dynamo._sources.trace_stacks import StackTap

_log = logging.getLogger(__name__)
_lock = threading.Lock()
_stream = StreamTap(current_recorder, current_code, current_settings)
_aot = AotTap()
_stacks = StackTap()

_TAPS: tuple[tuple[str, Callable[[], None], str], ...] = (
    (
        "structured trace",
        _stream.install,
        "frame compiles, graph breaks, recompiles, guards and compile phases are not recorded",
    ),
    (
        "AOT Autograd",
        _aot.install,
        "AOT partition, forward/backward compile and backward run spans are not recorded",
    ),
    (
        "AOT post_compile",
        _aot.install_post_compile,
        "backward runs of graphs loaded from AOT Autograd's cache are not recorded",
    ),
    (
        "structured trace stacks",
        _stacks.install,
        "TORCH_TRACE's stacks may show frames of otel_dynamo's (everything is recorded)",
    ),
)
_switched_off: set[str] = set()


def install() -> None:
    """Install every tap that fits this torch (idempotent; never raises), with every
    otel_dynamo frame excluded from Dynamo first (``dynamo_exclusion``)."""
    dynamo_exclusion.exclude_loaded_modules()
    with _lock:
        for name, install_tap, consequence in _TAPS:
            if name in _switched_off:
                continue
            try:
                install_tap()
            except Exception as error:  # a torch we do not know: record less, never break
                _switched_off.add(name)
                _log.warning(
                    "otel_dynamo: the %s hook does not fit torch %s (%s: %s); %s",
                    name,
                    torch_version(),
                    type(error).__name__,
                    error,
                    consequence,
                )


def switched_off() -> frozenset[str]:
    """Names of the taps that did not fit this torch."""
    with _lock:
        return frozenset(_switched_off)


def uninstall() -> None:
    """Put back what each tap replaced."""
    with _lock:
        _stream.uninstall()
        _aot.uninstall()
        _stacks.uninstall()
        cudagraphs.uninstall()
