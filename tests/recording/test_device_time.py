"""Device time of recorded runs: events around the call, resolved later without waiting,
bounded, settled before the flush, forgotten in a forked child.

The clock here is a stand-in with the interface of ``torch.cuda.Event`` (``query``,
``elapsed_time``) that the test completes by hand: the device is the test.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

from _export_support import REPO_ROOT, child_environ
from _telemetry_support import Signals

from otel_dynamo import names
from otel_dynamo._config.run_span_policy import RunSpanPolicy
from otel_dynamo._config.settings import Settings
from otel_dynamo._lifecycle import exit_steps
from otel_dynamo._recording.device_time import DeviceTimer
from otel_dynamo._recording.metrics import CompileMetrics
from otel_dynamo._recording.recorder import Recorder
from otel_dynamo._recording.records import GraphIdentity, RunIdentity
from otel_dynamo._recording.run_state import RunState

RUN_ATTRIBUTES = {
    names.ATTR_COMPILE_ID: "0/0",
    names.ATTR_BACKEND: "inductor",
    names.ATTR_RUN_KIND: names.RUN_KIND_FORWARD,
}


class StandInEvent:
    """Completes when the test says so; its time is the stand-in clock's at recording."""

    def __init__(self) -> None:
        self.recorded_at_ms: float | None = None
        self.done = False

    def query(self) -> bool:
        return self.done

    def elapsed_time(self, end_event: StandInEvent) -> float:
        assert self.done and end_event.done, "elapsed_time before both completed"
        assert self.recorded_at_ms is not None and end_event.recorded_at_ms is not None
        return end_event.recorded_at_ms - self.recorded_at_ms


class StandInClock:
    """A device whose clock the test advances; counts the events it made."""

    def __init__(self) -> None:
        self.device = "cuda:0"
        self.now_ms = 0.0
        self.made: list[StandInEvent] = []
        self.is_capturing = False

    def new_event(self) -> StandInEvent:
        event = StandInEvent()
        self.made.append(event)
        return event

    def record(self, event: StandInEvent) -> None:
        event.done = False
        event.recorded_at_ms = self.now_ms

    def capturing(self) -> bool:
        return self.is_capturing

    def complete_all(self) -> None:
        for event in self.made:
            event.done = True


def _recorder(signals: Signals) -> Recorder:
    settings = Settings(enabled=True, run_spans=RunSpanPolicy.parse("all"))
    return Recorder(
        tracer=signals.tracer_provider.get_tracer("test"),
        settings=settings,
        metrics=CompileMetrics(signals.meter_provider),
    )


def _run_state(recorder: Recorder, clock: Any) -> RunState:
    return RunState(
        policy=recorder.settings.run_spans,
        identity=RunIdentity(names.RUN_KIND_FORWARD, GraphIdentity("0/0", "inductor")),
        link=None,
        device_clock=clock,
    )


def _device_run(recorder: Recorder, clock: StandInClock, device_ms: float) -> None:
    """One recorded run whose work takes ``device_ms`` on the stand-in device."""

    def call() -> None:
        clock.now_ms += device_ms

    recorder.record_run(_run_state(recorder, clock), call, (), {})


def _wait_for(condition: Any, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_run_span_waits_for_the_device_and_carries_its_time() -> None:
    """The span of a timed run is not exported until the device passed its end event;
    then it carries the device, the device seconds, and its host end time."""
    signals = Signals()
    recorder = _recorder(signals)
    clock = StandInClock()
    before_ns = time.time_ns()
    _device_run(recorder, clock, device_ms=7.5)
    after_ns = time.time_ns()
    time.sleep(0.05)  # the poller runs meanwhile and finds nothing complete
    assert signals.finished() == []
    clock.complete_all()
    _wait_for(lambda: len(signals.finished()) == 1)
    (span,) = signals.finished()
    assert span.name == names.SPAN_RUN_FORWARD
    assert span.attributes[names.ATTR_RUN_DEVICE] == "cuda:0"
    assert span.attributes[names.ATTR_RUN_DEVICE_DURATION] == 0.0075
    assert isinstance(span.attributes[names.ATTR_RUN_DEVICE_DURATION], float)
    assert before_ns <= span.end_time <= after_ns  # the host's end, not the resolution's


def test_device_times_land_in_the_histogram_by_graph() -> None:
    """Each resolved time is a point of the device-duration histogram, labelled by run
    kind, backend, device and compile id."""
    signals = Signals()
    recorder = _recorder(signals)
    clock = StandInClock()
    _device_run(recorder, clock, device_ms=2.0)
    _device_run(recorder, clock, device_ms=4.0)
    clock.complete_all()
    _wait_for(lambda: len(signals.finished()) == 2)
    data = signals.reader.get_metrics_data()
    points = [
        point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == names.METRIC_RUN_DEVICE_DURATION
        for point in metric.data.data_points
    ]
    (point,) = points
    assert dict(point.attributes) == {**RUN_ATTRIBUTES, names.ATTR_RUN_DEVICE: "cuda:0"}
    assert point.count == 2
    assert abs(point.sum - 0.006) < 1e-12


def test_runs_beyond_the_pending_bound_end_at_once_and_are_counted() -> None:
    """With the bound reached (events that never complete), a further run is not timed:
    its span ends at once with reason pending_limit, and the drop is counted."""
    signals = Signals()
    recorder = _recorder(signals)
    recorder._device_timer = DeviceTimer(
        on_time=recorder.metrics.device_time,
        on_drop=recorder.metrics.device_time_dropped,
        max_pending=2,
    )
    clock = StandInClock()
    for _ in range(3):
        _device_run(recorder, clock, device_ms=1.0)
    (span,) = signals.finished()
    assert span.attributes[names.ATTR_RUN_DEVICE_DROP_REASON] == names.DROP_PENDING_LIMIT
    assert names.ATTR_RUN_DEVICE_DURATION not in span.attributes
    assert recorder.device_timer().pending() == 2
    dropped = signals.points(names.METRIC_RUN_DEVICE_DROPPED)
    assert dropped == [({names.ATTR_RUN_DEVICE_DROP_REASON: names.DROP_PENDING_LIMIT}, 1)]


def test_the_last_flush_resolves_what_completed_and_drops_the_rest() -> None:
    """settle(final=True), what runs before the flush at exit: a run whose events
    completed gets its time, one still running ends as process_exit."""
    signals = Signals()
    recorder = _recorder(signals)
    clock = StandInClock()
    _device_run(recorder, clock, device_ms=3.0)
    clock.complete_all()
    recorder.device_timer()._poller = _NoPoller()  # the test, not the thread, resolves
    _device_run(recorder, clock, device_ms=3.0)
    exit_steps.settle(final=True)
    spans = sorted(signals.finished(), key=lambda span: span.start_time)
    assert [span.attributes.get(names.ATTR_RUN_DEVICE_DURATION) for span in spans] == [
        0.003,
        None,
    ]
    assert spans[1].attributes[names.ATTR_RUN_DEVICE_DROP_REASON] == names.DROP_PROCESS_EXIT
    assert recorder.device_timer().pending() == 0


def test_a_flush_that_is_not_the_last_keeps_incomplete_runs_pending() -> None:
    """settle(final=False), before a flush the process survives: nothing incomplete ends."""
    signals = Signals()
    recorder = _recorder(signals)
    clock = StandInClock()
    _device_run(recorder, clock, device_ms=3.0)
    exit_steps.settle(final=False)
    assert signals.finished() == []
    assert recorder.device_timer().pending() == 1


def test_events_are_reused_after_their_run_is_resolved() -> None:
    """A resolved run's events go back to the clock's free list: 50 runs one after the
    other make two events, not a hundred."""
    signals = Signals()
    recorder = _recorder(signals)
    clock = StandInClock()
    for _ in range(50):
        _device_run(recorder, clock, device_ms=1.0)
        clock.complete_all()
        recorder.device_timer().poll()
    assert len(clock.made) == 2
    assert len(signals.finished()) == 50


def test_a_run_inside_a_stream_capture_is_not_timed() -> None:
    """No event is recorded while the job captures a CUDA graph; the span says why."""
    signals = Signals()
    recorder = _recorder(signals)
    clock = StandInClock()
    clock.is_capturing = True
    _device_run(recorder, clock, device_ms=1.0)
    (span,) = signals.finished()
    assert span.attributes[names.ATTR_RUN_DEVICE_DROP_REASON] == names.DROP_STREAM_CAPTURING
    assert clock.made == []


def test_a_forked_child_forgets_the_parents_pending_runs() -> None:
    """In a child made by fork, nothing of the parent's is pending or ended; the parent
    still resolves its own runs."""
    signals = Signals()
    recorder = _recorder(signals)
    clock = StandInClock()
    _device_run(recorder, clock, device_ms=1.0)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report and leave without running the parent's exit hooks
        try:
            clock.complete_all()
            recorder.device_timer().poll()
            report = f"{recorder.device_timer().pending()} {len(signals.finished())}"
            os.write(write_end, report.encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as child:
        assert child.read() == "0 0"
    os.waitpid(pid, 0)
    assert recorder.device_timer().pending() == 1
    clock.complete_all()
    _wait_for(lambda: len(signals.finished()) == 1)


def test_runs_pending_at_interpreter_exit_are_exported_as_dropped() -> None:
    """A real process that exits with a timed run the device never finished exports its
    span, ended as process_exit, through its own provider's shutdown."""
    program = f"""
import sys
sys.path[:0] = [{str(REPO_ROOT / "tests")!r}, {str(REPO_ROOT / "tests" / "recording")!r}]
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from test_device_time import StandInClock, _device_run
from otel_dynamo._config.run_span_policy import RunSpanPolicy
from otel_dynamo._config.settings import Settings
from otel_dynamo._recording.recorder import Recorder
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
recorder = Recorder(
    tracer=provider.get_tracer("t"),
    settings=Settings(enabled=True, run_spans=RunSpanPolicy.parse("all")),
)
_device_run(recorder, StandInClock(), device_ms=1.0)
"""
    done = subprocess.run(
        [sys.executable, "-c", program],
        env=child_environ(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert f'"{names.ATTR_RUN_DEVICE_DROP_REASON}": "{names.DROP_PROCESS_EXIT}"' in done.stdout


class _NoPoller:
    def kick(self) -> None:
        pass
