"""SIGTERM and SIGHUP, which end a process without running ``atexit``, flush first, then
do what they would have done (on unless ``OTEL_DYNAMO_FLUSH_ON_SIGNAL=false``).

torchrun sends SIGTERM to every other worker when one rank fails; a scheduler sends it
at a job's time limit. Without a handler, whatever the batch processors still hold is
lost (metrics are exported after each frame compile anyway), and a compile in progress
leaves no frame span. On such a signal the recorders first end their open spans as
interrupted (when the signal will end the process), then everything is exported within
``OTEL_DYNAMO_SHUTDOWN_TIMEOUT`` from a thread waited for at most that long, then the
signal chains: to the handler that was there before (the process goes on if that one says
so), or, where the action was the default, the default is restored and the signal sent
again, so the process ends by that signal with the same status. An ignored signal is left
alone, and so is one whose handler Python cannot see (``signal.getsignal`` gives None).

Two paths lead here, whichever comes first: the Python handler on the main thread, and a
watcher thread woken by the C-level handler (``termination_watch``) for a main thread stuck in
C code (a collective): that one flushes, waits ``MAIN_THREAD_GRACE_S`` for the main thread,
and if it never came, ends the process by the signal itself.

A signal that reaches the main thread's handler while that thread runs our own final flush
(:func:`held_during`: the at-exit flush, a worker's flush before ``os._exit``) is held
until that flush ends, then acted on as above. Flushing again from inside the handler
would wait on the flush in progress, which may need a lock the interrupted thread holds
(the shutdown thread it was starting waits on that thread's own start event): the wait
would run out the budget and the signal would end the process with nothing exported.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

from otel_dynamo._lifecycle import dispositions, termination_sentinel, termination_watch

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
MAIN_THREAD_GRACE_S = 1.0
"""After the watcher's flush, how long the main thread has to run its handler."""
_budget_s = BUDGET_MARGIN_S
_flushes: list[weakref.WeakMethod[Flush]] = []
"""Weak: providers that are gone (shut down, dropped by a test) are not kept alive."""
_flushing: dict[int, threading.Event] = {}
"""Per signal: a flush begun (set when done), until the main thread's handler takes it."""
_watcher: termination_watch.Watcher | None = None
_holding = 0
"""How deep the main thread is in :func:`held_during` blocks (set on the main thread only)."""
_held: list[int] = []
"""Signals that reached the main thread's handler inside such a block, in order."""


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
        if _previous and _watcher is None:
            _start_watcher()


def _ends_by_default(signum: int) -> bool:
    return _previous.get(signum, signal.SIG_DFL) is signal.SIG_DFL


def _start_watcher(*, with_sentinel: bool = True) -> None:
    """The watcher and, where one can run, the termination sentinel, which ends a process whose
    main thread holds the GIL (``termination_watch``, ``dispositions``)."""
    global _watcher
    watcher = termination_watch.Watcher(
        _woken,
        acknowledge=_acknowledge,
        sentinel_changed=_sentinel_changed,
        sentinel_signals=list(_previous) if with_sentinel else (),
    )
    if watcher.start():
        _watcher = watcher
    else:
        _log.debug("otel_dynamo: signal wakeup fd taken; flushing on the main thread only")


def _sentinel_changed(running: bool) -> None:
    """With a sentinel, our handlers for signals whose action was the default reset on
    delivery (its second signal then takes that action); without, they stay set."""
    for signum in list(_previous):
        if not _ends_by_default(signum) or signal.getsignal(signum) is not _handle:
            continue
        if running:
            dispositions.reset_on_delivery(signum)
        else:
            dispositions.keep_on_delivery(signum)


def _acknowledge(signum: int) -> float:
    """The sentinel relayed ``signum`` and Python runs: put our handler back (a duplicate
    signal during the flush is caught again) and grant the flush and exit their time; a
    handler of the job's own is the job's to run."""
    if signal.getsignal(signum) is not _handle or not _ends_by_default(signum):
        return termination_sentinel.NOT_OURS
    dispositions.rearm(signum)
    return _budget_s + MAIN_THREAD_GRACE_S + termination_watch.DEATH_WAIT_S


def _after_fork_in_child() -> None:
    global _watcher, _lock
    _lock = threading.RLock()  # another thread of the parent may have held it at the fork
    with _lock:  # the child starts from the forking thread; the watcher did not survive
        if _watcher is None:
            return
        _watcher.forget_in_child()
        _watcher = None
        _flushing.clear()
        for signum in dispositions.armed():  # the parent's sentinel is not the child's
            dispositions.keep_on_delivery(signum)
        with contextlib.suppress(Exception):
            _start_watcher(with_sentinel=False)  # none per forked worker: a pipe


@contextlib.contextmanager
def held_during() -> Iterator[None]:
    """On the main thread, a flushed signal whose handler would run inside this block (a
    flush of ours that exports everything) is acted on once the block has ended instead;
    on any other thread, nothing changes (handlers run on the main thread only)."""
    global _holding
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _holding += 1
    try:
        yield
    finally:
        _holding -= 1
        if not _holding:
            held = list(dict.fromkeys(_held))
            _held.clear()
            for signum in held:
                _handle(signum, None)


def _handle(signum: int, frame: FrameType | None) -> None:
    dispositions.rearm(signum)  # a duplicate signal during the flush is caught again
    if _holding:
        _held.append(signum)
        return
    previous = _previous.get(signum, signal.SIG_DFL)
    _flush_once(signum)
    with _lock:
        _flushing.pop(signum, None)
    if callable(previous):
        previous(signum, frame)
        return
    dispositions.forget(signum)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)  # ends the process by this signal, as without us


def _woken(signum: int) -> None:
    """On the watcher thread: flush for a signal the main thread may never get to."""
    if signum not in _previous or signal.getsignal(signum) is not _handle:
        return  # not ours, or replaced by the job since
    done = _flush_once(signum)
    if not _ends_by_default(signum):
        return  # the job's own handler decides, when the main thread runs it
    time.sleep(MAIN_THREAD_GRACE_S)
    with _lock:
        stuck = _flushing.get(signum) is done
    if stuck:  # the main thread never ran the handler: end the process as the default would
        dispositions.forget(signum)
        termination_watch.die_by(signum)


def _flush_once(signum: int) -> threading.Event:
    """Flush for ``signum`` unless a flush for it has begun (then wait for that one)."""
    with _lock:
        done = _flushing.get(signum)
        begun = done is not None
        if done is None:
            done = _flushing[signum] = threading.Event()
    if begun:
        done.wait(_budget_s)
        return done
    _flush_for(signum)
    done.set()
    return done


def _flush_for(signum: int) -> None:
    ending = _ends_by_default(signum)
    name = signal.Signals(signum).name
    with _lock:
        interrupted = list(_interrupted)
        flushes = [flush for ref in _flushes if (flush := ref()) is not None]
    calls: list[Callable[[], None]] = [functools.partial(flush, ending) for flush in flushes]
    if ending:  # a handler we chain to may let the compile go on: its spans stay open
        calls = [functools.partial(callback, name) for callback in interrupted] + calls
    _run_bounded(calls)


def _run_bounded(calls: list[Callable[[], None]]) -> None:
    """Run ``calls`` in a daemon thread and wait at most ``_budget_s``: the interrupted
    main thread may hold a lock they need (a span's, a processor's); waiting for ever
    would keep the signal from ever ending the process."""

    def run_all() -> None:
        for call in calls:
            _safely(call)

    worker = threading.Thread(target=run_all, name="otel_dynamo-termination", daemon=True)
    worker.start()
    worker.join(_budget_s)


def _safely(call: Callable[[], None]) -> None:
    try:
        call()
    except Exception:  # the signal must still do what it would have done
        _log.debug("otel_dynamo: flushing on a signal failed", exc_info=True)


def reset() -> None:
    """Put every handler and the wakeup fd back and forget the flushes (tests,
    uninstrument). ``on_interrupt`` callbacks stay: they are registered once, at import."""
    global _watcher
    with _lock:
        dispositions.forget()
        for signum, previous in _previous.items():
            if signal.getsignal(signum) is _handle and previous is not None:
                with contextlib.suppress(ValueError, OSError):
                    signal.signal(signum, previous)
        _previous.clear()
        _held.clear()
        _flushes.clear()
        _flushing.clear()
        if _watcher is not None:
            _watcher.stop()
            _watcher = None


os.register_at_fork(after_in_child=_after_fork_in_child)
