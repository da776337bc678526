"""Structured log events: JSON lines (stderr or a file) and OpenTelemetry log records.

One pipeline of small structlog processors ``(logger, method, event_dict) ->
event_dict``: level, timestamp, trace context of the current span, exception
attributes, export as an OpenTelemetry log record (same trace context, event name in
``event_name`` and ``body``, fields as attributes), then JSON rendering. Nothing is
configured globally: the user's own structlog setup is untouched. With
``OTEL_DYNAMO_LOG=off`` (the default) no line is rendered and the same processors run
without structlog itself, which is then never imported: importing it pulls in ``rich``
and ``pygments`` where they are installed, about 50 ms of every traced job's start.

:meth:`EventLogger.emit` never raises; with no log target and no logger provider it
returns at once.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

from opentelemetry import trace
from opentelemetry._logs import Logger, LoggerProvider, NoOpLoggerProvider, SeverityNumber
from opentelemetry.semconv.attributes import exception_attributes
from opentelemetry.trace import format_span_id, format_trace_id

from otel_dynamo import names
from otel_dynamo._config.problems import warn_problems
from otel_dynamo._config.settings import (
    DEFAULT_LOG,
    DEFAULT_LOG_LEVEL,
    DEFAULT_MAX_ATTRIBUTE_LENGTH,
    DEFAULT_MAX_LIST_LENGTH,
    ENV_LOG,
    LOG_LEVELS,
    ConfigProblem,
    Settings,
)
from otel_dynamo._providers.files import disarm_inherited_stream
from otel_dynamo._recording.boundary import class_name
from otel_dynamo.version import __version__

LOG_OFF = "off"
LOG_STDERR = "stderr"
KEY_EVENT = "event"
KEY_LEVEL = "level"
KEY_TIMESTAMP = "timestamp"
KEY_TRACE_ID = "trace_id"
KEY_SPAN_ID = "span_id"
_KEY_TIME_NS = "_otel_dynamo_time_ns"
_KEY_EXC = "_otel_dynamo_exc"
_FIRST_KEYS = (KEY_TIMESTAMP, KEY_LEVEL, KEY_EVENT)
_NOT_ATTRIBUTES = frozenset({KEY_EVENT, KEY_LEVEL, KEY_TIMESTAMP, KEY_TRACE_ID, KEY_SPAN_ID})

_SEVERITY = {
    "debug": (SeverityNumber.DEBUG, "DEBUG"),
    "info": (SeverityNumber.INFO, "INFO"),
    "warning": (SeverityNumber.WARN, "WARN"),
    "error": (SeverityNumber.ERROR, "ERROR"),
}
_LEVEL_NUMBERS = {level: getattr(logging, level.upper()) for level in LOG_LEVELS}
_METHOD_LEVELS = {"warn": "warning", "exception": "error", "critical": "error", "msg": "info"}

_log = logging.getLogger(__name__)


# --- processors ------------------------------------------------------------------------


def add_level(_logger: Any, method: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    event_dict[KEY_LEVEL] = _METHOD_LEVELS.get(method, method)
    return event_dict


def add_timestamp(_logger: Any, _method: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    now_ns = time.time_ns()
    seconds, nanos = divmod(now_ns, 1_000_000_000)
    moment = datetime.fromtimestamp(seconds, tz=timezone.utc).replace(microsecond=nanos // 1000)
    event_dict[KEY_TIMESTAMP] = moment.isoformat(timespec="microseconds").replace("+00:00", "Z")
    event_dict[_KEY_TIME_NS] = now_ns
    return event_dict


def add_trace_context(_logger: Any, _method: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    """trace_id / span_id of the current span, as 32 / 16 lowercase hex characters."""
    context = trace.get_current_span().get_span_context()
    if context.is_valid:
        event_dict[KEY_TRACE_ID] = format_trace_id(context.trace_id)
        event_dict[KEY_SPAN_ID] = format_span_id(context.span_id)
    return event_dict


def add_exception(_logger: Any, _method: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    """exception.type / .message / .stacktrace (semantic conventions) from ``exc``."""
    exc = event_dict.pop(_KEY_EXC, None)
    if isinstance(exc, BaseException):
        event_dict.update(exception_fields(exc))
    return event_dict


MAX_STACKTRACE_LENGTH = 16_384
"""An exception's stack trace keeps this many characters: its head (the outer frames)
and its tail (the innermost frames and the message), the middle elided."""
_ELLIPSIS = "…"


class CapLengths:
    """Every text field of an event at most ``max_length`` characters, every list at most
    ``max_items`` items (a 2 MB graph-break reason or exception message goes out capped);
    a stack trace at most ``MAX_STACKTRACE_LENGTH``. A graph's text has its own cap, put
    on by the recorder with its length before the cap (``Limits.graph_text_attributes``)."""

    def __init__(self, max_length: int, max_items: int) -> None:
        self._max_length = max_length
        self._max_items = max_items

    def __call__(self, _logger: Any, _method: str, event_dict: dict[str, Any]) -> dict[str, Any]:
        for key, value in event_dict.items():
            if key == exception_attributes.EXCEPTION_STACKTRACE and isinstance(value, str):
                event_dict[key] = _head_and_tail(value, MAX_STACKTRACE_LENGTH)
            elif key == names.ATTR_GRAPH_TEXT:
                continue
            elif isinstance(value, str):
                event_dict[key] = _head(value, self._max_length)
            elif isinstance(value, list | tuple):
                items = [_head(v, self._max_length) if isinstance(v, str) else v for v in value]
                event_dict[key] = items[: self._max_items]
        return event_dict


def _head(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + _ELLIPSIS


def _head_and_tail(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = (limit - 1) // 2
    return text[:half] + _ELLIPSIS + text[-half:]


def exception_fields(exc: BaseException) -> dict[str, str]:
    stack = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {
        exception_attributes.EXCEPTION_TYPE: class_name(exc),
        exception_attributes.EXCEPTION_MESSAGE: str(exc),
        exception_attributes.EXCEPTION_STACKTRACE: stack,
    }


class EmitAsLogRecord:
    """Emit the event as an OpenTelemetry log record in the caller's context."""

    def __init__(self, logger: Logger | None) -> None:
        self._logger = logger

    def __call__(self, _logger: Any, _method: str, event_dict: dict[str, Any]) -> dict[str, Any]:
        time_ns = event_dict.pop(_KEY_TIME_NS, None)
        if self._logger is not None:
            severity, text = _SEVERITY.get(event_dict.get(KEY_LEVEL, ""), _SEVERITY["info"])
            self._logger.emit(
                timestamp=time_ns,
                severity_number=severity,
                severity_text=text,
                body=event_dict.get(KEY_EVENT),
                event_name=event_dict.get(KEY_EVENT),
                attributes=log_attributes(event_dict),
            )
        return event_dict


def log_attributes(event_dict: Mapping[str, Any]) -> dict[str, Any]:
    """The event's fields as OpenTelemetry attribute values (others become strings)."""
    attributes = {}
    for key, value in event_dict.items():
        if key not in _NOT_ATTRIBUTES and value is not None:
            attributes[key] = _attribute_value(value)
    return attributes


def _attribute_value(value: Any) -> Any:
    if isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)) and value:
        kinds = {type(item) for item in value}
        if len(kinds) == 1 and kinds <= {str, bool, int, float}:
            return tuple(value)
        return tuple(str(item) for item in value)
    return str(value)


def order_keys(_logger: Any, _method: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    first = {key: event_dict[key] for key in _FIRST_KEYS if key in event_dict}
    return {**first, **event_dict}


# --- where JSON lines go ---------------------------------------------------------------


class _Writer:
    """The final structlog "logger": one line per event."""

    def msg(self, message: str) -> None:
        raise NotImplementedError

    def debug(self, message: str) -> None:
        self.msg(message)

    info = warning = error = critical = exception = debug

    def close(self) -> None:
        pass


class StderrWriter(_Writer):
    """Writes to whatever ``sys.stderr`` is at the time of the event."""

    def msg(self, message: str) -> None:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()


class FileWriter(_Writer):
    """Appends lines to a file, one write per line; a forked child gets a fresh lock."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._inherited: list[Any] = []

    def msg(self, message: str) -> None:
        if self._pid != os.getpid():
            self._reopen_in_child()
        with self._lock:
            self._file.write(message + "\n")
            self._file.flush()

    def _reopen_in_child(self) -> None:
        """A forked child writes through its own file object, never the parent's buffer."""
        disarm_inherited_stream(self._file)
        self._inherited.append(self._file)
        self._file = open(self._path, "a", encoding="utf-8")  # noqa: SIM115
        self._lock, self._pid = threading.Lock(), os.getpid()

    def close(self) -> None:
        self._file.close()


def open_writer(target: str) -> tuple[_Writer | None, ConfigProblem | None]:
    """The writer for OTEL_DYNAMO_LOG's value: off, stderr or a file path."""
    value = target.strip()
    if value.lower() == LOG_OFF:
        return None, None
    if value.lower() == LOG_STDERR:
        return StderrWriter(), None
    try:
        return FileWriter(value), None
    except OSError as error:
        consequence = f"structured log lines turned off ({error.strerror or error})"
        return None, ConfigProblem(
            ENV_LOG, target, "off, stderr, or a writable file path", consequence
        )


# --- the event logger ------------------------------------------------------------------


class EventLogger:
    """Emits otel_dynamo's structured events to JSON lines and OpenTelemetry logs."""

    def __init__(
        self,
        *,
        logger_provider: LoggerProvider | None = None,
        log: str = DEFAULT_LOG,
        level: str = DEFAULT_LOG_LEVEL,
        context: Mapping[str, Any] | None = None,
        max_length: int = DEFAULT_MAX_ATTRIBUTE_LENGTH,
        max_items: int = DEFAULT_MAX_LIST_LENGTH,
    ) -> None:
        writer, problem = open_writer(log)
        caps = CapLengths(max_length, max_items)
        self.problems: tuple[ConfigProblem, ...] = (problem,) if problem else ()
        warn_problems(self.problems)
        otel_logger = _otel_logger(logger_provider)
        self.enabled = writer is not None or otel_logger is not None
        self._writer = writer
        min_level = _LEVEL_NUMBERS.get(level, logging.INFO)
        bound = _rendering(writer, otel_logger, min_level, caps) if writer else None
        self._bound: Any = bound or DirectLogger(_processors(otel_logger, caps), min_level, {})
        self._bound = self._bound.bind(**dict(context or {}))
        self._errors = _ErrorReporter()

    @classmethod
    def from_settings(
        cls, settings: Settings, *, logger_provider: LoggerProvider | None = None, **context: Any
    ) -> EventLogger:
        return cls(
            logger_provider=logger_provider,
            log=settings.log,
            level=settings.log_level,
            context=context,
            max_length=settings.max_attribute_length,
            max_items=settings.max_list_length,
        )

    def bind(self, **fields: Any) -> EventLogger:
        """A logger that adds ``fields`` (e.g. rank, compile id) to every event."""
        child = object.__new__(EventLogger)
        child.__dict__.update(self.__dict__)
        child._bound = self._bound.bind(**fields)
        return child

    def emit(
        self, event: str, *, level: str = "info", exc: BaseException | None = None, **fields: Any
    ) -> None:
        """Record one event; never raises (trouble is logged once on ``otel_dynamo``)."""
        if not self.enabled:
            return
        try:
            method = getattr(self._bound, level if level in _SEVERITY else "info")
            if exc is not None:
                fields[_KEY_EXC] = exc
            method(event, **fields)
        except Exception as error:
            self._errors.report(event, error)

    def close(self) -> None:
        if self._writer is not None:
            try:
                self._writer.close()
            except OSError as error:
                self._errors.report("close", error)


def _otel_logger(provider: LoggerProvider | None) -> Logger | None:
    if provider is None or isinstance(provider, NoOpLoggerProvider):
        return None
    return provider.get_logger(names.INSTRUMENTATION_NAME, __version__, schema_url=names.SCHEMA_URL)


def _processors(otel_logger: Logger | None, caps: CapLengths) -> list[Processor]:
    emit = EmitAsLogRecord(otel_logger)
    return [add_level, add_timestamp, add_trace_context, add_exception, caps, emit]


def _rendering(
    writer: _Writer, otel_logger: Logger | None, min_level: int, caps: CapLengths
) -> Any:
    """A structlog logger running the processors, then rendering a JSON line to ``writer``."""
    import structlog

    processors: list[Any] = [*_processors(otel_logger, caps), order_keys]
    return structlog.wrap_logger(
        writer,
        processors=[*processors, structlog.processors.JSONRenderer()],
        wrapper_class=structlog.make_filtering_bound_logger(min_level),
        context_class=dict,
        cache_logger_on_first_use=False,
    )


Processor = Callable[[Any, str, dict[str, Any]], Any]


class DirectLogger:
    """The processors run in order without structlog, as its filtering bound logger runs
    them: context, then the call's fields, then ``event``; levels below ``min_level``
    dropped. For when no JSON line is rendered."""

    def __init__(
        self, processors: list[Processor], min_level: int, context: dict[str, Any]
    ) -> None:
        self._processors = processors
        self._min_level = min_level
        self._context = context

    def bind(self, **fields: Any) -> DirectLogger:
        return DirectLogger(self._processors, self._min_level, {**self._context, **fields})

    def _log(self, method: str, event: str, fields: dict[str, Any]) -> None:
        if _LEVEL_NUMBERS[method] < self._min_level:
            return
        event_dict: Any = {**self._context, **fields, KEY_EVENT: event}
        for processor in self._processors:
            event_dict = processor(None, method, event_dict)

    def debug(self, event: str, **fields: Any) -> None:
        self._log("debug", event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._log("info", event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._log("warning", event, fields)

    def error(self, event: str, **fields: Any) -> None:
        self._log("error", event, fields)


class _ErrorReporter:
    """The first internal error is a warning, the rest are DEBUG."""

    def __init__(self) -> None:
        self._reported = False

    def report(self, event: str, error: BaseException) -> None:
        log = _log.debug if self._reported else _log.warning
        self._reported = True
        log("otel_dynamo: could not record event %r: %s: %s", event, type(error).__name__, error)
