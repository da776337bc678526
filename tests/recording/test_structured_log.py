"""EventLogger: structured events as JSON lines and as OpenTelemetry log records."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import redirect_stderr
from io import StringIO

import pytest
import structlog
from opentelemetry._logs import SeverityNumber
from opentelemetry.sdk.trace import TracerProvider

from otel_dynamo import names
from otel_dynamo._config.settings import Settings
from otel_dynamo._recording.structured_log import EventLogger


@pytest.fixture
def tracer():
    return TracerProvider(shutdown_on_exit=False).get_tracer("test")


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _recompile(events: EventLogger) -> None:
    events.emit(names.LOG_RECOMPILE, **{names.ATTR_COMPILE_ID: "0/1"}, reasons=["a", "b"])


def test_json_line_has_level_timestamp_event_and_fields_in_order(tmp_path):
    """One JSON object per line: timestamp, level, event first, then the fields."""
    path = tmp_path / "events.jsonl"
    _recompile(EventLogger(log=str(path)))
    (line,) = _lines(path)
    assert list(line) == ["timestamp", "level", "event", "torch.compile.id", "reasons"]
    assert {k: line[k] for k in ("level", "event", "torch.compile.id", "reasons")} == {
        "level": "info",
        "event": "torch.compile.recompile",
        "torch.compile.id": "0/1",
        "reasons": ["a", "b"],
    }
    assert line["timestamp"].endswith("Z") and len(line["timestamp"]) == 27


def test_fields_are_given_as_a_mapping_and_as_keywords(tmp_path):
    """otel_dynamo's own events hand their fields over as one mapping (keys that are no
    Python names, like ``level``, cannot clash with the options); a caller's keywords
    are added after them."""
    path = tmp_path / "events.jsonl"
    fields = {names.ATTR_COMPILE_ID: "0/1", "level_name": "x"}
    EventLogger(log=str(path)).emit("x.event", fields, level="warning", n=1)
    (line,) = _lines(path)
    assert (line["level"], line["torch.compile.id"], line["level_name"], line["n"]) == (
        "warning",
        "0/1",
        "x",
        1,
    )


def test_stderr_target_writes_to_stderr(capsys):
    """log="stderr" prints the JSON line to standard error, nothing to stdout."""
    EventLogger(log="stderr").emit("x.event", n=1)
    captured = capsys.readouterr()
    assert (captured.out, json.loads(captured.err)["n"]) == ("", 1)


def test_stderr_target_follows_a_later_redirect():
    """log="stderr" writes to sys.stderr as it is at the event, not as it was when built."""
    events = EventLogger(log="stderr")
    redirected = StringIO()
    with redirect_stderr(redirected):
        events.emit("x.event", n=1)
    assert json.loads(redirected.getvalue())["event"] == "x.event"


def test_json_line_carries_the_current_span_ids(tmp_path, tracer):
    """trace_id / span_id are the current span's, as 32 / 16 hex characters."""
    path = tmp_path / "events.jsonl"
    events = EventLogger(log=str(path))
    with tracer.start_as_current_span("frame") as span:
        _recompile(events)
    (line,) = _lines(path)
    context = span.get_span_context()
    assert (line["trace_id"], line["span_id"]) == (
        format(context.trace_id, "032x"),
        format(context.span_id, "016x"),
    )


def test_no_span_means_no_trace_fields(tmp_path):
    """Outside any span there are no trace_id / span_id keys."""
    path = tmp_path / "events.jsonl"
    _recompile(EventLogger(log=str(path)))
    assert {"trace_id", "span_id"} & set(_lines(path)[0]) == set()


def test_log_record_has_event_name_body_severity_and_attributes(logger_provider, records):
    """The OTel record: event_name and body are the event, fields are attributes."""
    _recompile(EventLogger(logger_provider=logger_provider))
    (readable,) = records.get_finished_logs()
    record = readable.log_record
    assert (record.event_name, record.body, record.severity_number, record.severity_text) == (
        "torch.compile.recompile",
        "torch.compile.recompile",
        SeverityNumber.INFO,
        "INFO",
    )
    assert dict(record.attributes) == {"torch.compile.id": "0/1", "reasons": ("a", "b")}


def test_log_record_shares_the_span_context(logger_provider, records, tracer):
    """The record's trace_id / span_id equal the span's that was current at emit."""
    events = EventLogger(logger_provider=logger_provider)
    with tracer.start_as_current_span("frame") as span:
        _recompile(events)
    record = records.get_finished_logs()[0].log_record
    context = span.get_span_context()
    assert (record.trace_id, record.span_id) == (context.trace_id, context.span_id)


def test_record_and_line_have_the_same_timestamp(tmp_path, logger_provider, records):
    """The JSON timestamp and the record's timestamp are the same instant (to the µs)."""
    path = tmp_path / "events.jsonl"
    _recompile(EventLogger(logger_provider=logger_provider, log=str(path)))
    record = records.get_finished_logs()[0].log_record
    micros = record.timestamp // 1000
    assert _lines(path)[0]["timestamp"][20:26] == f"{micros % 1_000_000:06d}"


def _raise_and_emit(events: EventLogger) -> None:
    try:
        raise KeyError("missing-guard")
    except KeyError as error:
        events.emit(names.LOG_COMPILE_FAILED, level="error", exc=error)


def test_exception_becomes_semantic_convention_attributes(logger_provider, records):
    """exc= adds exception.type / .message / .stacktrace to the record, level ERROR."""
    _raise_and_emit(EventLogger(logger_provider=logger_provider))
    record = records.get_finished_logs()[0].log_record
    attributes = dict(record.attributes)
    assert (attributes["exception.type"], attributes["exception.message"]) == (
        "KeyError",
        "'missing-guard'",
    )
    assert attributes["exception.stacktrace"].startswith("Traceback (most recent call last):")
    assert attributes["exception.stacktrace"].endswith("KeyError: 'missing-guard'\n")
    assert record.severity_number == SeverityNumber.ERROR


def test_exception_type_is_fully_qualified_outside_builtins(tmp_path):
    """A non-builtin exception's type is module.qualname (in the JSON line too)."""
    path = tmp_path / "events.jsonl"
    try:
        json.loads("{")
    except json.JSONDecodeError as error:
        EventLogger(log=str(path)).emit("x.failed", level="error", exc=error)
    assert _lines(path)[0]["exception.type"] == "json.decoder.JSONDecodeError"


def test_bound_fields_are_added_to_every_event(logger_provider, records):
    """Context and bind() fields (rank, compile id) appear on each event."""
    events = EventLogger(logger_provider=logger_provider, context={names.RESOURCE_RANK: 3})
    events.bind(**{names.ATTR_COMPILE_ID: "2/0"}).emit("x.event")
    events.emit("y.event")
    attributes = [dict(r.log_record.attributes) for r in records.get_finished_logs()]
    assert attributes == [
        {"torch.distributed.rank": 3, "torch.compile.id": "2/0"},
        {"torch.distributed.rank": 3},
    ]


def test_level_below_threshold_is_not_emitted(logger_provider, records):
    """With level="warning", info events are dropped and warnings kept, in both outputs."""
    events = EventLogger(logger_provider=logger_provider, level="warning")
    events.emit("quiet.event")
    events.emit("loud.event", level="warning")
    assert [r.log_record.event_name for r in records.get_finished_logs()] == ["loud.event"]


def test_non_primitive_values_become_strings(logger_provider, records):
    """A dict field is exported as its string; None fields are left out."""
    EventLogger(logger_provider=logger_provider).emit("x.event", shape={"a": 1}, empty=None)
    assert dict(records.get_finished_logs()[0].log_record.attributes) == {"shape": "{'a': 1}"}


def test_from_settings_uses_log_target_and_level(tmp_path):
    """from_settings reads settings.log (a path here) and settings.log_level."""
    path = tmp_path / "events.jsonl"
    events = EventLogger.from_settings(Settings(log=str(path), log_level="error"))
    events.emit("info.event")
    events.emit("error.event", level="error")
    assert [line["event"] for line in _lines(path)] == ["error.event"]


class _BrokenProvider:
    def get_logger(self, *args, **kwargs):
        return self

    def emit(self, *args, **kwargs):
        raise RuntimeError("exporter exploded")


def test_emit_never_raises_and_warns_once(caplog):
    """A failing log pipeline: emit returns normally; one warning, then DEBUG only."""
    events = EventLogger(logger_provider=_BrokenProvider())
    with caplog.at_level(logging.DEBUG, logger="otel_dynamo"):
        events.emit("first.event")
        events.emit("second.event")
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (
            logging.WARNING,
            "otel_dynamo: could not record event 'first.event': RuntimeError: exporter exploded",
        ),
        (
            logging.DEBUG,
            "otel_dynamo: could not record event 'second.event': RuntimeError: exporter exploded",
        ),
    ]


def test_nothing_configured_is_disabled_and_does_nothing(monkeypatch):
    """log=off and no provider: disabled, and emit never reaches the pipeline."""
    events = EventLogger()
    reached: list[tuple] = []
    monkeypatch.setattr(events, "_record", lambda *args: reached.append(args))
    events.emit("x.event", n=1)
    assert (events.enabled, reached) == (False, [])


def test_noop_logger_provider_counts_as_nothing_configured():
    """The API's NoOpLoggerProvider (what setup gives when logs are off) disables export."""
    from opentelemetry._logs import NoOpLoggerProvider

    assert EventLogger(logger_provider=NoOpLoggerProvider()).enabled is False


def test_unopenable_log_file_is_a_problem_and_export_continues(tmp_path, logger_provider, records):
    """A log path that can't be opened: ConfigProblem naming it; records still exported."""
    bad = str(tmp_path / "no-such-dir" / "events.jsonl")
    events = EventLogger(logger_provider=logger_provider, log=bad)
    events.emit("x.event")
    assert [(p.variable, p.value) for p in events.problems] == [("OTEL_DYNAMO_LOG", bad)]
    assert len(records.get_finished_logs()) == 1


def test_users_structlog_configuration_is_untouched(tmp_path):
    """Creating and using an EventLogger leaves structlog's global configuration as it was."""
    before = structlog.get_config()
    EventLogger(log=str(tmp_path / "events.jsonl")).emit("x.event")
    assert structlog.get_config() == before


def test_forked_child_does_not_rewrite_the_parents_buffered_line(tmp_path):
    """A child's event goes through its own file object: the parent's unflushed bytes stay out."""
    path = tmp_path / "events.jsonl"
    events = EventLogger(log=str(path))
    events.emit("parent.event")
    events._lines._file.write("PARENT-UNFLUSHED")  # as if the fork interrupted a write
    pid = os.fork()
    if pid == 0:
        events.emit("child.event")
        os._exit(0)
    os.waitpid(pid, 0)
    written = path.read_text()
    events._lines._file.truncate()  # the parent's own buffer is not part of the test
    assert [json.loads(line)["event"] for line in written.splitlines()] == [
        "parent.event",
        "child.event",
    ]


CHILD_EXIT_SECONDS = 10


class _BlockingStream:
    """A stderr whose write blocks until released: a thread is mid-line at the fork."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def write(self, text: str) -> int:
        self.entered.set()
        self.release.wait()
        return len(text)

    def flush(self) -> None:
        pass


def _exit_code_within(pid: int, seconds: float) -> int | None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


def test_forked_child_writes_while_a_parent_thread_was_mid_line(tmp_path):
    """A fork while another thread is writing a line (holding the write lock): the child's
    own line is written at once, it does not wait on a lock no thread of it will release."""
    events = EventLogger(log="stderr")
    blocking = _BlockingStream()
    child_stderr = tmp_path / "child.txt"
    with redirect_stderr(blocking):
        writer = threading.Thread(target=events.emit, args=("parent.event",))
        writer.start()
        assert blocking.entered.wait(CHILD_EXIT_SECONDS)
        pid = os.fork()
        if pid == 0:
            with open(child_stderr, "w") as stream:
                sys.stderr = stream
                events.emit("child.event")
            os._exit(0)
        blocking.release.set()
        writer.join()
    assert _exit_code_within(pid, CHILD_EXIT_SECONDS) == 0
    assert json.loads(child_stderr.read_text())["event"] == "child.event"


def _record_fields(records) -> list[tuple]:
    return [
        (r.log_record.event_name, r.log_record.severity_number, dict(r.log_record.attributes))
        for r in records.get_finished_logs()
    ]


def test_log_records_are_the_same_with_and_without_json_lines(tmp_path, logger_provider, records):
    """With no JSON lines (the default, structlog not imported) the log records carry
    exactly what they carry with lines on: bound fields, call fields, level filtering."""
    for log in ("off", str(tmp_path / "events.jsonl")):
        events = EventLogger(logger_provider=logger_provider, log=log, level="info")
        bound = events.bind(rank=3)
        bound.emit("x.kept", level="warning", n=1, stack=["a", "b"])
        bound.emit("x.dropped", level="debug", n=2)
    without, with_lines = _record_fields(records)[:1], _record_fields(records)[1:]
    assert (
        without
        == with_lines
        == [("x.kept", SeverityNumber.WARN, {"rank": 3, "n": 1, "stack": ("a", "b")})]
    )


def test_default_job_never_imports_structlog(tmp_path):
    """A traced job with OTEL_DYNAMO_LOG=off (the default) does not import structlog
    (whose import pulls in rich and pygments where installed)."""
    code = (
        "import sys, torch; f = torch.compile(lambda x: x.sin() + 1, backend='aot_eager'); "
        "f(torch.randn(3)); print('structlog' in sys.modules)"
    )
    env = {**os.environ, "OTEL_DYNAMO_ENABLED": "true", "OTEL_DYNAMO_OUTPUT_DIR": str(tmp_path)}
    env.pop("OTEL_DYNAMO_LOG", None)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"
    assert list(tmp_path.glob("logs-*.jsonl"))


def _raised(message: str) -> BaseException:
    try:
        raise RuntimeError(message)
    except RuntimeError as error:
        return error


def test_huge_text_fields_and_exceptions_go_out_capped(logger_provider, records, tmp_path):
    """A 2 MB graph-break reason and a 1 MB exception message: the log record and the JSON
    line carry at most max_attribute_length characters of each, a stack trace at most
    16 KiB (its head and tail), in both outputs."""
    log = tmp_path / "events.jsonl"
    events = EventLogger(logger_provider=logger_provider, log=str(log), max_length=512)
    reason = "x" * 2_000_000
    events.emit(names.LOG_GRAPH_BREAK, **{names.ATTR_GRAPH_BREAK_REASON: reason})
    events.emit(names.LOG_COMPILE_FAILED, level="error", exc=_raised("m" * 1_000_000))
    events.close()
    first, second = (r.log_record.attributes for r in records.get_finished_logs())
    assert len(first[names.ATTR_GRAPH_BREAK_REASON]) == 512
    assert first[names.ATTR_GRAPH_BREAK_REASON].endswith("…")
    assert len(second["exception.message"]) == 512
    stack = second["exception.stacktrace"]
    assert len(stack) <= 16_384 and stack.startswith("Traceback") and "…" in stack
    assert all(len(line) < 20_000 for line in log.read_text().splitlines())
