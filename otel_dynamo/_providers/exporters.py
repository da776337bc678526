"""Factories for the real exporters: OTLP (gRPC, HTTP/protobuf, HTTP/JSON), OTLP/JSON
Lines files (``json_lines``), console, and any exporter registered in the SDK's entry
points.

Every option is passed explicitly from the parsed plan, so the exporters do not fall
back to reading ``os.environ`` for what we were given. Headers are the one option the
OTLP exporters read from the environment even when given (HTTP merges
``OTEL_EXPORTER_OTLP_*HEADERS`` into what it is passed; gRPC reads it when passed none),
and they parse it leniently, logging a malformed item's raw text. So an exporter is
built with the SDK's log records of this thread set aside (the configuration problem
already names the malformed items, values hidden), and then sends exactly the headers
we parsed: what its own reading added is taken out again
(``sdk_private.keep_only_otlp_headers``). ``os.environ`` is only read,
never changed (another thread reading it meanwhile sees it whole). Exporter modules are
imported only for the kinds in use (an HTTP-only job never imports gRPC).
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Callable
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from otel_dynamo._config import registered
from otel_dynamo._config.otel_env import OtlpTarget
from otel_dynamo._config.otel_variables import (
    EXPORTER_CONSOLE,
    EXPORTER_FILE,
    PROTOCOL_GRPC,
    PROTOCOL_HTTP_JSON,
    SIGNAL_LOGS,
    SIGNAL_METRICS,
    SIGNAL_TRACES,
    otlp_variables,
)
from otel_dynamo._config.redaction import REDACT_SHAPES, redacted_url
from otel_dynamo._providers import entry_points
from otel_dynamo._providers.export_health import install_quiet_filter, quiet
from otel_dynamo._providers.files import ProcessFiles
from otel_dynamo._providers.sdk_private import keep_only_otlp_headers

Factory = Callable[[], Any]

_log = logging.getLogger(__name__)

_GRPC = {
    SIGNAL_TRACES: ("opentelemetry.exporter.otlp.proto.grpc.trace_exporter", "OTLPSpanExporter"),
    SIGNAL_LOGS: ("opentelemetry.exporter.otlp.proto.grpc._log_exporter", "OTLPLogExporter"),
    SIGNAL_METRICS: (
        "opentelemetry.exporter.otlp.proto.grpc.metric_exporter",
        "OTLPMetricExporter",
    ),
}
_HTTP = {
    SIGNAL_TRACES: ("opentelemetry.exporter.otlp.proto.http.trace_exporter", "OTLPSpanExporter"),
    SIGNAL_LOGS: ("opentelemetry.exporter.otlp.proto.http._log_exporter", "OTLPLogExporter"),
    SIGNAL_METRICS: (
        "opentelemetry.exporter.otlp.proto.http.metric_exporter",
        "OTLPMetricExporter",
    ),
}
_JSON_HTTP = {
    SIGNAL_TRACES: ("opentelemetry.exporter.otlp.json.http.trace_exporter", "OTLPSpanExporter"),
    SIGNAL_LOGS: ("opentelemetry.exporter.otlp.json.http._log_exporter", "OTLPLogExporter"),
    SIGNAL_METRICS: (
        "opentelemetry.exporter.otlp.json.http.metric_exporter",
        "OTLPMetricExporter",
    ),
}
_FILE = {
    SIGNAL_TRACES: ("otel_dynamo._providers.json_lines", "JsonLinesSpanExporter"),
    SIGNAL_LOGS: ("otel_dynamo._providers.log_export", "JsonLinesLogExporter"),
    SIGNAL_METRICS: ("otel_dynamo._providers.json_lines", "JsonLinesMetricExporter"),
}
_CONSOLE = {
    SIGNAL_TRACES: ("opentelemetry.sdk.trace.export", "ConsoleSpanExporter"),
    SIGNAL_LOGS: ("otel_dynamo._providers.log_export", "ConsoleLogRecordExporter"),
    SIGNAL_METRICS: ("opentelemetry.sdk.metrics.export", "ConsoleMetricExporter"),
}


FIRST_REQUEST_IMPORTS = ("netrc", "shlex", "encodings.idna")
"""Modules HTTP transports (requests, urllib3) import at their first request (requests'
``.netrc`` lookup; the host's encoding on connect), imported when the factory of an
exporter that may send over HTTP (OTLP HTTP, an entry point's) is made: an export thread
importing a module when a fork happens leaves that module's import lock held for ever in
the child (``tests/providers/test_exporters_first_export.py`` checks that a first export
imports nothing)."""


def _load(spec: tuple[str, str]) -> Any:
    module, name = spec
    return getattr(importlib.import_module(module), name)


def otlp_factory(signal: str, target: OtlpTarget) -> tuple[Factory, str]:
    """A factory for the OTLP exporter of ``signal``, and a description of where it sends."""
    if target.protocol == PROTOCOL_GRPC:
        build, cls = _grpc_exporter, _load(_GRPC[signal])
    elif target.protocol == PROTOCOL_HTTP_JSON:
        build, cls = _json_http_exporter, _load(_JSON_HTTP[signal])
    else:
        build, cls = _http_exporter, _load(_HTTP[signal])
    if target.protocol != PROTOCOL_GRPC:
        _import_first_request_modules()
    factory = partial(_built_quietly, partial(build, cls, target), signal, target)
    return factory, f"{redacted_url(target.endpoint)} (OTLP {target.protocol})"


def entry_point_class(signal: str, name: str) -> Any:
    """The class registered as ``name`` in the SDK's exporter entry points of ``signal``."""
    return entry_points.load(registered.exporter_group(signal), name)


def entry_point_factory(signal: str, name: str) -> tuple[Factory, str]:
    """A factory for a registered exporter, built as the SDK builds it: with no arguments
    (it reads its own ``OTEL_*`` variables)."""
    cls = entry_point_class(signal, name)
    _import_first_request_modules()
    return cls, f"{name} (entry point)"


def _import_first_request_modules() -> None:
    for module in FIRST_REQUEST_IMPORTS:
        importlib.import_module(module)


def file_factory(signal: str, files: ProcessFiles) -> tuple[Factory, str]:
    cls = _load(_FILE[signal])
    return (lambda: cls(files.open(signal))), str(files.directory)


def console_factory(signal: str) -> tuple[Factory, str]:
    """Console exporters print to ``sys.stdout`` as it is at each write, as ``print`` does
    (they are built at setup; the job may redirect stdout after that)."""
    cls = _load(_CONSOLE[signal])
    return (lambda: cls(out=CurrentStdout())), "console"


class CurrentStdout:
    """Writes to whatever ``sys.stdout`` is at each call (``contextlib.redirect_stdout``,
    pytest's capture)."""

    def write(self, text: str) -> int:
        return sys.stdout.write(text)

    def flush(self) -> None:
        sys.stdout.flush()


def local_factory(kind: str, signal: str, files: ProcessFiles) -> tuple[Factory, str]:
    """Files, console, or (any other name the configuration accepted) an entry point's."""
    if kind == EXPORTER_FILE:
        return file_factory(signal, files)
    if kind == EXPORTER_CONSOLE:
        return console_factory(signal)
    return entry_point_factory(signal, kind)


HEADER_PARSER_LOGGER = "opentelemetry.util.re"
"""Where the SDK logs a malformed header item, quoting it raw (it may be a secret)."""


def _built_quietly(build: Factory, signal: str, target: OtlpTarget) -> Any:
    """``build()``, with the SDK's log records of this thread set aside meanwhile, then
    made to send exactly ``target.headers``."""
    install_quiet_filter()  # the exporter's modules, and so their loggers, exist by now
    with quiet(_construction_record):
        exporter = build()
        keep_only_otlp_headers(exporter, target.headers, _headers_read_by_the_sdk(signal))
    return exporter


def _construction_record(record: logging.LogRecord) -> None:
    """An SDK record logged while an exporter is built: the header parser's (raw items)
    is dropped, any other goes to DEBUG, redacted by shape."""
    if record.name != HEADER_PARSER_LOGGER:
        _log.debug("%s (from %s)", REDACT_SHAPES(record.getMessage()), record.name)


def _headers_read_by_the_sdk(signal: str) -> dict[str, str]:
    """What an OTLP exporter of ``signal`` reads from ``os.environ`` itself, parsed as it
    parses it."""
    from opentelemetry.util.re import parse_env_headers

    per_signal, base = otlp_variables("headers", signal)
    raw = os.environ.get(per_signal) or os.environ.get(base, "")
    return dict(parse_env_headers(raw, liberal=True))


def _json_http_exporter(cls: Any, target: OtlpTarget) -> Any:
    from opentelemetry.exporter.otlp.common.http import Compression

    compression = Compression.GZIP if target.compression == "gzip" else Compression.NONE
    return cls(**_http_options(target), compression=compression)


def _grpc_exporter(cls: Any, target: OtlpTarget) -> Any:
    import grpc

    insecure = _grpc_insecure(target)
    compression = grpc.Compression.Gzip if target.compression == "gzip" else None
    return cls(
        endpoint=target.endpoint,
        insecure=insecure,
        credentials=None if insecure else _grpc_credentials(target),
        headers=target.headers or None,
        timeout=target.timeout_s,
        compression=compression or grpc.Compression.NoCompression,
    )


def _grpc_insecure(target: OtlpTarget) -> bool:
    """As the SDK's gRPC exporter decides: https is secure; else OTEL_EXPORTER_OTLP_INSECURE
    when set; else insecure only for an http:// endpoint (host:port alone is secure)."""
    scheme = urlsplit(target.endpoint).scheme if "://" in target.endpoint else ""
    if scheme == "https":
        return False
    if target.insecure is not None:
        return target.insecure
    return scheme == "http"


def _grpc_credentials(target: OtlpTarget) -> Any:
    import grpc

    return grpc.ssl_channel_credentials(
        root_certificates=_read(target.certificate),
        private_key=_read(target.client_key),
        certificate_chain=_read(target.client_certificate),
    )


def _read(path: str | None) -> bytes | None:
    if path is None:
        return None
    with open(path, "rb") as file:
        return file.read()


def _http_exporter(cls: Any, target: OtlpTarget) -> Any:
    from opentelemetry.exporter.otlp.proto.http import Compression

    compression = Compression.Gzip if target.compression == "gzip" else Compression.NoCompression
    return cls(**_http_options(target), compression=compression)


def _http_options(target: OtlpTarget) -> dict[str, Any]:
    """The keywords both HTTP exporters (protobuf and JSON) take alike."""
    return {
        "endpoint": target.endpoint,
        "certificate_file": target.certificate,
        "client_key_file": target.client_key,
        "client_certificate_file": target.client_certificate,
        "headers": dict(target.headers) or None,
        "timeout": target.timeout_s,
    }
