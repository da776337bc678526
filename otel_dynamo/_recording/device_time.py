"""Device time of recorded runs, resolved later and without a sync.

A run span measures the host: on CUDA a compiled call returns once its kernels are
queued, so the span times the launch. For a recorded run of a graph on a device, the
recorder asks a :class:`DeviceTimer` to put one event on the device's current stream
just before the call and one just after (:class:`DeviceClock`, torch's
``torch.cuda.Event(enable_timing=True)`` in ``_sources/device_clock.py``). The span is
not ended then: it waits, with its host end time kept, until a background poller
(``_lifecycle.poller``) finds with ``query()`` that the device passed the second event,
then gets ``torch.compile.run.device.duration`` and the device, and ends with its host
end time. Nothing here waits for the device.

Bounded: at most ``max_pending`` runs wait; a run timed beyond that ends at once without
device time (``pending_limit``). Before the flush at exit or on SIGTERM
(``_lifecycle.exit_steps``), runs whose events completed are resolved and the others end
without device time (``process_exit``). Each such run is counted by its reason. Events
are reused: a resolved run's pair goes back to a free list of its clock. A forked child
forgets what its parent had pending (the parent's spans, the parent's device context).
"""

from __future__ import annotations

import collections
import dataclasses
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from opentelemetry.trace import Span

from otel_dynamo import names
from otel_dynamo._lifecycle import exit_steps, forks
from otel_dynamo._lifecycle.poller import Poller
from otel_dynamo._recording.boundary import end_span, report_internal_error
from otel_dynamo._recording.records import RunIdentity

DEFAULT_MAX_PENDING = 1024
"""Runs whose device time may wait for the device at once."""
POLL_INTERVAL_S = 0.01
"""How often the poller queries pending events while any are pending."""
MAX_FREE_EVENTS = 2 * DEFAULT_MAX_PENDING
"""Free events kept per clock for reuse."""


class DeviceEvent(Protocol):
    """What the timer uses of ``torch.cuda.Event``."""

    def query(self) -> bool: ...

    def elapsed_time(self, end_event: Any) -> float: ...  # milliseconds


class DeviceClock(Protocol):
    """Events of one device, recorded on its current stream."""

    device: str

    def new_event(self) -> DeviceEvent: ...

    def record(self, event: DeviceEvent) -> None: ...

    def capturing(self) -> bool: ...


DeviceTimeListener = Callable[[RunIdentity, str, float], None]
"""Told each resolved run's identity, device and device seconds (the histogram)."""
DropListener = Callable[[str], None]
"""Told the reason of each run that gets no device time (the drop counter)."""


@dataclasses.dataclass(slots=True)
class Timing:
    """One run being timed: its clock and the event recorded before the call."""

    clock: DeviceClock
    start: DeviceEvent


@dataclasses.dataclass(slots=True)
class _Pending:
    clock: DeviceClock
    start: DeviceEvent
    end: DeviceEvent
    span: Span
    host_end_ns: int
    run: RunIdentity


class DeviceTimer:
    """Times recorded runs on their device and ends their spans when the time is known."""

    def __init__(
        self,
        *,
        on_time: DeviceTimeListener,
        on_drop: DropListener,
        max_pending: int = DEFAULT_MAX_PENDING,
        poll_interval_s: float = POLL_INTERVAL_S,
    ) -> None:
        self._on_time = on_time
        self._on_drop = on_drop
        self._max_pending = max_pending
        self._poller = Poller(self.poll, name="otel_dynamo-device-time", interval_s=poll_interval_s)
        self._reset()
        forks.reset_in_child(self._reset)
        exit_steps.before_flush(self.settle)

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._pending: collections.deque[_Pending] = collections.deque()
        self._free: dict[int, list[DeviceEvent]] = {}

    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def start(self, clock: DeviceClock, span: Span) -> Timing | None:
        """Record the event before a run; None (and the span told why) when this run
        cannot be timed. Never raises."""
        try:
            if clock.capturing():
                self._dropped(span, names.DROP_STREAM_CAPTURING)
                return None
            if self.pending() >= self._max_pending:
                self._dropped(span, names.DROP_PENDING_LIMIT)
                return None
            event = self._event(clock)
            clock.record(event)
            return Timing(clock, event)
        except Exception:
            report_internal_error("could not start a device timing")
            self._dropped(span, names.DROP_DEVICE_ERROR)
            return None

    def finish(self, timing: Timing, span: Span, run: RunIdentity) -> None:
        """Record the event after the run and leave ``span`` to be ended when the device
        reaches it (its end time is now, the host's). Never raises."""
        host_end_ns = time.time_ns()
        try:
            end = self._event(timing.clock)
            timing.clock.record(end)
        except Exception:
            report_internal_error("could not finish a device timing")
            self._dropped(span, names.DROP_DEVICE_ERROR)
            end_span(span, host_end_ns)
            return
        with self._lock:
            self._pending.append(_Pending(timing.clock, timing.start, end, span, host_end_ns, run))
        self._poller.kick()

    def poll(self) -> bool:
        """Resolve the runs the device has finished; True while some are still pending."""
        return self._resolve(final=False)

    def settle(self, final: bool) -> None:
        """Before a flush: resolve what finished; on the last flush drop the rest."""
        self._resolve(final=final)

    def _resolve(self, *, final: bool) -> bool:
        with self._lock:
            pending = list(self._pending)
        done: list[tuple[_Pending, float | None]] = []
        for item in pending:
            try:
                if not item.end.query():
                    continue
                seconds: float | None = item.start.elapsed_time(item.end) / 1e3
            except Exception:
                report_internal_error("could not read a device timing")
                seconds = None
            done.append((item, seconds))
        finished = {id(item) for item, _ in done}
        with self._lock:
            left = [item for item in self._pending if id(item) not in finished]
            given_up = left if final else []
            self._pending = collections.deque([] if final else left)
            for item, _ in done:
                self._release(item)
        for item, seconds in done:
            self._end(item, seconds)
        for item in given_up:
            self._dropped(item.span, names.DROP_PROCESS_EXIT)
            end_span(item.span, item.host_end_ns)
        return bool(self._pending)

    def _end(self, item: _Pending, seconds: float | None) -> None:
        if seconds is None:
            self._dropped(item.span, names.DROP_DEVICE_ERROR)
        else:
            item.span.set_attributes(
                {
                    names.ATTR_RUN_DEVICE: item.clock.device,
                    names.ATTR_RUN_DEVICE_DURATION: seconds,
                }
            )
            self._on_time(item.run, item.clock.device, seconds)
        end_span(item.span, item.host_end_ns)

    def _dropped(self, span: Span, reason: str) -> None:
        span.set_attribute(names.ATTR_RUN_DEVICE_DROP_REASON, reason)
        self._on_drop(reason)

    def _event(self, clock: DeviceClock) -> DeviceEvent:
        with self._lock:
            free = self._free.get(id(clock))
            if free:
                return free.pop()
        return clock.new_event()

    def _release(self, item: _Pending) -> None:  # under the lock
        free = self._free.setdefault(id(item.clock), [])
        if len(free) < MAX_FREE_EVENTS:
            free.extend((item.start, item.end))
