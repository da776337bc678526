""" "Still compiling": a log event for frame compiles that run longer than a threshold.

``watch(key, describe)`` when a compile starts, ``unwatch(key)`` when it ends. One
daemon thread (started on the first watch) emits ``torch.compile.still_compiling`` with
the fields ``describe()`` returns plus the elapsed seconds once a compile has run for
``threshold_s``, then again each time the elapsed time doubles (60 s, 120 s, 240 s...).
The thread never keeps the process alive; in a forked child the watchdog starts empty
(the child is not running the parent's compiles) with fresh locks.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
import weakref
from collections.abc import Callable, Hashable, Mapping
from typing import Protocol

from opentelemetry import trace
from opentelemetry.util.types import AttributeValue

from otel_dynamo import names
from otel_dynamo._config.settings import DEFAULT_SLOW_COMPILE_SECONDS, Settings
from otel_dynamo._lifecycle import forks

GROWTH_FACTOR = 2.0
"""Each repeat comes when the elapsed time has grown by this factor."""

ELAPSED_DECIMALS = 3
IDLE_WAIT_S = 30.0
"""Longest sleep of the thread, so an abandoned watchdog can be garbage collected."""

_log = logging.getLogger(__name__)
Describe = Callable[[], Mapping[str, AttributeValue]]


class Emitter(Protocol):
    def emit(
        self, event: str, fields: Mapping[str, AttributeValue] | None = ..., /, *, level: str = ...
    ) -> None: ...


@dataclasses.dataclass
class _Watched:
    describe: Describe
    started: float
    next_due: float
    span: trace.Span | None


class Watchdog:
    """Emits still-compiling events for watched compiles that run long."""

    def __init__(
        self,
        events: Emitter,
        *,
        threshold_s: float = DEFAULT_SLOW_COMPILE_SECONDS,
        growth: float = GROWTH_FACTOR,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._events = events
        self._threshold_s = threshold_s
        self._growth = growth
        self._clock = clock
        self._reset()
        forks.reset_in_child(self._after_fork_in_child)

    @classmethod
    def from_settings(cls, settings: Settings, events: Emitter) -> Watchdog:
        return cls(events, threshold_s=settings.slow_compile_seconds)

    def _reset(self) -> None:
        self._cond = threading.Condition()
        self._watched: dict[Hashable, _Watched] = {}
        self._thread: threading.Thread | None = None

    def watch(self, key: Hashable, describe: Describe, *, span: trace.Span | None = None) -> None:
        """Start timing ``key``; ``span`` (optional) gives the events its trace context."""
        now = self._clock()
        with self._cond:
            self._watched[key] = _Watched(describe, now, now + self._threshold_s, span)
            self._ensure_thread()
            self._cond.notify()

    def unwatch(self, key: Hashable) -> None:
        with self._cond:
            self._watched.pop(key, None)

    def watched(self) -> int:
        with self._cond:
            return len(self._watched)

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(
                target=_run, args=(weakref.ref(self),), name="otel_dynamo-watchdog", daemon=True
            )
            self._thread.start()

    def _due(self) -> tuple[list[tuple[_Watched, float]], float]:
        """Entries due now (with their elapsed seconds), and seconds until the next one."""
        now = self._clock()
        due = []
        for entry in self._watched.values():
            if entry.next_due <= now:
                elapsed = now - entry.started
                entry.next_due = entry.started + elapsed * self._growth
                due.append((entry, elapsed))
        upcoming = [entry.next_due - now for entry in self._watched.values()]
        return due, min([*upcoming, IDLE_WAIT_S])

    def _step(self) -> None:
        with self._cond:
            due, wait_s = self._due()
            if not due:
                self._cond.wait(wait_s)
                return
        for entry, elapsed in due:
            self._emit(entry, elapsed)

    def _emit(self, entry: _Watched, elapsed: float) -> None:
        try:
            fields = dict(entry.describe())
            fields[names.ATTR_COMPILE_ELAPSED] = round(elapsed, ELAPSED_DECIMALS)
            if entry.span is None:
                self._events.emit(names.LOG_STILL_COMPILING, fields, level="warning")
                return
            with trace.use_span(entry.span, end_on_exit=False):
                self._events.emit(names.LOG_STILL_COMPILING, fields, level="warning")
        except Exception as error:  # the watchdog must never die or raise
            _log.debug("otel_dynamo: still-compiling event failed: %s", error)

    def _after_fork_in_child(self) -> None:
        self._reset()


def _run(ref: weakref.ref[Watchdog]) -> None:
    """The watchdog thread; ends when its Watchdog is garbage collected."""
    while True:
        watchdog = ref()
        if watchdog is None:
            return
        watchdog._step()
        del watchdog
