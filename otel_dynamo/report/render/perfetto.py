"""The run as Chrome Trace Event JSON: what ui.perfetto.dev and chrome://tracing open.

One process per recorded process (rank), one track per thread that compiled (the frame
span's ``thread.id``): each frame compile a slice with its Dynamo phases, graph, AOT
Autograd and backend spans nested beneath it by time, each lazy backward compile a slice
on its own thread's track, compiled runs on a track of their own, graph breaks and
recompiles as instant events carrying their reasons. Slices on one track must nest: one
that would straddle the end of another goes to an "(overlapping)" track beside it.

Written while the report reads (``read_report``'s group visitor), one group of processes
at a time, so a large run never holds its events in memory.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Mapping
from typing import Any, TextIO

from otel_dynamo import names
from otel_dynamo.report.read.model import Process, Span, Telemetry
from otel_dynamo.report.read.values import text
from otel_dynamo.report.summary.compiles import RUN_SPANS
from otel_dynamo.report.summary.phases import phase_name
from otel_dynamo.report.summary.tree import SpanTree

UNKNOWN_THREAD_TID = 1
"""Track of compiles whose thread was not recorded (telemetry from before thread.id)."""
RUNS_TID = 2
"""Track of compiled runs (run spans carry no thread: the hot path stays lean)."""
OVERLAP_TID_FACTOR = 10
"""An overlapping slice of thread T goes to track T * 10 + k (k = 1, 2, ...)."""
NEST_SLACK_US = 2.0
"""A slice ending this little after the one it starts in is trimmed to nest in it: the
recorder's own timings of AOT's compilers and Dynamo's phases are read microseconds apart."""
_NS_PER_US = 1000.0
Event = dict[str, Any]


_UNNUMBERED = 0
"""The pid of a process's track events until the writer numbers the process."""


class PerfettoWriter:
    """Writes the trace file's events as groups of processes are added."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._pids: dict[tuple[str, ...], int] = {}
        self._first = True
        self._begin()

    def _begin(self) -> None:
        self._pids.clear()
        self._first = True
        self._stream.write('{"displayTimeUnit":"ms","traceEvents":[\n')

    def add(self, telemetry: Telemetry) -> None:
        """Every event of the processes of ``telemetry`` (none added before)."""
        self.merge(PerfettoWriter.part(telemetry))

    @staticmethod
    def part(telemetry: Telemetry) -> list[tuple[Process, list[Event]]]:
        """The track events of each process of ``telemetry``, its pid not yet given
        (``merge`` numbers the processes in the order they are written, and writes them)."""
        spans: dict[tuple[str, ...], list[Span]] = defaultdict(list)
        for span in telemetry.spans:
            spans[span.process.key].append(span)
        return [
            (process, list(track_events(_UNNUMBERED, spans[process.key])))
            for process in telemetry.processes
        ]

    def merge(self, part: list[tuple[Process, list[Event]]]) -> None:
        for process, events in part:
            pid = self._pids.setdefault(process.key, len(self._pids) + 1)
            for event in _process_metadata(process, pid):
                self._write(event)
            for event in events:
                event["pid"] = pid
                self._write(event)

    def restart(self) -> None:
        """Forget what was written: the report reads everything again (a process split
        across groups)."""
        self._stream.seek(0)
        self._stream.truncate()
        self._begin()

    def close(self) -> None:
        self._stream.write("\n]}\n")

    def _write(self, event: Event) -> None:
        if not self._first:
            self._stream.write(",\n")
        self._first = False
        self._stream.write(json.dumps(event, separators=(",", ":"), ensure_ascii=False))


def track_events(pid: int, spans: list[Span]) -> Iterator[Event]:
    """The slices and instants of one process's spans, with their tracks' names."""
    tree = SpanTree(spans)
    tracks: dict[int, list[Event]] = defaultdict(list)
    thread_names: dict[int, str] = {}
    instants: list[Event] = []
    for span in spans:
        if span.name in (names.SPAN_FRAME, names.SPAN_LAZY_BACKWARD):
            tid = _tid(span)
            thread_names.setdefault(tid, _thread_name(span, tid))
            tracks[tid] += [_slice(found, pid, tid) for found in _compile_tree(tree, span)]
            instants += _instants(span, pid, tid)
        elif span.name in RUN_SPANS:
            thread_names[RUNS_TID] = "compiled runs"
            tracks[RUNS_TID].append(_slice(span, pid, RUNS_TID))
    for tid, events in tracks.items():
        for track, nested in _nested_tracks(tid, events).items():
            suffix = "" if track == tid else " (overlapping)"
            yield _metadata("thread_name", pid, track, thread_names[tid] + suffix)
            yield from nested
    yield from instants


def _compile_tree(tree: SpanTree, root: Span) -> list[Span]:
    """A frame or lazy backward span and the spans beneath it, without lazy backwards
    (recorded under their frame, compiled long after it: slices of their own)."""
    found = [root]
    pending = [root.span_id]
    while pending:
        for child in tree.children(pending.pop()):
            if child.name not in (names.SPAN_FRAME, names.SPAN_LAZY_BACKWARD):
                found.append(child)
                pending.append(child.span_id)
    return found


def _slice(span: Span, pid: int, tid: int) -> Event:
    return {
        "ph": "X",
        "name": _slice_name(span),
        "cat": span.name,
        "ts": span.start_ns / _NS_PER_US,
        "dur": span.duration_ns / _NS_PER_US,
        "pid": pid,
        "tid": tid,
        "args": _args(span.attributes),
    }


def _slice_name(span: Span) -> str:
    compile_id = text(span.attributes.get(names.ATTR_COMPILE_ID)) or "?"
    function = text(span.attributes.get(names.ATTR_CODE_FUNCTION))
    if span.name == names.SPAN_FRAME:
        return f"frame {compile_id} {function or ''}".rstrip()
    if span.name == names.SPAN_LAZY_BACKWARD:
        return f"lazy backward {compile_id}"
    phase = phase_name(span)
    if phase is not None:
        return phase
    return span.name.removeprefix("torch.compile.")


def _instants(frame: Span, pid: int, tid: int) -> list[Event]:
    found = [
        _instant(
            f"graph break: {text(event.attributes.get(names.ATTR_GRAPH_BREAK_KIND)) or '?'}",
            event.time_ns,
            pid,
            tid,
            event.attributes,
        )
        for event in frame.events
        if event.name == names.EVENT_GRAPH_BREAK
    ]
    reason = text(frame.attributes.get(names.ATTR_RECOMPILE_REASON))
    if reason:
        arguments = {names.ATTR_RECOMPILE_REASON: reason}
        found.append(_instant("recompile", frame.start_ns, pid, tid, arguments))
    return found


def _instant(name: str, time_ns: int, pid: int, tid: int, args: Mapping[str, Any]) -> Event:
    return {
        "ph": "i",
        "s": "t",
        "name": name,
        "ts": time_ns / _NS_PER_US,
        "pid": pid,
        "tid": tid,
        "args": _args(args),
    }


def _args(attributes: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in attributes.items() if value is not None}


def _tid(span: Span) -> int:
    thread = span.attributes.get(names.ATTR_THREAD_ID)
    is_id = isinstance(thread, int) and not isinstance(thread, bool) and thread > RUNS_TID
    return thread if is_id else UNKNOWN_THREAD_TID  # type: ignore[return-value]  # checked


def _thread_name(span: Span, tid: int) -> str:
    if tid == UNKNOWN_THREAD_TID:
        return "compiles (thread not recorded)"
    name = text(span.attributes.get(names.ATTR_THREAD_NAME)) or "thread"
    return f"{name} ({tid})"


def _nested_tracks(tid: int, events: list[Event]) -> dict[int, list[Event]]:
    """The slices of one thread split into tracks on which each slice nests in the one it
    starts in: the first track that can take it, else a new "(overlapping)" track."""
    tracks: dict[int, list[Event]] = {}
    open_ends: dict[int, list[float]] = {}
    for event in sorted(events, key=lambda e: (e["ts"], -e["dur"])):
        for level in range(len(open_ends) + 1):
            track = tid if level == 0 else tid * OVERLAP_TID_FACTOR + level
            placed = _placed_on(open_ends.setdefault(track, []), event)
            if placed is not None:
                tracks.setdefault(track, []).append(placed | {"tid": track})
                break
    return tracks


def _placed_on(ends: list[float], event: Event) -> Event | None:
    """``event`` as it goes on a track whose open slices end at ``ends`` (innermost last),
    or None when it would straddle one of them."""
    start, end = event["ts"], event["ts"] + event["dur"]
    while ends and ends[-1] <= start:
        ends.pop()
    if ends and ends[-1] < end <= ends[-1] + NEST_SLACK_US:
        end = ends[-1]  # clocks read apart by a microsecond: nested, trimmed
        event = event | {"dur": end - start}
    if ends and end > ends[-1]:
        return None
    ends.append(end)
    return event


def _process_metadata(process: Process, pid: int) -> Iterator[Event]:
    shown_pid = process.pid is not None and f"pid {process.pid}" not in process.label
    label = f"{process.label} (pid {process.pid})" if shown_pid else process.label
    yield _metadata("process_name", pid, 0, label)
    order = process.rank if process.rank is not None else 1_000_000 + pid
    yield {
        "ph": "M",
        "name": "process_sort_index",
        "pid": pid,
        "tid": 0,
        "args": {"sort_index": order},
    }


def _metadata(kind: str, pid: int, tid: int, name: str) -> Event:
    return {"ph": "M", "name": kind, "pid": pid, "tid": tid, "args": {"name": name}}
