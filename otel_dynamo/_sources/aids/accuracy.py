"""The accuracy check aid: the first run of a graph compared with the graph as Dynamo
made it (the comparison, torch's own, is in ``_sources/accuracy.py``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from otel_dynamo._config.settings import ACCURACY_BACKWARD, ACCURACY_OFF, Settings
from otel_dynamo._recording.run_state import RunState
from otel_dynamo._sources import accuracy
from otel_dynamo._sources.aids.graph import AidedGraph, Compiling, GraphAid, earlier_aid
from otel_dynamo._sources.aids.repro import STAGE_ACCURACY, ReproScripts

if TYPE_CHECKING:
    from torch.fx import GraphModule


class AccuracyCheck:
    """The check of one graph's first run; a failed one gets an ``accuracy`` repro script."""

    def __init__(
        self,
        graph: AidedGraph,
        compiling: Compiling,
        original: GraphModule | None,
        earlier: Sequence[GraphAid],
    ) -> None:
        self.graph = graph
        self.original = original
        """The graph as Dynamo made it: the reference (None: no check)."""
        self.mode = graph.recorder.settings.accuracy
        self.repro = earlier_aid(earlier, ReproScripts)

    @staticmethod
    def wants_original(settings: Settings) -> bool:
        return settings.accuracy != ACCURACY_OFF

    @property
    def records_first_run(self) -> bool:
        return self.original is not None and self.mode != ACCURACY_OFF

    def before_compile(self, compiling: Compiling) -> None:
        pass

    def compile_failed(self, compiling: Compiling) -> None:
        pass

    def wrap_compiled(self, compiled: Callable[..., Any], state: RunState) -> Callable[..., Any]:
        if self.original is None or self.mode == ACCURACY_OFF:
            return compiled
        repro = self.repro

        def on_failure(inputs: list[Any], _verdict: accuracy.Verdict) -> None:
            if repro is not None:
                repro.write(STAGE_ACCURACY, inputs, state.current_span, check_accuracy=True)

        return accuracy.checked_first_run(
            compiled,
            self.original,
            state,
            self.graph.recorder,
            backward=self.mode == ACCURACY_BACKWARD,
            on_failure=on_failure,
        )
