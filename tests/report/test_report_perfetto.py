"""otel-dynamo report --perfetto: the run as Chrome Trace Event JSON, valid for the format
(what ui.perfetto.dev and chrome://tracing load), with every compile, break, recompile and
run of the summary on the right process and thread."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from _report_support import (
    FakeCompile,
    request_line,
    resource_attributes,
    small_compiles,
    string_attribute,
    write_job,
    write_traces,
)

from otel_dynamo import cli, names
from otel_dynamo.report import load_telemetry, summarize

PHASES = {"X", "i", "M"}


@pytest.fixture(autouse=True)
def _job_directory(tmp_path: Path) -> None:
    (tmp_path / "job").mkdir()


def _trace(tmp_path: Path, inputs: Path) -> dict[str, Any]:
    out = tmp_path / "trace.json"
    assert cli.main(["report", str(inputs), "--perfetto", str(out), "--json"]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def _slices(trace: dict[str, Any]) -> list[dict[str, Any]]:
    return [event for event in trace["traceEvents"] if event["ph"] == "X"]


def _straddles(slices: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Pairs of slices on one track where the second starts inside the first and ends
    after it (what a trace viewer cannot nest)."""
    by_track: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    for event in slices:
        by_track[event["pid"], event["tid"]].append(event)
    found = []
    for events in by_track.values():
        stack: list[dict[str, Any]] = []
        for event in sorted(events, key=lambda e: (e["ts"], -e["dur"])):
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= event["ts"]:
                stack.pop()
            if stack and event["ts"] + event["dur"] > stack[-1]["ts"] + stack[-1]["dur"]:
                found.append((stack[-1]["name"], event["name"]))
            stack.append(event)
    return found


def test_every_event_has_the_fields_its_phase_needs(tmp_path: Path) -> None:
    """Slices (X): name, ts, dur >= 0, pid, tid; instants (i): thread scope; metadata (M)
    names every process and every thread a slice or instant is on; slices nest."""
    write_job(tmp_path / "job", ranks=2, compiles_per_rank=20, diverging_rank=1, diverge_at=5)
    trace = _trace(tmp_path, tmp_path / "job")
    events = trace["traceEvents"]
    assert {event["ph"] for event in events} == PHASES
    for event in events:
        assert isinstance(event["pid"], int) and isinstance(event["tid"], int)
        assert isinstance(event["name"], str) and event["name"]
    for event in _slices(trace):
        assert isinstance(event["ts"], float) and event["dur"] >= 0
    assert all(e["s"] == "t" for e in events if e["ph"] == "i")
    named_threads = {(e["pid"], e["tid"]) for e in events if e["name"] == "thread_name"}
    named_processes = {e["pid"] for e in events if e["name"] == "process_name"}
    used = {(e["pid"], e["tid"]) for e in events if e["ph"] in ("X", "i")}
    assert used <= named_threads and {pid for pid, _ in used} == named_processes == {1, 2}
    assert _straddles(_slices(trace)) == []


def test_frames_breaks_recompiles_and_runs_match_the_summary(tmp_path: Path) -> None:
    """One frame slice per frame compile, one graph-break instant per break, one recompile
    instant per recompile, one slice per recorded run on the compiled-runs track."""
    write_traces(tmp_path / "job" / "traces.jsonl", small_compiles())
    trace = _trace(tmp_path, tmp_path / "job")
    totals = summarize(load_telemetry([tmp_path / "job"]))["totals"]
    frames = [e for e in _slices(trace) if e["cat"] == names.SPAN_FRAME]
    instants = [e["name"] for e in trace["traceEvents"] if e["ph"] == "i"]
    runs = [e for e in _slices(trace) if e["cat"].startswith("torch.compile.run.")]
    assert len(frames) == totals["frame_compiles"] == 4
    assert sum(name.startswith("graph break") for name in instants) == totals["graph_breaks"]
    assert instants.count("recompile") == totals["recompiles"] == 1
    assert len(runs) == 2 and {e["tid"] for e in runs} == {2}
    frame = next(e for e in frames if e["args"][names.ATTR_COMPILE_ID] == "0/1")
    assert frame["name"] == "frame 0/1 forward" and frame["dur"] == 200_000.0


def test_each_thread_that_compiled_has_its_own_track(tmp_path: Path) -> None:
    """Frames recorded with thread.id 4001 and 4002 land on tracks 4001 and 4002, named
    after their threads."""
    compiles = [
        FakeCompile("0/0", attributes={names.ATTR_THREAD_ID: 4001, names.ATTR_THREAD_NAME: "A"}),
        FakeCompile(
            "1/0",
            start_ms=500,
            attributes={names.ATTR_THREAD_ID: 4002, names.ATTR_THREAD_NAME: "worker"},
        ),
    ]
    write_traces(tmp_path / "job" / "traces.jsonl", compiles)
    trace = _trace(tmp_path, tmp_path / "job")
    tracks = {
        e["args"][names.ATTR_COMPILE_ID]: e["tid"]
        for e in _slices(trace)
        if e["cat"] == names.SPAN_FRAME
    }
    threads = {
        e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"
    }
    assert tracks == {"0/0": 4001, "1/0": 4002}
    assert (threads[4001], threads[4002]) == ("A (4001)", "worker (4002)")


def _span(span_id: str, parent: str, name: str, start_ms: int, end_ms: int) -> dict[str, Any]:
    base = 1_700_000_000_000_000_000
    return {
        "traceId": "1" * 32,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name,
        "startTimeUnixNano": str(base + start_ms * 1_000_000),
        "endTimeUnixNano": str(base + end_ms * 1_000_000),
        "attributes": [string_attribute(names.ATTR_COMPILE_ID, "0/0")],
    }


def test_a_slice_straddling_its_neighbour_goes_to_an_overlapping_track(tmp_path: Path) -> None:
    """Two children of a frame where the second starts inside the first and ends after it:
    the second goes to track tid * 10 + 1, named "(overlapping)"; nothing straddles."""
    spans = [
        _span("a" * 16, "", names.SPAN_FRAME, 0, 100),
        _span("b" * 16, "a" * 16, names.SPAN_GRAPH, 10, 50),
        _span("c" * 16, "a" * 16, names.SPAN_AOT_FORWARD, 40, 90),
    ]
    (tmp_path / "job" / "traces.jsonl").write_text(request_line(*spans))
    trace = _trace(tmp_path, tmp_path / "job")
    tracks = {e["cat"]: e["tid"] for e in _slices(trace)}
    assert tracks == {names.SPAN_FRAME: 1, names.SPAN_GRAPH: 1, names.SPAN_AOT_FORWARD: 11}
    assert _straddles(_slices(trace)) == []
    names_of = {
        e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"
    }
    assert names_of[11].endswith("(overlapping)")


def test_processes_are_ordered_by_rank(tmp_path: Path) -> None:
    """process_sort_index is the rank: rank 0's process sorts first in the viewer."""
    for rank in (1, 0):
        resource = resource_attributes(rank=rank, world_size=2, pid=50 + rank)
        write_traces(tmp_path / "job" / f"r{rank}.jsonl", [FakeCompile("0/0")], resource=resource)
    trace = _trace(tmp_path, tmp_path / "job")
    order = {
        e["pid"]: e["args"]["sort_index"]
        for e in trace["traceEvents"]
        if e["name"] == "process_sort_index"
    }
    labels = {
        e["pid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "process_name"
    }
    assert [labels[pid] for pid in sorted(order, key=order.get)] == [
        "rank 0 (pid 50)",
        "rank 1 (pid 51)",
    ]


def test_an_unwritable_trace_path_is_one_message_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--perfetto into a directory that does not exist: exit 1, the path named on stderr."""
    write_traces(tmp_path / "job" / "traces.jsonl", small_compiles())
    target = tmp_path / "missing" / "trace.json"
    assert cli.main(["report", str(tmp_path / "job"), "--perfetto", str(target)]) == 1
    assert f"{target}: cannot write the Perfetto trace" in capsys.readouterr().err
