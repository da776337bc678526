"""One job across its ranks: per-rank totals and how far the ranks diverge."""

from __future__ import annotations

from dashgen import layout, logql, panels, recorded, variables
from dashgen import promql as q
from dashgen.promql import lbl

UID = "otel-dynamo-job"
RANK = lbl("RESOURCE_RANK")
JOB = q.matchers(("job", "=", "$job"), (lbl("RESOURCE_RUN_ID"), "=~", "$run_id"))
LEGEND = f"rank {{{{{RANK}}}}}"


def _per_rank(title: str, constant: str, unit: str = "short", part: str = "") -> list[object]:
    """A per-rank bar list plus a stat of the spread between the extreme ranks."""
    per_rank = q.increase_sum(constant, JOB, RANK, part=part)
    return [
        panels.bars(
            f"{title} per rank",
            f"{title} of each rank in the time range.",
            unit,
            [panels.prom(per_rank, legend=LEGEND, instant=True)],
        ),
        panels.single(
            f"{title}: rank spread",
            "Largest minus smallest rank value; 0 when all ranks agree.",
            unit,
            panels.prom(q.spread(per_rank), instant=True),
        ).span(12),
    ]


def _diverging() -> list[object]:
    """Ranks whose count differs from the job's median now (TorchCompileRanksDiverge)."""
    count = q.recorded_selector(recorded.RANK_COUNT, JOB)
    apart = q.recorded_selector(recorded.RANK_MINUS_MEDIAN, JOB)
    # 0 on each diverging rank: adding it keeps only those ranks and, being arithmetic,
    # drops the series name, so the three queries merge into rows on their labels alone.
    only_diverging = f"0 * ({apart} != 0)"
    return [
        panels.label_table(
            "Ranks diverging now",
            "Each rank whose frame compiles, recompiles or graph breaks differ from the"
            " job's median rank now (the recording rules of TorchCompileRanksDiverge, which"
            " fires after 5 minutes). Empty while the ranks agree. otel-dynamo report's"
            " Ranks table names the first compile where a rank differs.",
            "short",
            {
                RANK: "Rank",
                recorded.COUNTED: "Counted",
                "Value #A": "Count",
                "Value #B": "Job median",
                "Value #C": "Minus median",
            },
            [
                panels.prom(f"{count} + {only_diverging}", instant=True),
                panels.prom(f"{count} - {apart} + {only_diverging}", instant=True),
                panels.prom(f"{apart} + {only_diverging}", instant=True),
            ],
        )
    ]


def _timing() -> list[object]:
    compile_p95 = q.quantile(0.95, "METRIC_COMPILE_DURATION", JOB, RANK)
    run_p99 = q.quantile(0.99, "METRIC_RUN_DURATION", JOB, RANK)
    guards = q.mean("METRIC_GUARDS", JOB, RANK)
    runs = q.rate_sum("METRIC_RUNS", JOB, RANK)
    return [
        panels.graph(
            "Compile time p95 per rank",
            "Ranks that compile slower stand out.",
            "s",
            [panels.prom(compile_p95, legend=LEGEND, exemplar=True)],
        ),
        panels.graph(
            "Compiled-run latency p99 per rank",
            "Host-side run duration.",
            "s",
            [panels.prom(run_p99, legend=LEGEND)],
        ),
        panels.graph(
            "Mean guards per frame per rank",
            "Guard growth on one rank hints at rank-specific recompiles.",
            "short",
            [panels.prom(guards, legend=LEGEND)],
        ),
        panels.graph(
            "Compiled runs per second per rank",
            "Executions of compiled graphs.",
            "ops",
            [panels.prom(runs, legend=LEGEND)],
        ),
    ]


def _logs() -> list[object]:
    stream = logql.stream('="$job"')
    run_id = logql.field("RESOURCE_RUN_ID")
    events = logql.events(
        "LOG_GRAPH_BREAK",
        "LOG_RECOMPILE",
        "LOG_COMPILE_FAILED",
        "LOG_RUN_FAILED",
        "LOG_FAULT_INJECTED",
    )
    expr = f'{stream} {events} | {run_id}=~"$run_id"'
    return [
        panels.log_lines(
            "Graph breaks, recompiles, failures and faults of the job",
            "All ranks; expand a line for its rank and trace.",
            expr,
        )
    ]


def dashboard() -> dict[str, object]:
    """The per-job (across ranks) dashboard model."""
    return layout.build(
        UID,
        "otel_dynamo / job across ranks",
        "One job's ranks side by side: where compiles, breaks and recompiles diverge.",
        [variables.job(multi=False), variables.run_id()],
        [
            ("Ranks diverging", _diverging()),
            ("Frame compiles", _per_rank("Frame compiles", "METRIC_COMPILES")),
            (
                "Compile time",
                _per_rank("Compile seconds", "METRIC_COMPILE_DURATION", "s", part="sum"),
            ),
            ("Graph breaks", _per_rank("Graph breaks", "METRIC_GRAPH_BREAKS")),
            ("Recompiles", _per_rank("Recompiles", "METRIC_RECOMPILES")),
            ("Failures", _per_rank("Failures", "METRIC_FAILURES")),
            ("Timing", _timing()),
            ("Events", _logs()),
        ],
    )
