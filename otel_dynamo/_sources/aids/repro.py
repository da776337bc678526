"""The repro script aid: a script for each failure of a graph that the settings ask for
(compile, first failing run, failed accuracy check), written with ``_sources/repro.py``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from opentelemetry.trace import Span

from otel_dynamo import names
from otel_dynamo._config.fault_spec import (
    KIND_ACCURACY,
    KIND_COMPILE,
    KIND_NON_LEAF_COMPILE,
    KIND_RUNTIME,
    FaultSpec,
)
from otel_dynamo._config.settings import REPRO_CHOICES, Settings
from otel_dynamo._recording.boundary import safely
from otel_dynamo._recording.run_state import RunState
from otel_dynamo._sources import faults, repro
from otel_dynamo._sources.aids.faults import FaultInjection
from otel_dynamo._sources.aids.graph import (
    INSTRUMENTATION_ERROR,
    AidedGraph,
    Compiling,
    GraphAid,
    earlier_aid,
)

if TYPE_CHECKING:
    from torch.fx import GraphModule

STAGE_COMPILE, STAGE_RUN, STAGE_ACCURACY = REPRO_CHOICES
"""The failures a script is written for (``OTEL_DYNAMO_REPRO_ON`` picks among them)."""

REPRO_FAULT_KINDS = {
    STAGE_COMPILE: (KIND_COMPILE, KIND_NON_LEAF_COMPILE),
    STAGE_RUN: (KIND_RUNTIME,),
    STAGE_ACCURACY: (KIND_ACCURACY,),
}
"""Which injected faults a repro script of a failure at each stage re-injects."""


class ReproScripts:
    """Repro scripts of one graph's failures, from the graph as Dynamo made it."""

    def __init__(
        self,
        graph: AidedGraph,
        compiling: Compiling,
        original: GraphModule | None,
        earlier: Sequence[GraphAid],
    ) -> None:
        self.graph = graph
        self.original = original
        injection = earlier_aid(earlier, FaultInjection)
        self.injected: tuple[FaultSpec, ...] = injection.fired if injection else ()

    @staticmethod
    def wants_original(settings: Settings) -> bool:
        return bool(settings.repro_dir)

    @property
    def records_first_run(self) -> bool:
        return False

    def before_compile(self, compiling: Compiling) -> None:
        pass

    def compile_failed(self, compiling: Compiling) -> None:
        self.write(STAGE_COMPILE, compiling.example_inputs, compiling.span)

    def wrap_compiled(self, compiled: Callable[..., Any], state: RunState) -> Callable[..., Any]:
        """``compiled``, writing a repro script for its first failing run."""
        if self.original is None or not self.graph.recorder.settings.repro_dir:
            return compiled
        written = False

        def run(*args: Any, **kwargs: Any) -> Any:
            nonlocal written
            try:
                return compiled(*args, **kwargs)
            except Exception:
                if not written:
                    written = True
                    self.write(STAGE_RUN, args, state.current_span)
                raise

        return faults.like(run, compiled)

    def write(
        self, stage: str, args: Any, span: Span | None, *, check_accuracy: bool = False
    ) -> None:
        """A repro script for a failure at ``stage``, if configured; its path on ``span``.
        Never raises."""
        settings = self.graph.recorder.settings
        if not settings.repro_dir or stage not in settings.repro_on or self.original is None:
            return
        safely(INSTRUMENTATION_ERROR, lambda: self._write(stage, args, span, check_accuracy))

    def _write(self, stage: str, args: Any, span: Span | None, check_accuracy: bool) -> None:
        graph = self.graph
        reinjected = [fault for fault in self.injected if fault.kind in REPRO_FAULT_KINDS[stage]]
        text = repro.repro_text(
            self.original,
            args,
            backend=graph.backend,
            faults=reinjected,
            check_accuracy=check_accuracy,
        )
        stem = repro.stem(stage, graph.compile_id, graph.graph_index)
        path = repro.write_script(str(graph.recorder.settings.repro_dir), stem, text)
        if span is not None:
            span.set_attribute(names.ATTR_REPRO_PATH, path)
        fields = {
            names.ATTR_REPRO_PATH: path,
            names.ATTR_STAGE: stage,
            names.ATTR_COMPILE_ID: graph.compile_id,
            names.ATTR_BACKEND: graph.backend,
            names.ATTR_GRAPH_INDEX: graph.graph_index,
        }
        graph.recorder.log_events.repro_written(span, **fields)
