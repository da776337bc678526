"""The summary's ``source`` for a run read from Jaeger: what was asked for, what came
back, and which counts the shipped sampling policies keep whole."""

from __future__ import annotations

from otel_dynamo.report.read.jaeger import JaegerRun
from otel_dynamo.report.summary.schema import TOTAL_KEYS, Source

SOURCE_JAEGER = "jaeger"

SAMPLING_KEPT: dict[str, str] = {
    "graph_breaks": "keep-graph-breaks",
    "recompiles": "keep-recompiles",
    "failures": "keep-errors",
    "faults": "keep-faults",
    "export_failures": "keep-errors",
}
"""Each total whose every instance the shipped gateway's tail sampling keeps
(collector-config/gateway.yaml, the policy named): a trace holding one is never sampled
away, so the count read from Jaeger is the run's. Compiles slower than its latency
threshold (``SLOW_COMPILE_THRESHOLD_MS``, 60 s by default) are kept too; every other
total counts what the sampling let through."""

LOG_ONLY: tuple[str, ...] = (
    "processes[].compiles[].calls",
    "processes[].compiles[].backward_calls",
    "processes[].compiles[].call_share",
    "processes[].compiles[].hot",
    "processes[].recompiles[].calls",
    "processes[].recompiles[].call_share",
    "processes[].recompiles[].hot",
    "processes[].unfinished",
    "processes[].totals.unfinished_compiles",
    "totals.unfinished_compiles",
)
"""Summary keys made from log records only (variant calls, still-compiling events): a trace
store holds none, so read from Jaeger they are null, empty or 0 (docs/report.md)."""


def jaeger_source(run: JaegerRun) -> Source:
    """The ``source`` of a summary read from Jaeger as ``run``."""
    address = run.address
    start, end = address.window
    return {
        "kind": SOURCE_JAEGER,
        "address": str(address),
        "service": address.service,
        "window": [start, end],
        "run_id": address.run_id,
        "traces": run.traces,
        "spans": run.spans,
        "queries": run.queries,
        "truncated_slices": [[first, last] for first, last in run.truncated],
        "complete": [key for key in TOTAL_KEYS if key in SAMPLING_KEPT],
        "may_be_sampled": [key for key in TOTAL_KEYS if key not in SAMPLING_KEPT],
        "absent": list(LOG_ONLY),
    }
