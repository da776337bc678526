"""The report's device time, CUDA graph and compile cache sections, from spans written by
the SDK's own file exporter (what a traced job on a GPU writes), and the compiled graphs'
run time ``--try-fixes`` compares."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from _report_support import resource_attributes, write_logs
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otel_dynamo import names
from otel_dynamo._providers.json_lines import JsonLinesSpanExporter
from otel_dynamo.report import compiled_run_seconds, load_telemetry, summarize
from otel_dynamo.report.diff.compare import DEFAULT_MIN_CHANGE, MinChange, diff_summaries
from otel_dynamo.report.diff.terminal import render_diff
from otel_dynamo.report.render.terminal import render_terminal

SpanSpec = tuple[str, Mapping[str, Any], int]
"""Name, attributes, duration in nanoseconds."""


def _write(path: Path, spans: list[SpanSpec]) -> Path:
    provider = TracerProvider(resource=Resource.create(dict(resource_attributes())))
    provider.add_span_processor(
        SimpleSpanProcessor(JsonLinesSpanExporter(path.open("a", encoding="utf-8")))
    )
    tracer = provider.get_tracer(names.INSTRUMENTATION_NAME)
    start = 1_000_000_000
    for name, attributes, duration_ns in spans:
        span = tracer.start_span(name, attributes=dict(attributes), start_time=start)
        span.end(end_time=start + duration_ns)
        start += duration_ns + 1000
    provider.shutdown()
    return path


def _run(compile_id: str, kind: str, device_s: float | None) -> SpanSpec:
    span_name = {
        names.RUN_KIND_FORWARD: names.SPAN_RUN_FORWARD,
        names.RUN_KIND_BACKWARD: names.SPAN_RUN_BACKWARD,
    }[kind]
    attributes: dict[str, Any] = {names.ATTR_COMPILE_ID: compile_id, names.ATTR_RUN_KIND: kind}
    if device_s is not None:
        attributes[names.ATTR_RUN_DEVICE] = "cuda:0"
        attributes[names.ATTR_RUN_DEVICE_DURATION] = device_s
    return span_name, attributes, 20_000


def _section(path: Path) -> dict[str, Any]:
    (section,) = summarize(load_telemetry([path]))["processes"]
    return section


def test_device_time_is_summed_per_graph_most_first(tmp_path: Path) -> None:
    """Timed runs add up per compile id and run kind, the graph with most device time
    first; runs without device time (CPU, dropped) are not counted."""
    path = _write(
        tmp_path / "t.jsonl",
        [
            _run("0/0", names.RUN_KIND_FORWARD, 0.002),
            _run("0/0", names.RUN_KIND_FORWARD, 0.004),
            _run("0/0", names.RUN_KIND_BACKWARD, 0.010),
            _run("1/0", names.RUN_KIND_FORWARD, None),
        ],
    )
    section = _section(path)
    assert section["device_time"] == [
        {
            "compile_id": "0/0",
            "run_kind": "backward",
            "device": "cuda:0",
            "timed_runs": 1,
            "device_s": 0.01,
            "mean_device_s": 0.01,
            "max_device_s": 0.01,
        },
        {
            "compile_id": "0/0",
            "run_kind": "forward",
            "device": "cuda:0",
            "timed_runs": 2,
            "device_s": 0.006,
            "mean_device_s": 0.003,
            "max_device_s": 0.004,
        },
    ]
    assert section["totals"]["device_seconds"] == 0.016


def _decision(name: str, compile_id: str, kind: str, decision: str, **extra: Any) -> SpanSpec:
    attributes = {
        names.ATTR_COMPILE_ID: compile_id,
        names.ATTR_RUN_KIND: kind,
        names.ATTR_CUDAGRAPH_DECISION: decision,
        **extra,
    }
    return name, attributes, 1_000_000


MUTATED = "skipping cudagraphs due to mutated inputs (1 instances)"
LOCATED = {
    names.ATTR_CODE_FUNCTION: "step",
    names.ATTR_CODE_FILE: "/home/me/project/train.py",
    names.ATTR_CODE_LINE: 12,
}


def test_cuda_graph_coverage_counts_graphs_and_lists_skips(tmp_path: Path) -> None:
    """Three graphs decided, one skipped at compile and one graphed at compile but
    skipped at a run: 1 of 3 graphed, both skips listed with torch's reason."""
    skip = {
        names.ATTR_CUDAGRAPH_SKIP_REASON: MUTATED,
        names.ATTR_CUDAGRAPH_SKIP_CATEGORY: "mutated_inputs",
    }
    path = _write(
        tmp_path / "t.jsonl",
        [
            _decision(names.SPAN_GRAPH, "0/0", "forward", names.CUDAGRAPH_GRAPHED),
            (names.SPAN_FRAME, {**LOCATED, names.ATTR_COMPILE_ID: "1/0"}, 1_000_000),
            _decision(names.SPAN_GRAPH, "1/0", "forward", names.CUDAGRAPH_SKIPPED, **skip),
            _decision(names.SPAN_GRAPH, "2/0", "inference", names.CUDAGRAPH_GRAPHED),
            _decision(
                names.SPAN_RUN_INFERENCE, "2/0", "inference", names.CUDAGRAPH_SKIPPED, **skip
            ),
        ],
    )
    graphs = _section(path)["cudagraphs"]
    assert (graphs["graphs"], graphs["graphed"], graphs["skipped"]) == (3, 1, 2)
    assert [(row["compile_id"], row["at"], row["reason"]) for row in graphs["skips"]] == [
        ("1/0", names.CUDAGRAPH_AT_COMPILE, MUTATED),
        ("2/0", names.CUDAGRAPH_AT_RUN, MUTATED),
    ]
    text = render_terminal(summarize(load_telemetry([path])), color=False)
    assert "CUDA graphs: 1 of 3 graphs graphed; 2 skipped" in text
    assert "mutated_inputs (step at project/train.py:12, 1/0 forward, at compile): skipping" in text
    assert graphs["skips"][0]["function"] == "step"


def _frame(compile_id: str, counts: Mapping[str, int], duration_ns: int) -> SpanSpec:
    attributes = {names.ATTR_COMPILE_ID: compile_id, names.ATTR_CODE_FUNCTION: "f", **counts}
    return names.SPAN_FRAME, attributes, duration_ns


def test_cache_effectiveness_counts_lookups_reasons_and_warm_compiles(tmp_path: Path) -> None:
    """Hits, misses and bypasses from frame and lazy backward spans; each bypass reason
    with its count; frames served only by hits are warm, with their compile time."""
    bypass = {
        names.ATTR_CACHE_FX_STATE: names.CACHE_BYPASS,
        names.ATTR_CACHE_BYPASS_REASON: "Unsupported post grad custom pass",
        names.ATTR_COMPILE_ID: "1/0",
    }
    path = _write(
        tmp_path / "t.jsonl",
        [
            _frame("0/0", {names.ATTR_CACHE_FX_HITS: 2, names.ATTR_CACHE_AOT_HITS: 1}, 300_000_000),
            _frame("1/0", {names.ATTR_CACHE_FX_BYPASSES: 1}, 2_000_000_000),
            (names.SPAN_AOT_INFERENCE, bypass, 1_000_000),
            (names.SPAN_LAZY_BACKWARD, {names.ATTR_CACHE_FX_MISSES: 1}, 1_000_000),
        ],
    )
    caches = _section(path)["caches"]
    assert caches["inductor_fx"] == {"hit": 2, "miss": 1, "bypass": 1}
    assert caches["aot_autograd"] == {"hit": 1, "miss": 0, "bypass": 0}
    assert caches["bypass_reasons"] == [
        {"cache": "inductor_fx", "reason": "Unsupported post grad custom pass", "count": 1}
    ]
    assert (caches["warm_frames"], caches["warm_compile_s"]) == (1, 0.3)


def test_diff_compares_device_time_skips_and_cache_totals(tmp_path: Path) -> None:
    """A run that lost its cache hits and gained a CUDA graph skip: diff says so."""
    base = _write(
        tmp_path / "base.jsonl",
        [_frame("0/0", {names.ATTR_CACHE_FX_HITS: 2}, 100_000_000)],
    )
    new = _write(
        tmp_path / "new.jsonl",
        [
            _frame("0/0", {names.ATTR_CACHE_FX_MISSES: 2}, 900_000_000),
            _decision(
                names.SPAN_GRAPH,
                "0/0",
                "forward",
                names.CUDAGRAPH_SKIPPED,
                **{names.ATTR_CUDAGRAPH_SKIP_REASON: MUTATED},
            ),
            _run("0/0", names.RUN_KIND_FORWARD, 0.5),
        ],
    )
    compared = diff_summaries(
        summarize(load_telemetry([base])),
        summarize(load_telemetry([new])),
        min_change=MinChange.parse(DEFAULT_MIN_CHANGE),
    )
    totals = compared["totals"]
    assert totals["cache_hits"]["change"] == -2
    assert totals["cache_misses"]["change"] == 2
    assert totals["cudagraph_skips"]["change"] == 1
    assert totals["device_seconds"]["new"] == 0.5
    text = render_diff(compared, [], width=100, color=False)
    assert "CUDA graph skips" in text and "cache misses" in text


def _indexed_run(compile_id: str, index: int, duration_ns: int) -> SpanSpec:
    attributes = {
        names.ATTR_COMPILE_ID: compile_id,
        names.ATTR_RUN_KIND: names.RUN_KIND_FORWARD,
        names.ATTR_RUN_INDEX: index,
    }
    return names.SPAN_RUN_FORWARD, attributes, duration_ns


def _calls(compile_id: str, calls: int) -> dict[str, Any]:
    return {
        "event.name": names.LOG_VARIANT_CALLS,
        names.ATTR_COMPILE_ID: compile_id,
        names.ATTR_RUN_KIND: names.RUN_KIND_FORWARD,
        names.ATTR_VARIANT_CALLS: calls,
    }


def test_unrecorded_runs_count_at_the_median_of_the_later_recorded_runs(tmp_path: Path) -> None:
    """Runs 1-4 of 0/0 recorded (10, 1, 3, 2 ms) of 10 calls: 16 ms recorded, and the 6
    unrecorded at the median of runs 2-4 (2 ms), not of run 1's warm-up: 28 ms."""
    ms = 1_000_000
    runs = [_indexed_run("0/0", index, n * ms) for index, n in ((1, 10), (2, 1), (3, 3), (4, 2))]
    traces = _write(tmp_path / "traces.jsonl", runs)
    logs = write_logs(tmp_path / "logs.jsonl", [_calls("0/0", 4), _calls("0/0", 10)])
    telemetry = load_telemetry([traces, logs])
    assert compiled_run_seconds(telemetry.spans, telemetry.logs) == 0.028


def test_a_timed_run_counts_its_device_time(tmp_path: Path) -> None:
    """A run timed on the device counts its device seconds, not its span's 20 µs."""
    traces = _write(tmp_path / "traces.jsonl", [_run("0/0", names.RUN_KIND_FORWARD, 0.5)])
    telemetry = load_telemetry([traces])
    assert compiled_run_seconds(telemetry.spans, telemetry.logs) == 0.5


def test_no_recorded_run_gives_no_run_time(tmp_path: Path) -> None:
    """Calls counted but no run span (OTEL_DYNAMO_RUN_SPANS=off): None, not 0."""
    logs = write_logs(tmp_path / "logs.jsonl", [_calls("0/0", 10)])
    telemetry = load_telemetry([logs])
    assert compiled_run_seconds(telemetry.spans, telemetry.logs) is None


def test_with_every_run_recorded_the_run_time_is_the_runs_own(tmp_path: Path) -> None:
    """A real job traced with OTEL_DYNAMO_RUN_SPANS=all: each graph's counted calls equal
    its run spans, so the run time is exactly the sum of their durations."""
    job = Path(__file__).resolve().parents[1] / "programs" / "fixable_job.py"
    done = subprocess.run(
        [sys.executable, "-m", "otel_dynamo", "run", "--out", str(tmp_path / "out"), "--",
         sys.executable, str(job), str(tmp_path / "trials.txt")],
        env={**os.environ, "OTEL_DYNAMO_RUN_SPANS": "all"},
        capture_output=True, text=True, timeout=600, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    telemetry = load_telemetry(sorted((tmp_path / "out").rglob("*.jsonl")))
    runs = [span for span in telemetry.spans if span.name == names.SPAN_RUN_INFERENCE]
    calls = {
        record.attributes[names.ATTR_COMPILE_ID]: record.attributes[names.ATTR_VARIANT_CALLS]
        for record in telemetry.logs
        if record.event_name == names.LOG_VARIANT_CALLS
    }
    per_graph = Counter(span.attributes[names.ATTR_COMPILE_ID] for span in runs)
    assert per_graph == Counter(calls) and sum(per_graph.values()) == 6
    expected = round(sum(span.duration_ns for span in runs) / 1e9, 9)
    assert compiled_run_seconds(telemetry.spans, telemetry.logs) == expected
