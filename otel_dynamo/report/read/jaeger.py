"""Read one run back from Jaeger's query API (api_v3) as OTLP/JSON Lines files.

Jaeger answers ``/api/v3/traces`` with OTLP/JSON, the format of one line of the files the
exporters write; so a run read from Jaeger is written, process by process, into files of
a private folder (``fetch_run``), which the report then reads exactly as it reads a job's
own files: one decoder for the format. What Jaeger's storage changed on the way is undone
here first: a store behind Jaeger's v1 model (Badger, Cassandra, Elasticsearch) returns an
array attribute as its JSON text; the keys otel_dynamo writes as arrays
(``names.ARRAY_ATTRIBUTES``) become arrays again.

The query API has no page cursor, only a limit on traces per answer. So the window is read
in slices: a slice whose answer holds the limit may have lost traces, and is read again as
two halves, down to ``MIN_SLICE_NS``; a trace seen in an earlier slice (a trace matches
every slice one of its spans starts in, and comes whole) is skipped. Memory holds one
answer at a time, plus the trace ids seen.

Nothing here prints: every failure is one ``JaegerError`` whose message names the address
(never its credentials, never a header's value) and what to do.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
import os
import re
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from otel_dynamo import names
from otel_dynamo.report.read import decode as _decode

if TYPE_CHECKING:
    from otel_dynamo.report.read.jaeger_client import Client

ADDRESS_SCHEMES = ("http", "https")
"""A report path with one of these schemes is a Jaeger query address, not a file."""

ENV_HEADERS = "OTEL_DYNAMO_JAEGER_HEADERS"
"""Headers sent with every query, as ``OTEL_EXPORTER_OTLP_HEADERS`` writes them:
``key=value,key2=value2``, values URL-encoded (``Authorization=Bearer%20<token>``)."""
ENV_CERTIFICATE = "OTEL_DYNAMO_JAEGER_CERTIFICATE"
"""A PEM file of the CA certificates that an https address's certificate is checked
against (a team's private CA), instead of the system's."""
ENV_CLIENT_CERTIFICATE = "OTEL_DYNAMO_JAEGER_CLIENT_CERTIFICATE"
"""A PEM client certificate for mutual TLS (with ``ENV_CLIENT_KEY``)."""
ENV_CLIENT_KEY = "OTEL_DYNAMO_JAEGER_CLIENT_KEY"
"""The PEM private key of ``ENV_CLIENT_CERTIFICATE`` (if not in the same file)."""
ENV_TIMEOUT = "OTEL_DYNAMO_JAEGER_TIMEOUT"
"""Seconds one query may take (connecting, then each wait for data)."""
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_TRACE_LIMIT = 500
"""Traces asked for per query (``limit=``): Jaeger's memory store refuses more than its
``max_traces``; Badger and the others take any."""
DEFAULT_LOOKBACK = "1h"
"""The window when the address gives neither ``start`` nor ``lookback``."""
MIN_SLICE_NS = 1_000
"""A slice this narrow whose answer still holds the limit is not split again: the run may
be incomplete there, and the report says so. A microsecond: the precision of the time of a
span that Jaeger's v1 model (Badger, Cassandra, Elasticsearch) keeps."""
MAX_ANSWER_BYTES = 512 * 1024 * 1024
"""The largest answer read; a larger one asks for a lower ``limit=``."""
MAX_ERROR_BYTES = 64 * 1024
MAX_SHOWN_SERVICES = 20


class Variable(NamedTuple):
    """One environment variable the Jaeger reader reads, as docs/configuration.md lists
    it (``docs/generate_configuration.py``)."""

    name: str
    default: str
    accepted: str
    meaning: str


VARIABLES: tuple[Variable, ...] = (
    Variable(
        ENV_HEADERS,
        "unset",
        "`key=value,...` (URL-encoded values), as `OTEL_EXPORTER_OTLP_HEADERS`",
        "headers sent with every query to a Jaeger address of `otel-dynamo report` and "
        "`diff`: `Authorization=Bearer%20<token>` or `Authorization=Basic%20<base64>`; "
        "never printed, not even in an error",
    ),
    Variable(
        ENV_CERTIFICATE,
        "the system's CA certificates",
        "a readable PEM file",
        "the CA certificates an `https://` Jaeger address's certificate is checked against "
        "(a team's private CA)",
    ),
    Variable(
        ENV_CLIENT_CERTIFICATE,
        "unset",
        "a readable PEM file",
        f"client certificate for mutual TLS with Jaeger (its key in it, or in `{ENV_CLIENT_KEY}`)",
    ),
    Variable(ENV_CLIENT_KEY, "unset", "a readable PEM file", "the key of that certificate"),
    Variable(
        ENV_TIMEOUT,
        f"{DEFAULT_TIMEOUT_S:g}",
        "seconds > 0",
        "how long one query to Jaeger may take (to connect, then each wait for data)",
    ),
)
"""The variables of a team's Jaeger (read by ``JaegerSettings.from_environment``)."""


PARAM_SERVICE = "service"
PARAM_START = "start"
PARAM_END = "end"
PARAM_LOOKBACK = "lookback"
PARAM_RUN_ID = "run_id"
PARAM_LIMIT = "limit"
ADDRESS_PARAMETERS = (
    PARAM_SERVICE,
    PARAM_START,
    PARAM_END,
    PARAM_LOOKBACK,
    PARAM_RUN_ID,
    PARAM_LIMIT,
)
ADDRESS_FORMAT = (
    "http(s)://HOST:PORT[/PREFIX]/?service=NAME[&start=TIME][&end=TIME][&lookback=DURATION]"
    "[&run_id=ID][&limit=N]"
)

_LOOKBACK = re.compile(r"^(\d+(?:\.\d+)?)(s|m|h|d)$")
_LOOKBACK_UNITS_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_NS = 1_000_000_000


class JaegerError(Exception):
    """Jaeger could not be read (down, slow, refused, answered wrongly) or the address or
    the environment is wrong: one line, safe to print (no credentials)."""


def is_jaeger_address(text: str | os.PathLike[str]) -> bool:
    """Whether a report path is a Jaeger query address (an http or https URL)."""
    scheme = urllib.parse.urlsplit(str(text)).scheme.lower()
    return isinstance(text, str) and scheme in ADDRESS_SCHEMES


@dataclasses.dataclass(frozen=True)
class JaegerAddress:
    """A Jaeger query address and the run chosen in its query string."""

    base: str
    """``scheme://host:port/prefix``: the API is under ``base + "/api/v3"``."""
    service: str
    start_ns: int
    end_ns: int
    run_id: str | None
    limit: int

    @property
    def window(self) -> tuple[str, str]:
        return rfc3339(self.start_ns), rfc3339(self.end_ns)

    def __str__(self) -> str:
        query = {PARAM_SERVICE: self.service, PARAM_START: self.window[0]}
        query[PARAM_END] = self.window[1]
        if self.run_id is not None:
            query[PARAM_RUN_ID] = self.run_id
        return f"{self.base}/?{urllib.parse.urlencode(query, safe=':')}"

    @classmethod
    def parse(cls, text: str, *, now_ns: int | None = None) -> JaegerAddress:
        """The address in ``text`` (``ADDRESS_FORMAT``); a ``JaegerError`` naming the
        parameter, its value and what is accepted when one is wrong."""
        parts = urllib.parse.urlsplit(text)
        if parts.username is not None or parts.password is not None:
            raise JaegerError(
                "a Jaeger address must not carry credentials (user:password@): "
                f"give them as a header in {ENV_HEADERS}, e.g. Authorization=Basic%20<base64>"
            )
        if parts.scheme.lower() not in ADDRESS_SCHEMES or not parts.hostname:
            raise JaegerError(f"not a Jaeger query address: {text!r} (expected {ADDRESS_FORMAT})")
        try:
            parts.port  # noqa: B018 - parsed here: a bad port raises
        except ValueError:
            raise JaegerError(f"{_shown(parts)}: the port is not a number") from None
        query = _query(parts)
        service = query.pop(PARAM_SERVICE, "")
        if not service:
            raise JaegerError(
                f"{_shown(parts)}: {PARAM_SERVICE}= is required: the service name the run "
                f"reported as (OTEL_SERVICE_NAME); expected {ADDRESS_FORMAT}"
            )
        now = time.time_ns() if now_ns is None else now_ns
        end_ns = _time(query, PARAM_END, now)
        if PARAM_START in query and PARAM_LOOKBACK in query:
            raise JaegerError(f"{PARAM_START}= and {PARAM_LOOKBACK}= both given: give one")
        if PARAM_START in query:
            start_ns = _time(query, PARAM_START, now)
        else:
            start_ns = end_ns - _lookback_ns(query.get(PARAM_LOOKBACK, DEFAULT_LOOKBACK))
        if start_ns >= end_ns:
            raise JaegerError(
                f"{PARAM_START}={rfc3339(start_ns)} is not before {PARAM_END}={rfc3339(end_ns)}"
            )
        limit = _limit(query.get(PARAM_LIMIT))
        base = urllib.parse.urlunsplit((parts.scheme.lower(), parts.netloc, "", "", ""))
        return cls(
            base=base + parts.path.rstrip("/"),
            service=service,
            start_ns=start_ns,
            end_ns=end_ns,
            run_id=query.get(PARAM_RUN_ID) or None,
            limit=limit,
        )


def _shown(parts: urllib.parse.SplitResult) -> str:
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def _query(parts: urllib.parse.SplitResult) -> dict[str, str]:
    try:
        pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        pairs = [] if not parts.query else [("", parts.query)]
    query: dict[str, str] = {}
    for key, value in pairs:
        if key not in ADDRESS_PARAMETERS:
            accepted = ", ".join(ADDRESS_PARAMETERS)
            raise JaegerError(
                f"{_shown(parts)}: unknown parameter {key!r} (accepted: {accepted}; "
                f"expected {ADDRESS_FORMAT})"
            )
        if key in query:
            raise JaegerError(f"{_shown(parts)}: {key}= given twice")
        query[key] = value
    return query


def _time(query: Mapping[str, str], key: str, now_ns: int) -> int:
    text = query.get(key)
    if text is None:
        return now_ns
    return parse_time(text, parameter=key)


def parse_time(text: str, *, parameter: str) -> int:
    """Nanoseconds since the epoch of an RFC 3339 time with its offset
    (``2026-12-05T10:00:00Z``, ``2026-12-05T11:00:00.5+01:00``)."""
    accepted = "an RFC 3339 time with its zone, e.g. 2026-12-05T10:00:00Z"
    match = re.fullmatch(
        r"(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|z|[+-]\d\d:\d\d)", text.strip()
    )
    if match is None:
        raise JaegerError(f"{parameter}={text!r} is not {accepted}")
    whole, fraction, zone = match.groups()
    zone = "+00:00" if zone in ("Z", "z") else zone
    try:
        moment = datetime.datetime.fromisoformat(f"{whole.replace(' ', 'T')}{zone}")
    except ValueError:
        raise JaegerError(f"{parameter}={text!r} is not {accepted}") from None
    seconds = int(moment.timestamp())
    return seconds * _NS + int((fraction or "0").ljust(9, "0"))


def _lookback_ns(text: str) -> int:
    match = _LOOKBACK.fullmatch(text.strip())
    if match is None or float(match.group(1)) <= 0:
        raise JaegerError(
            f"{PARAM_LOOKBACK}={text!r} is not a duration: a positive number and s, m, h or d "
            "(e.g. 90m, 2h, 1d)"
        )
    return round(float(match.group(1)) * _LOOKBACK_UNITS_S[match.group(2)] * _NS)


def _limit(text: str | None) -> int:
    if text is None:
        return DEFAULT_TRACE_LIMIT
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 2:  # one trace per query could never tell a full slice from a complete one
        raise JaegerError(f"{PARAM_LIMIT}={text!r} is not a whole number of 2 or more")
    return value


def rfc3339(ns: int) -> str:
    """``ns`` since the epoch as Jaeger's query API reads a time (RFC 3339, UTC, to the
    nanosecond)."""
    seconds, rest = divmod(ns, _NS)
    moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc)
    fraction = f".{rest:09d}".rstrip("0").rstrip(".")
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + fraction + "Z"


@dataclasses.dataclass(frozen=True)
class JaegerSettings:
    """What a team's Jaeger asks of a client: headers, TLS, a timeout (from the
    environment: ``from_environment``)."""

    headers: tuple[tuple[str, str], ...] = ()
    certificate: str | None = None
    client_certificate: str | None = None
    client_key: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S

    def __repr__(self) -> str:  # never the headers' values
        keys = [key for key, _ in self.headers]
        return f"JaegerSettings(headers={keys}, timeout_s={self.timeout_s})"

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> JaegerSettings:
        """The settings ``VARIABLES`` give; a ``JaegerError`` naming the
        variable (never a header's value) when one is wrong."""
        env = os.environ if environ is None else environ
        return cls(
            headers=_headers(env.get(ENV_HEADERS, "")),
            certificate=_file(env, ENV_CERTIFICATE),
            client_certificate=_file(env, ENV_CLIENT_CERTIFICATE),
            client_key=_file(env, ENV_CLIENT_KEY),
            timeout_s=_timeout(env.get(ENV_TIMEOUT, "")),
        )

    def secrets(self) -> list[str]:
        """Texts no message may show: each header's value and each word of it (a token
        after ``Bearer``), however a server may echo them."""
        found = set()
        for _, value in self.headers:
            found.add(value)
            found.update(word for word in value.split() if len(word) >= 4)
        return sorted((text for text in found if text), key=len, reverse=True)


def _headers(text: str) -> tuple[tuple[str, str], ...]:
    headers = []
    for number, entry in enumerate(text.split(","), start=1):
        if not entry.strip():
            continue
        key, equals, value = entry.partition("=")
        key = urllib.parse.unquote(key).strip()
        if not equals or not key or not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", key):
            raise JaegerError(
                f"{ENV_HEADERS}: entry {number} is not key=value (a header name, '=', its "
                "URL-encoded value; entries separated by commas)"
            )
        value = urllib.parse.unquote(value).strip()
        if any(char in value for char in "\r\n\0"):
            raise JaegerError(f"{ENV_HEADERS}: the value of {key} holds a line break")
        headers.append((key, value))
    return tuple(headers)


def _file(env: Mapping[str, str], variable: str) -> str | None:
    path = env.get(variable, "").strip()
    if not path:
        return None
    if not Path(path).is_file():
        raise JaegerError(f"{variable}={path}: no such file")
    return path


def _timeout(text: str) -> float:
    if not text.strip():
        return DEFAULT_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise JaegerError(f"{ENV_TIMEOUT}={text!r} is not a number of seconds above 0")
    return value


@dataclasses.dataclass
class JaegerRun:
    """A run read from Jaeger into ``directory``: one OTLP/JSON Lines file per process."""

    address: JaegerAddress
    directory: Path
    processes: dict[str, str] = dataclasses.field(default_factory=dict)
    """Each file's name in ``directory`` and the label of the process it holds."""
    traces: int = 0
    spans: int = 0
    queries: int = 0
    slices: int = 0
    """Slices read and accepted (each answer below the limit, or at ``MIN_SLICE_NS``)."""
    splits: int = 0
    """Slices whose answer held the limit, read again as two halves."""
    truncated: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    """Slices at ``MIN_SLICE_NS`` whose answer still held the limit: traces may be missing
    there."""


SliceCallback = Callable[[JaegerRun, int], None]
"""Told after each slice is read: the run so far and the nanoseconds of the window done."""


@contextlib.contextmanager
def fetch_run(
    address: JaegerAddress,
    *,
    settings: JaegerSettings,
    on_slice: SliceCallback | None = None,
    directory: Path | None = None,
) -> Iterator[JaegerRun]:
    """The run ``address`` chooses, read from Jaeger into a private folder (under
    ``directory``, else the system's temporary one) that is deleted on leaving."""
    import shutil
    import tempfile

    from otel_dynamo.report.read.jaeger_client import Client

    spool = Path(tempfile.mkdtemp(prefix="otel-dynamo-jaeger-", dir=directory))
    try:
        run = JaegerRun(address=address, directory=spool)
        _Fetch(run, Client(address, settings), on_slice).read()
        yield run
    finally:
        shutil.rmtree(spool, ignore_errors=True)


class _Fetch:
    def __init__(self, run: JaegerRun, client: Client, on_slice: SliceCallback | None) -> None:
        self._run = run
        self._client = client
        self._on_slice = on_slice
        self._seen: set[str] = set()
        self._files: dict[tuple[str, ...], str] = {}
        self._other_run_ids: set[str] = set()
        self._other_traces = 0

    def read(self) -> None:
        address = self._run.address
        self._check_service()
        pending = [(address.start_ns, address.end_ns)]
        done_ns = 0
        while pending:
            start, end = pending.pop()
            entries, traces = self._slice(start, end)
            if len(traces) >= address.limit and end - start >= 2 * MIN_SLICE_NS:
                # halves of whole microseconds: a store that keeps microseconds sees two
                # slices, each with its start before its end
                middle = start + (end - start) // (2 * MIN_SLICE_NS) * MIN_SLICE_NS
                pending += [(middle, end), (start, middle)]  # the earlier half first
                self._run.splits += 1
                continue
            if len(traces) >= address.limit:
                self._run.truncated.append((rfc3339(start), rfc3339(end)))
            self._run.slices += 1
            self._spool(entries)
            self._seen |= traces
            done_ns += end - start
            self._run.queries = self._client.queries
            if self._on_slice is not None:
                self._on_slice(self._run, done_ns)
        self._run.queries = self._client.queries
        if self._run.traces == 0:
            raise JaegerError(self._nothing_found())

    def _check_service(self) -> None:
        answer = self._client.get("/api/v3/services", {})
        services = answer.get("services") if isinstance(answer, dict) else None
        if not isinstance(services, list) or not all(isinstance(name, str) for name in services):
            raise self._client.error(
                'the answer of /api/v3/services is not {"services": [...]}: is this the '
                "address of Jaeger's query API (v2, or v1.60 on)?"
            )
        service = self._run.address.service
        if service not in services:
            known = sorted(services)
            shown = ", ".join(known[:MAX_SHOWN_SERVICES]) or "none"
            if len(known) > MAX_SHOWN_SERVICES:
                shown += f" and {len(known) - MAX_SHOWN_SERVICES} more"
            raise self._client.error(f"no service {service!r}; the services it knows: {shown}")

    def _slice(self, start: int, end: int) -> tuple[list[dict[str, Any]], set[str]]:
        address = self._run.address
        answer = self._client.get(
            "/api/v3/traces",
            {
                "query.service_name": address.service,
                "query.start_time_min": rfc3339(start),
                "query.start_time_max": rfc3339(end),
                "query.num_traces": str(address.limit),
                # as stored: Jaeger's adjusters would move and reorder attributes
                "query.raw_traces": "true",
            },
        )
        if answer is None:
            return [], set()
        result = answer.get("result") if isinstance(answer, dict) else None
        entries = result.get("resourceSpans") if isinstance(result, dict) else None
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise self._client.error(
                'the answer of /api/v3/traces is not {"result": {"resourceSpans": [...]}} '
                "(OTLP/JSON): is this Jaeger's query API?"
            )
        traces = set()
        for entry in entries:
            for span in _spans(entry):
                trace_id = span.get("traceId")
                if not isinstance(trace_id, str) or not trace_id:
                    raise self._client.error("a span of its answer has no traceId")
                traces.add(trace_id)
        return entries, traces

    def _spool(self, entries: list[dict[str, Any]]) -> None:
        """Write this slice's spans of the run, not seen before, one line per resource
        entry into its process's file."""
        lines: dict[str, list[str]] = {}
        new_traces = set()
        for entry in entries:
            try:
                process = _decode.process_of(entry.get("resource"), "jaeger")
            except _decode.UNREADABLE_RECORD:
                raise self._client.error("a resource of its answer is unreadable") from None
            if process.service != self._run.address.service:
                continue  # another service's part of a trace that touched this one
            if not self._chosen(process.run_id):
                continue
            kept = self._unseen(entry)
            if kept is None:
                continue
            name = self._files.get(process.key)
            if name is None:
                name = f"traces-{len(self._files) + 1:04d}.jsonl"
                self._files[process.key] = name
                self._run.processes[name] = process.label
            for span in _spans(kept):
                self._run.spans += 1
                new_traces.add(span["traceId"])
            lines.setdefault(name, []).append(json.dumps({"resourceSpans": [kept]}))
        for name, texts in lines.items():
            with (self._run.directory / name).open("a", encoding="utf-8") as spool:
                spool.write("\n".join(texts) + "\n")
        self._run.traces += len(new_traces)

    def _chosen(self, run_id: str | None) -> bool:
        wanted = self._run.address.run_id
        if wanted is None or run_id == wanted:
            return True
        self._other_traces += 1
        if run_id is not None and len(self._other_run_ids) < MAX_SHOWN_SERVICES:
            self._other_run_ids.add(run_id)
        return False

    def _unseen(self, entry: dict[str, Any]) -> dict[str, Any] | None:
        """``entry`` without the spans of traces read in earlier slices, its array
        attributes restored; None when nothing is left."""
        scopes = []
        for scope in _entries(entry, "scopeSpans", "scope_spans"):
            if not isinstance(scope, dict):
                continue
            spans = [
                _restore_arrays(span)
                for span in _entries(scope, "spans")
                if isinstance(span, dict) and span.get("traceId") not in self._seen
            ]
            if spans:
                scopes.append({**scope, "spans": spans})
        if not scopes:
            return None
        return {**entry, "scopeSpans": scopes}

    def _nothing_found(self) -> str:
        address = self._run.address
        start, end = address.window
        where = f"Jaeger at {address.base}: no traces of service {address.service!r}"
        if address.run_id is not None and self._other_traces:
            others = ", ".join(sorted(self._other_run_ids)) or "none"
            return (
                f"{where} with {names.RESOURCE_RUN_ID}={address.run_id} between {start} and "
                f"{end} (run ids there: {others})"
            )
        return f"{where} between {start} and {end} (a wider window: start= or lookback=)"


def _entries(message: object, camel: str, snake: str | None = None) -> list[Any]:
    """The list under a field of an OTLP/JSON message, as ``decode`` finds it."""
    found = _decode.field(message, camel, snake) if isinstance(message, dict) else None
    return found if isinstance(found, list) else []


def _spans(entry: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    for scope in _entries(entry, "scopeSpans", "scope_spans"):
        for span in _entries(scope, "spans"):
            if isinstance(span, dict):
                yield span


def _restore_arrays(span: dict[str, Any]) -> dict[str, Any]:
    """``span`` with each ``names.ARRAY_ATTRIBUTES`` value that a v1-model store turned
    into JSON text (``["a","b"]``) an array again, on the span and its events."""
    attributes = span.get("attributes")
    if isinstance(attributes, list):
        span["attributes"] = [_restored(item) for item in attributes]
    events = span.get("events")
    if isinstance(events, list):
        for event in events:
            if isinstance(event, dict) and isinstance(event.get("attributes"), list):
                event["attributes"] = [_restored(item) for item in event["attributes"]]
    return span


def _restored(item: object) -> object:
    if not isinstance(item, dict) or item.get("key") not in names.ARRAY_ATTRIBUTES:
        return item
    value = item.get("value")
    text = value.get("stringValue") if isinstance(value, dict) else None
    if not isinstance(text, str) or not text.startswith("["):
        return item
    try:
        values = json.loads(text)
    except (ValueError, RecursionError):
        return item
    if not isinstance(values, list):
        return item
    return {"key": item["key"], "value": {"arrayValue": {"values": [_any(v) for v in values]}}}


def _any(value: object) -> dict[str, object]:
    """A JSON value as OTLP/JSON's AnyValue."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if value is None:
        return {}
    return {"stringValue": value if isinstance(value, str) else json.dumps(value)}
