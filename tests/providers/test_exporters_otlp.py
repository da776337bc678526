"""OTLP export over gRPC and HTTP/protobuf to real receivers (oteltest sinks)."""

from __future__ import annotations

import contextlib
import os
import sys
import threading

import pytest
from _export_support import (
    clear_otel_environ,
    free_port,
    grpc_sink,
    http_sink,
    proto_attributes,
    wait_until,
)

from otel_dynamo._config.settings import Settings
from otel_dynamo._providers.setup import setup_providers

PROTOCOLS = {"grpc": grpc_sink, "http/protobuf": http_sink}


@pytest.fixture(autouse=True)
def _no_stray_otel_variables(monkeypatch):
    clear_otel_environ(monkeypatch)


def _environ(protocol: str, port: int, **extra: str) -> dict[str, str]:
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
        "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
        **extra,
    }


def _emit_all(telemetry):
    tracer = telemetry.tracer_provider.get_tracer("test")
    with (
        tracer.start_as_current_span("parent") as parent,
        tracer.start_as_current_span("child", attributes={"torch.compile.id": "1/0"}),
    ):
        telemetry.logger_provider.get_logger("test").emit(
            body="inside", event_name="test.event", attributes={"k": "v"}
        )
    telemetry.meter_provider.get_meter("test").create_counter("test.count").add(5)
    return parent


@contextlib.contextmanager
def _exported(protocol: str, tmp_path, **extra: str):
    """A real receiver that got ``_emit_all``'s telemetry over ``protocol``; yields
    (receiver, the parent span, whether shutdown finished in time)."""
    port = free_port()
    with PROTOCOLS[protocol](port) as sink:
        telemetry = setup_providers(
            Settings(output_dir=str(tmp_path)), environ=_environ(protocol, port, **extra)
        )
        parent = _emit_all(telemetry)
        finished = telemetry.shutdown(5.0)
        yield sink, parent, finished


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_spans_arrive_with_structure_and_attributes(protocol, tmp_path):
    """Parent and child spans reach the receiver with the parent link and attributes."""
    with _exported(protocol, tmp_path) as (sink, parent, finished):
        assert finished is True
        spans = {span.name: span for span in sink.spans()}
    assert sorted(spans) == ["child", "parent"]
    assert spans["child"].parent_span_id == spans["parent"].span_id
    assert spans["parent"].trace_id.hex() == format(parent.get_span_context().trace_id, "032x")
    assert proto_attributes(spans["child"].attributes) == {"torch.compile.id": "1/0"}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_log_record_arrives_in_the_span_context(protocol, tmp_path):
    """The log record arrives with event name, body, attributes and the child's trace ids."""
    with _exported(protocol, tmp_path) as (sink, _parent, _finished):
        (record,) = sink.log_records()
        child = next(span for span in sink.spans() if span.name == "child")
    assert (record.event_name, record.body.string_value) == ("test.event", "inside")
    assert proto_attributes(record.attributes) == {"k": "v"}
    assert (record.trace_id, record.span_id) == (child.trace_id, child.span_id)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_metrics_arrive(protocol, tmp_path):
    """The counter is exported (at the latest by the shutdown's final collection)."""
    with _exported(protocol, tmp_path) as (sink, _parent, _finished):
        assert sink.metric_names() == {"test.count"}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_headers_are_sent(protocol, tmp_path):
    """OTEL_EXPORTER_OTLP_HEADERS reach the receiver on every signal."""
    headers = {"OTEL_EXPORTER_OTLP_HEADERS": "x-tenant=ml%20team"}
    with _exported(protocol, tmp_path, **headers) as (sink, _parent, _finished):
        tenants = {
            signal: {h.get("x-tenant") for h in sink.headers[signal]} for signal in sink.headers
        }
    assert tenants == {"traces": {"ml team"}, "logs": {"ml team"}, "metrics": {"ml team"}}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_resource_reaches_the_receiver(protocol, tmp_path, monkeypatch):
    """Resource attributes (service name, rank) travel with the spans."""
    monkeypatch.setenv("OTEL_SERVICE_NAME", "trainer")
    monkeypatch.setenv("RANK", "2")
    with _exported(protocol, tmp_path) as (sink, _parent, _finished):
        resource = sink.resource_attributes("traces")
    assert (resource["service.name"], resource["torch.distributed.rank"]) == ("trainer", 2)


def test_spans_are_exported_while_the_job_runs(tmp_path):
    """Without any shutdown, the batch processor delivers spans within its schedule delay."""
    port = free_port()
    environ = _environ("grpc", port, OTEL_BSP_SCHEDULE_DELAY="100")
    with grpc_sink(port) as sink:
        telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ=environ)
        _emit_all(telemetry)
        assert wait_until(lambda: len(sink.spans()) == 2, timeout=5.0)
        telemetry.shutdown(2.0)


def test_per_signal_routing_keeps_other_signals_on_files(tmp_path):
    """A traces-only endpoint sends spans there; logs and metrics still go to files."""
    port = free_port()
    environ = {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"http://127.0.0.1:{port}"}
    with grpc_sink(port) as sink:
        telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ=environ)
        _emit_all(telemetry)
        telemetry.shutdown(5.0)
        assert (len(sink.spans()), sink.log_records(), sink.metric_names()) == (2, [], set())
    assert sorted(path.name.split("-")[0] for path in tmp_path.iterdir()) == ["logs", "metrics"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_malformed_header_items_are_skipped_and_the_rest_sent(protocol, tmp_path, monkeypatch):
    """OTEL_EXPORTER_OTLP_HEADERS with one malformed item: the well-formed one (the token)
    is sent, as the SDK would, and nothing of the malformed one."""
    headers = "authorization=Bearer%20TOK,junk"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", headers)
    with _exported(protocol, tmp_path, OTEL_EXPORTER_OTLP_HEADERS=headers) as (sink, *_):
        sent = [dict(h) for each in sink.headers.values() for h in each]
    assert sent
    assert {h.get("authorization") for h in sent} == {"Bearer TOK"}
    assert not any("junk" in key or "junk" in value for h in sent for key, value in h.items())


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_exporters_send_the_parsed_headers_never_their_own_reading(protocol, tmp_path, monkeypatch):
    """The process environment says one thing, the configuration we parsed another (as
    when it comes from a file): what is sent is ours, never the exporter's own reading."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20TOK")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "authorization=Bearer%20TOK")
    with _exported(protocol, tmp_path, OTEL_EXPORTER_OTLP_HEADERS="x-tenant=ml") as (sink, *_):
        sent = [dict(h) for each in sink.headers.values() for h in each]
    assert sent
    assert {h.get("x-tenant") for h in sent} == {"ml"}
    assert not any("authorization" in h for h in sent)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_parsed_headers_are_sent_and_environment_left_as_it_was(protocol, tmp_path, monkeypatch):
    """Valid headers in the real environment are sent once, as parsed; building the
    exporters leaves os.environ as it found it."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=ml%20team")
    with _exported(protocol, tmp_path, OTEL_EXPORTER_OTLP_HEADERS="x-tenant=ml%20team") as (
        sink,
        *_,
    ):
        tenants = {h.get("x-tenant") for each in sink.headers.values() for h in each}
    assert tenants == {"ml team"}
    assert os.environ["OTEL_EXPORTER_OTLP_HEADERS"] == "x-tenant=ml%20team"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_password_in_the_endpoint_is_never_printed(protocol, tmp_path, caplog, capfd):
    """user:password in OTEL_EXPORTER_OTLP_ENDPOINT: the export warning for a closed port
    names the endpoint with ***, and the password appears in no log record or output."""
    port = free_port()
    environ = _environ(protocol, port)
    environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://trainer:s3cret@127.0.0.1:{port}"
    with caplog.at_level("DEBUG"):
        telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ=environ)
        _emit_all(telemetry)
        telemetry.shutdown(5.0)
    printed = caplog.text + "".join(capfd.readouterr())
    assert "s3cret" not in printed
    assert "***@127.0.0.1" in printed


def test_grpc_host_and_port_with_insecure_true_reaches_a_plaintext_receiver(tmp_path):
    """OTEL_EXPORTER_OTLP_ENDPOINT=127.0.0.1:PORT (no scheme, as the SDK accepts for gRPC)
    with OTEL_EXPORTER_OTLP_INSECURE=true: spans, logs and metrics arrive in plaintext."""
    port = free_port()
    environ = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"127.0.0.1:{port}",
        "OTEL_EXPORTER_OTLP_INSECURE": "true",
    }
    with grpc_sink(port) as sink:
        telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ=environ)
        _emit_all(telemetry)
        telemetry.shutdown(5.0)
        assert len(sink.spans()) == 2
        assert sink.metric_names() >= {"test.count"}
    assert list(tmp_path.iterdir()) == []  # nothing fell back to files


def test_large_log_records_are_sent_in_pieces_a_grpc_receiver_accepts(tmp_path):
    """12 records of 600,000 characters (7 MB, over gRPC's default 4 MiB per message) all
    reach a real gRPC receiver, in several requests of at most ~2 MiB of text."""
    port = free_port()
    text = "x" * 600_000
    with grpc_sink(port) as sink:
        telemetry = setup_providers(
            Settings(output_dir=str(tmp_path)), environ=_environ("grpc", port)
        )
        logger = telemetry.logger_provider.get_logger("test")
        for index in range(12):
            logger.emit(body="big", event_name="test.big", attributes={"i": index, "t": text})
        assert telemetry.shutdown(10.0) is True
        records = sink.log_records()
        requests = len(sink.requests["logs"])
    assert sorted(proto_attributes(r.attributes)["i"] for r in records) == list(range(12))
    assert requests >= 4


def _has_json_http() -> bool:
    """Whether OpenTelemetry's OTLP/JSON-over-HTTP exporter is installed (the json-http
    extra; it exists from 1.43 / 0.64b0 on)."""
    try:
        import opentelemetry.exporter.otlp.json.http  # noqa: F401
    except ImportError:
        return False
    return True


ALL_PROTOCOLS = (
    "grpc",
    "http/protobuf",
    pytest.param(
        "http/json",
        marks=pytest.mark.skipif(not _has_json_http(), reason="no OTLP/JSON HTTP exporter"),
    ),
)


@pytest.mark.parametrize("protocol", ALL_PROTOCOLS)
def test_another_thread_never_sees_the_header_variables_missing(protocol, monkeypatch):
    """While exporters are built (again and again, every signal), a thread reading
    os.environ all the time always finds the header variables, unchanged: building an
    exporter reads the environment, never changes it."""
    from otel_dynamo._config.otel_env import OtlpTarget
    from otel_dynamo._config.otel_variables import SIGNALS
    from otel_dynamo._providers.exporters import otlp_factory

    expected = {
        "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20TOK,junk",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-tenant=ml",
    }
    for name, value in expected.items():
        monkeypatch.setenv(name, value)
    seen: list[dict[str, str | None]] = []
    reads = 0
    stop = threading.Event()

    def read() -> None:
        nonlocal reads
        while not stop.is_set():
            found = {name: os.environ.get(name) for name in expected}
            reads += 1
            if found != expected:
                seen.append(found)

    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the reader runs between any two steps of a build
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    target = OtlpTarget(protocol, "http://127.0.0.1:9", headers=(("x-tenant", "ours"),))
    try:
        for _ in range(20):
            for signal in SIGNALS:
                otlp_factory(signal, target)[0]().shutdown()
    finally:
        stop.set()
        reader.join()
        sys.setswitchinterval(switch_interval)
    assert reads > 0
    assert seen == []


@pytest.mark.parametrize("protocol", ALL_PROTOCOLS)
def test_a_malformed_header_item_is_never_logged_while_an_exporter_is_built(
    protocol, monkeypatch, caplog, capfd
):
    """The SDK's exporters read the header variable themselves and log a malformed item
    raw (here a token missing its key): that record is set aside, never printed."""
    from otel_dynamo._config.otel_env import OtlpTarget
    from otel_dynamo._providers.exporters import otlp_factory

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "Bearer%20RAWTOKEN4242")
    target = OtlpTarget(protocol, "http://127.0.0.1:9")
    with caplog.at_level("DEBUG"):
        otlp_factory("traces", target)[0]().shutdown()
    assert "RAWTOKEN4242" not in caplog.text + "".join(capfd.readouterr())
