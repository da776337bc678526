"""SIGTERM and SIGHUP end a process without running ``atexit``: flush first, then let the
signal do what it would have done.

torchrun sends SIGTERM to every other worker when one rank fails; a scheduler sends it
at a job's time limit. Without a handler, whatever the batch processors and the metric
reader still hold is lost, and a compile in progress leaves no frame span. The handler
otel_dynamo installs (main thread only, where Python runs handlers) first tells the
recorders to end their open spans as interrupted (when the signal will end the process),
then exports within
``OTEL_DYNAMO_SHUTDOWN_TIMEOUT``, then chains: to the handler that was there before (the
process goes on if that one says so), or, where the action was the default, restores it
and sends the signal again, so the process ends by that signal with the same status.
A signal the process ignored stays ignored.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import threading
import weakref
from collections.abc import Callable
from types import FrameType
from typing import Any

FLUSHED_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)
Interrupted = Callable[[str], None]
"""Told the signal's name before the flush: ends what is open (frame spans)."""
Flush = Callable[[bool], None]
"""Exports within the shutdown budget; True: the process is about to end (shut down)."""

_log = logging.getLogger(__name__)
_lock = threading.RLock()  # the handler runs on the main thread, maybe inside install()
_previous: dict[int, Any] = {}
_interrupted: list[Interrupted] = []
_flushes: list[weakref.WeakMethod[Flush]] = []
"""Weak: providers that are gone (shut down, dropped by a test) are not kept alive."""


def on_interrupt(callback: Interrupted) -> None:
    """Call ``callback(signal name)`` when a flushed signal arrives, before the flush."""
    with _lock:
        _interrupted.append(callback)


def install(flush: Flush) -> None:
    """Flush with ``flush`` (a bound method) when SIGTERM or SIGHUP arrives (idempotent per
    signal; only from the main thread, the one Python lets set handlers)."""
    with _lock:
        _flushes.append(weakref.WeakMethod(flush))
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in FLUSHED_SIGNALS:
            if signum in _previous:
                continue
            previous = signal.getsignal(signum)
            if previous is signal.SIG_IGN:
                continue  # the process ignores it: so do we
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signum, _handle)
                _previous[signum] = previous


def _handle(signum: int, frame: FrameType | None) -> None:
    previous = _previous.get(signum, signal.SIG_DFL)
    ending = not callable(previous)
    name = signal.Signals(signum).name
    with _lock:
        interrupted = list(_interrupted)
        flushes = [flush for ref in _flushes if (flush := ref()) is not None]
    if ending:  # a handler we chain to may let the compile go on: its spans stay open
        for callback in interrupted:
            _safely(functools.partial(callback, name))
    for flush in flushes:
        _safely(functools.partial(flush, ending))
    if not ending:
        previous(signum, frame)
        return
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)  # ends the process by this signal, as without us


def _safely(call: Callable[[], None]) -> None:
    try:
        call()
    except Exception:  # the signal must still do what it would have done
        _log.debug("otel_dynamo: flushing on a signal failed", exc_info=True)


def reset() -> None:
    """Put every handler back and forget the callbacks (tests, uninstrument)."""
    with _lock:
        for signum, previous in _previous.items():
            if signal.getsignal(signum) is _handle and previous is not None:
                with contextlib.suppress(ValueError, OSError):
                    signal.signal(signum, previous)
        _previous.clear()
        _interrupted.clear()
        _flushes.clear()
