"""Structured log events: OpenTelemetry log records and JSON lines (stderr or a file).

:meth:`EventLogger.emit` builds each event once: the level filter, the bound context and
the call's fields, the current span's trace context, exception attributes, length caps.
It exports the event as an OpenTelemetry log record (event name in ``event_name`` and
``body``, fields as attributes) and, when ``OTEL_DYNAMO_LOG`` names a target, hands it to
structlog, which renders the JSON line: its filtering bound logger, its ``add_log_level``
and ``JSONRenderer`` processors, its ``WriteLogger``. structlog is imported only then:
importing it pulls in ``rich`` and ``pygments`` where they are installed, about 50 ms of
every traced job's start, and the default (``OTEL_DYNAMO_LOG=off``) renders no line.
Nothing is configured globally: the user's own structlog setup is untouched.

:meth:`EventLogger.emit` never raises; with no log target and no logger provider it
returns at once.
"""

from __future__ import annotations

import logging
import os
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, TextIO, cast

from opentelemetry import trace
from opentelemetry._logs import Logger, LoggerProvider, NoOpLoggerProvider, SeverityNumber
from opentelemetry.semconv.attributes import exception_attributes
from opentelemetry.trace import format_span_id, format_trace_id
from opentelemetry.util.types import AttributeValue

from otel_dynamo import names
from otel_dynamo._config.problems import warn_problems
from otel_dynamo._config.redaction import REDACT_SHAPES
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

if TYPE_CHECKING:
    from structlog.typing import EventDict, FilteringBoundLogger, WrappedLogger

Redact = Callable[[str], str]
"""Text in, the same text with secrets as ``***`` out (``_config.redaction``)."""
LOG_OFF = "off"
LOG_STDERR = "stderr"
KEY_EVENT = "event"
KEY_LEVEL = "level"
KEY_TIMESTAMP = "timestamp"
KEY_TRACE_ID = "trace_id"
KEY_SPAN_ID = "span_id"
DEFAULT_EVENT_LEVEL = "info"
_FIRST_KEYS = (KEY_TIMESTAMP, KEY_LEVEL, KEY_EVENT)

_SEVERITY = {
    "debug": (SeverityNumber.DEBUG, "DEBUG"),
    "info": (SeverityNumber.INFO, "INFO"),
    "warning": (SeverityNumber.WARN, "WARN"),
    "error": (SeverityNumber.ERROR, "ERROR"),
}
_LEVEL_NUMBERS = {level: getattr(logging, level.upper()) for level in LOG_LEVELS}

_log = logging.getLogger(__name__)


# --- what an event carries -------------------------------------------------------------


def add_trace_context(fields: dict[str, object]) -> None:
    """trace_id / span_id of the current span, as 32 / 16 lowercase hex characters."""
    context = trace.get_current_span().get_span_context()
    if context.is_valid:
        fields[KEY_TRACE_ID] = format_trace_id(context.trace_id)
        fields[KEY_SPAN_ID] = format_span_id(context.span_id)


MAX_STACKTRACE_LENGTH = 16_384
"""An exception's stack trace keeps this many characters: its head (the outer frames)
and its tail (the innermost frames and the message), the middle elided."""
_ELLIPSIS = "…"


class CapLengths:
    """Every text field of an event at most ``max_length`` characters, every list at most
    ``max_items`` items (a 2 MB graph-break reason or exception message goes out capped);
    a stack trace at most ``MAX_STACKTRACE_LENGTH``. A graph's text has its own cap, put
    on by the recorder with its length before the cap (``Limits.graph_text_attributes``)."""

    def __init__(self, *, max_length: int, max_items: int) -> None:
        self.max_length = max_length
        self._max_items = max_items

    def apply(self, fields: dict[str, object]) -> None:
        for key, value in fields.items():
            if key == exception_attributes.EXCEPTION_STACKTRACE and isinstance(value, str):
                fields[key] = _head_and_tail(value, MAX_STACKTRACE_LENGTH)
            elif key == names.ATTR_GRAPH_TEXT:
                continue
            elif isinstance(value, str):
                fields[key] = head(value, self.max_length)
            elif isinstance(value, list | tuple):
                items = [head(v, self.max_length) if isinstance(v, str) else v for v in value]
                fields[key] = items[: self._max_items]


def head(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters with the last one an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + _ELLIPSIS


def _head_and_tail(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = (limit - 1) // 2
    return text[:half] + _ELLIPSIS + text[-half:]


def exception_fields(exc: BaseException) -> dict[str, str]:
    """exception.type / .message / .stacktrace (semantic conventions) of ``exc``."""
    stack = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {
        exception_attributes.EXCEPTION_TYPE: class_name(exc),
        exception_attributes.EXCEPTION_MESSAGE: str(exc),
        exception_attributes.EXCEPTION_STACKTRACE: stack,
    }


_NOT_ATTRIBUTES = frozenset({KEY_EVENT, KEY_LEVEL, KEY_TIMESTAMP, KEY_TRACE_ID, KEY_SPAN_ID})
"""Carried by the record itself (event name, severity, time, trace context): a field of
one of these names is never also an attribute."""


def log_attributes(fields: Mapping[str, object]) -> dict[str, AttributeValue]:
    """The event's fields as OpenTelemetry attribute values (others become strings)."""
    attributes = {}
    for key, value in fields.items():
        if key not in _NOT_ATTRIBUTES and value is not None:
            attributes[key] = _attribute_value(value)
    return attributes


def _attribute_value(value: object) -> AttributeValue:
    if isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)) and value:
        kinds = {type(item) for item in value}
        if len(kinds) == 1 and kinds <= {str, bool, int, float}:
            return tuple(value)
        return tuple(str(item) for item in value)
    return str(value)


# --- JSON lines, through structlog -----------------------------------------------------


def iso_timestamp(time_ns: int) -> str:
    """``time_ns`` as ISO 8601 UTC to the microsecond, ``Z``-suffixed.

    structlog's ``TimeStamper`` reads its own clock; the line must carry the instant its
    log record carries, so the one ``time.time_ns()`` of the event is rendered here."""
    seconds, nanos = divmod(time_ns, 1_000_000_000)
    moment = datetime.fromtimestamp(seconds, tz=timezone.utc).replace(microsecond=nanos // 1000)
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


def order_keys(_logger: WrappedLogger, _method: str, event_dict: EventDict) -> EventDict:
    """structlog processor: timestamp, level and event first, then the fields in order."""
    first = {key: event_dict[key] for key in _FIRST_KEYS if key in event_dict}
    return {**first, **event_dict}


class _CurrentStderr:
    """Writes to whatever ``sys.stderr`` is when the line is written (a redirect or a test's
    capture made after the logger was built still gets it)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


class JsonLines:
    """Renders each event as one JSON line with structlog and writes it: to standard error,
    or appended to a file. A forked child writes through a file object and lock of its
    own, never the parent's buffer or a lock a parent thread held at the fork."""

    def __init__(self, *, path: str | None, min_level: int, redact: Redact = REDACT_SHAPES) -> None:
        self._path = path
        self._min_level = min_level
        self._redact = redact
        self._file = self._open()
        self._pid = os.getpid()
        self._inherited: list[TextIO] = []
        self._logger = self._wrap(self._file)

    def write(self, level: str, event: str, time_ns: int, fields: dict[str, object]) -> None:
        """One line: ``fields`` gain the timestamp (the dict is the caller's to give)."""
        if self._pid != os.getpid():
            self._reopen_in_child()
        fields[KEY_TIMESTAMP] = iso_timestamp(time_ns)
        getattr(self._logger, level)(event, **fields)

    def close(self) -> None:
        if self._path is not None:
            self._file.close()

    def _open(self) -> TextIO:
        if self._path is None:
            # WriteLogger takes a text stream; this one only forwards write and flush.
            return cast(TextIO, _CurrentStderr())
        return open(self._path, "a", encoding="utf-8")

    def _wrap(self, file: TextIO) -> FilteringBoundLogger:
        import structlog

        logger: FilteringBoundLogger = structlog.wrap_logger(
            structlog.WriteLogger(file),
            processors=[
                structlog.processors.add_log_level,
                order_keys,
                self._redact_values,
                structlog.processors.JSONRenderer(),
            ],
            wrapper_class=structlog.make_filtering_bound_logger(self._min_level),
            context_class=dict,
            cache_logger_on_first_use=False,
        ).bind()  # the bound logger itself: each call through the lazy proxy would rebuild it
        return logger

    def _redact_values(
        self, _logger: WrappedLogger, _method: str, event_dict: EventDict
    ) -> EventDict:
        """Secrets out of every string of the line (an exception message quoting a URL
        with a token): the one redaction, where the line leaves."""
        redact = self._redact
        for key, value in event_dict.items():
            if isinstance(value, str):
                event_dict[key] = redact(value)
            elif isinstance(value, list):
                event_dict[key] = [redact(v) if isinstance(v, str) else v for v in value]
        return event_dict

    def _reopen_in_child(self) -> None:
        if self._path is not None:
            disarm_inherited_stream(self._file)
            # Kept referenced: were disarming to fail, collecting it would flush the
            # parent's buffer from this process.
            self._inherited.append(self._file)
        self._file, self._pid = self._open(), os.getpid()
        self._logger = self._wrap(self._file)


def open_lines(
    target: str, *, min_level: int, redact: Redact = REDACT_SHAPES
) -> tuple[JsonLines | None, ConfigProblem | None]:
    """The JSON lines for OTEL_DYNAMO_LOG's value: off, stderr or a file path."""
    value = target.strip()
    if value.lower() == LOG_OFF:
        return None, None
    if value.lower() == LOG_STDERR:
        return JsonLines(path=None, min_level=min_level, redact=redact), None
    try:
        return JsonLines(path=value, min_level=min_level, redact=redact), None
    except OSError as error:
        consequence = f"structured log lines turned off ({error.strerror or error})"
        return None, ConfigProblem(
            ENV_LOG, target, "off, stderr, or a writable file path", consequence
        )


# --- the event logger ------------------------------------------------------------------


class EventLogger:
    """Emits otel_dynamo's structured events to OpenTelemetry logs and JSON lines."""

    def __init__(
        self,
        *,
        logger_provider: LoggerProvider | None = None,
        log: str = DEFAULT_LOG,
        level: str = DEFAULT_LOG_LEVEL,
        context: Mapping[str, object] | None = None,
        max_length: int = DEFAULT_MAX_ATTRIBUTE_LENGTH,
        max_items: int = DEFAULT_MAX_LIST_LENGTH,
        redact: Redact = REDACT_SHAPES,
    ) -> None:
        self._min_level = _LEVEL_NUMBERS.get(level, logging.INFO)
        self._lines, problem = open_lines(log, min_level=self._min_level, redact=redact)
        self.problems: tuple[ConfigProblem, ...] = (problem,) if problem else ()
        warn_problems(self.problems)
        self._otel_logger = _otel_logger(logger_provider)
        self.enabled = self._lines is not None or self._otel_logger is not None
        self._caps = CapLengths(max_length=max_length, max_items=max_items)
        self._context = dict(context or {})
        self._errors = _ErrorReporter()

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        logger_provider: LoggerProvider | None = None,
        redact: Redact = REDACT_SHAPES,
        **context: object,
    ) -> EventLogger:
        return cls(
            logger_provider=logger_provider,
            redact=redact,
            log=settings.log,
            level=settings.log_level,
            context=context,
            max_length=settings.max_attribute_length,
            max_items=settings.max_list_length,
        )

    def bind(self, **fields: object) -> EventLogger:
        """A logger that adds ``fields`` (e.g. rank, compile id) to every event."""
        child = object.__new__(EventLogger)
        child.__dict__.update(self.__dict__)
        child._context = {**self._context, **fields}
        return child

    def emit(
        self,
        event: str,
        fields: Mapping[str, AttributeValue] | None = None,
        /,
        *,
        level: str = DEFAULT_EVENT_LEVEL,
        exc: BaseException | None = None,
        **more: object,
    ) -> None:
        """Record one event with ``fields`` (attribute values, as otel_dynamo's own events
        hand them over) and ``more`` (a caller's keywords: a value that is no attribute
        value is written as its text); never raises (trouble is logged once on
        ``otel_dynamo``)."""
        if not self.enabled:
            return
        if level not in _SEVERITY:
            level = DEFAULT_EVENT_LEVEL
        if _LEVEL_NUMBERS[level] < self._min_level:
            return
        try:
            self._record(event, level, exc, {**self._context, **(fields or {}), **more})
        except Exception as error:
            self._errors.report(event, error)

    def _record(
        self, event: str, level: str, exc: BaseException | None, fields: dict[str, object]
    ) -> None:
        time_ns = time.time_ns()
        add_trace_context(fields)
        if exc is not None:
            fields.update(exception_fields(exc))
        self._caps.apply(fields)
        event = head(event, self._caps.max_length)
        if self._otel_logger is not None:
            severity, text = _SEVERITY[level]
            self._otel_logger.emit(
                timestamp=time_ns,
                severity_number=severity,
                severity_text=text,
                body=event,
                event_name=event,
                attributes=log_attributes(fields),
            )
        if self._lines is not None:
            self._lines.write(level, event, time_ns, fields)

    def close(self) -> None:
        if self._lines is not None:
            try:
                self._lines.close()
            except OSError as error:
                self._errors.report("close", error)


def _otel_logger(provider: LoggerProvider | None) -> Logger | None:
    if provider is None or isinstance(provider, NoOpLoggerProvider):
        return None
    return provider.get_logger(names.INSTRUMENTATION_NAME, __version__, schema_url=names.SCHEMA_URL)


class _ErrorReporter:
    """The first internal error is a warning, the rest are DEBUG."""

    def __init__(self) -> None:
        self._reported = False

    def report(self, event: str, error: BaseException) -> None:
        log = _log.debug if self._reported else _log.warning
        self._reported = True
        log("otel_dynamo: could not record event %r: %s: %s", event, type(error).__name__, error)
