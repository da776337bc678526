"""The fault injection aid: the configured faults due on a graph, injected and recorded
(the faults themselves, as torch's fault backends, are in ``_sources/faults.py``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from otel_dynamo._config.fault_spec import KIND_RUNTIME, FaultSpec
from otel_dynamo._config.settings import Settings
from otel_dynamo._recording.boundary import safely
from otel_dynamo._recording.run_state import RunState
from otel_dynamo._sources import faults
from otel_dynamo._sources.aids.graph import INSTRUMENTATION_ERROR, AidedGraph, Compiling, GraphAid

if TYPE_CHECKING:
    from torch.fx import GraphModule


class FaultInjection:
    """The faults due on one graph: recorded and raised (or rewritten into the graph)
    before it compiles, raised around its runs for ``runtime`` ones."""

    def __init__(
        self,
        graph: AidedGraph,
        compiling: Compiling,
        original: GraphModule | None,
        earlier: Sequence[GraphAid],
    ) -> None:
        self.graph = graph
        self.fired: tuple[FaultSpec, ...] = ()
        """The faults due on this graph, those raising at compile time last."""
        if graph.recorder.settings.fault:
            due = functools.partial(self._due, compiling)
            self.fired = tuple(safely(INSTRUMENTATION_ERROR, due) or ())

    @staticmethod
    def wants_original(settings: Settings) -> bool:
        return False

    @property
    def records_first_run(self) -> bool:
        return any(fault.kind == KIND_RUNTIME for fault in self.fired)

    def _due(self, compiling: Compiling) -> list[FaultSpec]:
        graph = self.graph
        return faults.due(
            graph.recorder.settings.fault,
            compiling.gm,
            compiling.example_inputs,
            compile_id=graph.compile_id,
            graph_index=graph.graph_index,
        )

    def before_compile(self, compiling: Compiling) -> None:
        for fault in self.fired:
            if fault.kind != KIND_RUNTIME:
                fields = dict(compiling.attributes)
                faults.record(self.graph.recorder, fault, compiling.span, fields)
        faults.inject_at_compile(self.fired, compiling.gm, compiling.example_inputs)

    def compile_failed(self, compiling: Compiling) -> None:
        pass

    def wrap_compiled(self, compiled: Callable[..., Any], state: RunState) -> Callable[..., Any]:
        for fault in self.fired:
            if fault.kind == KIND_RUNTIME:
                compiled = faults.runtime_faulty(compiled, fault, state, self.graph.recorder)
        return compiled
