"""Helpers for the export tests: real receivers, broken collectors, child processes.

* OTLP receivers: oteltest's gRPC and HTTP sinks with a collecting handler.
* Broken collectors: a closed port, a black hole (accepts TCP, never answers), an HTTP
  server answering 503, a gRPC server whose handler fails.
* OTLP/JSON Lines files parsed back, with attribute lists turned into dicts.
* Child processes: the example job in ``tests/programs`` run with a clean environment.
* Arize Phoenix started from its own venv, as a real trace store.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import http.server
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = Path(__file__).resolve().parent / "programs"
TELEMETRY_JOB = PROGRAMS / "telemetry_job.py"
WAIT_SECONDS = 10.0
POLL_SECONDS = 0.05
ENV_PHOENIX_PYTHON = "OTEL_DYNAMO_PHOENIX_PYTHON"
DEFAULT_PHOENIX_PYTHON = "/opt/phoenix-venv/bin/python"
PHOENIX_START_SECONDS = 90.0
_SINK_LOGGER = logging.getLogger("tests.sink")


# --- ports and environments ------------------------------------------------------------


def free_port() -> int:
    """A TCP port nothing listens on right now (on all interfaces)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("0.0.0.0", 0))
        return sock.getsockname()[1]


def without_otel(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` minus every OTEL_* (and so OTEL_DYNAMO_*) and torchrun variable."""
    torchrun = {"RANK", "LOCAL_RANK", "WORLD_SIZE", "GROUP_RANK", "TORCHELASTIC_RUN_ID"}
    return {k: v for k, v in environ.items() if not k.startswith("OTEL_") and k not in torchrun}


def clear_otel_environ(monkeypatch: Any) -> None:
    """Remove OTEL_* variables from os.environ for one test (exporters also read it)."""
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)


def child_environ(**overrides: str) -> dict[str, str]:
    """A clean environment for a child process that can import otel_dynamo."""
    env = without_otel(os.environ)
    if "OTEL_DYNAMO_OUTPUT_DIR" in os.environ:  # the session's (conftest), not the checkout
        env["OTEL_DYNAMO_OUTPUT_DIR"] = os.environ["OTEL_DYNAMO_OUTPUT_DIR"]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env.update(overrides)
    return env


def wait_until(predicate: Callable[[], bool], *, timeout: float = WAIT_SECONDS) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(POLL_SECONDS)
    return predicate()


# --- OTLP receivers --------------------------------------------------------------------


class Collected:
    """An oteltest RequestHandler that keeps every request and its headers."""

    def __init__(self) -> None:
        self.requests: dict[str, list[Any]] = {"traces": [], "logs": [], "metrics": []}
        self.headers: dict[str, list[dict[str, str]]] = {"traces": [], "logs": [], "metrics": []}
        self._lock = threading.Lock()

    def _add(self, signal: str, request: Any, headers: Mapping[str, str]) -> None:
        with self._lock:
            self.requests[signal].append(request)
            self.headers[signal].append({k.lower(): v for k, v in dict(headers).items()})

    def handle_trace(self, request: Any, headers: Mapping[str, str]) -> None:
        self._add("traces", request, headers)

    def handle_logs(self, request: Any, headers: Mapping[str, str]) -> None:
        self._add("logs", request, headers)

    def handle_metrics(self, request: Any, headers: Mapping[str, str]) -> None:
        self._add("metrics", request, headers)

    def spans(self) -> list[Any]:
        return [
            span
            for request in self.requests["traces"]
            for resource_spans in request.resource_spans
            for scope_spans in resource_spans.scope_spans
            for span in scope_spans.spans
        ]

    def log_records(self) -> list[Any]:
        return [
            record
            for request in self.requests["logs"]
            for resource_logs in request.resource_logs
            for scope_logs in resource_logs.scope_logs
            for record in scope_logs.log_records
        ]

    def metric_names(self) -> set[str]:
        return {
            metric.name
            for request in self.requests["metrics"]
            for resource_metrics in request.resource_metrics
            for scope_metrics in resource_metrics.scope_metrics
            for metric in scope_metrics.metrics
        }

    def resource_attributes(self, signal: str) -> dict[str, Any]:
        request = self.requests[signal][0]
        resources = getattr(request, f"resource_{'spans' if signal == 'traces' else signal}")
        return proto_attributes(resources[0].resource.attributes)


@contextlib.contextmanager
def grpc_sink(port: int) -> Iterator[Collected]:
    from oteltest.sink import GrpcSink

    collected = Collected()
    sink = GrpcSink(collected, _SINK_LOGGER, port=port)
    sink.start()
    try:
        yield collected
    finally:
        sink.stop()


@contextlib.contextmanager
def http_sink(port: int) -> Iterator[Collected]:
    from oteltest.sink import HttpSink

    collected = Collected()
    sink = HttpSink(collected, _SINK_LOGGER, port=port)
    sink.start()
    wait_until(lambda: _accepts(port))
    try:
        yield collected
    finally:
        sink.stop()


class _JsonRequests(http.server.BaseHTTPRequestHandler):
    received: list[tuple[str, str, bytes]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.received.append((self.path, self.headers.get("Content-Type", ""), body))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def raw_http_sink(port: int) -> Iterator[list[tuple[str, str, bytes]]]:
    """An HTTP receiver that keeps each POST as it came (path, content type, body, in a
    list it yields) and answers 200 ``{}``: it reads no body, so it takes OTLP/JSON and
    compressed requests alike."""
    handler = type("Handler", (_JsonRequests,), {"received": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield handler.received
    finally:
        server.shutdown()
        server.server_close()


def _accepts(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def proto_attributes(key_values: Any) -> dict[str, Any]:
    """Protobuf KeyValue list as a dict of Python values."""
    return {kv.key: _proto_value(kv.value) for kv in key_values}


def _proto_value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_proto_value(item) for item in value.array_value.values]
    return getattr(value, kind) if kind else None


# --- broken collectors -----------------------------------------------------------------


class BlackHole:
    """Accepts TCP connections on a port and never sends a byte back."""

    def __init__(self) -> None:
        self._server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self.port = self._server.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = self._server.accept()
                self.accepted.append(connection)

    def close(self) -> None:
        self._server.close()
        for connection in self.accepted:
            connection.close()

    def __enter__(self) -> BlackHole:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class _Answer503(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.posts += 1  # type: ignore[attr-defined]
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def failing_http_collector() -> Iterator[Any]:
    """An HTTP server answering every OTLP POST with 503 Service Unavailable."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answer503)
    server.posts = 0  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


class _Refuse:
    def _fail(self, request: Any, headers: Any) -> None:
        raise RuntimeError("collector failing on purpose")

    handle_trace = handle_logs = handle_metrics = _fail


@contextlib.contextmanager
def failing_grpc_collector(port: int) -> Iterator[None]:
    """A gRPC OTLP server whose every Export fails (status UNKNOWN)."""
    from oteltest.sink import GrpcSink

    sink = GrpcSink(_Refuse(), _SINK_LOGGER, port=port)  # type: ignore[arg-type]
    sink.start()
    try:
        yield
    finally:
        sink.stop()


# --- OTLP/JSON Lines files -------------------------------------------------------------


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def json_attributes(attributes: list[dict[str, Any]]) -> dict[str, Any]:
    """OTLP/JSON attribute list as a dict of Python values (int64 strings made ints)."""
    return {item["key"]: _json_value(item["value"]) for item in attributes}


def _json_value(value: dict[str, Any]) -> Any:
    if "arrayValue" in value:
        return [_json_value(item) for item in value["arrayValue"].get("values", [])]
    if "intValue" in value:
        return int(value["intValue"])
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    return None


def json_spans(path: Path) -> list[dict[str, Any]]:
    """Every span in a traces file, each with its resource attributes under "resource"."""
    spans = []
    for line in read_jsonl(path):
        for resource_spans in line["resourceSpans"]:
            resource = json_attributes(resource_spans["resource"]["attributes"])
            for scope_spans in resource_spans["scopeSpans"]:
                spans.extend({**span, "resource": resource} for span in scope_spans["spans"])
    return spans


def json_log_records(path: Path) -> list[dict[str, Any]]:
    return [
        record
        for line in read_jsonl(path)
        for resource_logs in line["resourceLogs"]
        for scope_logs in resource_logs["scopeLogs"]
        for record in scope_logs["logRecords"]
    ]


def json_metric_names(path: Path) -> set[str]:
    return {
        metric["name"]
        for line in read_jsonl(path)
        for resource_metrics in line["resourceMetrics"]
        for scope_metrics in resource_metrics["scopeMetrics"]
        for metric in scope_metrics["metrics"]
    }


def one_file(directory: Path, signal: str) -> Path:
    found = sorted(directory.glob(f"{signal}-*.jsonl"))
    assert len(found) == 1, f"expected one {signal} file in {directory}: {found}"
    return found[0]


# --- child processes -------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class JobResult:
    returncode: int
    stdout: str
    stderr: str
    wall_s: float

    def summary(self) -> dict[str, Any]:
        return json.loads(self.stdout.strip().splitlines()[-1])

    def stderr_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.strip()]


def run_program(
    script: Path,
    *args: str,
    env: Mapping[str, str],
    timeout: float = 60.0,
    preexec_fn: Callable[[], None] | None = None,
) -> JobResult:
    """Run a Python program to completion; wall time from spawn to exit. ``preexec_fn``
    runs in the child before the program starts (a resource limit)."""
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, str(script), *args],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        preexec_fn=preexec_fn,
    )
    wall = time.perf_counter() - started
    return JobResult(completed.returncode, completed.stdout, completed.stderr, wall)


def fastest(runs: int, run: Callable[[], JobResult]) -> JobResult:
    """The quickest of ``runs`` runs (wall-time noise on a shared machine only adds)."""
    results = [run() for _ in range(runs)]
    return min(results, key=lambda result: result.wall_s)


# --- Arize Phoenix ---------------------------------------------------------------------


def phoenix_python() -> Path:
    return Path(os.environ.get(ENV_PHOENIX_PYTHON, DEFAULT_PHOENIX_PYTHON))


def phoenix_installed() -> bool:
    """Phoenix's venv exists and its package installed (its ``phoenix`` script is there)."""
    return phoenix_python().with_name("phoenix").exists()


@dataclasses.dataclass
class Phoenix:
    http_port: int
    grpc_port: int
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def get_json(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.url}{path}", timeout=10) as response:
            return json.load(response)

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False


PHOENIX_START_TRIES = 3
"""Starts of phoenix, each on new ports: a port found free on 127.0.0.1 may be taken on
[::], where phoenix binds its gRPC server, by the time it binds (it then exits at once)."""


@contextlib.contextmanager
def phoenix_server(working_dir: Path) -> Iterator[Phoenix]:
    """``phoenix serve`` on loopback and unusual ports, until /healthz answers."""
    for attempt in range(1, PHOENIX_START_TRIES + 1):
        phoenix, log = _start_phoenix(working_dir)
        started = wait_until(partial(_up_or_gone, phoenix), timeout=PHOENIX_START_SECONDS)
        if started and phoenix.healthy():
            break
        exited = phoenix.process.poll() is not None  # a port taken: try new ones
        _stop_phoenix(phoenix, log)
        if not exited or attempt == PHOENIX_START_TRIES:
            raise RuntimeError(f"phoenix did not start; see {working_dir / 'phoenix.log'}")
    try:
        yield phoenix
    finally:
        _stop_phoenix(phoenix, log)


def _up_or_gone(phoenix: Phoenix) -> bool:
    return phoenix.healthy() or phoenix.process.poll() is not None


def _start_phoenix(working_dir: Path) -> tuple[Phoenix, Any]:
    http_port, grpc_port = free_port(), free_port()
    env = without_otel(os.environ) | {
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(http_port),
        "PHOENIX_GRPC_PORT": str(grpc_port),
        "PHOENIX_WORKING_DIR": str(working_dir),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (working_dir / "phoenix.log").open("wb")
    command = [str(phoenix_python()), "-m", "phoenix.server.main", "serve"]
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    return Phoenix(http_port, grpc_port, process), log


def _stop_phoenix(phoenix: Phoenix, log: Any) -> None:
    phoenix.process.terminate()
    try:
        phoenix.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        phoenix.process.kill()
        phoenix.process.wait()
    log.close()


# --- What the installed OpenTelemetry train does


_FULL_QUEUE_PROBE = """
import logging, threading
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
release = threading.Event()
class Blocked(SpanExporter):
    def export(self, spans):
        release.wait(5)
        return SpanExportResult.SUCCESS
said = []
handler = logging.Handler()
handler.emit = lambda record: said.append(record.getMessage())
logging.getLogger("opentelemetry.sdk").addHandler(handler)
provider = TracerProvider()
processor = BatchSpanProcessor(Blocked(), max_queue_size=1, max_export_batch_size=1)
provider.add_span_processor(processor)
for _ in range(5):
    provider.get_tracer("probe").start_span("s").end()
release.set()
provider.shutdown()
print(bool(said))
"""


@functools.cache
def sdk_warns_of_a_full_queue() -> bool:
    """Whether the SDK's batch span processor logs a warning when its queue is full and it
    drops a span (1.38's drops without a word, so otel_dynamo reports no drop there).
    Asked in a process of its own: the SDK's logger drops a message repeated within 20 s,
    so asking here would silence the next test's."""
    done = subprocess.run(
        [sys.executable, "-c", _FULL_QUEUE_PROBE],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip() == "True"
