"""Bounded everything, in process: shutdown and flush deadlines, queue size, no raising."""

from __future__ import annotations

import dataclasses
import logging
import shutil
import time

import pytest
from _export_support import (
    BlackHole,
    clear_otel_environ,
    free_port,
    sdk_warns_of_a_full_queue,
    wait_until,
)

from otel_dynamo._config import settings
from otel_dynamo._config.settings import Settings
from otel_dynamo._providers.setup import setup_providers

SLACK_S = 0.3
"""Scheduling noise allowed on top of a deadline."""


@pytest.fixture(autouse=True)
def _no_stray_otel_variables(monkeypatch):
    clear_otel_environ(monkeypatch)


def _otel_dynamo_warnings(caplog) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("otel_dynamo") and r.levelno >= logging.WARNING
    ]


def _spans(telemetry, count: int) -> None:
    tracer = telemetry.tracer_provider.get_tracer("test")
    for index in range(count):
        with tracer.start_as_current_span("op", attributes={"index": index}):
            pass


@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
def test_shutdown_returns_within_its_timeout_against_a_black_hole(protocol, tmp_path, caplog):
    """A collector that accepts and never answers: shutdown(0.5) returns in time, and the
    job is told at most once. Usually the export is still stuck at the deadline (False,
    "did not finish"); with gRPC, closing the channel may cancel the stuck export first, and
    under load the exporter's timeout may fire first (True, the export failure warning if
    not given before); or the cancelled export's failure is told just before the deadline
    passes (False, that warning alone): all are bounded and all drop what was unsent."""
    with BlackHole() as hole:
        environ = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{hole.port}",
            "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
            "OTEL_BSP_SCHEDULE_DELAY": "50",
        }
        telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ=environ)
        _spans(telemetry, 20)
        # wait until an export is stuck on the open connection (load can delay it)
        assert wait_until(lambda: hole.accepted, timeout=10)
        time.sleep(0.2)
        started = time.monotonic()
        finished = telemetry.shutdown(0.5)
        elapsed = time.monotonic() - started
    assert elapsed < 0.5 + SLACK_S
    warnings = _otel_dynamo_warnings(caplog)
    if finished:
        # the stuck export ended in time: gRPC cancelled it on close, or (under load) the
        # exporter's own timeout, cut to the budget, fired first; its failure warning is
        # given once per process, so an earlier test may have had it
        assert len(warnings) <= 1, warnings
        assert all(w.startswith("otel_dynamo: could not export traces to ") for w in warnings)
    else:
        (warning,) = warnings  # told once: by whichever came first
        assert warning.startswith(
            (
                "otel_dynamo: telemetry shutdown did not finish within 0.5 s;",
                "otel_dynamo: could not export traces to ",
            )
        )


@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
def test_shutdown_against_a_closed_port_does_not_wait_for_retries(protocol, tmp_path, caplog):
    """Nothing listening: shutdown gives up the retries at once and warns once."""
    port = free_port()
    environ = {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"http://127.0.0.1:{port}/v1/traces",
        "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
    }
    telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ=environ)
    _spans(telemetry, 20)
    started = time.monotonic()
    telemetry.shutdown(2.0)
    assert time.monotonic() - started < SLACK_S
    # an earlier test's exporter thread may still log its own (other port) warning here
    (warning,) = [w for w in _otel_dynamo_warnings(caplog) if f":{port}/" in w]
    expected = f"otel_dynamo: could not export traces to http://127.0.0.1:{port}/v1/traces (OTLP "
    assert warning.startswith(expected)


def test_force_flush_is_bounded(tmp_path):
    """force_flush(0.3) against a black hole returns False within its timeout."""
    with BlackHole() as hole:
        environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{hole.port}"}
        telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ=environ)
        _spans(telemetry, 5)
        started = time.monotonic()
        flushed = telemetry.force_flush(0.3)
        elapsed = time.monotonic() - started
        telemetry.shutdown(0.2)
    assert (flushed, elapsed < 0.3 + SLACK_S) == (False, True)


def test_span_processor_force_flush_accepts_none_as_the_sdk_does():
    """BoundedBatchSpanProcessor.force_flush(None), as the SDK's signature allows, flushes
    (with the SDK's default deadline) instead of raising TypeError."""
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from otel_dynamo._config.otel_env import BatchOptions
    from otel_dynamo._providers.batch import BoundedBatchSpanProcessor

    processor = BoundedBatchSpanProcessor(
        InMemorySpanExporter(), BatchOptions(), on_sdk_record=lambda record: None
    )
    try:
        assert processor.force_flush(None) is True
        assert processor.force_flush() is True
    finally:
        processor.shutdown()


def test_span_queue_never_exceeds_its_bound_and_drops_are_one_warning(tmp_path, caplog):
    """With the exporter stuck, the queue stays at OTEL_BSP_MAX_QUEUE_SIZE; one warning
    (where the SDK says that it drops: 1.38's batch processor drops without a word)."""
    if not sdk_warns_of_a_full_queue():
        pytest.skip("this SDK's batch processor drops without a word: no drop is reported")
    with BlackHole() as hole:
        environ = {
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"http://127.0.0.1:{hole.port}",
            "OTEL_LOGS_EXPORTER": "none",
            "OTEL_METRICS_EXPORTER": "none",
            "OTEL_BSP_MAX_QUEUE_SIZE": "50",
            "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "10",
        }
        telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ=environ)
        (processor,) = telemetry.tracer_provider._active_span_processor._span_processors
        queue = processor._batch_processor._queue
        sizes = []
        for _ in range(50):
            _spans(telemetry, 100)
            sizes.append(len(queue))
        telemetry.shutdown(0.2)
    assert max(sizes) == 50
    warnings = _otel_dynamo_warnings(caplog)
    assert warnings[0] == (
        "otel_dynamo: dropping traces: the export queue is full (exporter too slow or down); "
        "the job continues"
    )
    assert len(warnings) == 1


def test_exporter_that_cannot_be_built_never_raises(tmp_path, caplog):
    """Output directory removed after setup: the span file can't be opened; one warning."""
    out = tmp_path / "out"
    telemetry = setup_providers(
        Settings(output_dir=str(out)), environ={"OTEL_BSP_SCHEDULE_DELAY": "50"}
    )
    shutil.rmtree(out)
    _spans(telemetry, 3)
    telemetry.shutdown(1.0)
    (warning,) = _otel_dynamo_warnings(caplog)
    assert warning.startswith(f"otel_dynamo: could not export traces to {out}: ")
    assert "FileNotFoundError" in warning  # the file is created at the first write


def test_sdk_log_lines_do_not_reach_the_root_logger(tmp_path, caplog):
    """The SDK's own retry/failure records are diverted: none reach logging's handlers."""
    environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{free_port()}"}
    with caplog.at_level(logging.DEBUG):
        telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ=environ)
        _spans(telemetry, 5)
        telemetry.shutdown(1.0)
    sdk = [
        r
        for r in caplog.records
        if r.name.startswith("opentelemetry") and r.levelno >= logging.WARNING
    ]
    assert sdk == []


def test_the_exit_flush_gives_local_files_the_local_bound(tmp_path):
    """All telemetry to files (the default): the exit flush may take up to
    DEFAULT_LOCAL_SHUTDOWN_TIMEOUT_SECONDS (10 s), so a machine busy with every rank's exit
    still writes them whole."""
    telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ={})
    try:
        assert telemetry.shutdown_timeout_s == settings.DEFAULT_LOCAL_SHUTDOWN_TIMEOUT_SECONDS
        assert telemetry.shutdown_timeout_s == 10.0
    finally:
        telemetry.shutdown()


def test_the_exit_flush_gives_a_collector_the_network_bound(tmp_path):
    """One signal to an OTLP endpoint: the whole exit flush is bounded by
    DEFAULT_SHUTDOWN_TIMEOUT_SECONDS (0.5 s), so a collector that is down never holds the
    job's exit longer."""
    environ = {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"http://127.0.0.1:{free_port()}/v1/traces"}
    telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ=environ)
    try:
        assert telemetry.shutdown_timeout_s == settings.DEFAULT_SHUTDOWN_TIMEOUT_SECONDS
        assert telemetry.shutdown_timeout_s == 0.5
    finally:
        telemetry.shutdown()


def test_a_set_shutdown_timeout_is_the_bound_wherever_telemetry_goes(tmp_path):
    """OTEL_DYNAMO_SHUTDOWN_TIMEOUT=2 bounds the exit flush at 2 s, to files as to a
    collector."""
    configured = settings.load_settings({"OTEL_DYNAMO_SHUTDOWN_TIMEOUT": "2"})
    environ = {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"http://127.0.0.1:{free_port()}/v1/traces"}
    for otel_environ in ({}, environ):
        telemetry = setup_providers(
            dataclasses.replace(configured, output_dir=str(tmp_path)), environ=otel_environ
        )
        try:
            assert telemetry.shutdown_timeout_s == 2.0
        finally:
            telemetry.shutdown()


def test_a_failing_collector_does_not_cost_the_files_beside_it_their_exit_flush(tmp_path):
    """Spans go to files and to a collector that refuses them: once the collector has
    failed, the exit flush still writes every span to the file (failing is per target)."""
    environ = {
        "OTEL_TRACES_EXPORTER": "otlp,otlp_file",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"http://127.0.0.1:{free_port()}/v1/traces",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
    }
    telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ=environ)
    _spans(telemetry, 1)
    telemetry.force_flush(5.0)  # the collector's export fails: it is known to be down
    _spans(telemetry, 2)
    assert telemetry.shutdown(5.0) is True
    (written,) = tmp_path.glob("traces-*.jsonl")
    spans = written.read_text().count('"name":"op"')
    assert spans == 3
