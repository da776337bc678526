"""The still-compiling watchdog: events for long compiles, at doubling intervals."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

from _export_support import REPO_ROOT, wait_until
from _telemetry_support import in_memory_log_exporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider

from otel_dynamo import names
from otel_dynamo._config.settings import Settings
from otel_dynamo._lifecycle.watchdog import Watchdog
from otel_dynamo._recording.structured_log import EventLogger

THRESHOLD_S = 0.1


class Recorder:
    """Stands in for EventLogger: keeps (event, level, fields)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict]] = []
        self._lock = threading.Lock()

    def emit(self, event: str, fields=None, /, *, level: str = "info") -> None:
        with self._lock:
            self.events.append((event, level, dict(fields or {})))


def _describe() -> dict:
    return {names.ATTR_COMPILE_ID: "3/0", names.ATTR_CODE_FUNCTION: "forward"}


def test_long_compile_emits_still_compiling_with_description():
    """Past the threshold: one warning event with describe()'s fields and the elapsed time."""
    recorder = Recorder()
    watchdog = Watchdog(recorder, threshold_s=THRESHOLD_S)
    watchdog.watch("3/0", _describe)
    assert wait_until(lambda: recorder.events, timeout=5)
    watchdog.unwatch("3/0")
    event, level, fields = recorder.events[0]
    assert (event, level) == ("torch.compile.still_compiling", "warning")
    elapsed = fields.pop(names.ATTR_COMPILE_ELAPSED)
    assert fields == {"torch.compile.id": "3/0", "code.function.name": "forward"}
    assert THRESHOLD_S <= elapsed < THRESHOLD_S + 1.0


def test_repeats_when_elapsed_time_doubles():
    """Events come at 1x, 2x, 4x the threshold (not before each mark, and not much after)."""
    recorder = Recorder()
    watchdog = Watchdog(recorder, threshold_s=THRESHOLD_S)
    watchdog.watch("k", _describe)
    assert wait_until(lambda: len(recorder.events) >= 3, timeout=5)
    watchdog.unwatch("k")
    elapsed = [fields[names.ATTR_COMPILE_ELAPSED] for _, _, fields in recorder.events[:3]]
    for index, value in enumerate(elapsed):
        mark = THRESHOLD_S * 2**index
        assert mark <= value < mark + THRESHOLD_S, (index, elapsed)


def test_compile_ending_before_threshold_emits_nothing():
    """unwatch before the threshold: no event ever."""
    recorder = Recorder()
    watchdog = Watchdog(recorder, threshold_s=THRESHOLD_S)
    watchdog.watch("fast", _describe)
    watchdog.unwatch("fast")
    time.sleep(3 * THRESHOLD_S)
    assert (recorder.events, watchdog.watched()) == ([], 0)


def test_event_carries_the_compile_span_context():
    """With span=, the log record's trace ids are the compile span's."""
    records = in_memory_log_exporter()
    provider = LoggerProvider(shutdown_on_exit=False)
    provider.add_log_record_processor(SimpleLogRecordProcessor(records))
    span = TracerProvider(shutdown_on_exit=False).get_tracer("t").start_span("frame")
    watchdog = Watchdog(EventLogger(logger_provider=provider), threshold_s=THRESHOLD_S)
    watchdog.watch("0/0", _describe, span=span)
    assert wait_until(records.get_finished_logs, timeout=5)
    watchdog.unwatch("0/0")
    record = records.get_finished_logs()[0].log_record
    context = span.get_span_context()
    assert (record.event_name, record.trace_id, record.span_id) == (
        "torch.compile.still_compiling",
        context.trace_id,
        context.span_id,
    )


def test_failing_describe_does_not_stop_the_watchdog():
    """describe() raising loses that event only; other compiles are still reported."""
    recorder = Recorder()
    watchdog = Watchdog(recorder, threshold_s=THRESHOLD_S)

    def broken() -> dict:
        raise RuntimeError("no description")

    watchdog.watch("broken", broken)
    watchdog.watch("fine", _describe)
    assert wait_until(lambda: recorder.events, timeout=5)
    watchdog.unwatch("broken")
    watchdog.unwatch("fine")
    assert {fields[names.ATTR_COMPILE_ID] for _, _, fields in recorder.events} == {"3/0"}


def test_threshold_comes_from_settings():
    """from_settings uses settings.slow_compile_seconds."""
    recorder = Recorder()
    watchdog = Watchdog.from_settings(Settings(slow_compile_seconds=THRESHOLD_S), recorder)
    watchdog.watch("k", _describe)
    assert wait_until(lambda: recorder.events, timeout=5)
    watchdog.unwatch("k")


def test_thread_is_a_daemon():
    """The watchdog thread is a daemon named otel_dynamo-watchdog."""
    watchdog = Watchdog(Recorder(), threshold_s=60)
    watchdog.watch("k", _describe)
    thread = watchdog._thread
    watchdog.unwatch("k")
    assert (thread.name, thread.daemon, thread.is_alive()) == ("otel_dynamo-watchdog", True, True)


def test_watchdog_does_not_keep_the_process_alive():
    """A process exits at once even while a compile is watched with a long threshold."""
    code = (
        "from otel_dynamo._lifecycle.watchdog import Watchdog\n"
        "class E:\n    def emit(self, *a, **k): pass\n"
        "w = Watchdog(E(), threshold_s=600)\n"
        "w.watch('k', dict)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=30)
    assert time.monotonic() - started < 5.0


def test_forked_child_starts_with_nothing_watched():
    """After os.fork the child's watchdog is empty (it runs none of the parent's compiles)."""
    watchdog = Watchdog(Recorder(), threshold_s=600)
    watchdog.watch("parent-compile", _describe)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(write_end, bytes([watchdog.watched()]))
        os._exit(0)
    os.close(write_end)
    child_count = os.read(read_end, 1)[0]
    os.waitpid(pid, 0)
    os.close(read_end)
    assert (child_count, watchdog.watched()) == (0, 1)
    watchdog.unwatch("parent-compile")
