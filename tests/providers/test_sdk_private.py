"""Canaries for otel_dynamo/_providers/sdk_private.py: each private name or log phrase of
the installed OpenTelemetry SDK that otel_dynamo relies on is still there, of the type
expected, and still does what it is used for. A failure here after an SDK upgrade names
the access to rework (docs/architecture.md, "Private OpenTelemetry names")."""

from __future__ import annotations

import ast
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import pytest
from opentelemetry import metrics
from opentelemetry._logs import LoggerProvider as ApiLoggerProvider
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
    OTLPSpanExporter as GrpcSpanExporter,
)
from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
    OTLPSpanExporter as HttpSpanExporter,
)
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider, UpDownCounter
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    ConsoleMetricExporter,
    InMemoryMetricReader,
)
from opentelemetry.sdk.metrics.view import ExplicitBucketHistogramAggregation, LastValueAggregation
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from otel_dynamo._providers import sdk_private
from otel_dynamo._providers.safe_exporters import failure_reason

CLOSED_ENDPOINT = "127.0.0.1:1"
"""Nothing listens on port 1: an export there fails at once with a retryable error."""

HURRY_AFTER_S = 0.3
"""How long the failing export runs before it is hurried (it is in its retry backoff)."""

HURRIED_EXPORT_LIMIT_S = 5.0
"""A hurried export ends well before the exporter's first backoff (1 s) plus its timeout."""

CANARY_ATTRIBUTE = "otel_dynamo.canary"

PINNED_SDK = next(
    line.split("==", 1)[1]
    for line in (Path(__file__).parents[2] / "constraints.txt").read_text().splitlines()
    if line.startswith("opentelemetry-sdk==")
)
ON_PINNED_TRAIN = version("opentelemetry-sdk") == PINNED_SDK
"""CI's newest train (constraints.txt), where every private name must be found."""


def present(found: bool) -> bool:
    """Whether this train has a private name. On the pinned train each must be there, so
    a release that drops one fails here; on an older train of the range (CI's oldest,
    .ci/otel_oldest.sh) a missing one means its fallback, which the caller then checks."""
    assert found or not ON_PINNED_TRAIN, f"missing on the pinned train {PINNED_SDK}"
    return found


@dataclass(frozen=True)
class FailedExport:
    messages: list[str]
    seconds: float
    raised: str | None
    """What the export raised instead of returning a failure (1.38's HTTP exporter at a
    refused connection), as SafeExport words it for its reason."""


class _Messages(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            self.messages.append(record.getMessage())


def _hurried_failed_export(exporter: SpanExporter) -> FailedExport:
    """Export one span to a closed port, hurry the exporter while it waits to retry, and
    collect what the exporters logged (``opentelemetry.exporter``)."""
    provider = TracerProvider()
    with provider.get_tracer("canary").start_as_current_span("s") as span:
        pass
    handler = _Messages()
    logger = logging.getLogger("opentelemetry.exporter")
    logger.addHandler(handler)
    timer = threading.Timer(HURRY_AFTER_S, sdk_private.hurry_otlp_exporter, (exporter, 0.1))
    started = time.monotonic()
    timer.start()
    raised = None
    try:
        result = exporter.export([span])  # type: ignore[list-item]
    except Exception as error:
        raised, result = f"{type(error).__name__}: {error}", SpanExportResult.FAILURE
    finally:
        timer.join()
        logger.removeHandler(handler)
        exporter.shutdown()
    assert result is SpanExportResult.FAILURE
    return FailedExport(handler.messages, time.monotonic() - started, raised)


def logged_its_failure(failure: FailedExport) -> bool:
    """Whether the exporter failed by logging (every exporter on the pinned train); one
    that raised instead must have said why (SafeExport makes that the reason)."""
    if not present(failure.raised is None):
        assert "Connection refused" in str(failure.raised)
        return False
    return True


@pytest.fixture(scope="module")
def grpc_failure() -> FailedExport:
    return _hurried_failed_export(GrpcSpanExporter(endpoint=CLOSED_ENDPOINT, insecure=True))


@pytest.fixture(scope="module")
def http_failure() -> FailedExport:
    return _hurried_failed_export(HttpSpanExporter(endpoint=f"http://{CLOSED_ENDPOINT}/v1/traces"))


@pytest.fixture
def sdk_tracer_provider() -> Iterator[TracerProvider]:
    provider = TracerProvider()
    yield provider
    provider.shutdown()


# --- Exporters


def _json_file_exporter() -> type:
    """OpenTelemetry's JSON-file span exporter (1.43 / 0.64b0 on), which a job may name by
    entry point (``otlp_json_file``); older trains have none to reach into."""
    module = pytest.importorskip("opentelemetry.exporter.otlp.json.file.trace_exporter")
    exporter: type = module.FileSpanExporter
    return exporter


def test_file_exporter_stream_is_found_when_it_owns_it(tmp_path: Path):
    """A JSON-file exporter given a path exposes the file it opened, open, at that path."""
    path = tmp_path / "spans.jsonl"
    exporter = _json_file_exporter()(path)
    try:
        stream = sdk_private.owned_file_stream(exporter)
        assert stream is not None
        assert not stream.closed
        assert Path(stream.name) == path
    finally:
        exporter.shutdown()


def test_file_exporter_stream_is_not_taken_when_given(tmp_path: Path):
    """A JSON-file exporter writing to a stream it was given has none of its own to disarm."""
    with (tmp_path / "given.jsonl").open("w") as given:
        assert sdk_private.owned_file_stream(_json_file_exporter()(stream=given)) is None


def _http_retry_state(http: object) -> tuple[object, str]:
    """Where an HTTP exporter keeps its timeout and shutdown event, and the event's name:
    its ``_client`` from 1.39 (``_shutdown_event``), itself on 1.38
    (``_shutdown_in_progress``)."""
    client = getattr(http, "_client", None)
    if client is not None:
        return client, "_shutdown_event"
    return http, "_shutdown_in_progress"


def test_otlp_exporters_keep_a_float_timeout_and_a_shutdown_event():
    """gRPC exporters keep ``_timeout`` and ``_shutdown_in_progress``; HTTP exporters keep
    ``_timeout`` and a shutdown event on their ``_client`` (1.39 on) or on themselves."""
    grpc = GrpcSpanExporter(endpoint=CLOSED_ENDPOINT, insecure=True)
    http = HttpSpanExporter(endpoint=f"http://{CLOSED_ENDPOINT}/v1/traces")
    try:
        assert type(grpc._timeout) is float
        assert type(grpc._shutdown_in_progress) is threading.Event
        holder, event = _http_retry_state(http)
        assert type(holder._timeout) is float  # type: ignore[attr-defined]
        assert type(getattr(holder, event)) is threading.Event
    finally:
        grpc.shutdown()
        http.shutdown()


def test_hurry_caps_the_timeout_and_sets_the_shutdown_events():
    """Hurrying lowers each exporter's timeout to what remains and sets its event."""
    grpc = GrpcSpanExporter(endpoint=CLOSED_ENDPOINT, insecure=True, timeout=10)
    http = HttpSpanExporter(endpoint=f"http://{CLOSED_ENDPOINT}/v1/traces", timeout=10)
    try:
        for exporter in (grpc, http):
            sdk_private.hurry_otlp_exporter(exporter, 0.5)
        assert grpc._timeout == 0.5
        assert grpc._shutdown_in_progress.is_set()
        holder, event = _http_retry_state(http)
        assert holder._timeout == 0.5  # type: ignore[attr-defined]
        assert getattr(holder, event).is_set()
    finally:
        grpc.shutdown()
        http.shutdown()


def test_hurry_ends_a_grpc_export_waiting_to_retry(grpc_failure: FailedExport):
    """A gRPC export in its retry backoff gives up once hurried, well before its timeout."""
    assert grpc_failure.seconds < HURRIED_EXPORT_LIMIT_S


def test_hurry_ends_an_http_export_waiting_to_retry(http_failure: FailedExport):
    """An HTTP export in its retry backoff gives up once hurried, well before its timeout."""
    assert http_failure.seconds < HURRIED_EXPORT_LIMIT_S


def _sent_headers(exporter: object) -> dict[str, str]:
    """The headers an HTTP exporter sends, keys lower-cased: its ``_client._headers``
    (1.39 on) or its requests session's (1.38)."""
    client = getattr(exporter, "_client", None)
    sent = client._headers if client is not None else exporter._session.headers  # type: ignore[attr-defined]
    return {key.lower(): value for key, value in sent.items()}


def _http_exporters(**given: object) -> list[object]:
    """The HTTP/protobuf exporter and, on trains that have one (1.43 on), HTTP/JSON's."""
    endpoint = f"http://{CLOSED_ENDPOINT}/v1/traces"
    made = [HttpSpanExporter(endpoint=endpoint, **given)]
    try:
        from opentelemetry.exporter.otlp.json.http.trace_exporter import OTLPSpanExporter
    except ImportError:
        return made
    return [*made, OTLPSpanExporter(endpoint=endpoint, **given)]


@pytest.mark.parametrize("given", [(("x-tenant", "ours"),), ()])
def test_otlp_exporters_send_only_the_headers_kept(monkeypatch: pytest.MonkeyPatch, given):
    """An OTLP exporter that read headers from os.environ itself (gRPC given none, HTTP
    always from 1.39 and when given none on 1.38, JSON too) sends only the ones kept:
    gRPC's ``_headers``, HTTP's ``_client._headers`` or its session's (its own content-type
    and user-agent stay)."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20TOK,x-tenant=env")
    read = ("authorization", "x-tenant")
    grpc = GrpcSpanExporter(endpoint=CLOSED_ENDPOINT, insecure=True)
    https = _http_exporters(headers=dict(given) or None)
    try:
        assert dict(grpc._headers) == {"authorization": "Bearer TOK", "x-tenant": "env"}
        for exporter in (grpc, *https):
            sdk_private.keep_only_otlp_headers(exporter, given, read)
        assert grpc._headers == given
        for exporter in https:
            sent = _sent_headers(exporter)
            assert sent.get("x-tenant") == dict(given).get("x-tenant")
            assert "authorization" not in sent
            assert {"content-type", "user-agent"} <= set(sent)
    finally:
        for exporter in (grpc, *https):
            exporter.shutdown()


def test_metric_exporter_preferences_are_the_temporality_and_aggregation_maps():
    """A metric exporter's preferences are the maps it was built with, keyed by instrument."""
    last_value = LastValueAggregation()
    exporter = ConsoleMetricExporter(
        preferred_temporality={Counter: AggregationTemporality.DELTA},
        preferred_aggregation={Counter: last_value},
    )
    temporality, aggregation = sdk_private.exporter_preferences(exporter)
    assert type(temporality) is dict
    assert temporality[Counter] is AggregationTemporality.DELTA
    assert aggregation == {Counter: last_value}


@pytest.mark.parametrize(
    ("preference", "counter", "up_down"),
    [
        (None, AggregationTemporality.CUMULATIVE, AggregationTemporality.CUMULATIVE),
        ("delta", AggregationTemporality.DELTA, AggregationTemporality.CUMULATIVE),
        ("LOWMEMORY", AggregationTemporality.DELTA, AggregationTemporality.CUMULATIVE),
    ],
)
def test_otlp_metric_preferences_follow_the_temporality_variable(
    monkeypatch: pytest.MonkeyPatch, preference, counter, up_down
):
    """The OTLP exporters' preferences, as their mixin reads
    OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: a map per instrument class, delta
    for counters where asked, cumulative otherwise; histograms explicit-bucket."""
    variable = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"
    if preference is None:
        monkeypatch.delenv(variable, raising=False)
    else:
        monkeypatch.setenv(variable, preference)
    temporality, aggregation = sdk_private.otlp_metric_preferences()
    assert (temporality[Counter], temporality[UpDownCounter]) == (counter, up_down)
    assert type(aggregation[Histogram]) is ExplicitBucketHistogramAggregation


def test_otlp_log_encoder_builds_an_export_logs_request():
    """The OTLP log encoder takes the SDK's emitted records and returns the protobuf
    ExportLogsServiceRequest, one resource entry holding the record."""
    from _telemetry_support import in_memory_log_exporter
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor

    memory = in_memory_log_exporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(memory))
    provider.get_logger("canary").emit(body="hello")
    request = sdk_private.otlp_log_encoder()(memory.get_finished_logs())
    assert type(request) is ExportLogsServiceRequest
    (resource_logs,) = request.resource_logs
    assert resource_logs.scope_logs[0].log_records[0].body.string_value == "hello"


# --- The SDK's log messages


def test_resource_detector_warns_of_a_malformed_pair_with_the_prefix(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    """The SDK's OTELResourceDetector warns of an item with no ``=`` in the words the
    resource build quiets."""
    from opentelemetry.sdk.resources import OTELResourceDetector

    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "team=ml,broken")
    caplog.set_level(logging.WARNING, logger="opentelemetry.sdk.resources")
    OTELResourceDetector().detect()
    (record,) = caplog.records
    assert str(record.msg).startswith(sdk_private.RESOURCE_PAIR_WARNING_PREFIX)


@pytest.mark.parametrize("failure", ["grpc_failure", "http_failure"])
def test_transient_error_message_matches_the_patterns(failure: str, request: pytest.FixtureRequest):
    """The first warning of a failed OTLP export opens with the transient-error prefix and
    carries a retry note the pattern removes."""
    failed = request.getfixturevalue(failure)
    if not logged_its_failure(failed):
        return
    first = failed.messages[0]
    assert first.startswith(sdk_private.TRANSIENT_ERROR_PREFIX)
    assert sdk_private.RETRY_NOTE.search(first) is not None


@pytest.mark.parametrize("failure", ["grpc_failure", "http_failure"])
def test_hurried_export_ends_with_a_generic_message(failure: str, request: pytest.FixtureRequest):
    """The last warning of a hurried export is one the generic phrases recognise."""
    failed = request.getfixturevalue(failure)
    if not logged_its_failure(failed):
        return
    last = failed.messages[-1]
    assert any(phrase in last for phrase in sdk_private.GENERIC_EXPORT_FAILURES)


@pytest.mark.parametrize("failure", ["grpc_failure", "http_failure"])
def test_failure_reason_of_real_messages_is_the_cause(failure: str, request: pytest.FixtureRequest):
    """From the real messages, the reason is the first one without prefix or retry note."""
    failed = request.getfixturevalue(failure)
    if not logged_its_failure(failed):
        return
    reason = failure_reason(failed.messages)
    assert not reason.startswith(sdk_private.TRANSIENT_ERROR_PREFIX)
    assert "retrying in" not in reason
    assert reason


class _Blocked(SpanExporter):
    """Holds the batch worker in its first export until released."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def export(self, spans: object) -> SpanExportResult:
        self.release.wait(5)
        return SpanExportResult.SUCCESS


def test_queue_full_message_matches_the_prefix(sdk_tracer_provider: TracerProvider):
    """The batch processor's warning when its queue is full opens with the prefix (on a
    train whose processor drops silently: no message at all)."""
    exporter = _Blocked()
    processor = BatchSpanProcessor(exporter, max_queue_size=1, max_export_batch_size=1)
    sdk_tracer_provider.add_span_processor(processor)
    handler = _Messages()
    logger = logging.getLogger("opentelemetry.sdk")
    logger.addHandler(handler)
    try:
        for _ in range(5):
            sdk_tracer_provider.get_tracer("canary").start_span("s").end()
    finally:
        logger.removeHandler(handler)
        exporter.release.set()
    said = any(m.startswith(sdk_private.EXPORT_QUEUE_FULL_PREFIX) for m in handler.messages)
    if not present(said):  # 1.38 drops without a word: no drop is reported, none misread
        assert handler.messages == []


# --- Batch processors


def test_batch_worker_shuts_down_within_its_timeout():
    """The batch processor's worker takes a timeout and ends its thread at shutdown,
    without waiting for the export in flight."""
    exporter = _Blocked()
    processor = BatchSpanProcessor(exporter, schedule_delay_millis=1)
    provider = TracerProvider()
    provider.add_span_processor(processor)
    provider.get_tracer("canary").start_span("s").end()
    started = time.monotonic()
    try:
        sdk_private.shutdown_batch_worker(processor, timeout_millis=200)
        assert time.monotonic() - started < 2.0
    finally:
        exporter.release.set()


# --- Providers


@pytest.mark.parametrize("make", [TracerProvider, LoggerProvider, MeterProvider])
def test_providers_merge_an_updated_resource(make: type):
    """Every SDK provider merges a resource given later into its own (on a train without
    ``_update_resource``: ``updates_resource`` says so, and a forked child's resource
    stays the parent's)."""
    provider = make(resource=Resource({"service.name": "canary"}))
    try:
        if not present(sdk_private.updates_resource(provider)):
            return
        sdk_private.update_provider_resource(provider, Resource({CANARY_ATTRIBUTE: 7}))
        resource = getattr(provider, "resource", None) or sdk_private.meter_provider_resource(
            provider
        )
        assert isinstance(resource, Resource)
        assert resource.attributes[CANARY_ATTRIBUTE] == 7
        assert resource.attributes["service.name"] == "canary"
    finally:
        provider.shutdown()


def test_meter_provider_resource_is_the_one_given():
    """An SDK MeterProvider's resource is found, the very one it was built with."""
    resource = Resource({"service.name": "canary"})
    provider = MeterProvider(resource=resource)
    try:
        assert sdk_private.meter_provider_resource(provider) is resource
    finally:
        provider.shutdown()


def test_api_placeholders_are_the_meter_and_logger_proxies():
    """The API's private proxies are a MeterProvider and a LoggerProvider of the API."""
    meter_proxy, logger_proxy = sdk_private.api_placeholder_provider_types()
    assert issubclass(meter_proxy, metrics.MeterProvider)
    assert issubclass(logger_proxy, ApiLoggerProvider)
    assert "Proxy" in meter_proxy.__name__
    assert "Proxy" in logger_proxy.__name__


def test_metric_lock_holders_reach_the_aggregations():
    """After a measurement, the holders include the consumer, a storage and aggregations,
    and the ones with a ``_lock`` hold a real lock that renew_locks replaces."""
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    try:
        provider.get_meter("canary").create_counter("c").add(1, {"k": "v"})
        reader.get_metrics_data()
        holders = sdk_private.metric_lock_holders(provider)
        locked = [each for each in holders if hasattr(each, "_lock")]
        assert len(locked) >= 3  # consumer, storage, view match or aggregation
        for holder in locked:
            before = holder._lock  # type: ignore[attr-defined]
            before.acquire()
            sdk_private.renew_locks(holder)
            after = holder._lock  # type: ignore[attr-defined]
            assert after is not before
            assert type(after) is type(before)
            before.release()
    finally:
        provider.shutdown()


def test_metric_reader_keeps_an_export_lock():
    """A metric reader keeps a ``_lock`` or an ``_export_lock`` that renew_locks renews."""
    reader = InMemoryMetricReader()
    lock_names = [name for name in ("_lock", "_export_lock") if hasattr(reader, name)]
    assert lock_names
    before = [getattr(reader, name) for name in lock_names]
    sdk_private.renew_locks(reader)
    assert all(getattr(reader, n) is not b for n, b in zip(lock_names, before, strict=True))


# --- Nothing else reaches in

PACKAGE_DIR = Path(sdk_private.__file__).parents[1]
PUBLIC_UNDERSCORED = frozenset({"_logs"})
"""The logs signal's API and SDK live under ``_logs``: the only way to them, not a detail."""


def _private_opentelemetry_imports(path: Path) -> list[str]:
    """``module:name`` of each private OpenTelemetry module or name ``path`` imports."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("opentelemetry"):
            parts = [*str(node.module).split("."), *(alias.name for alias in node.names)]
        elif isinstance(node, ast.Import):
            parts = [
                p
                for a in node.names
                if a.name.startswith("opentelemetry")
                for p in a.name.split(".")
            ]
        else:
            continue
        if any(p.startswith("_") and p not in PUBLIC_UNDERSCORED for p in parts):
            found.append(f"{path.relative_to(PACKAGE_DIR)}:{node.lineno}")
    return found


def test_only_sdk_private_imports_private_opentelemetry_names():
    """No module of otel_dynamo but sdk_private imports a private OpenTelemetry module or name."""
    modules = sorted(PACKAGE_DIR.rglob("*.py"))
    assert len(modules) > 100  # the package itself, not an empty folder
    found = [
        place
        for path in modules
        if path.name != "sdk_private.py"
        for place in _private_opentelemetry_imports(path)
    ]
    assert found == []


HOT_PATH_PACKAGES = ("_sources", "_recording")
"""Where compiles and compiled runs are recorded: the public API only."""


def test_compile_and_run_paths_use_no_private_name():
    """No module of the compile and run paths (_sources, _recording) uses sdk_private."""
    modules = [
        path for package in HOT_PATH_PACKAGES for path in (PACKAGE_DIR / package).rglob("*.py")
    ]
    assert len(modules) > 40
    users = [
        str(path.relative_to(PACKAGE_DIR))
        for path in modules
        if "sdk_private" in path.read_text(encoding="utf-8")
    ]
    assert users == []
