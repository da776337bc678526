"""Overview of torch.compile across jobs: rates, latencies, top reasons, failures, runs."""

from __future__ import annotations

from dashgen import layout, logql, panels, traceql, variables
from dashgen import promql as q
from dashgen.promql import lbl

UID = "otel-dynamo-overview"
JOB = q.matchers(("job", "=~", "$job"))
JOB_BACKEND = q.matchers(("job", "=~", "$job"), (lbl("ATTR_BACKEND"), "=~", "$backend"))
JOB_BACKEND_FRAMES = q.matchers(
    ("job", "=~", "$job"),
    (lbl("ATTR_BACKEND"), "=~", "$backend"),
    (lbl("ATTR_COMPILE_KIND"), "=~", "frame|"),  # "": series recorded before the label existed
)
LOGS = logql.stream('=~"$job"')


def _headline() -> list[object]:
    def total(title: str, constant: str) -> object:
        return panels.single(
            title,
            f"{title} in the selected time range.",
            "short",
            panels.prom(q.increase_sum(constant, JOB), instant=True),
        )

    return [
        total("Frame compiles", "METRIC_COMPILES"),
        total("Graph breaks", "METRIC_GRAPH_BREAKS"),
        total("Recompiles", "METRIC_RECOMPILES"),
        total("Failures", "METRIC_FAILURES"),
    ]


def _compiles() -> list[object]:
    backend, outcome = lbl("ATTR_BACKEND"), lbl("ATTR_OUTCOME")
    category = lbl("ATTR_TIME_CATEGORY")
    per_min = q.per_minute(q.rate_sum("METRIC_COMPILES", JOB_BACKEND, backend, outcome))
    quantiles = [
        panels.prom(
            q.quantile(p, "METRIC_COMPILE_DURATION", JOB_BACKEND_FRAMES),
            legend=f"p{round(p * 100)}",
            exemplar=p == 0.99,
        )
        for p in (0.5, 0.9, 0.99)
    ]
    graphs = q.per_minute(q.rate_sum("METRIC_GRAPHS", JOB_BACKEND, backend))
    return [
        panels.graph(
            "Compiles per minute by backend and outcome",
            "Frame compiles finished per minute.",
            "short",
            [panels.prom(per_min, legend=f"{{{{{backend}}}}} {{{{{outcome}}}}}")],
        ),
        panels.graph(
            "Compile time percentiles",
            "Frame compile wall time. p99 points carry exemplars linking to traces.",
            "s",
            quantiles,
        ),
        panels.graph(
            "Graphs handed to the backend per minute",
            "FX graphs compiled.",
            "short",
            [panels.prom(graphs, legend=f"{{{{{backend}}}}}")],
        ),
        panels.graph(
            "Compile time by backend (p90)",
            "90th percentile per backend.",
            "s",
            [
                panels.prom(
                    q.quantile(0.9, "METRIC_COMPILE_DURATION", JOB_BACKEND_FRAMES, backend),
                    legend=f"{{{{{backend}}}}}",
                )
            ],
        ),
        panels.bars(
            "Compile time by category",
            "Seconds spent compiling in the time range (frame and lazy backward compiles), "
            "by where the time went: the same split as the report's phases.",
            "s",
            [
                panels.prom(
                    q.increase_sum("METRIC_COMPILE_TIME", JOB_BACKEND, category, part="sum"),
                    legend=f"{{{{{category}}}}}",
                    instant=True,
                )
            ],
        ),
    ]


def _breaks_and_recompiles() -> list[object]:
    kind = lbl("ATTR_GRAPH_BREAK_KIND")
    reason, recompile = logql.field("ATTR_GRAPH_BREAK_REASON"), logql.field("ATTR_RECOMPILE_REASON")
    breaks = q.topk(10, q.increase_sum("METRIC_GRAPH_BREAKS", JOB, kind))
    recompiles = q.per_minute(q.rate_sum("METRIC_RECOMPILES", JOB, "job"))
    break_logs = f"{LOGS} {logql.event('LOG_GRAPH_BREAK')}"
    recompile_logs = f"{LOGS} {logql.event('LOG_RECOMPILE')}"
    return [
        panels.bars(
            "Top graph-break kinds",
            "Graph breaks by kind in the time range.",
            "short",
            [panels.prom(breaks, legend=f"{{{{{kind}}}}}", instant=True)],
        ),
        _top_from_logs(
            "Top graph-break reasons",
            "From the graph-break log events.",
            break_logs,
            "ATTR_GRAPH_BREAK_REASON",
            reason,
        ),
        panels.graph(
            "Recompiles per minute",
            "Frame compiles after the first of a code object.",
            "short",
            [panels.prom(recompiles, legend="{{job}}")],
        ),
        _top_from_logs(
            "Top recompile reasons",
            "Failed guards, from the recompile log events.",
            recompile_logs,
            "ATTR_RECOMPILE_REASON",
            recompile,
        ),
    ]


def _top_from_logs(title: str, description: str, logs: str, attr: str, label: str) -> object:
    """Bars of the ten most frequent values of ``attr`` in the log events ``logs``."""
    return panels.bars(
        title,
        description,
        "short",
        [panels.logql(logql.top_values(10, logs, attr), legend=f"{{{{{label}}}}}", instant=True)],
        kind="loki",
    )


def _failures() -> list[object]:
    stage, error, fault = lbl("ATTR_STAGE"), lbl("ATTR_ERROR_TYPE"), lbl("ATTR_FAULT_KIND")
    failures = q.increase_sum("METRIC_FAILURES", JOB, stage, error)
    faults = q.increase_sum("METRIC_FAULTS", JOB, fault)
    events = logql.events("LOG_COMPILE_FAILED", "LOG_RUN_FAILED", "LOG_FAULT_INJECTED")
    return [
        panels.bars(
            "Failures by stage and error type",
            "Compile and run failures.",
            "short",
            [panels.prom(failures, legend=f"{{{{{stage}}}}} {{{{{error}}}}}", instant=True)],
        ),
        panels.bars(
            "Injected faults by kind",
            "Faults otel_dynamo injected.",
            "short",
            [panels.prom(faults, legend=f"{{{{{fault}}}}}", instant=True)],
        ),
        panels.log_lines(
            "Failure and fault events", "Each line links to its trace.", f"{LOGS} {events}"
        ),
    ]


def _percentiles(metric: str, by: str) -> list[object]:
    """p50 and p99 of a histogram per ``by`` label; the p99 series carries exemplars."""
    return [
        panels.prom(
            q.quantile(p, metric, JOB, by),
            legend=f"p{round(p * 100)} {{{{{by}}}}}",
            exemplar=p == 0.99,
        )
        for p in (0.5, 0.99)
    ]


def _guards_and_runs() -> list[object]:
    run_kind = lbl("ATTR_RUN_KIND")
    guards = [
        panels.prom(q.quantile(0.5, "METRIC_GUARDS", JOB), legend="p50"),
        panels.prom(q.quantile(0.99, "METRIC_GUARDS", JOB), legend="p99"),
        panels.prom(q.mean("METRIC_GUARDS", JOB), legend="mean"),
    ]
    runs = q.rate_sum("METRIC_RUNS", JOB, run_kind)
    compile_id = lbl("ATTR_COMPILE_ID")
    variants = q.topk(10, q.rate_sum("METRIC_VARIANT_CALLS", JOB, "job", compile_id, run_kind))
    latency = _percentiles("METRIC_RUN_DURATION", run_kind)
    return [
        panels.graph(
            "Guards per frame compile", "Guards Dynamo installed per frame.", "short", guards
        ),
        panels.graph(
            "Compiled runs per second by kind",
            "Executions of compiled graphs.",
            "ops",
            [panels.prom(runs, legend=f"{{{{{run_kind}}}}}")],
        ),
        panels.graph(
            "Calls per second of the hottest compiled variants",
            "Each compile id (one cache entry of a frame) by the calls it serves: a recompile "
            'that stays near 0 is cold; "other" holds the variants past the first 64 of a '
            "process. The report lists every variant's calls.",
            "ops",
            [panels.prom(variants, legend=f"{{{{job}}}} {{{{{compile_id}}}}} {{{{{run_kind}}}}}")],
        ),
        panels.graph("Compiled-run latency", "Host-side duration of recorded runs.", "s", latency),
    ]


def _device_cudagraphs_and_caches() -> list[object]:
    run_kind, decision = lbl("ATTR_RUN_KIND"), lbl("ATTR_CUDAGRAPH_DECISION")
    category, drop = lbl("ATTR_CUDAGRAPH_SKIP_CATEGORY"), lbl("ATTR_RUN_DEVICE_DROP_REASON")
    cache, state = lbl("ATTR_CACHE_NAME"), lbl("ATTR_CACHE_STATE")
    graphs = q.increase_sum("METRIC_CUDAGRAPH_GRAPHS", JOB, decision, category)
    lookups = q.increase_sum("METRIC_CACHE_LOOKUPS", JOB, cache, state)
    dropped = q.increase_sum("METRIC_RUN_DEVICE_DROPPED", JOB, drop)
    return [
        panels.graph(
            "Device time of compiled runs",
            "CUDA time of recorded runs (events around the call, no sync): the kernels' "
            "time, where the run latency panel shows the host's launch time.",
            "s",
            _percentiles("METRIC_RUN_DEVICE_DURATION", run_kind),
        ),
        panels.bars(
            "CUDA graph decisions by skip category",
            "Graphs inductor CUDA-graphed, and those it skipped by the kind of reason "
            "(reduce-overhead jobs; the skip log events carry torch's words).",
            "short",
            [panels.prom(graphs, legend=f"{{{{{decision}}}}} {{{{{category}}}}}", instant=True)],
        ),
        panels.bars(
            "Compile cache lookups",
            "Hits, misses and bypasses of inductor's FX graph cache and AOT Autograd's cache.",
            "short",
            [panels.prom(lookups, legend=f"{{{{{cache}}}}} {{{{{state}}}}}", instant=True)],
        ),
        panels.bars(
            "Runs without device time",
            "Runs that were to be timed on the device and were not, by reason.",
            "short",
            [panels.prom(dropped, legend=f"{{{{{drop}}}}}", instant=True)],
        ),
    ]


def _exports() -> list[object]:
    # A job exports once or twice: per-range totals, never a rate that is 0 between calls.
    operation, outcome = lbl("ATTR_EXPORT_OPERATION"), lbl("ATTR_EXPORT_OUTCOME")
    calls = q.increase_sum("METRIC_EXPORTS", JOB, operation, outcome)
    latency = [
        panels.prom(
            q.range_quantile(p, "METRIC_EXPORT_DURATION", JOB, operation),
            legend=f"p{round(p * 100)} {{{{{operation}}}}}",
            instant=True,
        )
        for p in (0.5, 0.99)
    ]
    return [
        panels.bars(
            "torch.export calls by operation and outcome",
            "torch.export.export and run_decompositions calls in the time range.",
            "short",
            [panels.prom(calls, legend=f"{{{{{operation}}}}} {{{{{outcome}}}}}", instant=True)],
        ),
        panels.bars(
            "torch.export time",
            "Wall time of the export calls in the time range (p50, p99).",
            "s",
            latency,
        ),
    ]


def _slowest() -> list[object]:
    frame = traceql.spanset(
        traceql.span_name("SPAN_FRAME"),
        f'{traceql.SERVICE} =~ "${{job:regex}}"',
        "duration > $slow",
    )
    query = traceql.select(
        frame,
        "ATTR_COMPILE_ID",
        "ATTR_CODE_FUNCTION",
        "ATTR_OUTCOME",
        "ATTR_GRAPH_BREAK_COUNT",
        "ATTR_GUARD_COUNT",
    )
    return [
        panels.spans(
            "Slowest compiles",
            "Frame compiles longer than $slow; click a trace id to open it.",
            query,
        )
    ]


def dashboard() -> dict[str, object]:
    """The overview dashboard model."""
    return layout.build(
        UID,
        "otel_dynamo / torch.compile overview",
        "torch.compile across jobs: compiles, graph breaks, recompiles, failures, runs.",
        [variables.job(), variables.backend(), variables.text("slow", "Slow compile over", "1s")],
        [
            ("Summary", _headline()),
            ("Compiles", _compiles()),
            ("Graph breaks and recompiles", _breaks_and_recompiles()),
            ("Failures and faults", _failures()),
            ("Guards and compiled runs", _guards_and_runs()),
            ("Device time, CUDA graphs and compile caches", _device_cudagraphs_and_caches()),
            ("torch.export", _exports()),
            ("Slowest compiles", _slowest()),
        ],
    )
