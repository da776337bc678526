"""The standard OTEL_* variables we honour, parsed into one export plan per signal.

Pure: reads only the mapping it is given and returns plain values plus the
:class:`ConfigProblem` list. A bad value never raises here; it turns off what it
affects (an unusable endpoint turns off that signal's OTLP export) or falls back to
the default (a bad timeout), and says so in the problem's consequence.

The embedded default: a signal with no OTEL_<SIGNAL>_EXPORTER and no OTLP endpoint
(base or per-signal) is written to OTLP/JSON Lines files, never sent to a network
endpoint nobody runs.

Every variable is a row of ``otel_variables.VARIABLES`` (its names, parser, accepted
values, the cost of a bad value and its documentation). The functions here put the values
together, in context: the endpoint is checked for the protocol chosen, an exporter name
against the entry points of its signal.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import TypeVar, cast
from urllib.parse import parse_qsl, urlsplit

from otel_dynamo._config import registered
from otel_dynamo._config.otel_variables import (
    ACCEPTED_PROTOCOL,
    BATCH_DURATIONS,
    BATCH_SIZES,
    BATCH_VARIABLES,
    BUILT_IN_EXPORTERS,
    CONFIG_FILE,
    DEFAULT_BATCH_EXPORT_TIMEOUT_MS,
    DEFAULT_GRPC_ENDPOINT,
    DEFAULT_HTTP_ENDPOINT,
    DEFAULT_ID_GENERATOR,
    DEFAULT_MAX_EXPORT_BATCH_SIZE,
    DEFAULT_MAX_QUEUE_SIZE,
    DEFAULT_METRIC_EXPORT_INTERVAL_MS,
    DEFAULT_METRIC_EXPORT_TIMEOUT_MS,
    DEFAULT_OTLP_TIMEOUT_S,
    DEFAULT_PROTOCOL,
    DEFAULT_SAMPLER,
    DEFAULT_SAMPLER_RATIO,
    DEFAULT_SCHEDULE_DELAY_MS,
    ENV_EXPORTER,
    EXPORTER_ALIASES,
    EXPORTER_FILE,
    EXPORTER_JSON_FILE,
    EXPORTER_NONE,
    EXPORTER_OTLP,
    EXPORTERS,
    ID_GENERATOR,
    ID_GENERATOR_GROUP,
    JSON_HTTP_DISTRIBUTION,
    METRIC_EXPORT,
    OTLP_BASE,
    OTLP_COMPRESSION,
    OTLP_ENDPOINT,
    OTLP_HEADERS,
    OTLP_INSECURE,
    OTLP_PER_SIGNAL,
    OTLP_PROTOCOL,
    OTLP_TIMEOUT,
    OTLP_TLS_FILES,
    PROTOCOL_GRPC,
    PROTOCOL_HTTP,
    PROTOCOL_HTTP_JSON,
    RATIO_SAMPLERS,
    RESOURCE_ATTRIBUTES,
    SAMPLER,
    SAMPLER_ARG,
    SAMPLER_GROUP,
    SAMPLER_NAMES,
    SDK_DISABLED,
    SIGNALS,
    BatchVariables,
    otlp_variables,
)
from otel_dynamo._config.pairs import header_key, parse_pairs, redacted_pairs
from otel_dynamo._config.redaction import redacted_url
from otel_dynamo._config.sdk_variables import sdk_env
from otel_dynamo._config.settings import ConfigProblem, Variable

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class SamplerChoice:
    """OTEL_TRACES_SAMPLER and, for the ratio samplers, OTEL_TRACES_SAMPLER_ARG."""

    name: str
    ratio: float = DEFAULT_SAMPLER_RATIO
    arg: str = ""
    """OTEL_TRACES_SAMPLER_ARG as given, for a sampler registered by entry point."""


@dataclasses.dataclass(frozen=True)
class OtlpTarget:
    """Where and how one signal is sent over OTLP."""

    protocol: str
    endpoint: str
    headers: tuple[tuple[str, str], ...] = ()
    timeout_s: float = DEFAULT_OTLP_TIMEOUT_S
    compression: str = "none"
    certificate: str | None = None
    client_key: str | None = None
    client_certificate: str | None = None
    insecure: bool | None = None
    """OTEL_EXPORTER_OTLP_INSECURE as given (gRPC only; None: unset, the scheme decides)."""

    def secrets(self) -> frozenset[str]:
        """Text never to print: header values, the endpoint's user-info parts and the
        values of its query string."""
        found = {value for _key, value in self.headers if value}
        parts = urlsplit(self.endpoint)
        found.update(part for part in (parts.username, parts.password) if part)
        found.update(value for _key, value in parse_qsl(parts.query) if value)
        return frozenset(found)


@dataclasses.dataclass(frozen=True)
class SignalPlan:
    """The exporters of one signal: a subset of otlp, otlp_file, console (empty: off)."""

    signal: str
    exporters: tuple[str, ...]
    otlp: OtlpTarget | None = None


@dataclasses.dataclass(frozen=True)
class BatchOptions:
    """Batch processor bounds (OTEL_BSP_* for spans, OTEL_BLRP_* for log records)."""

    schedule_delay_ms: float = DEFAULT_SCHEDULE_DELAY_MS
    max_queue_size: int = DEFAULT_MAX_QUEUE_SIZE
    max_export_batch_size: int = DEFAULT_MAX_EXPORT_BATCH_SIZE
    export_timeout_ms: float = DEFAULT_BATCH_EXPORT_TIMEOUT_MS


@dataclasses.dataclass(frozen=True)
class OtelEnv:
    """Everything read from the standard variables."""

    disabled: bool
    plans: Mapping[str, SignalPlan]
    sampler: SamplerChoice
    batch: Mapping[str, BatchOptions]
    metric_interval_ms: float
    metric_timeout_ms: float
    problems: tuple[ConfigProblem, ...]
    id_generator: str = DEFAULT_ID_GENERATOR


def read_otel_env(environ: Mapping[str, str] | None = None) -> OtelEnv:
    """Parse every standard OTEL_* variable we honour; problems are collected, not raised."""
    reader = _Reader(os.environ if environ is None else environ)
    disabled: bool = reader.value(SDK_DISABLED, SDK_DISABLED.env, False)
    plans = {signal: _signal_plan(reader, signal) for signal in SIGNALS}
    sampler = _sampler(reader)
    batch = {signal: _batch_options(reader, names) for signal, names in BATCH_VARIABLES.items()}
    interval: float = reader.value(
        METRIC_EXPORT, sdk_env.OTEL_METRIC_EXPORT_INTERVAL, DEFAULT_METRIC_EXPORT_INTERVAL_MS
    )
    timeout: float = reader.value(
        METRIC_EXPORT, sdk_env.OTEL_METRIC_EXPORT_TIMEOUT, DEFAULT_METRIC_EXPORT_TIMEOUT_MS
    )
    _check_resource_attributes(reader)
    _check_config_file(reader)
    id_generator = _id_generator(reader)
    return OtelEnv(
        disabled=disabled,
        plans=plans,
        sampler=sampler,
        batch=batch,
        metric_interval_ms=interval,
        metric_timeout_ms=timeout,
        problems=reader.problems(),
        id_generator=id_generator,
    )


def _check_resource_attributes(reader: _Reader) -> None:
    raw = reader.raw(RESOURCE_ATTRIBUTES.env)
    if raw and parse_pairs(raw)[1]:
        reader.problem(RESOURCE_ATTRIBUTES, RESOURCE_ATTRIBUTES.env, raw)


# --- signals ---------------------------------------------------------------------------


def _signal_plan(reader: _Reader, signal: str) -> SignalPlan:
    exporters, alias_protocol = _exporters(reader, signal)
    if EXPORTER_OTLP not in exporters:
        return SignalPlan(signal, exporters)
    target = _otlp_target(reader, signal, alias_protocol)
    if target is None:
        return SignalPlan(signal, tuple(kind for kind in exporters if kind != EXPORTER_OTLP))
    return SignalPlan(signal, exporters, target)


def _exporters(reader: _Reader, signal: str) -> tuple[tuple[str, ...], str | None]:
    """The exporter kinds of a signal, and the protocol an otlp_proto_* name implies."""
    variable = ENV_EXPORTER[signal]
    raw = reader.raw(variable)
    if raw is None:
        has_endpoint = reader.first(*otlp_variables("endpoint", signal))
        return ((EXPORTER_OTLP,) if has_endpoint else (EXPORTER_FILE,)), None
    items = [item.strip().lower() for item in raw.split(",") if item.strip()]
    alias = next((EXPORTER_ALIASES[item] for item in items if item in EXPORTER_ALIASES), None)
    kinds = [_exporter_kind(item) for item in items]
    known = BUILT_IN_EXPORTERS | registered.names_in(registered.exporter_group(signal))
    if not kinds or not set(kinds) <= known:
        reader.problem(EXPORTERS, variable, raw, signal=signal)
        return (), None
    return tuple(dict.fromkeys(kind for kind in kinds if kind != EXPORTER_NONE)), alias


def _exporter_kind(name: str) -> str:
    """Our kind for an exporter name: OTLP under any protocol name, our files for the file
    exporter's name, else the name itself (built in, or an entry point's)."""
    if name in EXPORTER_ALIASES:
        return EXPORTER_OTLP
    return EXPORTER_FILE if name == EXPORTER_JSON_FILE else name


def _otlp_target(reader: _Reader, signal: str, alias_protocol: str | None) -> OtlpTarget | None:
    protocol = alias_protocol or _protocol(reader, signal)
    if alias_protocol == PROTOCOL_HTTP_JSON:  # named as an exporter: needs its package too
        protocol = _json_http_or_none(reader, ENV_EXPORTER[signal], "otlp_json_http", signal)
    if protocol is None:
        return None
    endpoint = _endpoint(reader, signal, protocol)
    tls = _tls_files(reader, signal)
    if endpoint is None or tls is None:
        return None
    return OtlpTarget(
        protocol,
        endpoint,
        headers=_headers(reader, signal),
        timeout_s=_timeout(reader, signal),
        compression=_compression(reader, signal),
        certificate=tls[0],
        client_key=tls[1],
        client_certificate=tls[2],
        insecure=_insecure(reader, signal),
    )


def _insecure(reader: _Reader, signal: str) -> bool | None:
    found = reader.first(*otlp_variables("insecure", signal))
    if found is None:
        return None
    value = found[1].strip().lower()
    if value not in ("true", "false"):
        reader.problem(OTLP_INSECURE, *found, signal=signal)
    return value == "true"


def _protocol(reader: _Reader, signal: str) -> str | None:
    found = reader.first(*otlp_variables("protocol", signal))
    if found is None:
        return DEFAULT_PROTOCOL
    variable, raw = found
    value = raw.strip().lower()
    if value in (PROTOCOL_GRPC, PROTOCOL_HTTP):
        return value
    if value == PROTOCOL_HTTP_JSON:
        return _json_http_or_none(reader, variable, raw, signal)
    reader.problem(OTLP_PROTOCOL, variable, raw, signal=signal)
    return None


def _json_http_or_none(reader: _Reader, variable: str, raw: str, signal: str) -> str | None:
    if registered.installed(JSON_HTTP_DISTRIBUTION):
        return PROTOCOL_HTTP_JSON
    accepted = (
        f"{ACCEPTED_PROTOCOL}; http/json needs {JSON_HTTP_DISTRIBUTION} "
        "(otel_dynamo's json-http extra)"
    )
    reader.problem(OTLP_PROTOCOL, variable, raw, signal=signal, accepted=accepted)
    return None


def _endpoint(reader: _Reader, signal: str, protocol: str) -> str | None:
    """The URL to send to: per-signal as given, else base (+ /v1/<signal> for HTTP)."""
    per_signal = reader.first(OTLP_PER_SIGNAL[signal].endpoint)
    found = per_signal or reader.first(OTLP_BASE.endpoint)
    if found is None:
        default = DEFAULT_GRPC_ENDPOINT if protocol == PROTOCOL_GRPC else DEFAULT_HTTP_ENDPOINT
        return _signal_url(default, signal, protocol)
    variable, url = found
    if protocol == PROTOCOL_GRPC and is_host_and_port(url):
        return url.strip()  # the gRPC exporter takes host:port as it is
    if not is_valid_url(url):
        reader.problem(OTLP_ENDPOINT, variable, redacted_url(url), signal=signal)
        return None
    return url.strip() if per_signal else _signal_url(url, signal, protocol)


def _signal_url(base: str, signal: str, protocol: str) -> str:
    base = base.strip()
    return base if protocol == PROTOCOL_GRPC else f"{base.rstrip('/')}/v1/{signal}"


def is_host_and_port(raw: str) -> bool:
    """``host:port`` with no scheme, as the gRPC exporter accepts it (``collector:4317``)."""
    if "://" in raw:
        return False
    try:
        parts = urlsplit(f"//{raw.strip()}")
        return bool(parts.hostname) and parts.port is not None and parts.port > 0
    except ValueError:
        return False


def is_valid_url(raw: str) -> bool:
    """http(s)://host[:port][/path], with nothing unparsable."""
    try:
        parts = urlsplit(raw.strip())
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and port_ok


def _headers(reader: _Reader, signal: str) -> tuple[tuple[str, str], ...]:
    """Like the SDK: each well-formed item is kept, each malformed one skipped (and named)."""
    found = reader.first(*otlp_variables("headers", signal))
    if found is None:
        return ()
    headers, malformed = parse_pairs(found[1], key=header_key)
    if malformed:
        reader.problem(OTLP_HEADERS, found[0], redacted_pairs(found[1]), signal=signal)
    return headers


def _timeout(reader: _Reader, signal: str) -> float:
    names = otlp_variables("timeout", signal)
    found: float = reader.value(OTLP_TIMEOUT, names, DEFAULT_OTLP_TIMEOUT_S, signal=signal)
    return found


def _compression(reader: _Reader, signal: str) -> str:
    found: str = reader.value(
        OTLP_COMPRESSION, otlp_variables("compression", signal), "none", signal=signal
    )
    return found


def _tls_files(reader: _Reader, signal: str) -> tuple[str | None, str | None, str | None] | None:
    """CERTIFICATE, CLIENT_KEY, CLIENT_CERTIFICATE paths; None when one is unreadable."""
    paths: list[str | None] = []
    for suffix in ("certificate", "client_key", "client_certificate"):
        found = reader.first(*otlp_variables(suffix, signal))
        if found is not None and not _readable_file(found[1]):
            reader.problem(OTLP_TLS_FILES, *found, signal=signal)
            return None
        paths.append(found[1].strip() if found else None)
    return paths[0], paths[1], paths[2]


def _readable_file(path: str) -> bool:
    return os.path.isfile(path.strip()) and os.access(path.strip(), os.R_OK)


# --- traces sampler, batching ----------------------------------------------------------


def _sampler(reader: _Reader) -> SamplerChoice:
    raw = reader.raw(SAMPLER.env)
    name = DEFAULT_SAMPLER if raw is None else raw.strip().lower()
    if name not in SAMPLER_NAMES:
        if raw is not None and raw.strip() in registered.names_in(SAMPLER_GROUP):
            return SamplerChoice(raw.strip(), arg=reader.raw(SAMPLER_ARG.env) or "")
        reader.problem(SAMPLER, SAMPLER.env, raw or "")
        name = DEFAULT_SAMPLER
    ratio = DEFAULT_SAMPLER_RATIO
    if name in RATIO_SAMPLERS:
        ratio = reader.value(SAMPLER_ARG, SAMPLER_ARG.env, DEFAULT_SAMPLER_RATIO)
    return SamplerChoice(name, ratio)


def _id_generator(reader: _Reader) -> str:
    raw = reader.raw(ID_GENERATOR.env)
    if raw is None or raw.strip() == DEFAULT_ID_GENERATOR:
        return DEFAULT_ID_GENERATOR
    if raw.strip() in registered.names_in(ID_GENERATOR_GROUP):
        return raw.strip()
    reader.problem(ID_GENERATOR, ID_GENERATOR.env, raw)
    return DEFAULT_ID_GENERATOR


def _check_config_file(reader: _Reader) -> None:
    raw = reader.raw(CONFIG_FILE.env)
    if raw is not None:
        reader.problem(CONFIG_FILE, CONFIG_FILE.env, raw)


def _batch_options(reader: _Reader, names: BatchVariables) -> BatchOptions:
    defaults = BatchOptions()
    queue: int = reader.value(BATCH_SIZES, names.max_queue_size, defaults.max_queue_size)
    batch: int = reader.value(
        BATCH_SIZES, names.max_export_batch_size, defaults.max_export_batch_size
    )
    return BatchOptions(
        schedule_delay_ms=reader.value(
            BATCH_DURATIONS, names.schedule_delay, defaults.schedule_delay_ms
        ),
        max_queue_size=queue,
        max_export_batch_size=min(batch, queue),
        export_timeout_ms=reader.value(
            BATCH_DURATIONS, names.export_timeout, defaults.export_timeout_ms
        ),
    )


# --- the reader ------------------------------------------------------------------------


class _Pending:
    """One problem being collected: the signals it affects grow as they are read."""

    __slots__ = ("accepted", "consequence", "signals", "value", "variable")

    def __init__(self, variable: str, value: str, accepted: str, consequence: str) -> None:
        self.variable = variable
        self.value = value
        self.accepted = accepted
        self.consequence = consequence
        self.signals: list[str] = []


class _Reader:
    """Looks variables up and collects problems (one per variable and value)."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ
        self._pending: dict[tuple[str, str], _Pending] = {}

    def raw(self, name: str) -> str | None:
        value = self._environ.get(name)
        return value if value is not None and value.strip() else None

    def first(self, *names: str) -> tuple[str, str] | None:
        """The first of ``names`` that is set and not blank, with its value."""
        for name in names:
            value = self.raw(name)
            if value is not None:
                return name, value
        return None

    def value(
        self, row: Variable, names: str | tuple[str, ...], default: T, *, signal: str = ""
    ) -> T:
        """The first of ``names`` (variables of ``row``) that is set, parsed by the row's
        parser; ``default`` when none is set, or the value is bad (then a problem)."""
        found = self.first(*((names,) if isinstance(names, str) else names))
        if found is None or row.parse is None:
            return default
        try:
            return cast(T, row.parse(found[1]))
        except ValueError:
            self.problem(row, *found, signal=signal, default=default)
            return default

    def problem(
        self,
        row: Variable,
        variable: str,
        value: str,
        *,
        signal: str = "",
        accepted: str = "",
        default: object = None,
    ) -> None:
        """``variable`` (one of ``row``'s) has a bad ``value`` (as it may be shown): what is
        accepted and what it costs are the row's, ``{default}`` in its consequence the
        default used."""
        consequence = row.consequence
        if isinstance(default, (int, float)):
            consequence = consequence.replace("{default}", f"{default:g}")
        pending = self._pending.setdefault(
            (variable, value), _Pending(variable, value, accepted or row.accepted, consequence)
        )
        if signal and signal not in pending.signals:
            pending.signals.append(signal)

    def problems(self) -> tuple[ConfigProblem, ...]:
        return tuple(
            ConfigProblem(p.variable, p.value, p.accepted, _consequence(p))
            for p in self._pending.values()
        )


def _consequence(pending: _Pending) -> str:
    return pending.consequence.replace("{signals}", join_signals(pending.signals))


def join_signals(signals: list[str]) -> str:
    """["traces", "logs", "metrics"] -> "traces, logs and metrics"."""
    if len(signals) < 2:
        return "".join(signals)
    return f"{', '.join(signals[:-1])} and {signals[-1]}"
