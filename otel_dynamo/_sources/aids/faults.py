"""Fault injection: which configured faults fire on a graph, how, and how they are recorded.

Each kind behaves as torch's fault backend of the same name
(``torch/_dynamo/backends/debugging.py``) and raises the same exception, generalised to
any target op and restricted by compile id, graph index and a seeded probability:

- ``compile``: the backend raises ``ReluCompileError`` (Dynamo wraps it in
  ``BackendCompilerFailed``, as for torch's backend);
- ``non_leaf_compile``: ``TestingOnlyCompileError`` when an input is not a leaf;
- ``accuracy``: each target op becomes ``torch.add(x, 1)`` in the graph handed on;
- ``runtime``: every run raises ``AssertionError("ReluRuntimeError")`` through
  ``torch._assert``. torch's backend puts that assert in the graph, which only works for
  a backend that runs the graph as is; raised around the compiled callable it fails the
  same way on every backend (AOT and inductor would trip over it while tracing).

The aid, :class:`FaultInjection`, finds the faults due on one graph, records and
injects them before it compiles and raises ``runtime`` ones around its runs.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from opentelemetry.trace import Span
from opentelemetry.util.types import AttributeValue

from otel_dynamo import names
from otel_dynamo._config import fault_spec as spec_module
from otel_dynamo._config.fault_spec import KIND_RUNTIME, FaultSpec
from otel_dynamo._config.settings import Settings
from otel_dynamo._recording.boundary import end_span, guarded
from otel_dynamo._recording.recorder import Recorder
from otel_dynamo._recording.run_state import RunState
from otel_dynamo._sources.aids.graph import INSTRUMENTATION_ERROR, AidedGraph, Compiling, GraphAid

if TYPE_CHECKING:
    from torch.fx import GraphModule


_log = logging.getLogger(__name__)
RUNTIME_MESSAGE = "ReluRuntimeError"
"""The message of torch's runtime fault, kept for every target."""
RAISING_AT_COMPILE = (spec_module.KIND_COMPILE, spec_module.KIND_NON_LEAF_COMPILE)

_warned: set[str] = set()
_warned_lock = threading.Lock()


def warn_active(faults: Sequence[FaultSpec]) -> None:
    """Say once per process and spec that faults are on: they break the job on purpose."""
    if not faults:
        return
    text = ";".join(fault.text() for fault in faults)
    with _warned_lock:
        first = text not in _warned
        _warned.add(text)
    if first:
        _log.warning("otel_dynamo: fault injection is ON (OTEL_DYNAMO_FAULT=%r)", text)


# --- which nodes a target names -------------------------------------------------------


def node_matches(node: Any, target: str) -> bool:
    """Does this FX node call ``target`` (a bare op name, a dotted torch name, aten.*)?"""
    if node.op not in ("call_function", "call_method"):
        return False
    if target == spec_module.ANY_OP:
        return True
    if node.op == "call_method":
        return node.target == target.rsplit(".", 1)[-1] and "." not in target
    if "." not in target:
        return _op_name(node.target) == target
    if target.startswith("aten."):
        return _aten_name(node.target) in (target, target + ".default")
    return node.target is _resolve(target)


def _op_name(fn: Any) -> str | None:
    schema_name = getattr(fn, "_opname", None)  # aten OpOverload / OpOverloadPacket
    return schema_name or getattr(fn, "__name__", None)


def _aten_name(fn: Any) -> str | None:
    import torch

    if isinstance(fn, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return str(fn)
    return None


def _resolve(dotted: str) -> Any:
    import importlib

    module_name, _, attribute = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError):
        parent = _resolve(module_name) if "." in module_name else None
        return getattr(parent, attribute, None) if parent is not None else None


def matching_nodes(gm: Any, target: str) -> list[Any]:
    return [node for node in gm.graph.nodes if node_matches(node, target)]


# --- which faults fire -----------------------------------------------------------------


def due(
    faults: Iterable[FaultSpec],
    gm: Any,
    example_inputs: Sequence[Any],
    *,
    compile_id: str,
    graph_index: int,
) -> list[FaultSpec]:
    """The faults that fire on this graph, those raising at compile time last."""
    fired = [
        fault
        for fault in faults
        if fault.applies_to(compile_id, graph_index) and _fires(fault, gm, example_inputs)
    ]
    return sorted(fired, key=lambda fault: fault.kind in RAISING_AT_COMPILE)


def _fires(fault: FaultSpec, gm: Any, example_inputs: Sequence[Any]) -> bool:
    if not matching_nodes(gm, fault.target):
        return False
    if fault.kind == spec_module.KIND_NON_LEAF_COMPILE:
        return any(not getattr(value, "is_leaf", True) for value in example_inputs)
    return True


# --- recording -------------------------------------------------------------------------


EVENT_FIELDS = (
    names.ATTR_COMPILE_ID,
    names.ATTR_BACKEND,
    names.ATTR_GRAPH_INDEX,
    names.ATTR_RUN_KIND,
    names.ATTR_RUN_INDEX,
)


def record(
    recorder: Recorder, fault: FaultSpec, span: Span | None, fields: dict[str, AttributeValue]
) -> None:
    """Fault attributes on the span, a log event and the counter; never raises."""
    fields = {key: fields[key] for key in EVENT_FIELDS if key in fields}
    try:
        if span is not None:
            span.set_attribute(names.ATTR_FAULT_KIND, fault.kind)
            span.set_attribute(names.ATTR_FAULT_TARGET, fault.target)
        recorder.metrics.fault(fault.kind)
        recorder.log_events.fault_injected(fault.kind, fault.target, span, fields)
    except Exception:
        _log.warning("otel_dynamo: could not record an injected fault", exc_info=True)


# --- injection -------------------------------------------------------------------------


def inject_at_compile(fired: Sequence[FaultSpec], gm: Any, example_inputs: Sequence[Any]) -> None:
    """Rewrite the graph for accuracy faults; raise torch's exception for compile faults."""
    from torch._dynamo.backends import debugging

    for fault in fired:
        if fault.kind == spec_module.KIND_ACCURACY:
            _add_one_instead(gm, fault.target)
        elif fault.kind == spec_module.KIND_COMPILE:
            raise debugging.ReluCompileError
        elif fault.kind == spec_module.KIND_NON_LEAF_COMPILE:
            raise debugging.TestingOnlyCompileError


def _add_one_instead(gm: Any, target: str) -> None:
    """As torch's relu_accuracy_error backend: each target call becomes ``add(x, 1)``."""
    import torch

    for node in matching_nodes(gm, target):
        aten = _aten_name(node.target) is not None
        node.op = "call_function"
        node.target = torch.ops.aten.add.Tensor if aten else torch.add
        node.args = (node.args[0], 1)
        node.kwargs = {}
    gm.recompile()


def raise_runtime_fault() -> None:
    """Exactly what torch's relu_runtime_error graph raises when run."""
    import torch

    torch._assert(False, RUNTIME_MESSAGE)  # type: ignore[no-untyped-call]  # untyped in torch


def runtime_faulty(
    compiled: Callable[..., Any], fault: FaultSpec, state: RunState, recorder: Recorder
) -> Callable[..., Any]:
    """A callable that raises the runtime fault on every run, recording where it fires."""

    def run(*args: Any, **kwargs: Any) -> Any:
        fire_runtime(fault, state, recorder)
        return compiled(*args, **kwargs)  # not reached: the fault raises

    return like(run, compiled)


def fire_runtime(fault: FaultSpec, state: RunState, recorder: Recorder) -> None:
    """Raise the runtime fault on this run's span; a run the policy skips gets one anyway."""
    fields = {**state.identity.attributes(), names.ATTR_RUN_INDEX: state.count}
    if state.current_span is not None:  # the recorder records this run: it marks the failure
        record(recorder, fault, state.current_span, fields)
        raise_runtime_fault()
    span = recorder.start_run_span(state)
    try:
        record(recorder, fault, span, fields)
        raise_runtime_fault()
    except AssertionError as exc:
        recorder.mark_failed(span, exc, stage="run", run=state.identity)
        raise
    finally:
        end_span(span)


def like(run: Callable[..., Any], compiled: Callable[..., Any]) -> Callable[..., Any]:
    """Keep the calling-convention flag and name of the callable we stand in for."""
    if hasattr(compiled, "_boxed_call"):
        run._boxed_call = compiled._boxed_call  # type: ignore[attr-defined]  # AOT's convention flag
    name = getattr(compiled, "__name__", None)
    if isinstance(name, str):
        run.__name__ = run.__qualname__ = name
    return run


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
            with guarded(INSTRUMENTATION_ERROR):
                self.fired = tuple(self._due(compiling))

    @staticmethod
    def wants_original(settings: Settings) -> bool:
        return False

    @property
    def records_first_run(self) -> bool:
        return any(fault.kind == KIND_RUNTIME for fault in self.fired)

    def _due(self, compiling: Compiling) -> list[FaultSpec]:
        graph = self.graph
        return due(
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
                record(self.graph.recorder, fault, compiling.span, fields)
        inject_at_compile(self.fired, compiling.gm, compiling.example_inputs)

    def compile_failed(self, compiling: Compiling) -> None:
        pass

    def wrap_compiled(self, compiled: Callable[..., Any], state: RunState) -> Callable[..., Any]:
        for fault in self.fired:
            if fault.kind == KIND_RUNTIME:
                compiled = runtime_faulty(compiled, fault, state, self.graph.recorder)
        return compiled
