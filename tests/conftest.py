"""Shared fixtures: a real TracerProvider with an in-memory exporter, fresh Dynamo state."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

OUTPUT_DIR_VARIABLE = "OTEL_DYNAMO_OUTPUT_DIR"
INDUCTOR_CACHE_VARIABLE = "TORCHINDUCTOR_CACHE_DIR"

TORCH_FACING_FOLDERS = frozenset({"sources", "realmodels", "fixes"})
"""Test folders whose every test checks something a torch release can change (a hook's
fit, torch's own counts and texts as recorded): ``.ci/torch_matrix.sh`` runs these tests
on each other torch (``-m torch_facing``). A module elsewhere whose outcome torch decides
(Dynamo's decisions traced against plain, its backend match) joins with
``pytestmark = pytest.mark.torch_facing``; tests that compile only to exercise
otel_dynamo's own process handling (enablement, signals, exporters) run on the pinned
torch only."""

OTEL_FACING_FOLDERS = frozenset({"providers", "lifecycle", "recording", "enablement", "realmodels"})
"""Test folders whose every test goes through OpenTelemetry's API or SDK (providers,
exporters, flush and exit, what is recorded, enablement, real models traced): ``.ci/
otel_oldest.sh`` runs them on the oldest OpenTelemetry release train of the range
(``-m otel_facing``). A module elsewhere joins with ``pytestmark = pytest.mark.otel_facing``."""


def pytest_configure(config: pytest.Config) -> None:
    """The real-signal tests need default signal dispositions: a suite started under
    ``nohup`` or as a background job inherits SIGHUP or SIGINT ignored, and so would every
    process it starts (a job that ignores SIGHUP rightly survives it). No COLUMNS."""
    # pytest-xdist's workers set COLUMNS=80; the report's piped output follows COLUMNS,
    # and the tests read it as a pipe without one (a test that wants a width sets it).
    os.environ.pop("COLUMNS", None)
    if signal.getsignal(signal.SIGHUP) == signal.SIG_IGN:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        folder = Path(str(item.fspath)).parent.name
        if folder in TORCH_FACING_FOLDERS:
            item.add_marker(pytest.mark.torch_facing)
        if folder in OTEL_FACING_FOLDERS:
            item.add_marker(pytest.mark.otel_facing)


@pytest.fixture(scope="session", autouse=True)
def _telemetry_outside_the_checkout(tmp_path_factory: pytest.TempPathFactory):
    """Tests write only inside temporary directories: telemetry a test does not direct
    elsewhere (in this process, or in a child started with ``child_environ``) goes to one
    directory of the session, never to the checkout's ``./otel-dynamo``; inductor's
    generated code to another."""
    placed = {
        OUTPUT_DIR_VARIABLE: tmp_path_factory.mktemp("unrouted-telemetry"),
        # inductor's code cache too (torch's default is /tmp/torchinductor_<user>)
        INDUCTOR_CACHE_VARIABLE: tmp_path_factory.mktemp("inductor-cache"),
    }
    previous = {name: os.environ.get(name) for name in placed}
    os.environ.update({name: str(path) for name, path in placed.items()})
    yield
    for name, value in previous.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture
def exporter():
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter):
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield tracer_provider
    tracer_provider.shutdown()


@pytest.fixture
def records():
    """In-memory OpenTelemetry log records (what ``logger_provider`` exported)."""
    from _telemetry_support import in_memory_log_exporter

    return in_memory_log_exporter()


@pytest.fixture
def logger_provider(records):
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor

    provider = LoggerProvider(shutdown_on_exit=False)
    provider.add_log_record_processor(SimpleLogRecordProcessor(records))
    return provider


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    """Each test compiles from scratch (no cached frames from an earlier test)."""
    try:
        import torch._dynamo
    except ImportError:  # tests that do not need torch
        yield
        return
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()
