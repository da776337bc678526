"""One typed record per thing torch compiled or ran, as the recorder knows it at its end.

Spans, metrics and log events are each written from these records by their own writer:
span attributes by ``frame_span`` and the records' ``attributes``/``fields`` methods,
metrics by ``metrics``, log events by ``log_events``. No writer reads a fact back out of
what another one wrote.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from opentelemetry.trace import Span
from opentelemetry.util.types import AttributeValue

from otel_dynamo import names
from otel_dynamo._recording.frame_state import FrameState
from otel_dynamo._recording.stream_events import FrameEnded, GraphBreakReported


@dataclasses.dataclass(frozen=True)
class GraphIdentity:
    """Which graph a compile step, a run or a failure belongs to: what its log events
    name it by (``names.ATTR_COMPILE_ID`` and the others, where known)."""

    compile_id: str
    backend: str | None = None
    graph_index: int | None = None
    op_count: int | None = None
    node_count: int | None = None

    def fields(self) -> dict[str, AttributeValue]:
        """As log event fields (and span attributes): the ones known, in this order."""
        found = {
            names.ATTR_COMPILE_ID: self.compile_id,
            names.ATTR_BACKEND: self.backend,
            names.ATTR_GRAPH_INDEX: self.graph_index,
            names.ATTR_GRAPH_OP_COUNT: self.op_count,
            names.ATTR_GRAPH_NODE_COUNT: self.node_count,
        }
        return {key: value for key, value in found.items() if value is not None}


@dataclasses.dataclass(frozen=True)
class RunIdentity:
    """Which compiled program a run executes: a traced backend's graph (``graph``) or an
    exported program (``module_class``), the kind of run (forward, backward, inference,
    export), and AOT Autograd's name for the graph where it gave one."""

    kind: str
    graph: GraphIdentity | None = None
    graph_name: str | None = None
    module_class: str | None = None
    """The exported module's class, for a run of a ``torch.export`` program."""

    @property
    def compile_id(self) -> str:
        return "" if self.graph is None else self.graph.compile_id

    @property
    def backend(self) -> str | None:
        return None if self.graph is None else self.graph.backend

    def attributes(self) -> dict[str, AttributeValue]:
        """A run span's attributes (before its index)."""
        found: dict[str, AttributeValue] = {}
        if self.graph is not None:
            found[names.ATTR_COMPILE_ID] = self.graph.compile_id
            found[names.ATTR_BACKEND] = self.graph.backend
        found[names.ATTR_RUN_KIND] = self.kind
        if self.graph_name:
            found[names.ATTR_AOT_GRAPH_NAME] = self.graph_name
        if self.module_class:
            found[names.ATTR_EXPORT_MODULE_CLASS] = self.module_class
        return found


@dataclasses.dataclass(frozen=True)
class FrameCompiled:
    """A frame compile that ended: Dynamo's report of it (``ended``), what was seen
    while it ran (taken from its ``FrameState`` when it ended), and what the recorder made
    of them."""

    compile_id: str
    span: Span | None
    ended: FrameEnded
    outcome: str
    backend: str | None
    """The backends that compiled its graphs (comma-separated), else the recorder's."""
    graphs_backend: bool
    """Whether ``backend`` names the backends that compiled its graphs (not the
    recorder's own)."""
    duration_s: float
    time_split: Mapping[str, float]
    """Seconds per compile-time category (``phase_split``)."""
    recompile_reason: str | None
    """The failed guard that made this a recompile, within the text limit."""
    graph_count: int = 0
    discarded_graph_count: int = 0
    breaks: tuple[GraphBreakReported, ...] = ()
    guards: tuple[str, ...] = ()
    arguments: tuple[str, ...] = ()
    """The compiled function's arguments, where torch named them."""
    cache_counts: Mapping[str, int] = dataclasses.field(default_factory=dict)
    """Cache lookups seen while it compiled, as span attributes (``FrameState.cache_counts``)."""

    @classmethod
    def of(
        cls,
        frame: FrameState,
        ended: FrameEnded,
        *,
        outcome: str,
        backend: str | None,
        duration_s: float,
        time_split: Mapping[str, float],
        recompile_reason: str | None,
    ) -> FrameCompiled:
        """The record of ``frame`` as it ended (copied: the state is not kept)."""
        return cls(
            compile_id=frame.compile_id,
            span=frame.span,
            ended=ended,
            outcome=outcome,
            backend=backend,
            graphs_backend=bool(frame.backends),
            duration_s=duration_s,
            time_split=time_split,
            recompile_reason=recompile_reason,
            graph_count=frame.graph_count,
            discarded_graph_count=frame.discarded_graph_count,
            breaks=tuple(frame.breaks),
            guards=frame.guards,
            arguments=frame.code.arguments if frame.code is not None else (),
            cache_counts=frame.cache_counts(),
        )

    def code_fields(self) -> dict[str, AttributeValue]:
        """``code.function``, ``code.file``, ``code.line``: those torch gave."""
        found = {
            names.ATTR_CODE_FUNCTION: self.ended.function,
            names.ATTR_CODE_FILE: self.ended.file,
            names.ATTR_CODE_LINE: self.ended.line,
        }
        return {key: value for key, value in found.items() if value is not None}


@dataclasses.dataclass(frozen=True)
class LazyBackwardCompiled:
    """A backward compiled lazily (at the first ``.backward()``) that ended."""

    compile_id: str
    backend: str | None
    duration_s: float
    time_split: Mapping[str, float]
    span: Span


@dataclasses.dataclass(frozen=True)
class Failure:
    """A compile step or a run that raised (the exception is re-raised unchanged)."""

    stage: str
    """``compile`` or ``run``."""
    error_type: str
    exception: BaseException
    graph: GraphIdentity | None
    run_kind: str | None = None


@dataclasses.dataclass(frozen=True)
class ExportEnded:
    """A ``torch.export`` call (``export`` or ``run_decompositions``) that ended."""

    operation: str
    """``names.EXPORT_OPERATION_*``."""
    outcome: str
    duration_s: float
    description: Mapping[str, AttributeValue]
    """Its span's attributes: what the call was asked (module, strictness, dynamic
    shapes, decomposition table) and what it made (the program's ops) or why it failed. A
    program's description is a varying set of op counts, hence a mapping."""
    span: Span
    error: BaseException | None = None
