"""A background thread that polls deferred work until none is left.

``Poller(step)`` calls ``step()`` every ``interval_s`` on a daemon thread for as long as
it returns True (work still pending); then the thread sleeps until ``kick()`` says new
work arrived. It never keeps the process alive, ends when its owner (the object whose
bound method ``step`` is) is garbage collected, and starts anew, idle, in a forked child.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable

from otel_dynamo._lifecycle import forks

IDLE_WAIT_S = 30.0
"""Longest sleep while idle, so an abandoned poller's thread notices its owner is gone."""

_log = logging.getLogger(__name__)


class Poller:
    """Calls a bound ``step`` every ``interval_s`` while it reports pending work."""

    def __init__(self, step: Callable[[], bool], *, name: str, interval_s: float) -> None:
        self._step = weakref.WeakMethod(step)
        self._name = name
        self._interval_s = interval_s
        self._reset()
        forks.reset_in_child(self._reset)

    def _reset(self) -> None:
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def kick(self) -> None:
        """New work is pending: poll it (starting the thread on the first kick)."""
        self._wake.set()
        if self._thread is None:
            with self._start_lock:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=_run,
                        args=(self._step, self._wake, self._interval_s),
                        name=self._name,
                        daemon=True,
                    )
                    self._thread.start()


def _run(
    step_ref: weakref.WeakMethod[Callable[[], bool]], wake: threading.Event, interval_s: float
) -> None:
    while True:
        wake.wait(IDLE_WAIT_S)
        wake.clear()
        while True:
            step = step_ref()
            if step is None:
                return
            try:
                pending = step()
            except Exception:  # the poller must never die or raise
                _log.debug("otel_dynamo: a poll step failed", exc_info=True)
                pending = False
            del step
            if not pending:
                break
            wake.wait(interval_s)
            wake.clear()
