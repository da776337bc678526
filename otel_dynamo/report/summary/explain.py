"""``torch._dynamo.explain``'s summary, rebuilt from recorded telemetry.

``explain`` resets Dynamo before and after it runs the function once under its own
backend; this reads what otel_dynamo already recorded (files, or finished spans in
memory), so nothing is reset and nothing is run again. Its definitions are explain's:

* ``graph_count``: graphs handed to the backend;
* ``op_count`` and ``ops_per_graph``: ``call_function`` nodes only;
* ``break_reasons``: reason and user stack (``file:line in function``) of each break.

Where explain undercounts, this does not: its ``graph_break_count`` is ``graph_count - 1``
and its ``break_reasons`` come from graphs that ended in a break, so a break with no
graph before it is missing and a frame Dynamo skipped yields ``-1``. Here every break
Dynamo reported is counted and listed, and skipped frames are named.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator
from typing import Any, TypeAlias

from otel_dynamo import names
from otel_dynamo.report.read.files import load_telemetry
from otel_dynamo.report.read.model import Span, Telemetry
from otel_dynamo.report.read.sdk import spans_from_sdk
from otel_dynamo.report.read.values import integer, seconds, strings, text
from otel_dynamo.report.summary import compiles as _compiles
from otel_dynamo.report.summary.phases import phase_name
from otel_dynamo.report.summary.schema import Location
from otel_dynamo.report.summary.tree import SpanTree

ExplainSource: TypeAlias = str | os.PathLike[str] | Telemetry | Iterable[Any]
"""A telemetry file or directory, loaded telemetry, or an iterable of paths or SDK spans."""

NO_REASON = _compiles.NO_REASON
LAZY_BACKWARD_PHASE = "entire_backward_compile"
"""Dynamo's phase name for a backward compiled at its first run."""
_LEFT_OUT = "…"  # a capped list's last item ("… 3 more"): not an op


@dataclasses.dataclass(frozen=True)
class BreakReason:
    """One graph break: why, where (innermost frame last), and in which frame compile."""

    reason: str
    user_stack: tuple[str, ...]
    kind: str | None = None
    compile_id: str | None = None


@dataclasses.dataclass(frozen=True)
class ExplainSummary:
    """What ``torch._dynamo.explain`` reports, from recorded telemetry (see the module doc).

    ``ops_per_graph`` lists each graph's call_function targets, most frequent first
    (explain lists them in node order); a graph with more distinct targets than
    ``OTEL_DYNAMO_MAX_LIST_LENGTH`` lists only those recorded, while ``op_count`` stays
    exact. ``op_count`` is None when a graph was recorded without its call_function count
    (telemetry from an otel_dynamo older than this summary). ``compile_times`` holds, per
    Dynamo phase, the seconds of each time it ran, in the order phases first appeared.
    """

    graph_count: int
    graph_break_count: int
    break_reasons: tuple[BreakReason, ...]
    op_count: int | None
    ops_per_graph: tuple[tuple[str, ...], ...]
    guard_count: int
    compile_times: tuple[tuple[str, tuple[float, ...]], ...]
    frame_count: int
    skipped_frames: tuple[str, ...]
    recompile_reasons: tuple[str, ...]
    problems: tuple[str, ...] = ()

    def __str__(self) -> str:
        return "".join(line + "\n" for line in self._lines())

    def _lines(self) -> Iterator[str]:
        yield f"Graph Count: {self.graph_count}"
        yield f"Graph Break Count: {self.graph_break_count}"
        yield f"Op Count: {'unknown' if self.op_count is None else self.op_count}"
        yield "Break Reasons:"
        for index, brk in enumerate(self.break_reasons, start=1):
            yield f"  Break Reason {index}:"
            yield f"    Reason: {brk.reason}"
            yield "    User Stack:"
            yield from (f"      {frame}" for frame in brk.user_stack)
        yield "Ops per Graph:"
        for index, ops in enumerate(self.ops_per_graph, start=1):
            yield f"  Ops {index}:"
            yield from (f"    {op}" for op in ops)
        yield f"Guard Count: {self.guard_count}"
        yield "Compile Times (s):"
        for phase, times in self.compile_times:
            yield f"  {phase}: {', '.join(f'{value:.4f}' for value in times)}"
        yield f"Frame Compiles: {self.frame_count}"
        yield from _listed("Skipped Frames", self.skipped_frames)
        yield from _listed("Recompile Reasons", self.recompile_reasons)
        yield from _listed("Problems", self.problems)


def _listed(title: str, items: tuple[str, ...]) -> Iterator[str]:
    if items:
        yield f"{title}:"
        yield from (f"  {item}" for item in items)


def explain(source: ExplainSource) -> ExplainSummary:
    """The explain summary of ``source``: telemetry paths, loaded telemetry, or SDK spans.

    Give it one process's telemetry (it adds up everything it is given). Paths from which
    nothing could be read raise ValueError naming each problem; an item that is neither
    a path nor a finished span raises TypeError.
    """
    telemetry = _as_telemetry(source)
    spans = sorted(telemetry.spans, key=lambda span: span.start_ns)
    tree = SpanTree(spans)
    frames = sorted(
        (span for span in spans if span.name == names.SPAN_FRAME),
        key=lambda span: (span.start_ns, _compiles.compile_id_sort_key(_compile_id(span))),
    )
    rows = [_compiles.compile_row(frame, tree) for frame in frames]
    graphs = [
        span for span in spans if span.name == names.SPAN_GRAPH and not _compiles.is_discarded(span)
    ]
    breaks = tuple(brk for frame in frames for brk in _break_reasons(frame))
    return ExplainSummary(
        graph_count=len(graphs),
        graph_break_count=sum(row["graph_breaks"] for row in rows),
        break_reasons=breaks,
        op_count=_op_count(graphs),
        ops_per_graph=tuple(_ops(graph) for graph in graphs),
        guard_count=sum(row["guards"] or 0 for row in rows),
        compile_times=_compile_times(spans),
        frame_count=len(rows),
        skipped_frames=tuple(
            _where(row) for row in rows if row["outcome"] == names.OUTCOME_SKIPPED
        ),
        recompile_reasons=tuple(
            row["recompile_reason"] or NO_REASON for row in rows if row["is_recompile"]
        ),
        problems=tuple(str(problem) for problem in telemetry.problems),
    )


def _as_telemetry(source: ExplainSource) -> Telemetry:
    if isinstance(source, Telemetry):
        return source
    if isinstance(source, (str, os.PathLike)):
        source = [source]
    items = list(source)
    if not items or not all(isinstance(item, (str, os.PathLike)) for item in items):
        return Telemetry(spans=spans_from_sdk(items))
    telemetry = load_telemetry(items)
    if telemetry.records == 0:
        found = "; ".join(str(problem) for problem in telemetry.problems)
        raise ValueError(f"no telemetry could be read from {', '.join(map(str, items))}: {found}")
    return telemetry


def _compile_id(span: Span) -> str | None:
    return text(span.attributes.get(names.ATTR_COMPILE_ID))


def _break_reasons(frame: Span) -> Iterator[BreakReason]:
    for seen in _compiles.graph_breaks(frame):
        yield BreakReason(
            reason=seen.reason,
            user_stack=seen.user_stack,
            kind=seen.kind,
            compile_id=_compile_id(frame),
        )


def _op_count(graphs: list[Span]) -> int | None:
    counts = [
        integer(graph.attributes.get(names.ATTR_GRAPH_CALL_FUNCTION_COUNT)) for graph in graphs
    ]
    if any(count is None for count in counts):
        return None
    return sum(count for count in counts if count is not None)


def _ops(graph: Span) -> tuple[str, ...]:
    """The graph's call_function targets, each repeated as often as it was called."""
    ops: list[str] = []
    for item in strings(graph.attributes.get(names.ATTR_GRAPH_CALL_FUNCTION_OPS)):
        target, _, count = item.rpartition("=")
        if target and not item.startswith(_LEFT_OUT) and count.isdigit():
            ops += [target] * int(count)
    return tuple(ops)


def _compile_times(spans: list[Span]) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """Seconds per Dynamo phase; a lazy backward compile under Dynamo's name for it."""
    times: dict[str, list[float]] = {}
    for span in spans:
        name = LAZY_BACKWARD_PHASE if span.name == names.SPAN_LAZY_BACKWARD else phase_name(span)
        if name is not None:
            times.setdefault(name, []).append(seconds(span.duration_ns))
    return tuple((name, tuple(values)) for name, values in times.items())


def _where(row: Location) -> str:
    return f"{row['function']} ({row['file']}:{row['line']})"
