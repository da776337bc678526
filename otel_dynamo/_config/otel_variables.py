"""The standard OTEL_* variables otel_dynamo reads, as one table.

Every variable is a row of :data:`VARIABLES`, as the OTEL_DYNAMO_* ones are of
``settings.VARIABLES``: its names (the SDK's constants), its parser, what it accepts, what
a bad value costs, and its documentation; :data:`DIFFERENCES` says where otel_dynamo reads
one differently from the SDK, and why. docs/configuration.md is generated from both
(``python docs/generate_configuration.py``). Here are also the values the variables take
(signals, exporters, protocols, samplers) and their defaults. Nothing here reads an
environment: ``otel_env.read_otel_env`` does, with these rows.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

from otel_dynamo._config.sdk_variables import api_env, sdk_env
from otel_dynamo._config.settings import Variable

SIGNAL_TRACES = "traces"
SIGNAL_LOGS = "logs"
SIGNAL_METRICS = "metrics"
SIGNALS = (SIGNAL_TRACES, SIGNAL_LOGS, SIGNAL_METRICS)

EXPORTER_OTLP = "otlp"
EXPORTER_FILE = "otlp_file"
EXPORTER_CONSOLE = "console"
EXPORTER_NONE = "none"
PROTOCOL_GRPC = "grpc"
PROTOCOL_HTTP = "http/protobuf"
PROTOCOL_HTTP_JSON = "http/json"
EXPORTER_JSON_FILE = "otlp_json_file"
"""OpenTelemetry's own JSON-file exporter's entry-point name (1.43 on): read as our files
(the same format)."""
EXPORTER_ALIASES = {
    "otlp_proto_grpc": PROTOCOL_GRPC,
    "otlp_proto_http": PROTOCOL_HTTP,
    "otlp_json_http": PROTOCOL_HTTP_JSON,
}
"""Exporter names the SDK registers for OTLP over one protocol: read as ``otlp`` with it."""
BUILT_IN_EXPORTERS = frozenset({EXPORTER_OTLP, EXPORTER_FILE, EXPORTER_CONSOLE, EXPORTER_NONE})
LOCAL_EXPORTERS = frozenset({EXPORTER_FILE, EXPORTER_JSON_FILE, EXPORTER_CONSOLE, EXPORTER_NONE})
"""Exporters whose telemetry never leaves the machine (no collector to wait for)."""
JSON_HTTP_DISTRIBUTION = "opentelemetry-exporter-otlp-json-http"
"""What OTEL_EXPORTER_OTLP_PROTOCOL=http/json needs (otel_dynamo's ``json-http`` extra)."""

ENV_EXPORTER = {
    SIGNAL_TRACES: api_env.OTEL_TRACES_EXPORTER,
    SIGNAL_LOGS: api_env.OTEL_LOGS_EXPORTER,
    SIGNAL_METRICS: api_env.OTEL_METRICS_EXPORTER,
}
"""OTEL_<SIGNAL>_EXPORTER of each signal (the names are the SDK's constants, as all here)."""


class OtlpVariables(NamedTuple):
    """The OTEL_EXPORTER_OTLP_* variables of one signal, or the base ones of all."""

    endpoint: str
    protocol: str
    headers: str
    timeout: str
    compression: str
    certificate: str
    client_key: str
    client_certificate: str
    insecure: str


OTLP_BASE = OtlpVariables(
    sdk_env.OTEL_EXPORTER_OTLP_ENDPOINT,
    sdk_env.OTEL_EXPORTER_OTLP_PROTOCOL,
    sdk_env.OTEL_EXPORTER_OTLP_HEADERS,
    sdk_env.OTEL_EXPORTER_OTLP_TIMEOUT,
    sdk_env.OTEL_EXPORTER_OTLP_COMPRESSION,
    sdk_env.OTEL_EXPORTER_OTLP_CERTIFICATE,
    sdk_env.OTEL_EXPORTER_OTLP_CLIENT_KEY,
    sdk_env.OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE,
    sdk_env.OTEL_EXPORTER_OTLP_INSECURE,
)
OTLP_PER_SIGNAL = {
    SIGNAL_TRACES: OtlpVariables(
        sdk_env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
        sdk_env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
        sdk_env.OTEL_EXPORTER_OTLP_TRACES_HEADERS,
        sdk_env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT,
        sdk_env.OTEL_EXPORTER_OTLP_TRACES_COMPRESSION,
        sdk_env.OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE,
        sdk_env.OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY,
        sdk_env.OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE,
        sdk_env.OTEL_EXPORTER_OTLP_TRACES_INSECURE,
    ),
    SIGNAL_LOGS: OtlpVariables(
        sdk_env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT,
        sdk_env.OTEL_EXPORTER_OTLP_LOGS_PROTOCOL,
        sdk_env.OTEL_EXPORTER_OTLP_LOGS_HEADERS,
        sdk_env.OTEL_EXPORTER_OTLP_LOGS_TIMEOUT,
        sdk_env.OTEL_EXPORTER_OTLP_LOGS_COMPRESSION,
        sdk_env.OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE,
        sdk_env.OTEL_EXPORTER_OTLP_LOGS_CLIENT_KEY,
        sdk_env.OTEL_EXPORTER_OTLP_LOGS_CLIENT_CERTIFICATE,
        sdk_env.OTEL_EXPORTER_OTLP_LOGS_INSECURE,
    ),
    SIGNAL_METRICS: OtlpVariables(
        sdk_env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT,
        sdk_env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL,
        sdk_env.OTEL_EXPORTER_OTLP_METRICS_HEADERS,
        sdk_env.OTEL_EXPORTER_OTLP_METRICS_TIMEOUT,
        sdk_env.OTEL_EXPORTER_OTLP_METRICS_COMPRESSION,
        sdk_env.OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE,
        sdk_env.OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY,
        sdk_env.OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE,
        sdk_env.OTEL_EXPORTER_OTLP_METRICS_INSECURE,
    ),
}


class BatchVariables(NamedTuple):
    """The batch processor variables of one signal (OTEL_BSP_* spans, OTEL_BLRP_* logs)."""

    schedule_delay: str
    max_queue_size: str
    max_export_batch_size: str
    export_timeout: str


BATCH_VARIABLES = {
    SIGNAL_TRACES: BatchVariables(
        sdk_env.OTEL_BSP_SCHEDULE_DELAY,
        sdk_env.OTEL_BSP_MAX_QUEUE_SIZE,
        sdk_env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
        sdk_env.OTEL_BSP_EXPORT_TIMEOUT,
    ),
    SIGNAL_LOGS: BatchVariables(
        sdk_env.OTEL_BLRP_SCHEDULE_DELAY,
        sdk_env.OTEL_BLRP_MAX_QUEUE_SIZE,
        sdk_env.OTEL_BLRP_MAX_EXPORT_BATCH_SIZE,
        sdk_env.OTEL_BLRP_EXPORT_TIMEOUT,
    ),
}

DEFAULT_PROTOCOL = PROTOCOL_GRPC  # what the Python SDK uses for "otlp"
DEFAULT_GRPC_ENDPOINT = "http://localhost:4317"
DEFAULT_HTTP_ENDPOINT = "http://localhost:4318"
DEFAULT_OTLP_TIMEOUT_S = 3.0
DEFAULT_SAMPLER = "parentbased_always_on"
DEFAULT_SAMPLER_RATIO = 1.0
DEFAULT_SCHEDULE_DELAY_MS = 1000.0
DEFAULT_MAX_QUEUE_SIZE = 2048
DEFAULT_MAX_EXPORT_BATCH_SIZE = 512
DEFAULT_BATCH_EXPORT_TIMEOUT_MS = 3000.0
DEFAULT_METRIC_EXPORT_INTERVAL_MS = 60000.0
DEFAULT_METRIC_EXPORT_TIMEOUT_MS = 3000.0

ACCEPTED_EXPORTERS = (
    "a comma list of otlp, otlp_proto_grpc, otlp_proto_http, otlp_json_http, otlp_file, "
    "otlp_json_file, console, or any name in the SDK's opentelemetry_<signal>_exporter "
    "entry points; or none"
)
ACCEPTED_PROTOCOL = "grpc, http/protobuf or http/json"
ACCEPTED_ENDPOINT = (
    "a URL with scheme http or https and a host, e.g. http://localhost:4317 "
    "(for gRPC also host:port, secure unless OTEL_EXPORTER_OTLP_INSECURE=true)"
)
ACCEPTED_INSECURE = "true or false (the SDK reads only true)"
ACCEPTED_HEADERS = "comma-separated key=value pairs (values URL-encoded)"
ACCEPTED_RESOURCE_ATTRIBUTES = ACCEPTED_HEADERS
MAX_MILLISECONDS = 86_400_000.0
"""Longest interval or timeout accepted (one day): ``inf`` and ``nan`` are not durations."""
ACCEPTED_MILLISECONDS = "milliseconds, > 0 and <= 86400000"
ACCEPTED_TIMEOUT = "seconds, > 0 (the Python SDK reads OTLP timeouts in seconds)"
ACCEPTED_COMPRESSION = "gzip or none"
ACCEPTED_FILE = "a readable PEM file"
ACCEPTED_SAMPLERS = (
    "always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, "
    "parentbased_traceidratio, or any name in the SDK's opentelemetry_traces_sampler entry "
    "points"
)
SAMPLER_GROUP = "opentelemetry_traces_sampler"
ID_GENERATOR_GROUP = "opentelemetry_id_generator"
DEFAULT_ID_GENERATOR = "random"
"""The SDK's default; otel_dynamo's ``random`` draws from a source of its own (ids.py)."""
ACCEPTED_ID_GENERATOR = "random, or any name in the SDK's opentelemetry_id_generator entry points"
ACCEPTED_CONFIG_FILE = (
    "unset: otel_dynamo's own providers follow the OTEL_* variables; a file-configured SDK's "
    "global providers are used when the application sets them up"
)
ACCEPTED_RATIO = "a number from 0 to 1"
TURNED_OFF = "{signals} OTLP export turned off"

SAMPLER_NAMES = frozenset(
    {
        "always_on",
        "always_off",
        "traceidratio",
        "parentbased_always_on",
        "parentbased_always_off",
        "parentbased_traceidratio",
    }
)
"""The OTEL_TRACES_SAMPLER values the SDK defines (otel_dynamo._providers builds them)."""
RATIO_SAMPLERS = frozenset({"traceidratio", "parentbased_traceidratio"})
"""The samplers that read OTEL_TRACES_SAMPLER_ARG as their ratio."""


def otlp_variables(field: str, signal: str) -> tuple[str, str]:
    """The per-signal OTLP variable named by ``field`` (an :class:`OtlpVariables` field),
    then the base one: the first set wins."""
    return getattr(OTLP_PER_SIGNAL[signal], field), getattr(OTLP_BASE, field)


def _sdk_disabled(raw: str) -> bool:
    """As the SDK reads OTEL_SDK_DISABLED: only ``true`` (any case) disables; ``1``, ``yes``
    and other values leave it on, so they are a problem here, never a silent switch-off."""
    value = raw.strip().lower()
    if value in ("true", "false", ""):
        return value == "true"
    raise ValueError(raw)


def _positive_seconds(raw: str) -> float:
    """A timeout in seconds, as the SDK reads it: any number > 0."""
    value = float(raw)
    if not value > 0:  # also nan
        raise ValueError(raw)
    return value


def _compression_name(raw: str) -> str:
    value = raw.strip().lower()
    if value not in ("gzip", "none"):
        raise ValueError(raw)
    return value


def _ratio(raw: str) -> float:
    value = float(raw)
    if not 0.0 <= value <= 1.0:
        raise ValueError(raw)
    return value


def _positive_milliseconds(raw: str) -> float:
    value = float(raw)
    if not 0 < value <= MAX_MILLISECONDS:  # also nan
        raise ValueError(raw)
    return value


def _positive_count(raw: str) -> int:
    value = int(raw)
    if not 0 < value <= sys.maxsize:
        raise ValueError(raw)
    return value


# --- the table: every standard variable otel_dynamo reads (docs/configuration.md) --------


def _per_signal(field: str) -> tuple[str, ...]:
    return tuple(getattr(OTLP_PER_SIGNAL[signal], field) for signal in SIGNALS)


SDK_DISABLED = Variable(
    sdk_env.OTEL_SDK_DISABLED,
    "",
    _sdk_disabled,
    "true or false",
    consequence="SDK stays on",
    default="`false`",
    shown="`true`/`false` (any case)",
    meaning=(
        "`true`: no-op providers, nothing exported; read as the SDK reads it, so `1`/`yes` "
        "leave it on (with a problem message)"
    ),
)
SERVICE_NAME = Variable(
    sdk_env.OTEL_SERVICE_NAME,
    "",
    None,
    "a name",
    default="the job's program (`train` for `python train.py`), else `torch-compile`",
    shown="a name",
    meaning="`service.name` of the resource",
)
RESOURCE_ATTRIBUTES = Variable(
    sdk_env.OTEL_RESOURCE_ATTRIBUTES,
    "",
    None,
    ACCEPTED_RESOURCE_ATTRIBUTES,
    consequence="its malformed items are ignored",
    default="unset",
    shown="`key=value,...`",
    meaning="extra resource attributes",
)
EXPORTERS = Variable(
    ENV_EXPORTER[SIGNAL_TRACES],
    "",
    None,
    ACCEPTED_EXPORTERS,
    consequence="{signals} export turned off",
    also=(ENV_EXPORTER[SIGNAL_LOGS], ENV_EXPORTER[SIGNAL_METRICS]),
    default="files when no endpoint is set",
    shown=(
        "comma list of `otlp`, `otlp_proto_grpc`, `otlp_proto_http`, `otlp_json_http`, "
        "`otlp_file` (= `otlp_json_file`, OpenTelemetry's name for its file exporter: our "
        "private OTLP/JSON Lines files), `console`, `none`, or any name registered in the SDK's "
        "`opentelemetry_<signal>_exporter` entry points (e.g. `prometheus` for metrics: a "
        "reader serving `OTEL_EXPORTER_PROMETHEUS_HOST`:`OTEL_EXPORTER_PROMETHEUS_PORT`, "
        "default localhost:9464) — built as the SDK builds it, with no arguments"
    ),
    meaning="exporters per signal",
)
OTLP_ENDPOINT = Variable(
    OTLP_BASE.endpoint,
    "",
    None,
    ACCEPTED_ENDPOINT,
    consequence=TURNED_OFF,
    also=_per_signal("endpoint"),
    title=f"`{OTLP_BASE.endpoint}`",
    default="unset (files)",
    shown="an http(s) URL; for gRPC also `host:port`",
    meaning=(
        "OTLP target of all signals (`OTEL_EXPORTER_OTLP_{TRACES,LOGS,METRICS}_ENDPOINT` per "
        "signal)"
    ),
)
OTLP_INSECURE = Variable(
    OTLP_BASE.insecure,
    "",
    None,
    ACCEPTED_INSECURE,
    consequence="using false",
    also=_per_signal("insecure"),
    title=f"`{OTLP_BASE.insecure}`",
    default="unset",
    shown="`true`/`false` (the SDK reads only `true`)",
    meaning=(
        "gRPC only, as the SDK decides: an `https://` endpoint is always secure; otherwise "
        "this when set; otherwise plaintext only for `http://` — a `host:port` endpoint "
        "(accepted for gRPC, e.g. `collector:4317`) is TLS unless this is `true` (also per "
        "signal)"
    ),
)
OTLP_PROTOCOL = Variable(
    OTLP_BASE.protocol,
    "",
    None,
    ACCEPTED_PROTOCOL,
    consequence=TURNED_OFF,
    also=_per_signal("protocol"),
    title=f"`{OTLP_BASE.protocol}`",
    default="`grpc`",
    shown=(
        "`grpc`, `http/protobuf`, `http/json` (needs the `json-http` extra: `pip install "
        '".[json-http]"` in the clone)'
    ),
    meaning="OTLP transport (also per signal)",
)
OTLP_HEADERS = Variable(
    OTLP_BASE.headers,
    "",
    None,
    ACCEPTED_HEADERS,
    consequence="{signals} OTLP export skips its malformed items",
    also=_per_signal("headers"),
    title=f"`{OTLP_BASE.headers}`",
    default="unset",
    shown="`key=value,...` (URL-encoded values)",
    meaning="headers sent with each export (also per signal)",
)
OTLP_TIMEOUT = Variable(
    OTLP_BASE.timeout,
    "",
    _positive_seconds,
    ACCEPTED_TIMEOUT,
    consequence=f"{{signals}} OTLP export uses {DEFAULT_OTLP_TIMEOUT_S} s",
    also=_per_signal("timeout"),
    title=f"`{OTLP_BASE.timeout}`",
    default=f"`{DEFAULT_OTLP_TIMEOUT_S:g}` (SDK: 10)",
    shown="seconds > 0",
    meaning=(
        "export timeout, in seconds as the Python SDK reads it (also per signal); the exit "
        "flush is bounded anyway (`OTEL_DYNAMO_SHUTDOWN_TIMEOUT`)"
    ),
)
OTLP_COMPRESSION = Variable(
    OTLP_BASE.compression,
    "",
    _compression_name,
    ACCEPTED_COMPRESSION,
    consequence="{signals} OTLP export sends uncompressed",
    also=_per_signal("compression"),
    title=f"`{OTLP_BASE.compression}`",
    default="none",
    shown="`gzip`, `none`",
    meaning="(also per signal)",
)
OTLP_TLS_FILES = Variable(
    OTLP_BASE.certificate,
    "",
    None,
    ACCEPTED_FILE,
    consequence=TURNED_OFF,
    also=(
        OTLP_BASE.client_key,
        OTLP_BASE.client_certificate,
        *_per_signal("certificate"),
        *_per_signal("client_key"),
        *_per_signal("client_certificate"),
    ),
    title=f"`{OTLP_BASE.certificate}`, `_CLIENT_KEY`, `_CLIENT_CERTIFICATE`",
    default="unset",
    shown="readable file paths",
    meaning="TLS trust and client identity (also per signal)",
)
SAMPLER = Variable(
    sdk_env.OTEL_TRACES_SAMPLER,
    "",
    None,
    ACCEPTED_SAMPLERS,
    consequence=f"using {DEFAULT_SAMPLER}",
    default=f"`{DEFAULT_SAMPLER}`",
    shown=(
        "the SDK's sampler names, or any name in its `opentelemetry_traces_sampler` entry points"
    ),
    meaning="sampler of otel_dynamo's own tracer provider",
)
SAMPLER_ARG = Variable(
    sdk_env.OTEL_TRACES_SAMPLER_ARG,
    "",
    _ratio,
    ACCEPTED_RATIO,
    consequence=f"using {DEFAULT_SAMPLER_RATIO}",
    default=f"`{DEFAULT_SAMPLER_RATIO:g}`",
    shown="a ratio from 0 to 1; for an entry point's sampler, any text",
    meaning=(
        "the ratio of `traceidratio` and `parentbased_traceidratio`; a sampler of the "
        "entry points is called with its text, as the SDK does"
    ),
)
ID_GENERATOR = Variable(
    api_env.OTEL_PYTHON_ID_GENERATOR,
    "",
    None,
    ACCEPTED_ID_GENERATOR,
    consequence=f"using {DEFAULT_ID_GENERATOR}",
    default=f"`{DEFAULT_ID_GENERATOR}`",
    shown="`random`, or any name in the SDK's `opentelemetry_id_generator` entry points",
    meaning=(
        "span and trace ids of otel_dynamo's own tracer provider; `random` draws from a "
        "source of its own, which Dynamo's restores of Python's `random` state cannot make "
        "repeat"
    ),
)
RESOURCE_DETECTORS = Variable(
    sdk_env.OTEL_EXPERIMENTAL_RESOURCE_DETECTORS,
    "",
    None,
    "the SDK's resource detector names",
    default="`otel`",
    shown="the SDK's resource detector names; `torchrun` is ours",
    meaning=(
        "read by the SDK's `Resource.create`; our entry point `torchrun` "
        "(`otel_dynamo.resources.TorchrunResourceDetector`) puts the rank attributes on any "
        "application's resource"
    ),
)
CONFIG_FILE = Variable(
    sdk_env.OTEL_CONFIG_FILE,
    "",
    None,
    ACCEPTED_CONFIG_FILE,
    consequence="not read by otel_dynamo",
    default="unset",
    shown="—",
    meaning=(
        "not read: otel_dynamo's own providers follow the variables above (one problem "
        "message says so); providers an application configured from a file and set globally "
        "are used as they are"
    ),
)
BATCH_DURATIONS = Variable(
    BATCH_VARIABLES[SIGNAL_TRACES].schedule_delay,
    "",
    _positive_milliseconds,
    ACCEPTED_MILLISECONDS,
    consequence="using {default}",
    also=(
        BATCH_VARIABLES[SIGNAL_TRACES].export_timeout,
        BATCH_VARIABLES[SIGNAL_LOGS].schedule_delay,
        BATCH_VARIABLES[SIGNAL_LOGS].export_timeout,
    ),
    title="`OTEL_BSP_SCHEDULE_DELAY`, `_EXPORT_TIMEOUT`; `OTEL_BLRP_` the same",
    default=(
        f"{DEFAULT_SCHEDULE_DELAY_MS:g} ms (SDK: 5000), "
        f"{DEFAULT_BATCH_EXPORT_TIMEOUT_MS:g} ms (SDK: 30000)"
    ),
    shown="milliseconds, > 0 and ≤ 86400000",
    meaning="schedule delay and export timeout of the batch span / log record processors",
)
BATCH_SIZES = Variable(
    BATCH_VARIABLES[SIGNAL_TRACES].max_queue_size,
    "",
    _positive_count,
    "a positive integer",
    consequence="using {default}",
    also=(
        BATCH_VARIABLES[SIGNAL_TRACES].max_export_batch_size,
        BATCH_VARIABLES[SIGNAL_LOGS].max_queue_size,
        BATCH_VARIABLES[SIGNAL_LOGS].max_export_batch_size,
    ),
    title="`OTEL_BSP_MAX_QUEUE_SIZE`, `_MAX_EXPORT_BATCH_SIZE`; `OTEL_BLRP_` the same",
    default=f"{DEFAULT_MAX_QUEUE_SIZE}, {DEFAULT_MAX_EXPORT_BATCH_SIZE} (as the SDK)",
    shown="a positive integer",
    meaning=(
        "queue and batch bounds of the batch span / log record processors (a batch is at "
        "most the queue)"
    ),
)
METRIC_EXPORT = Variable(
    sdk_env.OTEL_METRIC_EXPORT_INTERVAL,
    "",
    _positive_milliseconds,
    ACCEPTED_MILLISECONDS,
    consequence="using {default}",
    also=(sdk_env.OTEL_METRIC_EXPORT_TIMEOUT,),
    default=(
        f"{DEFAULT_METRIC_EXPORT_INTERVAL_MS:g} ms as the SDK; timeout "
        f"{DEFAULT_METRIC_EXPORT_TIMEOUT_MS:g} ms (SDK: 30000)"
    ),
    shown="milliseconds, > 0 and ≤ 86400000",
    meaning=(
        "periodic metric export; otel_dynamo's own providers also export right after each "
        "frame compile (from a background thread), so a job killed between two reads keeps "
        "its compiles"
    ),
)

VARIABLES: tuple[Variable, ...] = (
    SDK_DISABLED,
    SERVICE_NAME,
    RESOURCE_ATTRIBUTES,
    EXPORTERS,
    OTLP_ENDPOINT,
    OTLP_INSECURE,
    OTLP_PROTOCOL,
    OTLP_HEADERS,
    OTLP_TIMEOUT,
    OTLP_COMPRESSION,
    OTLP_TLS_FILES,
    SAMPLER,
    SAMPLER_ARG,
    ID_GENERATOR,
    RESOURCE_DETECTORS,
    CONFIG_FILE,
    BATCH_DURATIONS,
    BATCH_SIZES,
    METRIC_EXPORT,
)
"""The standard variables, one row each (a family read alike, such as the per-signal
variants, in one row): their names, parsers, what a bad value costs and their
documentation; the OTEL_DYNAMO_* ones are ``settings.VARIABLES``."""


class Difference(NamedTuple):
    """Where otel_dynamo's own providers read a standard variable unlike the SDK, on purpose."""

    variables: str
    sdk: str
    ours: str
    why: str


DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        "`OTEL_<SIGNAL>_EXPORTER` unset, no OTLP endpoint",
        "`otlp`, to localhost:4317",
        "OTLP/JSON Lines files in `OTEL_DYNAMO_OUTPUT_DIR` (`otlp_file`)",
        "nothing is sent to an endpoint nobody runs: a job with no collector keeps its "
        "telemetry, and does not stall 7-8 s at exit on one that is not there",
    ),
    Difference(
        "`OTEL_EXPORTER_OTLP_TIMEOUT`",
        "10 s",
        f"{DEFAULT_OTLP_TIMEOUT_S:g} s",
        "a collector that is down costs an exporter thread 3 s per batch, not 10",
    ),
    Difference(
        "`OTEL_BSP_SCHEDULE_DELAY`, `OTEL_BLRP_SCHEDULE_DELAY`",
        "5000 ms",
        f"{DEFAULT_SCHEDULE_DELAY_MS:g} ms",
        "a compile's spans are on disk within a second: a job that is killed loses less",
    ),
    Difference(
        "`OTEL_BSP_EXPORT_TIMEOUT`, `OTEL_BLRP_EXPORT_TIMEOUT`, `OTEL_METRIC_EXPORT_TIMEOUT`",
        "30000 ms",
        f"{DEFAULT_BATCH_EXPORT_TIMEOUT_MS:g} ms",
        "a stuck exporter does not hold a batch for 30 s",
    ),
    Difference(
        "`OTEL_EXPORTER_OTLP_HEADERS` (and per signal)",
        "each exporter parses the variable itself, logs a malformed item's raw text (a token "
        "missing its key included) and skips it",
        "parsed once; a malformed item is skipped with one problem message that shows no "
        "value; the exporters send exactly the headers parsed",
        "a header value is often a secret",
    ),
    Difference(
        "`OTEL_SDK_DISABLED`, `OTEL_EXPORTER_OTLP_INSECURE`",
        "only `true` counts; any other value is false, silently",
        "the same reading, but a value other than `true` or `false` gives a problem message",
        "`1` or `yes` do not do what they seem to",
    ),
    Difference(
        "a bad value of any standard variable",
        "an exception at start, a log line, or the default, depending on the variable",
        "one problem message naming the variable, the value and what is accepted; the default "
        "is used, or what the value affects is turned off (an unknown exporter: that signal); "
        "with `OTEL_DYNAMO_STRICT=true` the process stops at start",
        "one way to be told, and tracing never stops a job",
    ),
    Difference(
        "`OTEL_SERVICE_NAME` unset",
        "`unknown_service:` and the Python executable's name",
        "the job's program: `train` for `python train.py` and each rank of `torchrun "
        "train.py`, `pkg.train` for `python -m pkg.train`; `torch-compile` for `python -c`",
        "a name that tells one job from another (the `job` label of every metric)",
    ),
    Difference(
        "`OTEL_PYTHON_ID_GENERATOR=random`",
        "ids from Python's `random`",
        "ids from a source of its own",
        "Dynamo saves and restores Python's `random` state around every frame compile, so "
        "spans of different compiles could get the same ids",
    ),
    Difference(
        "`OTEL_CONFIG_FILE`",
        "read where the SDK's file configuration is installed",
        "not read (one problem message says so)",
        "otel_dynamo's own providers follow the variables; providers an application built "
        "from a file and set globally are used as they are",
    ),
)
"""The "deliberate differences from the SDK" table of docs/configuration.md."""
