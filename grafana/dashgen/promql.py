"""PromQL builders: every metric and label name comes from names.py via promnames."""

from __future__ import annotations

from dashgen import catalog, promnames, recorded

RATE = "$__rate_interval"
RANGE = "$__range"


def lbl(constant: str) -> str:
    """Prometheus label of an ATTR_*/RESOURCE_* constant, e.g. torch_compile_backend."""
    return promnames.label(catalog.name(constant))


def selector(constant: str, filters: str, part: str = "") -> str:
    """``series{filters}`` for a METRIC_* constant; ``filters`` is the matcher list text."""
    return f"{promnames.series(constant, part)}{{{filters}}}"


def recorded_selector(name: str, filters: str) -> str:
    """``series{filters}`` for a series the shipped recording rules write (dashgen.recorded)."""
    if name not in recorded.SERIES:
        raise KeyError(f"{name} is not a recorded series (dashgen.recorded)")
    return f"{name}{{{filters}}}"


def matchers(*pairs: tuple[str, str, str]) -> str:
    """Matcher list text from (label, operator, value) triples."""
    return ", ".join(f'{name}{op}"{value}"' for name, op, value in pairs)


def by(*labels: str) -> str:
    return f" by ({', '.join(labels)})" if labels else ""


def rate_sum(constant: str, filters: str, *labels: str, window: str = RATE, part: str = "") -> str:
    """sum by (labels) (rate(series{filters}[window]))."""
    return f"sum{by(*labels)} (rate({selector(constant, filters, part)}[{window}]))"


def increase_sum(
    constant: str, filters: str, *labels: str, window: str = RANGE, part: str = ""
) -> str:
    """sum by (labels) of what each series counted within ``window``: its last value in
    the window minus its value when the window began, or minus 0 where the series began
    inside the window. A process exports a counter or histogram only once it has counted
    something, so a series' first sample is already above 0 and ``increase()`` would
    miss it: the compiles before a job's first export, a failure that happened once."""
    series = selector(constant, filters, part)
    last = f"max_over_time({series}[{window}])"
    return f"sum{by(*labels)} ({last} - ({series} offset {window} or {last} * 0))"


def quantile(q: float, constant: str, filters: str, *labels: str) -> str:
    """histogram_quantile over the _bucket series of a histogram METRIC_* constant."""
    inner = rate_sum(constant, filters, "le", *labels, part="bucket")
    return f"histogram_quantile({q}, {inner})"


def mean(constant: str, filters: str, *labels: str) -> str:
    """Mean of a histogram over the rate window: rate(_sum) / rate(_count)."""
    total = rate_sum(constant, filters, *labels, part="sum")
    count = rate_sum(constant, filters, *labels, part="count")
    return f"{total} / {count}"


def range_quantile(q: float, constant: str, filters: str, *labels: str) -> str:
    """histogram_quantile over what each _bucket series counted within the time range
    (increase_sum): for events too rare for a rate, such as a job's one torch.export."""
    inner = increase_sum(constant, filters, "le", *labels, part="bucket")
    return f"histogram_quantile({q}, {inner})"


def spread(expr: str) -> str:
    """Difference between the largest and the smallest series of ``expr`` (rank divergence)."""
    return f"max({expr}) - min({expr})"


def topk(k: int, expr: str) -> str:
    return f"topk({k}, {expr})"


def per_minute(expr: str) -> str:
    return f"{expr} * 60"
