"""Export trouble becomes one warning per process, not a stream of SDK log lines.

The OpenTelemetry SDK and exporters log every failed export, retry and dropped span
(at WARNING/ERROR, to stderr when logging is not configured). While one of *our*
exporters or processors runs, those records are diverted here instead: the first
failure becomes a single warning on the ``otel_dynamo`` logger naming the signal, the
target and the reason; everything after that goes to DEBUG. Records the SDK logs for
anyone else's providers are untouched (the diversion is per thread, only inside our
calls).
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections.abc import Callable

from otel_dynamo._config.redaction import REDACT_SHAPES
from otel_dynamo._providers import sdk_private

LOGGER_NAME = "otel_dynamo"
QUIET_LOGGER_PREFIXES = ("opentelemetry", "urllib3", "grpc")
"""Loggers whose records are diverted while our exporters run."""

_log = logging.getLogger(__name__)
_local = threading.local()
RecordSink = Callable[[logging.LogRecord], None]


class ExportHealth:
    """Which (signal, target) exports are failing, and whether the one warning was given.

    Failing is per target: a collector that refuses logs says nothing about the log
    files written beside it."""

    def __init__(self, *, redact: Callable[[str], str] = REDACT_SHAPES) -> None:
        self._targets: dict[str, set[str]] = {}
        self._failing: set[tuple[str, str]] = set()
        self._warned = False
        self._lock = threading.Lock()
        self.redact = redact

    def is_failing(self, signal: str, target: str) -> bool:
        return (signal, target) in self._failing

    def succeeded(self, signal: str, target: str) -> None:
        self._failing.discard((signal, target))

    def register(self, signal: str, target: str) -> None:
        """``signal`` is exported to ``target`` (its warning names the signals sent there)."""
        self._targets.setdefault(place(target), set()).add(signal)

    def failed(self, signal: str, target: str, reason: str) -> None:
        self._failing.add((signal, target))
        others = sorted(self._targets.get(place(target), set()) - {signal})
        verb = "are" if others else "is"
        self.warn_once(
            f"otel_dynamo: could not export {signal} to {target}: {reason}. The job "
            f"continues; {_signals([signal, *others])} sent there {verb} dropped while it "
            f"fails (further export problems are logged at DEBUG on the {LOGGER_NAME!r} "
            "logger)"
        )

    def dropped(self, signal: str, reason: str) -> None:
        self.warn_once(f"otel_dynamo: dropping {signal}: {reason}; the job continues")

    def warn_once(self, message: str) -> None:
        message = self.redact(message)
        # The first warning is written while the lock is held: a thread that claimed it
        # (an exporter's, during the exit flush) is never left unwritten while another
        # thread's later warning, seeing it claimed, goes to DEBUG and the process ends.
        with self._lock:
            first, self._warned = not self._warned, True
            if first:
                _log.warning(message)
                return
        _log.debug(message)

    def sdk_record(self, signal: str) -> RecordSink:
        """A sink for SDK records logged outside an export (e.g. "Queue full")."""

        def sink(record: logging.LogRecord) -> None:
            message = record.getMessage()
            if record.levelno >= logging.WARNING and message.startswith(
                sdk_private.EXPORT_QUEUE_FULL_PREFIX
            ):
                self.dropped(signal, "the export queue is full (exporter too slow or down)")
            else:
                _log.debug("%s (from %s)", self.redact(message), record.name)

        return sink


_PLACE = re.compile(r"\s*(?:[a-z][a-z0-9+.-]*://)?([^/\s]+)")


def place(target: str) -> str:
    """Where a target sends: a collector's host and port (``http://h:4318/v1/traces`` and
    ``h:4318`` alike), or the target as it is (a directory)."""
    found = _PLACE.match(target)
    return target if found is None else found[1]


def _signals(signals: list[str]) -> str:
    return signals[0] if len(signals) == 1 else ", ".join(signals[:-1]) + " and " + signals[-1]


class quiet:
    """Divert SDK log records of this thread to ``sink`` for the duration of the block."""

    __slots__ = ("_previous", "_sink")

    def __init__(self, sink: RecordSink) -> None:
        self._sink = sink
        self._previous: RecordSink | None = None

    def __enter__(self) -> None:
        self._previous = getattr(_local, "sink", None)
        _local.sink = self._sink

    def __exit__(self, *exc_info: object) -> None:
        _local.sink = self._previous


class _DivertFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        sink = getattr(_local, "sink", None)
        if sink is None:
            return True
        with contextlib.suppress(Exception):  # never break the export path
            sink(record)
        return False


_FILTER = _DivertFilter()


def install_quiet_filter() -> None:
    """Attach the diverting filter to every existing SDK/exporter logger (idempotent).

    Called after exporter modules are imported, since a filter only applies to the
    logger it is attached to, not to its children.
    """
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        ours = name.startswith(QUIET_LOGGER_PREFIXES)
        if ours and isinstance(logger, logging.Logger) and _FILTER not in logger.filters:
            logger.filters.insert(0, _FILTER)  # before the SDK's DuplicateFilter


def record_collector(
    messages: list[str], redact: Callable[[str], str] = REDACT_SHAPES
) -> RecordSink:
    """A sink keeping WARNING+ messages (the reason of a failed export), rest to DEBUG."""

    def sink(record: logging.LogRecord) -> None:
        message = redact(record.getMessage())
        if record.levelno >= logging.WARNING:
            messages.append(message)
        _log.debug("%s (from %s)", message, record.name)

    return sink
