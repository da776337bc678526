"""The report summary (otel_dynamo.report.summarize): what each key holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from _report_support import (
    BACKEND_ERROR,
    BASE_TIME_NS,
    DATA_BREAK,
    DTYPE_REASON,
    MODEL_FILE,
    PRINT_BREAK,
    TRAIN_FILE,
    FakeCompile,
    GraphBreak,
    request_line,
    resource_attributes,
    small_compiles,
    string_attribute,
    write_job,
    write_logs,
    write_small,
    write_traces,
)
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otel_dynamo import names
from otel_dynamo._providers.json_lines import JsonLinesSpanExporter
from otel_dynamo.names import (
    ATTR_ACCURACY_MAX_ABS_ERROR,
    ATTR_ACCURACY_MAX_REL_ERROR,
    ATTR_ACCURACY_PASSED,
    ATTR_FAULT_KIND,
    ATTR_FAULT_TARGET,
)
from otel_dynamo.report import load_telemetry, summarize
from otel_dynamo.report.summary import build


def _summary(*paths: Path, **options: Any) -> dict[str, Any]:
    return summarize(load_telemetry(paths), **options)


def _process(tmp_path: Path, compiles: list[FakeCompile]) -> dict[str, Any]:
    (section,) = _summary(write_traces(tmp_path / "t.jsonl", compiles))["processes"]
    return section


def _small(tmp_path: Path) -> dict[str, Any]:
    (section,) = _summary(write_small(tmp_path))["processes"]
    return section


def _variant_calls(compile_id: str, kind: str, calls: int) -> dict[str, Any]:
    return {
        "event.name": names.LOG_VARIANT_CALLS,
        names.ATTR_COMPILE_ID: compile_id,
        names.ATTR_RUN_KIND: kind,
        names.ATTR_VARIANT_CALLS: calls,
    }


def test_a_compile_row_holds_the_last_calls_its_variant_reported(tmp_path: Path) -> None:
    """Events of 0/0 with 5 then 19 forward calls and 4 backward ones, of 0/1 with 1: the
    rows hold 19 (4 backward) and 1, shares of the code's 20 calls; 0/1 (5 %) is cold."""
    traces = write_small(tmp_path)
    logs = write_logs(
        tmp_path / "logs.jsonl",
        [
            _variant_calls("0/0", names.RUN_KIND_FORWARD, 5),
            _variant_calls("0/0", names.RUN_KIND_FORWARD, 19),
            _variant_calls("0/0", names.RUN_KIND_BACKWARD, 4),
            _variant_calls("0/1", names.RUN_KIND_FORWARD, 1),
        ],
    )
    (section,) = _summary(traces, logs)["processes"]
    first, second = section["compiles"][:2]
    assert (first["calls"], first["backward_calls"], first["call_share"], first["hot"]) == (
        19,
        4,
        0.95,
        True,
    )
    assert (second["calls"], second["backward_calls"], second["hot"]) == (1, None, False)
    (recompile,) = section["recompiles"]
    assert (recompile["compile_id"], recompile["calls"], recompile["hot"]) == ("0/1", 1, False)


def test_compile_row_holds_every_fact_of_the_frame(tmp_path: Path) -> None:
    """A frame compile's row: id, location, outcome, timing, counts, phases, no error."""
    assert _small(tmp_path)["compiles"][0] == {
        "compile_id": "0/0",
        "function": "forward",
        "module": None,
        "file": MODEL_FILE,
        "line": 10,
        "outcome": "success",
        "start_unix_nano": BASE_TIME_NS,
        "duration_s": 0.1,
        "lazy_backward_s": 0.0,
        "compile_s": 0.1,
        "graphs": 1,
        "discarded_graphs": 0,
        "ops": 12,
        "guards": 8,
        "cache_size": 0,
        "is_recompile": False,
        "recompile_reason": None,
        "graph_breaks": 1,
        "calls": None,
        "backward_calls": None,
        "call_share": None,
        "hot": None,
        "phases": {
            "tracing": 0.03,
            "aot": 0.02,
            "backend": 0.06,
            "guards": 0.005,
            "cache": None,
            "cache_load": None,
            "other": None,
        },
        "phase_details": {
            "aot.joint_graph": None,
            "aot.partition": None,
            "backend.lowering": None,
            "backend.codegen": None,
            "backend.compile": None,
            "backend.autotune": None,
        },
        "dynamo_phases": {
            "aot_collect_metadata": 0.01,
            "backend_compile": 0.06,
            "build_guards": 0.005,
            "bytecode_tracing": 0.03,
            "create_aot_dispatcher_function": 0.02,
            "entire_frame_compile": 0.1,
        },
        "error_type": None,
        "error_message": None,
        "compiled_with": None,
    }


def test_ops_are_summed_over_the_graphs_of_a_frame(tmp_path: Path) -> None:
    """A frame with two graphs of 12 ops has 2 graphs and 24 ops."""
    row = _small(tmp_path)["compiles"][1]
    assert (row["compile_id"], row["graphs"], row["ops"], row["guards"]) == ("0/1", 2, 24, 9)


def test_phase_time_adds_repeated_spans_but_not_nested_ones(tmp_path: Path) -> None:
    """Without a recorded split, two graphs' AOT phases (20 ms each, each with a nested
    aot_ phase) make 40 ms."""
    row = _small(tmp_path)["compiles"][1]
    assert row["phases"] == {
        "tracing": 0.06,
        "aot": 0.04,
        "backend": 0.12,
        "guards": 0.01,
        "cache": None,
        "cache_load": None,
        "other": None,
    }


def test_recorded_time_split_gives_phases_and_details(tmp_path: Path) -> None:
    """A frame span's torch.compile.time.* attributes are its phases: each category under
    its top-level part, the named parts of AOT and backend as details."""
    split = {
        names.ATTR_TIME_PREFIX + names.TIME_TRACING: 0.03,
        names.ATTR_TIME_PREFIX + names.TIME_AOT_JOINT_GRAPH: 0.01,
        names.ATTR_TIME_PREFIX + names.TIME_AOT_OTHER: 0.005,
        names.ATTR_TIME_PREFIX + names.TIME_BACKEND_CODEGEN: 0.04,
        names.ATTR_TIME_PREFIX + names.TIME_BACKEND_OTHER: 0.01,
        names.ATTR_TIME_PREFIX + names.TIME_OTHER: 0.005,
    }
    (row,) = _process(tmp_path, [FakeCompile("0/0", attributes=split)])["compiles"]
    assert (row["phases"], row["phase_details"]) == (
        {
            "tracing": 0.03,
            "aot": 0.015,
            "backend": 0.05,
            "guards": None,
            "cache": None,
            "cache_load": None,
            "other": 0.005,
        },
        {
            "aot.joint_graph": 0.01,
            "aot.partition": None,
            "backend.lowering": None,
            "backend.codegen": 0.04,
            "backend.compile": None,
            "backend.autotune": None,
        },
    )


def test_phase_not_recorded_is_none(tmp_path: Path) -> None:
    """A frame without any graph has no AOT phase: None, not 0."""
    row = _small(tmp_path)["compiles"][2]
    assert row["phases"]["aot"] is None


def test_failed_compile_row_has_error_type_and_message(tmp_path: Path) -> None:
    """A failed frame keeps its outcome, error.type and message."""
    row = _small(tmp_path)["compiles"][2]
    assert (row["outcome"], row["error_type"], row["error_message"]) == (
        "failure",
        BACKEND_ERROR,
        "backend='inductor' raised: boom",
    )


def test_graph_breaks_grouped_by_reason_with_stacks_and_counts(tmp_path: Path) -> None:
    """Breaks with the same reason are one group: count, kind, user stacks, compile ids
    (their fixes: tests/report/test_report_what_to_do.py)."""
    assert _without_fixes(_small(tmp_path)["graph_breaks"]) == [
        {
            "reason": PRINT_BREAK,
            "kind": "print",
            "torch_hints": [],
            "torch_url": None,
            "count": 2,
            "compile_ids": ["0/0", "2/0"],
            "stacks": [
                {
                    "user_stack": [f"{TRAIN_FILE}:40 in main", f"{MODEL_FILE}:20 in forward"],
                    "count": 2,
                    "compile_ids": ["0/0", "2/0"],
                }
            ],
        },
        {
            "reason": DATA_BREAK,
            "kind": "data_dependent",
            "torch_hints": [],
            "torch_url": None,
            "count": 1,
            "compile_ids": ["2/0"],
            "stacks": [
                {"user_stack": [f"{MODEL_FILE}:33 in step"], "count": 1, "compile_ids": ["2/0"]}
            ],
        },
    ]


def test_torchs_hints_and_page_ride_on_their_break_group(tmp_path: Path) -> None:
    """A break group carries the hints and the page torch stated for its breaks, in
    torch's order."""
    hinted = GraphBreak(
        reason=DATA_BREAK,
        kind="Data-dependent branching",
        hints=("Use `torch.cond` to express dynamic control flow.", "Consider a workaround."),
        url="https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html",
    )
    section = _process(tmp_path, [FakeCompile("0/0", graph_breaks=(hinted,))])
    (group,) = section["graph_breaks"]
    assert (group["torch_hints"], group["torch_url"]) == (list(hinted.hints), hinted.url)


def test_process_names_the_torch_that_compiled(tmp_path: Path) -> None:
    """A process's torch_version is its resource's torch.version (None where not recorded)."""
    path = write_traces(
        tmp_path / "t.jsonl",
        [FakeCompile("0/0")],
        resource=resource_attributes(torch_version="2.13.0+cpu"),
    )
    (section,) = _summary(path)["processes"]
    assert section["torch_version"] == "2.13.0+cpu"
    assert _small(tmp_path / "small")["torch_version"] is None


def test_graph_break_reasons_without_events_are_still_grouped(tmp_path: Path) -> None:
    """A frame with only the reasons attribute (events dropped) still counts its breaks."""
    attrs = {names.ATTR_GRAPH_BREAK_REASONS: ["r1", "r1"], names.ATTR_GRAPH_BREAK_COUNT: 2}
    section = _process(tmp_path, [FakeCompile("0/0", attributes=attrs)])
    assert [(g["reason"], g["count"], g["stacks"]) for g in section["graph_breaks"]] == [
        ("r1", 2, [{"user_stack": [], "count": 2, "compile_ids": ["0/0"]}])
    ]


def test_recompiles_list_reason_and_cache_size(tmp_path: Path) -> None:
    """Each recompile is listed with its location, reason and cache size (its calls are
    unknown: these files hold no variant_calls events; their fixes:
    tests/report/test_report_what_to_do.py)."""
    assert _without_fixes(_small(tmp_path)["recompiles"]) == [
        {
            "compile_id": "0/1",
            "function": "forward",
            "file": MODEL_FILE,
            "line": 10,
            "module": None,
            "reason": DTYPE_REASON,
            "reason_plain": "input x: dtype changed from Float to Half",
            "cache_size": 1,
            "calls": None,
            "call_share": None,
            "hot": None,
        }
    ]


def test_compile_again_without_reason_is_not_a_recompile(tmp_path: Path) -> None:
    """A compile id "N/1" with no recompile reason (Dynamo compiling a frame again after
    a failed compile left no cache entry: no guard failed) is no recompile, as torch's
    CompilationMetrics and the recompiles counter say; with a reason it is one."""
    section = _process(
        tmp_path,
        [
            FakeCompile("4/0"),
            FakeCompile("4/1", start_ms=500),
            FakeCompile("4/2", start_ms=900, recompile_reason="x.size()[0] == 4"),
        ],
    )
    assert [(r["compile_id"], r["reason"]) for r in section["recompiles"]] == [
        ("4/2", "x.size()[0] == 4")
    ]
    assert section["totals"]["recompiles"] == 1


def _recompiled(times: int, *, line: int, start: int) -> list[FakeCompile]:
    return [
        FakeCompile(
            f"{line}/{n}",
            line=line,
            start_ms=start + n * 200,
            cache_size=n,
            recompile_reason=f"x.size()[0] == {n + 1}" if n else None,
        )
        for n in range(times)
    ]


def test_code_at_the_recompile_limit_is_flagged(tmp_path: Path) -> None:
    """8 compiles of one code object reach Dynamo's default limit of 8 cache entries."""
    section = _process(tmp_path, _recompiled(8, line=10, start=0))
    assert section["near_recompile_limit"] == [
        {
            "function": "forward",
            "file": MODEL_FILE,
            "line": 10,
            "compiles": 8,
            "recompiles": 7,
            "max_cache_size": 7,
            "cache_entries": 8,
            "limit": 8,
            "status": "at_limit",
        }
    ]


def test_code_close_to_the_limit_is_near_and_far_code_is_not_listed(tmp_path: Path) -> None:
    """6 entries of 8 is near the limit; 5 is not listed."""
    compiles = _recompiled(6, line=10, start=0) + _recompiled(5, line=20, start=5000)
    section = _process(tmp_path, compiles)
    assert [(r["line"], r["status"]) for r in section["near_recompile_limit"]] == [
        (10, "near_limit")
    ]


def test_cache_size_alone_shows_limit_pressure(tmp_path: Path) -> None:
    """One compile whose cache already held 7 entries is at the limit (8 with it)."""
    section = _process(tmp_path, [FakeCompile("0/7", cache_size=7)])
    assert [(r["compiles"], r["cache_entries"]) for r in section["near_recompile_limit"]] == [
        (1, 8)
    ]


def test_recompile_limit_option_changes_the_threshold(tmp_path: Path) -> None:
    """With recompile_limit=4, 4 compiles are at the limit."""
    path = write_traces(tmp_path / "t.jsonl", _recompiled(4, line=10, start=0))
    (section,) = _summary(path, recompile_limit=4)["processes"]
    assert [(r["status"], r["limit"]) for r in section["near_recompile_limit"]] == [("at_limit", 4)]


def test_slowest_compiles_in_order_with_phases(tmp_path: Path) -> None:
    """The slowest list is ordered by duration and carries the phases."""
    slowest = _small(tmp_path)["slowest"]
    assert [(row["compile_id"], row["duration_s"]) for row in slowest] == [
        ("0/1", 0.2),
        ("0/0", 0.1),
        ("1/0", 0.05),
        ("2/0", 0.01),
    ]


def test_slowest_count_option_limits_the_list(tmp_path: Path) -> None:
    """slowest=1 keeps only the slowest compile."""
    (section,) = _summary(write_small(tmp_path), slowest=1)["processes"]
    assert [row["compile_id"] for row in section["slowest"]] == ["0/1"]


def test_failed_compile_is_a_failure(tmp_path: Path) -> None:
    """A failed frame compile is listed once, at the compile stage."""
    assert _small(tmp_path)["failures"] == [
        {
            "stage": "compile",
            "compile_id": "1/0",
            "function": "helper",
            "span": names.SPAN_FRAME,
            "error_type": BACKEND_ERROR,
            "error_message": "backend='inductor' raised: boom",
        }
    ]


def test_failed_frame_without_error_takes_the_error_beneath_it(tmp_path: Path) -> None:
    """A failed frame that recorded no error.type shows the error of its failed graph span."""
    frame = {
        "spanId": "f1",
        "name": names.SPAN_FRAME,
        "attributes": [
            string_attribute(names.ATTR_COMPILE_ID, "0/0"),
            string_attribute(names.ATTR_OUTCOME, names.OUTCOME_FAILURE),
        ],
    }
    graph = {
        "spanId": "g1",
        "parentSpanId": "f1",
        "name": names.SPAN_GRAPH,
        "attributes": [string_attribute(names.ATTR_ERROR_TYPE, "ValueError")],
        "status": {"code": 2, "message": "bad shape"},
    }
    path = tmp_path / "t.jsonl"
    path.write_text(request_line(frame, graph))
    (section,) = _summary(path)["processes"]
    assert [
        (f["compile_id"], f["error_type"], f["error_message"]) for f in section["failures"]
    ] == [("0/0", "ValueError", "bad shape")]


def test_outcome_written_under_the_legacy_key_is_read(tmp_path: Path) -> None:
    """A frame span from an earlier version, its outcome under torch.compile.frame.outcome,
    reports that outcome."""
    frame = {
        "spanId": "f1",
        "name": names.SPAN_FRAME,
        "attributes": [
            string_attribute(names.ATTR_COMPILE_ID, "0/0"),
            string_attribute("torch.compile.frame.outcome", names.OUTCOME_NO_GRAPH),
        ],
    }
    path = tmp_path / "t.jsonl"
    path.write_text(request_line(frame))
    (section,) = _summary(path)["processes"]
    assert [(row["compile_id"], row["outcome"]) for row in section["compiles"]] == [
        ("0/0", names.OUTCOME_NO_GRAPH)
    ]


def test_phase_span_named_without_suffix_is_read_from_its_attribute(tmp_path: Path) -> None:
    """A span named just "torch.compile.phase" counts by its torch.compile.phase.name."""
    frame = {
        "spanId": "f1",
        "name": names.SPAN_FRAME,
        "startTimeUnixNano": "0",
        "endTimeUnixNano": "9000000",
    }
    phase = {
        "spanId": "p1",
        "parentSpanId": "f1",
        "name": names.SPAN_PHASE,
        "startTimeUnixNano": "1000000",
        "endTimeUnixNano": "4000000",
        "attributes": [string_attribute(names.ATTR_PHASE_NAME, "bytecode_tracing")],
    }
    path = tmp_path / "t.jsonl"
    path.write_text(request_line(frame, phase))
    (section,) = _summary(path)["processes"]
    assert section["compiles"][0]["phases"]["tracing"] == 0.003


def test_run_failure_under_a_user_span_finds_its_frame_through_the_link(tmp_path: Path) -> None:
    """A run span parented to the user's step span is tied to the frame of its linked graph."""
    frame = {
        "spanId": "f1",
        "name": names.SPAN_FRAME,
        "attributes": [
            string_attribute(names.ATTR_COMPILE_ID, "3/0"),
            string_attribute(names.ATTR_CODE_FUNCTION, "forward"),
        ],
    }
    graph = {"spanId": "g1", "parentSpanId": "f1", "name": names.SPAN_GRAPH}
    step = {"spanId": "s1", "name": "train_step"}
    run = {
        "spanId": "r1",
        "parentSpanId": "s1",
        "name": names.SPAN_RUN_FORWARD,
        "links": [{"traceId": "t", "spanId": "g1"}],
        "status": {"code": 2, "message": "CUDA error"},
    }
    path = tmp_path / "t.jsonl"
    path.write_text(request_line(frame, graph, step, run))
    (section,) = _summary(path)["processes"]
    assert [(f["stage"], f["compile_id"], f["function"]) for f in section["failures"]] == [
        ("run", "3/0", "forward")
    ]


def test_failed_run_is_a_failure_at_run_stage(tmp_path: Path) -> None:
    """A run span with ERROR status is a run failure tied to its compile."""
    section = _process(tmp_path, [FakeCompile("0/0", runs=2, run_error="RuntimeError")])
    assert [
        (f["stage"], f["compile_id"], f["function"], f["error_type"]) for f in section["failures"]
    ] == [("run", "0/0", "forward", "RuntimeError")]


def test_faults_and_accuracy_are_read_from_span_attributes(tmp_path: Path) -> None:
    """Fault and accuracy attributes on a frame span become rows with its compile id."""
    attrs = {
        ATTR_FAULT_KIND: "compile_error",
        ATTR_FAULT_TARGET: "inductor",
        ATTR_ACCURACY_PASSED: False,
        ATTR_ACCURACY_MAX_ABS_ERROR: 0.5,
        ATTR_ACCURACY_MAX_REL_ERROR: 0.25,
    }
    section = _process(tmp_path, [FakeCompile("0/0", attributes=attrs)])
    assert (section["faults"], section["accuracy"]) == (
        [
            {
                "kind": "compile_error",
                "target": "inductor",
                "compile_id": "0/0",
                "source": names.SPAN_FRAME,
            }
        ],
        [
            {
                "compile_id": "0/0",
                "passed": False,
                "max_abs_error": 0.5,
                "max_rel_error": 0.25,
                "source": names.SPAN_FRAME,
            }
        ],
    )


def test_fault_on_span_and_in_log_counts_once(tmp_path: Path) -> None:
    """The same fault recorded on the span and as a log event is one fault."""
    fault = {ATTR_FAULT_KIND: "compile_error", ATTR_FAULT_TARGET: "inductor"}
    traces = write_traces(tmp_path / "t.jsonl", [FakeCompile("0/0", attributes=fault)])
    log = {"event.name": names.LOG_FAULT_INJECTED, names.ATTR_COMPILE_ID: "0/0", **fault}
    logs = write_logs(tmp_path / "l.jsonl", [log])
    (section,) = _summary(traces, logs)["processes"]
    assert section["totals"]["faults"] == 1


def test_fault_only_in_logs_is_reported(tmp_path: Path) -> None:
    """A fault recorded only as a log event is listed, named after the event."""
    log = {"event.name": names.LOG_FAULT_INJECTED, ATTR_FAULT_KIND: "run_error"}
    (section,) = _summary(write_logs(tmp_path / "l.jsonl", [log]))["processes"]
    assert section["faults"] == [
        {
            "kind": "run_error",
            "target": None,
            "compile_id": None,
            "source": names.LOG_FAULT_INJECTED,
        }
    ]


def test_runs_are_counted_by_kind(tmp_path: Path) -> None:
    """Recorded run spans are counted per kind."""
    assert _small(tmp_path)["runs"] == {
        "forward": 2,
        "backward": 0,
        "inference": 0,
        "export": 0,
    }


def test_process_totals(tmp_path: Path) -> None:
    """Totals of one process add up its rows."""
    assert _small(tmp_path)["totals"] == {
        "frame_compiles": 4,
        "graphs": 3,
        "ops": 36,
        "guards": 19,
        "graph_breaks": 3,
        "recompiles": 1,
        "failures": 1,
        "faults": 0,
        "accuracy_failures": 0,
        "runs": 2,
        "unfinished_compiles": 0,
        "compile_seconds": 0.36,
        "lazy_backward_seconds": 0.0,
        "device_seconds": 0,
        "warm_compile_seconds": 0.0,
        "cudagraph_skips": 0,
        "cache_hits": 0,
        "cache_misses": 0,
        "cache_bypasses": 0,
        "exports": 0,
        "export_failures": 0,
        "decompositions": 0,
        "export_seconds": 0,
    }


def test_summary_top_level_keys_are_stable(tmp_path: Path) -> None:
    """The summary's top-level keys and schema version (the --json contract)."""
    summary = _summary(write_small(tmp_path))
    assert (list(summary), summary["schema_version"], summary["recompile_limit"]) == (
        [
            "schema_version",
            "recompile_limit",
            "inputs",
            "source",
            "totals",
            "compile_time",
            "processes",
            "ranks",
        ],
        2,
        8,
    )


def test_process_section_keys_are_stable(tmp_path: Path) -> None:
    """A process section's keys (the --json contract)."""
    assert list(_small(tmp_path)) == [
        "process",
        "rank",
        "local_rank",
        "world_size",
        "node_rank",
        "run_id",
        "host",
        "pid",
        "service",
        "torch_version",
        "compiles",
        "graph_breaks",
        "recompiles",
        "near_recompile_limit",
        "what_to_do",
        "slowest",
        "failures",
        "faults",
        "accuracy",
        "runs",
        "device_time",
        "cudagraphs",
        "caches",
        "unfinished",
        "torch_export",
        "totals",
        "compile_time",
    ]


def test_summary_round_trips_through_json(tmp_path: Path) -> None:
    """The summary is plain data: JSON encodes and decodes it unchanged."""
    summary = _summary(write_small(tmp_path))
    assert json.loads(json.dumps(summary)) == summary


def test_ranks_that_agree_are_compared_and_not_flagged(tmp_path: Path) -> None:
    """Three ranks with identical compiles: compared, none diverges."""
    write_job(tmp_path, ranks=3, compiles_per_rank=10)
    ranks = _summary(tmp_path)["ranks"]
    assert (ranks["compared"], ranks["diverged"], ranks["reference"]) == (
        True,
        False,
        {"graphs": 10, "recompiles": 0, "guards": 80},
    )


def test_rank_with_an_extra_graph_diverges_at_its_first_different_compile(tmp_path: Path) -> None:
    """The rank that compiled one more graph is flagged, with the compile where it differs."""
    write_job(tmp_path, ranks=3, compiles_per_rank=10, diverging_rank=1, diverge_at=5)
    rows = _summary(tmp_path)["ranks"]["rows"]
    assert [(row["process"], row["diverges"], row["first_difference"]) for row in rows] == [
        ("rank 0", [], None),
        (
            "rank 1",
            ["graphs"],
            {
                "compile_id": "5/0",
                "actual": {"graphs": 2, "guards": 8},
                "expected": {"graphs": 1, "guards": 8},
            },
        ),
        ("rank 2", [], None),
    ]


def test_rank_missing_a_compile_diverges_there(tmp_path: Path) -> None:
    """A rank that never compiled 1/0 differs there: actual is None."""
    for rank, count in ((0, 2), (1, 2), (2, 1)):
        resource = resource_attributes(rank=rank, world_size=3, pid=rank)
        compiles = [FakeCompile(f"{i}/0", start_ms=i * 200) for i in range(count)]
        write_traces(tmp_path / f"traces-{rank}.jsonl", compiles, resource=resource)
    (row,) = [row for row in _summary(tmp_path)["ranks"]["rows"] if row["diverges"]]
    assert (row["process"], row["diverges"], row["first_difference"]["compile_id"]) == (
        "rank 2",
        ["graphs", "guards"],
        "1/0",
    )
    assert row["first_difference"]["actual"] is None


def test_even_split_between_two_ranks_flags_both(tmp_path: Path) -> None:
    """Two ranks that disagree: neither can be trusted, both are flagged."""
    write_job(tmp_path, ranks=2, compiles_per_rank=5, diverging_rank=1, diverge_at=2)
    ranks = _summary(tmp_path)["ranks"]
    assert ([row["diverges"] for row in ranks["rows"]], ranks["reference"]["graphs"]) == (
        [["graphs"], ["graphs"]],
        None,
    )


def test_one_process_is_not_compared(tmp_path: Path) -> None:
    """A single process has nothing to be compared with."""
    assert _summary(write_small(tmp_path))["ranks"] == {
        "compared": False,
        "diverged": False,
        "reference": None,
        "rows": [],
    }


def test_processes_are_ordered_by_rank(tmp_path: Path) -> None:
    """Rank 10 comes after rank 2 (numeric, not text, order)."""
    for rank in (10, 2):
        resource = resource_attributes(rank=rank, world_size=11, pid=rank)
        write_traces(tmp_path / f"traces-{rank}.jsonl", [FakeCompile("0/0")], resource=resource)
    assert [p["process"] for p in _summary(tmp_path)["processes"]] == ["rank 2", "rank 10"]


def test_same_rank_of_two_runs_is_told_apart(tmp_path: Path) -> None:
    """Rank 0 of two torchrun runs are two processes, labelled with their run ids."""
    for run_id in ("job-a", "job-b"):
        resource = {**resource_attributes(rank=0), names.RESOURCE_RUN_ID: run_id}
        write_traces(tmp_path / f"traces-{run_id}.jsonl", [FakeCompile("0/0")], resource=resource)
    assert [p["process"] for p in _summary(tmp_path)["processes"]] == [
        "rank 0 (run job-a)",
        "rank 0 (run job-b)",
    ]


def test_two_instances_of_one_service_are_told_apart(tmp_path: Path) -> None:
    """Two processes with the same service name and no pid get their instance ids."""
    for name in ("a", "b"):
        resource = {"service.name": "trainer", "service.instance.id": f"{name * 8}-0000"}
        write_traces(tmp_path / f"traces-{name}.jsonl", [FakeCompile("0/0")], resource=resource)
    assert [p["process"] for p in _summary(tmp_path)["processes"]] == [
        "trainer (instance aaaaaaaa)",
        "trainer (instance bbbbbbbb)",
    ]


def test_inputs_list_files_and_problems(tmp_path: Path) -> None:
    """The inputs section counts records per file and lists the problems."""
    path = write_small(tmp_path / "job")
    summary = _summary(path, tmp_path / "missing")
    assert summary["inputs"] == {
        "files": [
            {
                "path": str(path),
                "lines": 34,
                "spans": 34,
                "log_records": 0,
                "metric_points": 0,
                "bad_lines": 0,
            }
        ],
        "problems": [
            {
                "path": str(tmp_path / "missing"),
                "line": None,
                "message": "no such file or directory",
            }
        ],
    }


def test_tables_read_from_notable_spans_as_from_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process tables read from the notable spans alone (frames, runs, lazy backwards,
    exports, failures, CUDA-graph, fault, accuracy and cache attributes) are those read
    from every span: no table misses a span the filter left out."""
    path = write_traces(tmp_path / "t.jsonl", small_compiles())
    provider = TracerProvider(resource=Resource.create(resource_attributes()))
    provider.add_span_processor(
        SimpleSpanProcessor(JsonLinesSpanExporter(path.open("a", encoding="utf-8")))
    )
    tracer = provider.get_tracer(names.INSTRUMENTATION_NAME)
    located = {names.ATTR_COMPILE_ID: "3/0", names.ATTR_RUN_KIND: "forward"}
    others: list[tuple[str, dict[str, Any], bool]] = [  # name, attributes, failed
        (names.SPAN_FRAME, {**located, names.ATTR_CACHE_FX_HITS: 2}, True),
        (names.SPAN_GRAPH, {**located, names.ATTR_CUDAGRAPH_DECISION: "skipped"}, False),
        (names.SPAN_GRAPH, {names.ATTR_COMPILE_ID: "4/0"}, True),
        (names.SPAN_RUN_FORWARD, {**located, names.ATTR_RUN_DEVICE_DURATION: 0.5}, False),
        (names.SPAN_AOT_INFERENCE, {**located, names.ATTR_CACHE_FX_STATE: "bypass"}, False),
        (names.SPAN_LAZY_BACKWARD, {names.ATTR_CACHE_AOT_MISSES: 1}, False),
        (names.SPAN_EXPORT, {names.ATTR_EXPORT_MODULE_CLASS: "m.Net"}, True),
        (names.SPAN_EXPORT_DECOMPOSITIONS, {}, False),
        (names.SPAN_EXPORT_RUN, {names.ATTR_RUN_KIND: "export"}, False),
        ("torch.compile.step", {ATTR_FAULT_KIND: "compile_error"}, False),
        ("torch.compile.step", {ATTR_ACCURACY_PASSED: True}, False),
    ]
    start = 10_000_000_000
    for index, (name, attributes, failed) in enumerate(others):
        span = tracer.start_span(name, attributes=attributes, start_time=start + index)
        if failed:
            span.set_status(trace.Status(trace.StatusCode.ERROR, "failed"))
        span.end(end_time=start + index + 1_000_000)
    provider.shutdown()
    telemetry = load_telemetry([path])
    notable = summarize(telemetry)
    monkeypatch.setattr(build, "_notable", lambda spans: spans)
    every = summarize(telemetry)
    (section,) = notable["processes"]
    assert [bool(section[key]) for key in ("faults", "accuracy", "device_time")] == [True] * 3
    assert {"3/0", "4/0"} <= {failure["compile_id"] for failure in section["failures"]}
    assert section["cudagraphs"]["skipped"] == 1 and section["torch_export"]["exports"]
    assert section["caches"]["bypass_reasons"] and section["runs"]["export"] == 1
    assert json.dumps(notable) == json.dumps(every)


def test_first_difference_among_ids_of_equal_numbers_is_the_first_by_text(
    tmp_path: Path,
) -> None:
    """Compile ids whose numbers tie ("h/0" … "a/0") are taken in the order of their text:
    the diverging rank's first difference is "a/0" whatever the interpreter's string hash
    seed (the order of a set of them changes from run to run)."""
    ids = [f"{letter}/0" for letter in "hgfedcba"]
    for rank in range(3):
        resource = resource_attributes(rank=rank, world_size=3, pid=rank + 1)
        compiles = [
            FakeCompile(compile_id, start_ms=index * 500, graphs=2 if rank == 2 else 1)
            for index, compile_id in enumerate(ids)
        ]
        write_traces(tmp_path / f"traces-{rank}.jsonl", compiles, resource=resource)
    code = (
        "import json, sys; from otel_dynamo.report import load_telemetry, summarize; "
        "rows = summarize(load_telemetry([sys.argv[1]]))['ranks']['rows']; "
        "print(json.dumps([row['first_difference'] for row in rows]))"
    )
    found = []
    for seed in ("1", "2", "3"):
        done = subprocess.run(
            [sys.executable, "-c", code, str(tmp_path)],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        found.append(json.loads(done.stdout))
    expected = {
        "compile_id": "a/0",
        "actual": {"graphs": 2, "guards": 8},
        "expected": {"graphs": 1, "guards": 8},
    }
    assert found == [[None, None, expected]] * 3


def _without_fixes(rows: Sequence[Mapping[str, object]]) -> list[dict[str, object]]:
    return [{key: value for key, value in row.items() if key != "fixes"} for row in rows]
