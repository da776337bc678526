"""Check that every name a dashboard query uses is one otel_dynamo emits (or standard).

PromQL metric and label names, LogQL fields and event filters, TraceQL attributes and span
names are extracted from the dashboard JSON and compared with names derived from
otel_dynamo/names.py (dashgen.catalog, dashgen.promnames) and dashgen.standard.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from dashgen import catalog, promnames, recorded, standard
from dashgen.queries import Query

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|`[^`]*`')
_RANGES = re.compile(r"\[[^\]]*\]")
_VARS = re.compile(r"\$\{[^}]*\}|\$[A-Za-z0-9_]+")
_IDENT = re.compile(r"(?<![\w.])[A-Za-z_:][A-Za-z0-9_:]*")
_LINE_FILTER = re.compile(r'\|([=~])\s*("(?:[^"\\]|\\.)*"|`[^`]*`)')
_TRACE_ATTR = re.compile(r"\b(span|resource|event|link)\.([A-Za-z0-9_.]+)")
_SPAN_NAME = re.compile(r'(?<![\w.])name\s*(=~|!=|=)\s*"([^"]*)"')

PROMQL_WORDS = frozenset(
    {
        "sum",
        "min",
        "max",
        "avg",
        "count",
        "topk",
        "bottomk",
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "rate",
        "increase",
        "irate",
        "max_over_time",
        "histogram_quantile",
        "and",
        "or",
        "unless",
        "bool",
        "offset",
        "label_values",
        "clamp_min",
        "abs",
        "vector",
    }
)
LOGQL_WORDS = frozenset(
    {
        "count_over_time",
        "rate",
        "sum",
        "by",
        "without",
        "topk",
        "max",
        "min",
        "avg",
        "json",
        "logfmt",
        "line_format",
        "label_format",
        "sum_over_time",
        "bytes_over_time",
    }
)
TRACEQL_WORDS = standard.TRACEQL_INTRINSICS | {
    "select",
    "nil",
    "error",
    "ok",
    "unset",
    "true",
    "false",
}


def _identifiers(text: str) -> set[str]:
    bare = _VARS.sub(" ", _RANGES.sub(" ", _STRINGS.sub(" ", text)))
    return set(_IDENT.findall(bare))


def prometheus_names() -> frozenset[str]:
    """Every series and label name the Prometheus exporters produce for otel_dynamo, and
    those the shipped recording rules write from them."""
    series = {s for spec in catalog.metric_specs() for s in promnames.all_series(spec)}
    labels = {promnames.label(v) for v in catalog.values("ATTR_", "RESOURCE_")}
    rules = recorded.SERIES | recorded.LABELS
    return frozenset(series | labels | rules | standard.PROMETHEUS_LABELS)


def loki_fields() -> frozenset[str]:
    """Every Loki label / structured-metadata key otel_dynamo's log records can have."""
    attrs = catalog.values("ATTR_", "RESOURCE_") | standard.SEMCONV_RESOURCE
    return frozenset({promnames.label(a) for a in attrs} | standard.LOKI_FIELDS)


def promql_problems(query: Query) -> list[str]:
    unknown = _identifiers(query.text) - PROMQL_WORDS - prometheus_names()
    return [
        f"{query.where}: PromQL name '{n}' is not derived from names.py" for n in sorted(unknown)
    ]


def _line_filter_problems(query: Query) -> list[str]:
    events = catalog.values("LOG_")
    problems = []
    for op, literal in _LINE_FILTER.findall(query.text):
        body = literal[1:-1]
        if op == "=":
            wanted = [body]
        else:
            inner = body[3:-1] if body.startswith("(?:") and body.endswith(")") else body
            wanted = [re.sub(r"\\(.)", r"\1", part) for part in inner.split("|")]
        problems += [
            f"{query.where}: log event '{w}' is not a LOG_* name" for w in wanted if w not in events
        ]
    return problems


def logql_problems(query: Query) -> list[str]:
    unknown = _identifiers(_LINE_FILTER.sub(" ", query.text)) - LOGQL_WORDS - loki_fields()
    return [
        f"{query.where}: LogQL field '{n}' is not derived from names.py" for n in sorted(unknown)
    ] + _line_filter_problems(query)


def traceql_problems(query: Query) -> list[str]:
    attrs = catalog.values("ATTR_", "RESOURCE_") | standard.SEMCONV_RESOURCE
    spans = catalog.values("SPAN_")
    problems = [
        f"{query.where}: TraceQL attribute '{scope}.{name}' is not in names.py"
        for scope, name in _TRACE_ATTR.findall(query.text)
        if name not in attrs
    ]
    for op, value in _SPAN_NAME.findall(query.text):
        ok = any(re.fullmatch(value, s) for s in spans) if op == "=~" else value in spans
        if not ok:
            problems.append(f"{query.where}: span name '{value}' is not a SPAN_* name")
    rest = _identifiers(_TRACE_ATTR.sub(" ", query.text)) - TRACEQL_WORDS
    return problems + [f"{query.where}: TraceQL word '{w}' is unknown" for w in sorted(rest)]


CHECKERS = {"prometheus": promql_problems, "loki": logql_problems, "tempo": traceql_problems}


def name_problems(found: Iterable[Query]) -> list[str]:
    """Problems of every query, by its datasource kind; an unknown kind is a problem too."""
    problems = []
    for query in found:
        checker = CHECKERS.get(query.kind)
        if checker is None:
            problems.append(f"{query.dashboard}: {query.where}: no name check for {query.kind}")
        else:
            problems += [f"{query.dashboard}: {p}" for p in checker(query)]
    return problems


def uncovered_metrics(found: Iterable[Query], not_shown: dict[str, str]) -> list[str]:
    """METRIC_* constants no PromQL query uses and that are not listed as not shown."""
    used = set().union(*(_identifiers(q.text) for q in found if q.kind == "prometheus"))
    return [
        spec.constant
        for spec in catalog.metric_specs()
        if spec.constant not in not_shown and not used.intersection(promnames.all_series(spec))
    ]
