"""Errors inside otel_dynamo's own code: logged once, never raised into the job.

The first internal error of a process is a WARNING with its traceback on the
``otel_dynamo`` logger; later ones are DEBUG, so a broken extractor or processor that
fails on every compile cannot flood the job's logs.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, TypeVar

from opentelemetry import trace
from opentelemetry.trace import Span

T = TypeVar("T")
_log = logging.getLogger(__name__)
_lock = threading.Lock()
_reported = False


def class_name(obj: object) -> str:
    """Fully qualified class name of ``obj`` (bare for builtins), as OpenTelemetry's
    ``error.type`` and ``exception.type`` ask."""
    cls = type(obj)
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def report_internal_error(what: str, error: BaseException | None = None) -> None:
    """Log ``error`` (by default the exception being handled): a warning the first time,
    debug afterwards."""
    global _reported
    with _lock:
        first, _reported = not _reported, True
    level = logging.WARNING if first else logging.DEBUG
    exc_info = error if error is not None else True
    _log.log(level, "otel_dynamo: %s (ignored; the job is not affected)", what, exc_info=exc_info)


class Guarded:
    """The error boundary of a block of recording code (see :func:`guarded`)."""

    __slots__ = ("_what",)

    def __init__(self, what: str) -> None:
        self._what = what

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, error: BaseException | None, traceback: Any) -> bool:
        if isinstance(error, Exception):
            report_internal_error(self._what, error)
            return True  # the block is left, the job goes on
        return False  # KeyboardInterrupt, SystemExit: not ours to swallow


def guarded(what: str = "instrumentation error") -> Guarded:
    """``with guarded():`` runs a block of recording code; an exception inside it is
    reported once (``report_internal_error``) and ends the block, never the job. A class
    of this module, not ``contextlib``: its frames are otel_dynamo's, which Dynamo never
    evaluates (``_sources.dynamo_exclusion``)."""
    return Guarded(what)


def end_span(span: Span, end_time: int | None = None) -> None:
    """End a span; a span processor that raises is reported, not propagated."""
    try:
        span.end(end_time=end_time)
    except Exception:
        report_internal_error("a span processor failed at span end")


class SafeTracer(trace.Tracer):
    """A tracer whose ``start_span`` never raises: a failing processor gives a no-op span."""

    def __init__(self, tracer: trace.Tracer) -> None:
        self._tracer = tracer

    def start_span(self, name: str, *args: Any, **kwargs: Any) -> Span:
        try:
            return self._tracer.start_span(name, *args, **kwargs)
        except Exception:
            report_internal_error("a span processor failed at span start")
            return trace.INVALID_SPAN

    def start_as_current_span(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self._tracer.start_as_current_span(name, *args, **kwargs)

    @property
    def inner(self) -> trace.Tracer:
        return self._tracer
