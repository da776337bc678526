"""The timeline data of the HTML page: compile and run spans per process, compactly.

A job of 8 ranks x 1,000 compiles has ~80,000 spans, so each lane is stored as columns
of small integers (microseconds, start as a delta from the previous span) with the
labels in shared string tables. The page decodes and draws them on a canvas.
"""

from __future__ import annotations

import array
import bisect
import dataclasses
import operator
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple, Union

from otel_dynamo import names
from otel_dynamo.report.read.model import Process, Span, Telemetry
from otel_dynamo.report.read.values import text
from otel_dynamo.report.summary.build import process_labels
from otel_dynamo.report.summary.compiles import RUN_SPANS, module_of, outcome, run_kind
from otel_dynamo.report.summary.function_names import function_label
from otel_dynamo.report.summary.phases import phase_name
from otel_dynamo.report.summary.tree import SpanTree

MAX_TIMELINE_SPANS = 150_000
"""Above this the deepest spans are left out (frames and runs always stay first)."""

KIND_FRAME, KIND_PHASE, KIND_GRAPH, KIND_AOT, KIND_RUN, KIND_OTHER = range(6)
ERROR_FLAG = 8
"""Added to a span's kind when its status is ERROR."""

_KIND_OF_NAME = {
    names.SPAN_FRAME: KIND_FRAME,
    names.SPAN_GRAPH: KIND_GRAPH,
    names.SPAN_AOT_PARTITION: KIND_AOT,
    names.SPAN_AOT_FORWARD: KIND_AOT,
    names.SPAN_AOT_BACKWARD: KIND_AOT,
    names.SPAN_AOT_INFERENCE: KIND_AOT,
}
_NS_PER_US = 1000
_RUN_PRIORITY = 1

_Placed = tuple[Span, int, int, str]
"""A span on the timeline: the span, its row in its lane (-1: the runs row), its priority
(lower stays longer when the limit is reached) and the label of its compile."""


class _Bar(NamedTuple):
    """What the page needs of a placed span, without the span (which may be dropped)."""

    start_ns: int
    duration_ns: int
    row: int
    kind: int
    priority: int
    compile_label: str
    detail: str


_BarFields = tuple[int, int, int, int, int, str, str]
"""A ``_Bar``'s fields as a plain tuple (made faster, where millions are made)."""

Column = Union["array.array[int]", list[int]]
"""A column of bar fields: 64-bit integers in an array (pickled as its bytes, read back
without an object per value), or a list where a value does not fit (hostile times)."""


def _column(values: Iterable[int]) -> Column:
    found = list(values)
    try:
        return array.array("q", found)
    except OverflowError:
        return found


@dataclasses.dataclass
class LaneBars:
    """One process's bars as columns, its labels and details in string tables: a worker
    hands back millions of bars, and columns of small integers pickle many times faster
    than an object per bar. Held by priority (then place), so that cutting the deepest
    is cutting the end; ``index`` keeps each bar's place among the lane's bars."""

    start_ns: Column = dataclasses.field(default_factory=list)
    duration_ns: Column = dataclasses.field(default_factory=list)
    row: Column = dataclasses.field(default_factory=list)
    kind: Column = dataclasses.field(default_factory=list)
    priority: Column = dataclasses.field(default_factory=list)
    label: Column = dataclasses.field(default_factory=list)
    """Index in ``labels`` of the bar's compile label."""
    detail: Column = dataclasses.field(default_factory=list)
    """Index in ``details`` of the bar's detail."""
    index: Column = dataclasses.field(default_factory=list)
    """The bar's place among the lane's bars as placed."""
    labels: list[str] = dataclasses.field(default_factory=list)
    details: list[str] = dataclasses.field(default_factory=list)

    @classmethod
    def of(cls, bars: Iterable[_BarFields]) -> LaneBars:
        placed = list(bars)
        if not placed:
            return cls()
        order = sorted(range(len(placed)), key=[bar[4] for bar in placed].__getitem__)  # stable
        # the bars' fields, column by column, by priority (zip: in C)
        start_ns, duration_ns, row, kind, priority, label_column, detail_column = zip(
            *[placed[place] for place in order], strict=True
        )
        labels, details = _Interned(), _Interned()
        return cls(
            _column(start_ns),
            _column(duration_ns),
            _column(row),
            _column(kind),
            _column(priority),
            _column(map(labels, label_column)),
            _column(map(details, detail_column)),
            _column(order),
            labels.values,
            details.values,
        )

    def __len__(self) -> int:
        return len(self.start_ns)

    def __iter__(self) -> Iterator[_Bar]:
        labels, details = self.labels, self.details
        for start_ns, duration_ns, row, kind, priority, label, detail in zip(
            self.start_ns,
            self.duration_ns,
            self.row,
            self.kind,
            self.priority,
            self.label,
            self.detail,
            strict=True,
        ):
            yield _Bar(start_ns, duration_ns, row, kind, priority, labels[label], details[detail])

    def below(self, cutoff: int) -> LaneBars:
        """The bars of priority under ``cutoff`` (the tables kept whole)."""
        end = bisect.bisect_left(self.priority, cutoff)
        return LaneBars(
            self.start_ns[:end],
            self.duration_ns[:end],
            self.row[:end],
            self.kind[:end],
            self.priority[:end],
            self.label[:end],
            self.detail[:end],
            self.index[:end],
            self.labels,
            self.details,
        )


class _Interned:
    """A string table: each distinct string stored once, referred to by index."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def __call__(self, value: str) -> int:
        return self.index.setdefault(value, len(self.index))

    @property
    def values(self) -> list[str]:
        return list(self.index)


def timeline_data(telemetry: Telemetry) -> dict[str, Any]:
    """Lanes (one per process) of bars: start, duration, row, kind, compile, label."""
    builder = TimelineBuilder()
    builder.add(telemetry)
    return builder.finish()


class TimelineBuilder:
    """The timeline built a few processes at a time: ``add`` the telemetry of whole
    processes (their spans may then be dropped; at most ``MAX_TIMELINE_SPANS`` bars are
    kept), ``finish`` once all were added."""

    def __init__(self) -> None:
        self._bars: dict[tuple[str, ...], LaneBars] = {}
        self._deepest: dict[tuple[str, ...], int] = {}
        """Per lane, the largest priority it holds (-1: none)."""
        self._counts: Counter[int] = Counter()
        """How many bars of each priority are held."""
        self._processes: list[Process] = []
        self._total = 0

    def add(self, telemetry: Telemetry) -> None:
        """Place the spans of every process of ``telemetry``; none added before."""
        self.extend(TimelineBuilder.part(telemetry))

    @staticmethod
    def part(telemetry: Telemetry) -> TimelinePart:
        """The bars of every process of ``telemetry``, not yet added (a worker process
        places them; ``extend`` adds them)."""
        by_process: dict[tuple[str, ...], list[Span]] = defaultdict(list)
        for span in telemetry.spans:
            by_process[span.process.key].append(span)
        lanes = []
        total = 0
        for process in telemetry.processes:
            placed = _placed(by_process[process.key])
            total += len(placed)
            lanes.append((process, LaneBars.of(_bar(entry) for entry in placed)))
        return TimelinePart(lanes=lanes, total=total)

    def extend(self, part: TimelinePart) -> None:
        """Add the bars ``part`` placed; none of its processes added before. Over
        ``MAX_TIMELINE_SPANS`` bars, the deepest go first: every bar of each priority
        from the first that does not fit whole."""
        for process, bars in part.lanes:
            self._bars[process.key] = bars
            self._deepest[process.key] = max(bars.priority, default=-1)
            self._counts.update(bars.priority)
            self._processes.append(process)
        self._total += part.total
        cutoff = _first_not_fitting(self._counts)
        if cutoff is None:
            return
        for key, deepest in self._deepest.items():
            if deepest >= cutoff:  # lanes cut before hold nothing this deep: left as they are
                kept = self._bars[key].below(cutoff)
                self._bars[key] = kept
                self._deepest[key] = max(kept.priority, default=-1)
        for priority in [priority for priority in self._counts if priority >= cutoff]:
            del self._counts[priority]

    def finish(self) -> dict[str, Any]:
        bars = self._bars
        processes = sorted(self._processes, key=lambda process: process.sort_key)
        origin = min((min(each.start_ns) for each in bars.values() if len(each)), default=0)
        ends = (
            max(map(operator.add, each.start_ns, each.duration_ns))
            for each in bars.values()
            if len(each)
        )
        end = max(ends, default=origin)
        labels = process_labels(processes)
        details = _Interned()
        lanes = [_lane(labels[p.key], bars[p.key], origin, details) for p in processes]
        return {
            "origin_unix_nano": origin,
            "length_us": (end - origin) // _NS_PER_US,
            "details": details.values,
            "lanes": [lane for lane in lanes if lane["count"]],
            "shown": sum(len(each) for each in bars.values()),
            "total": self._total,
        }


@dataclasses.dataclass
class TimelinePart:
    """The bars of some processes, placed but not yet added to a timeline (uncut: the
    timeline cuts what it holds as each part is added, as it always has)."""

    lanes: list[tuple[Process, LaneBars]]
    total: int


def _bar(placed: _Placed) -> _BarFields:
    span, row, priority, compile_label = placed
    kind, detail = _kind_and_detail(span)
    duration_ns = max(0, span.end_ns - span.start_ns)  # Span.duration_ns, without its call
    return (span.start_ns, duration_ns, row, kind, priority, compile_label, detail)


def _placed(spans: list[Span]) -> list[_Placed]:
    tree = SpanTree(spans)
    placed: list[_Placed] = []
    for span in spans:
        if span.name == names.SPAN_FRAME:
            label = _compile_label(span)
            placed += [
                (found, row, 0 if depth == 0 else depth + 1, label)
                for found, depth, row in _stacked(tree.walk(span))
            ]
        elif span.name in RUN_SPANS:
            frame = tree.enclosing_frame(span)
            label = _compile_label(frame if frame is not None else span)
            placed.append((span, -1, _RUN_PRIORITY, label))
    return placed


def _stacked(walked: list[tuple[Span, int]]) -> list[tuple[Span, int, int]]:
    """(span, depth, row) for a frame's spans: each below its parent, never over another.

    Siblings that overlap in time (a graph span next to Dynamo's phases) would hide each
    other on one row, so a span goes down until its row is free for its interval.
    """
    rows: dict[str, int] = {}
    taken: dict[int, list[tuple[int, int]]] = defaultdict(list)
    stacked = []
    for span, depth in sorted(walked, key=lambda entry: (entry[1], entry[0].start_ns)):
        row = 0 if depth == 0 else rows.get(span.parent_span_id, depth - 1) + 1
        while _overlaps(taken[row], span.start_ns, span.end_ns):
            row += 1
        rows[span.span_id] = row
        taken[row].append((span.start_ns, span.end_ns))
        stacked.append((span, depth, row))
    return stacked


def _overlaps(intervals: list[tuple[int, int]], start_ns: int, end_ns: int) -> bool:
    """Whether [start_ns, end_ns) overlaps one of ``intervals``."""
    for start, end in intervals:  # noqa: SIM110  # not any(): no generator per bar
        if start < end_ns and start_ns < end:
            return True
    return False


def _first_not_fitting(counts: Counter[int]) -> int | None:
    """The first priority whose bars do not all fit within MAX_TIMELINE_SPANS, lowest
    first; None when every bar fits."""
    if sum(counts.values()) <= MAX_TIMELINE_SPANS:
        return None
    held = 0
    for priority in sorted(counts):
        held += counts[priority]
        if held > MAX_TIMELINE_SPANS:
            return priority
    return None


def _lane(label: str, lane: LaneBars, origin: int, details: _Interned) -> dict[str, Any]:
    # by start, then row; equal bars in the order they were placed (as a stable sort)
    order = sorted(zip(lane.start_ns, lane.row, lane.index, range(len(lane)), strict=True))
    bars = list(lane)
    run_row = 1 + max(lane.row, default=0)
    compiles = _Interned()
    columns: dict[str, list[int]] = {"ds": [], "d": [], "y": [], "k": [], "c": [], "n": []}
    previous = 0
    for _start, _row, _placed_at, held_at in order:
        start_ns, duration_ns, row, kind, _priority, compile_label, detail = bars[held_at]
        start_us = (start_ns - origin) // _NS_PER_US
        columns["ds"].append(start_us - previous)
        previous = start_us
        columns["d"].append(duration_ns // _NS_PER_US)
        columns["y"].append(run_row if row < 0 else row)
        columns["k"].append(kind)
        columns["c"].append(compiles(compile_label))
        columns["n"].append(details(detail))
    return {
        "name": label,
        "rows": run_row + 1,
        "run_row": run_row,
        "count": len(lane),
        "compiles": compiles.values,
        **columns,
    }


def _kind_and_detail(span: Span) -> tuple[int, str]:
    """The bar's kind (``ERROR_FLAG`` added for a failed span), and what it is in a few
    words (the tooltip adds the compile and the time)."""
    name = span.name
    error = ERROR_FLAG if span.is_error else 0
    if name == names.SPAN_FRAME:
        return KIND_FRAME + error, f"frame compile, {outcome(span)}"
    if name in RUN_SPANS:
        return KIND_RUN + error, f"run {run_kind(span)}"
    phase = phase_name(span) if name.startswith(names.SPAN_PHASE) else None
    if phase is not None:
        return KIND_PHASE + error, phase
    if name == names.SPAN_GRAPH:
        backend = text(span.attributes.get(names.ATTR_BACKEND))
        return KIND_GRAPH + error, f"graph ({backend})" if backend else "graph"
    return _KIND_OF_NAME.get(name, KIND_OTHER) + error, name


def _compile_label(span: Span) -> str:
    """ "0/0 TinyLM.forward": the compile id and the function as every table names it."""
    compile_id = text(span.attributes.get(names.ATTR_COMPILE_ID)) or ""
    function = text(span.attributes.get(names.ATTR_CODE_FUNCTION))
    if not function:
        return compile_id
    return f"{compile_id} {function_label(function, module_of(span))}"
