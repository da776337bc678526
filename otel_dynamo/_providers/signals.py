"""With ``OTEL_DYNAMO_FLUSH_ON_SIGNAL=true``: SIGTERM and SIGHUP, which end a process
without running ``atexit``, flush first, then do what they would have done.

torchrun sends SIGTERM to every other worker when one rank fails; a scheduler sends it
at a job's time limit. Without a handler, whatever the batch processors still hold is
lost (metrics are exported after each frame compile anyway), and a compile in progress
leaves no frame span. The handler first tells the recorders to end their open spans as
interrupted (when the signal will end the process), then exports within
``OTEL_DYNAMO_SHUTDOWN_TIMEOUT`` from a thread it waits for at most that long, then
chains: to the handler that was there before (the process goes on if that one says so),
or, where the action was the default, restores it and sends the signal again, so the
process ends by that signal with the same status. An ignored signal is left alone, and
so is one whose handler Python cannot see (``signal.getsignal`` gives None).

Off by default because a Python handler runs only when the main thread is back in the
interpreter: a rank blocked in a collective (NCCL, gloo) would no longer die at SIGTERM,
only at the SIGKILL that follows. Doing this right by default needs a watcher thread
woken by ``signal.set_wakeup_fd`` (which asyncio also claims): not done yet.
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
BUDGET_MARGIN_S = 0.5
"""Added to the shutdown timeout: the flush's own bound, plus the span callbacks."""
_budget_s = BUDGET_MARGIN_S
_flushes: list[weakref.WeakMethod[Flush]] = []
"""Weak: providers that are gone (shut down, dropped by a test) are not kept alive."""


def on_interrupt(callback: Interrupted) -> None:
    """Call ``callback(signal name)`` when a flushed signal arrives, before the flush."""
    with _lock:
        _interrupted.append(callback)


def install(flush: Flush, *, budget_s: float) -> None:
    """Flush with ``flush`` (a bound method) when SIGTERM or SIGHUP arrives, waiting at most
    ``budget_s`` plus a margin (idempotent per signal; only from the main thread, the one
    Python lets set handlers; never over a handler set outside Python)."""
    global _budget_s
    with _lock:
        _budget_s = max(_budget_s, budget_s + BUDGET_MARGIN_S)
        _flushes.append(weakref.WeakMethod(flush))
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in FLUSHED_SIGNALS:
            if signum in _previous:
                continue
            previous = signal.getsignal(signum)
            if previous is signal.SIG_IGN or previous is None:
                continue  # ignored, or a handler set outside Python: left as it is
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
    calls: list[Callable[[], None]] = [functools.partial(flush, ending) for flush in flushes]
    if ending:  # a handler we chain to may let the compile go on: its spans stay open
        calls = [functools.partial(callback, name) for callback in interrupted] + calls
    _run_bounded(calls)
    if not ending:
        previous(signum, frame)
        return
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)  # ends the process by this signal, as without us


def _run_bounded(calls: list[Callable[[], None]]) -> None:
    """Run ``calls`` in a daemon thread and wait at most ``_budget_s``: the interrupted
    main thread may hold a lock they need (a span's, a processor's); waiting for ever
    would keep the signal from ever ending the process."""

    def run_all() -> None:
        for call in calls:
            _safely(call)

    worker = threading.Thread(target=run_all, name="otel_dynamo-signal", daemon=True)
    worker.start()
    worker.join(_budget_s)


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
