"""Drill into compiles: TraceQL searches over frames, graphs, AOT and phases, plus logs."""

from __future__ import annotations

from dashgen import layout, logql, panels, traceql, variables
from dashgen import promql as q
from dashgen.traceql import attr

UID = "otel-dynamo-compile"
SERVICE = f'{traceql.SERVICE} =~ "${{job:regex}}"'
FRAME = traceql.spanset(
    traceql.span_name("SPAN_FRAME"),
    SERVICE,
    f'{attr("ATTR_COMPILE_ID")} =~ "$compile_id"',
    f'{attr("ATTR_CODE_FUNCTION")} =~ "$function"',
)


def _frames() -> list[object]:
    search = traceql.select(
        FRAME,
        "ATTR_COMPILE_ID",
        "ATTR_CODE_FUNCTION",
        "ATTR_CODE_FILE",
        "ATTR_OUTCOME",
        "ATTR_FRAME_GRAPH_COUNT",
        "ATTR_GRAPH_BREAK_COUNT",
        "ATTR_GUARD_COUNT",
        "ATTR_FRAME_CACHE_SIZE",
    )
    return [
        panels.spans("Frame compiles (TraceQL)", "Edit the query in Explore to refine it.", search)
    ]


def _inside() -> list[object]:
    graphs = traceql.select(
        f"{FRAME} > {traceql.spanset(traceql.span_name('SPAN_GRAPH'))}",
        "ATTR_BACKEND",
        "ATTR_GRAPH_INDEX",
        "ATTR_GRAPH_OP_COUNT",
        "ATTR_GRAPH_NODE_COUNT",
        "ATTR_GRAPH_INPUT_COUNT",
        "ATTR_GRAPH_BREAK_REASON",
    )
    aot_names = traceql.span_name(
        "SPAN_AOT_PARTITION", "SPAN_AOT_FORWARD", "SPAN_AOT_BACKWARD", "SPAN_AOT_INFERENCE"
    )
    aot = traceql.select(
        f"{FRAME} >> {traceql.spanset(aot_names)}",
        "ATTR_AOT_PARTITIONER",
        "ATTR_AOT_JOINT_NODE_COUNT",
        "ATTR_AOT_FORWARD_NODE_COUNT",
        "ATTR_AOT_BACKWARD_NODE_COUNT",
        "ATTR_AOT_SAVED_TENSOR_COUNT",
        "ATTR_AOT_COMPILER",
        "ATTR_AOT_NODE_COUNT",
    )
    phases = traceql.select(
        f"{FRAME} > {traceql.spanset(traceql.span_name('SPAN_PHASE'))}", "ATTR_PHASE_NAME"
    )
    return [
        panels.spans("Graphs of the selected compiles", "One row per backend call.", graphs),
        panels.spans(
            "AOT Autograd partitions and inner compiles",
            "Partitioner and forward/backward/inference compiler spans.",
            aot,
        ),
        panels.spans("Compile phases", "Dynamo's own phase timings.", phases),
    ]


def _problems() -> list[object]:
    frame = traceql.span_name("SPAN_FRAME")
    recompiles = traceql.select(
        traceql.spanset(frame, SERVICE, f"{attr('ATTR_RECOMPILE_REASON')} != nil"),
        "ATTR_RECOMPILE_REASON",
        "ATTR_CODE_FUNCTION",
        "ATTR_FRAME_CACHE_SIZE",
    )
    breaks = traceql.select(
        traceql.spanset(frame, SERVICE, f"{attr('ATTR_GRAPH_BREAK_COUNT')} > 0"),
        "ATTR_GRAPH_BREAK_COUNT",
        "ATTR_GRAPH_BREAK_REASONS",
        "ATTR_CODE_FUNCTION",
    )
    failed = traceql.select(
        traceql.spanset(SERVICE, "status = error"),
        "ATTR_ERROR_TYPE",
        "ATTR_ERROR_MESSAGE",
        "ATTR_FRAME_FAIL_REASON",
    )
    faults = traceql.select(
        traceql.spanset(SERVICE, f"{attr('ATTR_FAULT_KIND')} != nil"),
        "ATTR_FAULT_KIND",
        "ATTR_COMPILE_ID",
    )
    return [
        panels.spans("Recompiles", "Frame compiles caused by a failed guard.", recompiles),
        panels.spans("Frames with graph breaks", "Frame compiles that broke the graph.", breaks),
        panels.spans("Failed spans", "Compiles and runs that raised.", failed),
        panels.spans("Injected faults", "Spans that carry an injected fault.", faults),
    ]


def _correlated() -> list[object]:
    job = q.matchers(("job", "=~", "$job"))
    p99 = q.quantile(0.99, "METRIC_COMPILE_DURATION", job)
    compile_id = logql.field("ATTR_COMPILE_ID")
    stream = logql.stream('=~"$job"')
    logs = f'{stream} | {compile_id}=~"$compile_id" | trace_id=~"$trace_id"'
    return [
        panels.graph(
            "Compile time p99 with exemplars",
            "Click an exemplar to open its trace.",
            "s",
            [panels.prom(p99, legend="p99", exemplar=True)],
        ).span(24),
        panels.log_lines(
            "Logs of the selected compiles",
            "Filtered by compile id and trace id; each line links to its trace.",
            logs,
        ),
        panels.log_lines(
            "Graph texts of the selected compiles",
            "Dynamo's graph, AOT graphs, inductor's output code and guards "
            "(OTEL_DYNAMO_CAPTURE with graphs); expand a line for its text, "
            "follow its trace id to the compile.",
            f"{logs} {logql.event('LOG_GRAPH_TEXT')}",
        ),
    ]


def dashboard() -> dict[str, object]:
    """The compile drill-down dashboard model."""
    return layout.build(
        UID,
        "otel_dynamo / compile drill-down",
        "Find compiles with TraceQL and follow them into graphs, AOT, phases and logs.",
        [
            variables.job(),
            variables.text("compile_id", "Compile id (regex)", ".*"),
            variables.text("function", "Function (regex)", ".*"),
            variables.text("trace_id", "Trace id (regex)", ".*"),
        ],
        [
            ("Search", _frames()),
            ("Inside a compile", _inside()),
            ("Recompiles, graph breaks, failures, faults", _problems()),
            ("Metrics and logs", _correlated()),
        ],
    )
