"""A span exporter a third-party package registers in the SDK's entry points (tests).

It appends each exported span's name to the file named by FAKE_EXPORTER_OUT, so a test
in another process can see what reached it.
"""

from __future__ import annotations

import os

from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import IdGenerator


class LineExporter(SpanExporter):
    """Built as the SDK builds registered exporters: with no arguments."""

    def __init__(self) -> None:
        self._path = os.environ["FAKE_EXPORTER_OUT"]

    def export(self, spans):  # type: ignore[no-untyped-def]
        with open(self._path, "a", encoding="utf-8") as out:
            out.writelines(f"{span.name}\n" for span in spans)
        return SpanExportResult.SUCCESS


class BrokenExporter:
    """An exporter that cannot be built (a credential it reads is missing)."""

    def __init__(self) -> None:
        raise RuntimeError("the fake backend's credentials are missing")


class SlowImportExporter(LineExporter):
    """Imports a module whose import takes a while when it is built, as exporters import
    their transport (gRPC's channel) or encoders on construction."""

    def __init__(self) -> None:
        super().__init__()
        from fake_exporter_pkg import slow_import  # noqa: F401


def make_sampler(arg: str):  # type: ignore[no-untyped-def]
    """A sampler factory as the SDK calls registered ones: with OTEL_TRACES_SAMPLER_ARG."""
    from opentelemetry.sdk.trace.sampling import TraceIdRatioBased

    return TraceIdRatioBased(float(arg))


class CountingIdGenerator(IdGenerator):
    """An id generator registered by name (OTEL_PYTHON_ID_GENERATOR=counting)."""

    def __init__(self) -> None:
        self._next = 0

    def generate_span_id(self) -> int:
        self._next += 1
        return self._next

    def generate_trace_id(self) -> int:
        self._next += 1
        return (1 << 64) + self._next
