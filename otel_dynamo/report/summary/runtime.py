"""The report's device time, CUDA-graph and compile-cache sections of one process.

Read from spans only: run spans' ``torch.compile.run.device.duration`` (device time
per graph, which the span's duration is not on CUDA), the CUDA-graph decisions on
graph, AOT backward and run spans, and the cache states and counts on compile spans;
``compiled_run_seconds`` adds the variants' call counts (log events) to the run spans.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict

from otel_dynamo import names
from otel_dynamo.report.read.model import LogRecord, Span
from otel_dynamo.report.read.values import integer, number, text
from otel_dynamo.report.summary import compiles as _compiles
from otel_dynamo.report.summary.schema import (
    BypassReason,
    Caches,
    Cudagraphs,
    CudagraphSkip,
    DeviceTime,
    Location,
)

CACHES = (names.CACHE_INDUCTOR_FX, names.CACHE_AOT_AUTOGRAD)
STATES = (names.CACHE_HIT, names.CACHE_MISS, names.CACHE_BYPASS)


def device_time(spans: list[Span]) -> list[DeviceTime]:
    """Per graph (compile id and run kind): timed runs and their device seconds, the
    graphs with the most device time first."""
    totals: dict[tuple[str, str], list[float]] = defaultdict(list)
    devices: dict[tuple[str, str], str] = {}
    for span in spans:
        if span.name not in _compiles.RUN_SPANS:  # run_kind's None, without its call
            continue
        kind = _compiles.run_kind(span)
        seconds = number(span.attributes.get(names.ATTR_RUN_DEVICE_DURATION))
        if kind is None or seconds is None:
            continue
        key = (text(span.attributes.get(names.ATTR_COMPILE_ID)) or "", kind)
        totals[key].append(seconds)
        devices[key] = text(span.attributes.get(names.ATTR_RUN_DEVICE)) or ""
    ordered = sorted(totals.items(), key=lambda item: (-sum(item[1]), item[0]))
    rows: list[DeviceTime] = []
    for (compile_id, kind), values in ordered:
        total = sum(values)
        rows.append(
            {
                "compile_id": compile_id,
                "run_kind": kind,
                "device": devices[(compile_id, kind)],
                "timed_runs": len(values),
                "device_s": round(total, 9),
                "mean_device_s": round(total / len(values), 9),
                "max_device_s": round(max(values), 9),
            }
        )
    return rows


_Graph = tuple[tuple[str, ...], str | None, str | None]
"""A compiled graph's runs: (process key, compile id, run kind)."""


def compiled_run_seconds(spans: list[Span], logs: list[LogRecord]) -> float | None:
    """Seconds the job's compiled graphs ran, all processes: each recorded run's device
    time where it was timed, else its span's duration, and for the runs the run-span
    policy left unrecorded (``torch.compile.variant_calls`` counts every call) the median
    of the graph's recorded runs after its first (the first also pays warm-up: lazy
    backward compile, CUDA-graph recording, autotuning). None when no run was recorded."""
    recorded: dict[_Graph, list[tuple[int, float]]] = defaultdict(list)
    for span in spans:
        kind = _compiles.run_kind(span)
        if kind is None:
            continue
        device_s = number(span.attributes.get(names.ATTR_RUN_DEVICE_DURATION))
        key = (span.process.key, text(span.attributes.get(names.ATTR_COMPILE_ID)), kind)
        index = integer(span.attributes.get(names.ATTR_RUN_INDEX)) or 0
        recorded[key].append((index, span.duration_ns / 1e9 if device_s is None else device_s))
    if not recorded:
        return None
    calls: dict[_Graph, int] = {}
    for record in logs:
        if record.event_name == names.LOG_VARIANT_CALLS:
            attributes = record.attributes
            graph = (
                record.process.key,
                text(attributes.get(names.ATTR_COMPILE_ID)),
                text(attributes.get(names.ATTR_RUN_KIND)),
            )
            served = integer(attributes.get(names.ATTR_VARIANT_CALLS)) or 0
            calls[graph] = max(calls.get(graph, 0), served)
    total = 0.0
    for graph, runs in recorded.items():
        later = [seconds for index, seconds in runs if index > 1] or [s for _, s in runs]
        unrecorded = max(0, calls.get(graph, 0) - len(runs))
        total += sum(seconds for _, seconds in runs) + unrecorded * statistics.median(later)
    return round(total, 9)


def cudagraphs(spans: list[Span]) -> Cudagraphs:
    """Graphs inductor CUDA-graphed and skipped (a graph's later skip at a run counts it
    skipped), and each skip with torch's reason."""
    decided: dict[tuple[str, str], str] = {}
    skips: list[CudagraphSkip] = []
    deciding = [span for span in spans if text(span.attributes.get(names.ATTR_CUDAGRAPH_DECISION))]
    where = _locations(spans) if deciding else {}
    for span in sorted(deciding, key=lambda span: span.start_ns):  # stable: as all sorted
        decision = text(span.attributes.get(names.ATTR_CUDAGRAPH_DECISION))
        if decision is None:
            continue
        at_run = _compiles.run_kind(span) is not None
        kind = _compiles.run_kind(span) or _graph_kind(span)
        key = (text(span.attributes.get(names.ATTR_COMPILE_ID)) or "", kind)
        if decision == names.CUDAGRAPH_SKIPPED or key not in decided:
            decided[key] = decision
        if decision == names.CUDAGRAPH_SKIPPED:
            location = where.get(key[0], NOWHERE)
            skips.append(
                {
                    "compile_id": key[0],
                    "run_kind": kind,
                    "at": names.CUDAGRAPH_AT_RUN if at_run else names.CUDAGRAPH_AT_COMPILE,
                    "reason": text(span.attributes.get(names.ATTR_CUDAGRAPH_SKIP_REASON)) or "",
                    "category": text(span.attributes.get(names.ATTR_CUDAGRAPH_SKIP_CATEGORY)) or "",
                    "partitions": integer(span.attributes.get(names.ATTR_CUDAGRAPH_PARTITIONS))
                    or 0,
                    "function": location["function"],
                    "file": location["file"],
                    "line": location["line"],
                }
            )
    counts = Counter(decided.values())
    return {
        "graphs": len(decided),
        "graphed": counts[names.CUDAGRAPH_GRAPHED],
        "skipped": counts[names.CUDAGRAPH_SKIPPED],
        "skips": skips,
    }


NOWHERE: Location = {"function": None, "file": None, "line": None}


def _locations(spans: list[Span]) -> dict[str, Location]:
    """The compiled function of each compile id, from its frame span."""
    found: dict[str, Location] = {}
    for span in spans:
        compile_id = text(span.attributes.get(names.ATTR_COMPILE_ID))
        if span.name == names.SPAN_FRAME and compile_id:
            found[compile_id] = {
                "function": text(span.attributes.get(names.ATTR_CODE_FUNCTION)),
                "file": text(span.attributes.get(names.ATTR_CODE_FILE)),
                "line": integer(span.attributes.get(names.ATTR_CODE_LINE)),
            }
    return found


def _graph_kind(span: Span) -> str:
    if span.name == names.SPAN_AOT_BACKWARD:
        return names.RUN_KIND_BACKWARD
    return text(span.attributes.get(names.ATTR_RUN_KIND)) or names.RUN_KIND_FORWARD


_COUNT_KEYS = frozenset(names.CACHE_COUNT_ATTRIBUTES.values())
"""The attributes lookups are counted from."""
_BYPASS_KEYS = frozenset(names.CACHE_STATE_ATTRIBUTES.values())
"""The attributes a bypass is counted from."""


def caches(spans: list[Span]) -> Caches:
    """Hits, misses and bypasses of each compile cache (counted on frame and lazy
    backward spans), each bypass reason with its count, and the compile seconds of frames
    served from cache (warm: at least one hit, no miss or bypass)."""
    counts = {cache: dict.fromkeys(STATES, 0) for cache in CACHES}
    warm_ns = 0
    warm_frames = 0
    for span in spans:
        if span.name not in (names.SPAN_FRAME, names.SPAN_LAZY_BACKWARD):
            continue
        if _COUNT_KEYS.isdisjoint(span.attributes):  # no lookup counted: nothing to add
            continue
        seen = {
            pair: integer(span.attributes.get(key)) or 0
            for pair, key in names.CACHE_COUNT_ATTRIBUTES.items()
        }
        for (cache, state), count in seen.items():
            counts[cache][state] += count
        hits = sum(count for (_, state), count in seen.items() if state == names.CACHE_HIT)
        cold = sum(count for (_, state), count in seen.items() if state != names.CACHE_HIT)
        if span.name == names.SPAN_FRAME and hits and not cold:
            warm_frames += 1
            warm_ns += span.duration_ns
    reasons: Counter[tuple[str, str]] = Counter()
    for span in spans:
        if _BYPASS_KEYS.isdisjoint(span.attributes):  # no state to count, in one C call
            continue
        reason = text(span.attributes.get(names.ATTR_CACHE_BYPASS_REASON))
        for cache, key in names.CACHE_STATE_ATTRIBUTES.items():
            if text(span.attributes.get(key)) == names.CACHE_BYPASS:
                reasons[(cache, reason or "")] += 1
    bypass_reasons: list[BypassReason] = [
        {"cache": cache, "reason": reason, "count": count}
        for (cache, reason), count in sorted(reasons.items(), key=lambda item: -item[1])
    ]
    return {
        "inductor_fx": counts[names.CACHE_INDUCTOR_FX],
        "aot_autograd": counts[names.CACHE_AOT_AUTOGRAD],
        "bypass_reasons": bypass_reasons,
        "warm_frames": warm_frames,
        "warm_compile_s": round(warm_ns / 1e9, 6),
    }
