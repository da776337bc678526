"""Steps that run before the flush: deferred work settles so that what it produces is
in what gets exported.

A step is told whether the flush is the last one (``final``): then it gives up on what
has not completed (and counts it as lost); otherwise it takes what completed and keeps
the rest pending. The steps run, in the order registered, before the flush at
interpreter exit (an ``atexit`` hook registered with the first step, so after the
providers that existed by then, which therefore shut down after it), before our
providers' shutdown or flush (the end of a ``multiprocessing`` child, SIGTERM and SIGHUP:
``_providers.process_providers``), and whenever someone calls :func:`settle`.
Registration is weak: a step's owner that is gone is skipped.
"""

from __future__ import annotations

import atexit
import logging
import threading
import weakref
from collections.abc import Callable

Step = Callable[[bool], None]
"""Settles deferred work; True: the flush that follows is the last one."""

_log = logging.getLogger(__name__)
_lock = threading.Lock()
_steps: list[weakref.WeakMethod[Step]] = []
_at_exit_registered = False


def before_flush(step: Step) -> None:
    """Run the bound method ``step`` before each flush from now on."""
    global _at_exit_registered
    with _lock:
        _steps[:] = [ref for ref in _steps if ref() is not None]
        _steps.append(weakref.WeakMethod(step))
        if not _at_exit_registered:
            _at_exit_registered = True
            atexit.register(settle, final=True)


def settle(*, final: bool) -> None:
    """Run every step; one that fails is logged and skipped, never raised."""
    with _lock:
        steps = [ref() for ref in _steps]
    for step in steps:
        if step is None:
            continue
        try:
            step(final)
        except Exception:  # settling must never hurt the flush that follows, or the job
            _log.debug("otel_dynamo: a step before the flush failed", exc_info=True)
