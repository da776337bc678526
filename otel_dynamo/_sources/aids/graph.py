"""What every debugging aid is, and what it knows of the graph it aids."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from opentelemetry.trace import Span
from opentelemetry.util.types import AttributeValue

from otel_dynamo._config.settings import Settings
from otel_dynamo._recording.recorder import Recorder
from otel_dynamo._recording.run_state import RunState

if TYPE_CHECKING:
    from torch.fx import GraphModule

A = TypeVar("A")
INSTRUMENTATION_ERROR = "instrumentation error"
"""What an aid's own failure is logged as (once; the job goes on without that piece)."""


@dataclasses.dataclass(frozen=True)
class AidedGraph:
    """Which graph an aid aids, and where it is recorded: kept as long as the aid."""

    recorder: Recorder
    compile_id: str
    backend: str
    graph_index: int


@dataclasses.dataclass(frozen=True)
class Compiling:
    """What the traced backend was handed for the graph, and its graph span: for the
    compile only, never kept by an aid (its inputs would live as long as the compiled
    graph)."""

    gm: GraphModule
    """The graph the inner backend compiles (an aid may rewrite it before it does)."""
    example_inputs: Sequence[Any]
    span: Span
    attributes: Mapping[str, AttributeValue]
    """The graph span's attributes (fault events take their fields from them)."""


class GraphAid(Protocol):
    """One debugging aid on one graph."""

    @property
    def records_first_run(self) -> bool:
        """The aid acts on the first run: record it whatever the run-span policy."""
        ...

    def before_compile(self, compiling: Compiling) -> None:
        """Act just before the inner backend compiles; what it raises is the compile's."""
        ...

    def compile_failed(self, compiling: Compiling) -> None:
        """The compile (the inner backend, or an aid before it) raised; never raises."""
        ...

    def wrap_compiled(self, compiled: Callable[..., Any], state: RunState) -> Callable[..., Any]:
        """``compiled``, or a callable that runs it with this aid's work around it."""
        ...


class AidKind(Protocol):
    """A kind of aid (its class): whether it needs the graph as Dynamo made it, and how
    it is built for one graph, given that copy and the aids built before it."""

    def wants_original(self, settings: Settings) -> bool: ...

    def __call__(
        self,
        graph: AidedGraph,
        compiling: Compiling,
        original: GraphModule | None,
        earlier: Sequence[GraphAid],
    ) -> GraphAid: ...


def earlier_aid(earlier: Sequence[GraphAid], kind: type[A]) -> A | None:
    """The aid of ``kind`` among those built before, if there is one."""
    return next((aid for aid in earlier if isinstance(aid, kind)), None)
