"""Source: AOT Autograd's partitioner and inner compilers, for any AOT-based backend.

Every AOT backend (aot_eager*, inductor, user ``aot_autograd(...)`` backends) reaches
``aot_module_simplified`` through ``torch._dynamo.backends.common``, after
``AotAutograd.__call__`` has settled its defaults. We swap that one name for a function
that, while a traced graph compile is in progress, wraps the partitioner and the
forward, backward and inference compilers; untraced compiles pass through untouched.

Compiled backwards are counted where AOT hands them to its autograd function,
``AOTDispatchAutograd.post_compile``: on an AOT Autograd cache hit no compiler runs,
so only that point sees the backward loaded from the cache.
"""

from __future__ import annotations

import contextvars
import dataclasses
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from opentelemetry.util.types import AttributeValue

from otel_dynamo import names
from otel_dynamo._recording.boundary import guarded
from otel_dynamo._recording.pass_through import passes_through
from otel_dynamo._recording.phase_split import INNER_COMPILER_PHASE, PARTITION_PHASE
from otel_dynamo._recording.recorder import CompileStep
from otel_dynamo._recording.records import GraphIdentity
from otel_dynamo._sources import cudagraphs, graph_facts, patching
from otel_dynamo._sources.graph_compile import is_control_flow
from otel_dynamo._sources.runs import RunProxy
from otel_dynamo._sources.stack_room import with_room

if TYPE_CHECKING:  # for annotations only
    from otel_dynamo._sources.graph_compile import GraphCompile


_current: contextvars.ContextVar[GraphCompile | None] = contextvars.ContextVar(
    "otel_dynamo_graph", default=None
)

_COMPILER_SPANS = {
    names.RUN_KIND_FORWARD: names.SPAN_AOT_FORWARD,
    names.RUN_KIND_BACKWARD: names.SPAN_AOT_BACKWARD,
    names.RUN_KIND_INFERENCE: names.SPAN_AOT_INFERENCE,
}
_COMPILER_KWARGS = {
    "fw_compiler": names.RUN_KIND_FORWARD,
    "bw_compiler": names.RUN_KIND_BACKWARD,
    "inference_compiler": names.RUN_KIND_INFERENCE,
}


def activate(graph: GraphCompile) -> contextvars.Token[GraphCompile | None]:
    """Make ``graph`` the traced compile AOT hooks report to."""
    return _current.set(graph)


def deactivate(token: contextvars.Token[GraphCompile | None]) -> None:
    _current.reset(token)


def _unwrap(fn: Any) -> Any:
    fn = getattr(fn, "func", fn)  # functools.partial
    if getattr(fn, "_is_wrapped_bw_compiler", False) and getattr(fn, "__closure__", None):
        # AotAutograd wraps the backward compiler in torch._dynamo.disable; name the inner one.
        inner = inspect.getclosurevars(fn).nonlocals.get("bw_compiler_fn")
        return _unwrap(inner) if inner is not None else fn
    return fn


def qualified_name(fn: Any) -> str:
    fn = _unwrap(fn)
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    module = getattr(fn, "__module__", None)
    return f"{module}.{name}" if module else name


def aot_graph_name() -> str | None:
    try:
        from torch._functorch.aot_autograd import get_aot_graph_name

        return get_aot_graph_name()
    except Exception:
        return None


# --- partition ------------------------------------------------------------------------


def _saved_tensor_count(fw_module: Any, num_fwd_outputs: int | None) -> int | None:
    if num_fwd_outputs is None:
        return None
    output = next(node for node in reversed(fw_module.graph.nodes) if node.op == "output")
    values = output.args[0] if output.args else ()
    return max(len(values) - num_fwd_outputs, 0) if isinstance(values, (list, tuple)) else None


def _partition_attributes(joint_nodes: int, result: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    fw_module, bw_module = result
    attributes = {
        names.ATTR_AOT_JOINT_NODE_COUNT: joint_nodes,
        names.ATTR_AOT_FORWARD_NODE_COUNT: graph_facts.node_count(fw_module),
        names.ATTR_AOT_BACKWARD_NODE_COUNT: graph_facts.node_count(bw_module),
    }
    saved = _saved_tensor_count(fw_module, kwargs.get("num_fwd_outputs"))
    if saved is not None:
        attributes[names.ATTR_AOT_SAVED_TENSOR_COUNT] = saved
    return attributes


class TracedPartition:
    """AOT Autograd's partitioner, its call a span (a pass-through frame)."""

    def __init__(self, partition_fn: Callable[..., Any], graph: GraphCompile) -> None:
        self.partition_fn = partition_fn
        self.graph = graph
        self.partitioner = qualified_name(partition_fn)
        self.__name__ = getattr(partition_fn, "__name__", "partition_fn")

    @passes_through
    def __call__(self, joint_module: Any, joint_inputs: Any, **kwargs: Any) -> Any:
        joint_nodes = graph_facts.node_count(joint_module)
        with self._step() as span:
            result = self.partition_fn(joint_module, joint_inputs, **kwargs)
            self._partitioned(span, joint_nodes, result, kwargs)
        return result

    def _step(self) -> CompileStep:
        graph = self.graph
        attributes: dict[str, AttributeValue] = {
            names.ATTR_COMPILE_ID: graph.compile_id,
            names.ATTR_AOT_PARTITIONER: self.partitioner,
        }
        return graph.recorder.compile_span(
            names.SPAN_AOT_PARTITION,
            attributes,
            graph=GraphIdentity(graph.compile_id),
            is_control_flow=is_control_flow,
            phase=PARTITION_PHASE,
        )

    def _partitioned(self, span: Any, joint_nodes: int, result: Any, kwargs: Any) -> None:
        with guarded():
            span.set_attributes(_partition_attributes(joint_nodes, result, kwargs))


# --- inner compilers ------------------------------------------------------------------------


def _compiler_attributes(
    graph: GraphCompile, gm: Any, compiler: str, graph_name: str | None
) -> dict[str, AttributeValue]:
    attributes: dict[str, AttributeValue] = {
        names.ATTR_COMPILE_ID: graph.compile_id,
        names.ATTR_AOT_COMPILER: compiler,
        names.ATTR_AOT_NODE_COUNT: graph_facts.node_count(gm),
        names.ATTR_AOT_OP_COUNT: graph_facts.call_function_count(gm),
    }
    if graph_name:
        attributes[names.ATTR_AOT_GRAPH_NAME] = graph_name
    return attributes


class TracedCompiler:
    """One of AOT Autograd's inner compilers (forward, backward or inference), its call a
    span. A pass-through frame: the backward one usually runs lazily, at a
    ``.backward()`` that Dynamo may be evaluating; and a room (``stack_room``), as that
    compile runs outside the traced backend's."""

    def __init__(self, inner: Callable[..., Any], graph: GraphCompile, kind: str) -> None:
        self.inner = inner
        self.graph = graph
        self.kind = kind
        self.compiler = qualified_name(inner)
        self.__name__ = getattr(inner, "__name__", "compiler")

    @passes_through
    @with_room
    def __call__(self, gm: Any, example_inputs: Any, *args: Any, **kwargs: Any) -> Any:
        step, graph_name = self._step(gm)
        with step as span, self._watching() as watch:
            compiled = self.inner(gm, example_inputs, *args, **kwargs)
            self._compiled(span, watch, compiled)
        return self._finished(compiled, graph_name)

    def _step(self, gm: Any) -> tuple[CompileStep, str | None]:
        graph, kind = self.graph, self.kind
        graph_name = aot_graph_name()
        attributes: dict[str, AttributeValue] = {}
        with guarded():
            attributes = _compiler_attributes(graph, gm, self.compiler, graph_name)
        # The backward usually compiles lazily at the first .backward(): parent it to the
        # graph span explicitly so it stays in the forward's trace.
        context = graph.context if kind == names.RUN_KIND_BACKWARD else None
        step = graph.recorder.compile_span(
            _COMPILER_SPANS[kind],
            attributes,
            graph=GraphIdentity(graph.compile_id),
            context=context,
            is_control_flow=is_control_flow,
            phase=INNER_COMPILER_PHASE,
        )
        return step, graph_name

    def _watching(self) -> cudagraphs.Watching:
        wanted = False
        with guarded():
            wanted = _wants_cudagraphs(self.graph, self.kind)
        return cudagraphs.watching(asked=True, active=wanted)

    def _compiled(self, span: Any, watch: cudagraphs.Watch | None, compiled: Any) -> None:
        graph, kind = self.graph, self.kind
        with guarded():
            if watch is not None:
                graph.cudagraph_decided(span, kind, watch, compiled)
            elif kind != names.RUN_KIND_BACKWARD and cudagraphs.noticed():
                graph.cudagraph_requested = True
                graph.inner_output = compiled  # where a forward keeps its own reason

    def _finished(self, compiled: Any, graph_name: str | None) -> Any:
        graph = self.graph
        graph.inner_compiled(self.kind, graph_name)
        wrapped = compiled
        if self.kind == names.RUN_KIND_BACKWARD:
            with guarded():
                wrapped = wrap_backward(compiled, graph, graph_name)
        return wrapped


def _wants_cudagraphs(graph: GraphCompile, kind: str) -> bool:
    """A backward whose forward inductor CUDA-graphed: decided on its own (a forward
    skipped takes its backward along, without another skip torch would count).
    (A forward or inference graph is decided by the graph's whole compile, which also
    covers graphs loaded from AOT Autograd's cache.)"""
    return kind == names.RUN_KIND_BACKWARD and graph.cudagraph_forward == names.CUDAGRAPH_GRAPHED


def wrap_compiler(inner: Any, graph: GraphCompile, kind: str) -> Any:
    """The same compiler, reporting a span; keeps AOT's cacheable compiler type (defined
    in ``torch._functorch.aot_autograd`` on 2.8, re-exported there from ``schemas`` later)."""
    from torch._functorch import aot_autograd

    serializable: Any = getattr(aot_autograd, "SerializableAOTDispatchCompiler", None)
    if serializable is not None and isinstance(inner, serializable):
        cacheable: Any = inner
        return type(cacheable)(
            cacheable.output_code_ty, TracedCompiler(cacheable.compiler_fn, graph, kind)
        )
    traced = TracedCompiler(inner, graph, kind)
    if getattr(inner, "_is_wrapped_bw_compiler", False):
        traced._is_wrapped_bw_compiler = True  # type: ignore[attr-defined]  # AOT's marker on a function
    return traced


def wrap_backward(compiled: Any, graph: GraphCompile, graph_name: str | None) -> Any:
    """Count (and sample into spans) runs of a compiled backward.

    A proxy, not a new ``current_callable``: what the backward compiler returns is
    ``torch._dynamo.disable``'s wrapper around inductor's ``OutputCode``, whose
    ``__dict__`` is a copy of the OutputCode's, so setting attributes on it never
    reaches the callable that runs.
    """
    if isinstance(compiled, RunProxy):
        return compiled
    state = graph.run_state(names.RUN_KIND_BACKWARD, graph_name)
    return RunProxy(compiled, state, graph.run_recorder())


def wrap_loaded_backward(spec: Any, graph: GraphCompile) -> Any:
    """The compile spec with its already compiled backward (a cache hit) counted."""
    compiled = spec.compiled_bw_func
    if compiled is None or isinstance(compiled, RunProxy):
        return spec
    # No AOT graph name: on a cache hit AOT names no graph.
    return dataclasses.replace(spec, compiled_bw_func=wrap_backward(compiled, graph, None))


BACKWARD_ARGUMENT = "compiled_bw_func"
"""``post_compile``'s backward before torch 2.12: its second positional argument (after
the compiled forward); from 2.12 on it is one field of a single spec argument."""


def check_post_compile_form(post_compile: Callable[..., Any]) -> None:
    """Raise TypeError unless ``post_compile`` takes one spec (2.12 on) or names its
    ``compiled_bw_func`` (before 2.12: 2.8.0 ``runtime_wrappers.py:1979``, 2.10.0 ``:2056``)."""
    parameters = inspect.signature(post_compile).parameters
    if BACKWARD_ARGUMENT in parameters or len(parameters) == 1:
        return
    raise TypeError(f"unknown AOTDispatchAutograd.post_compile{inspect.signature(post_compile)}")


def with_loaded_backward(
    args: tuple[Any, ...], kwargs: dict[str, Any], graph: GraphCompile
) -> tuple[tuple[Any, ...], dict[str, AttributeValue]]:
    """``post_compile``'s arguments with the compiled backward counted, on either form."""
    if len(args) == 1 and not kwargs:
        return (wrap_loaded_backward(args[0], graph),), kwargs
    if BACKWARD_ARGUMENT in kwargs:
        compiled = kwargs[BACKWARD_ARGUMENT]
        if compiled is not None:
            kwargs = {**kwargs, BACKWARD_ARGUMENT: wrap_backward(compiled, graph, None)}
        return args, kwargs
    if len(args) >= 2 and args[1] is not None:
        args = (args[0], wrap_backward(args[1], graph, None), *args[2:])
    return args, kwargs


# --- installation ---------------------------------------------------------------------------


def instrument_kwargs(graph: GraphCompile, kwargs: dict[str, Any]) -> dict[str, Any]:
    from torch._functorch.partitioners import default_partition

    instrumented = dict(kwargs)
    for key, kind in _COMPILER_KWARGS.items():
        if instrumented.get(key) is not None:
            instrumented[key] = wrap_compiler(instrumented[key], graph, kind)
    partition_fn = instrumented.get("partition_fn") or default_partition
    instrumented["partition_fn"] = TracedPartition(partition_fn, graph)
    return instrumented


class AotTap:
    """Wraps ``torch._dynamo.backends.common.aot_module_simplified`` to trace AOT
    Autograd's partitioner and compilers, and ``AOTDispatchAutograd.post_compile`` to count
    compiled backwards loaded from the cache."""

    @property
    def installed(self) -> bool:
        from torch._dynamo.backends import common

        return patching.patched(common, "aot_module_simplified", self._traced_aot)

    def install(self) -> None:
        from torch._dynamo.backends import common

        patching.patch(common, "aot_module_simplified", self._traced_aot)

    @staticmethod
    @passes_through
    def _traced_aot(
        aot_module_simplified: Callable[..., Any],
        _instance: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """The patched ``aot_module_simplified(mod, args, **kwargs)``: during a traced
        graph compile, with its partitioner and compilers traced."""
        graph = _current.get()
        if graph is not None:
            with guarded():
                kwargs = instrument_kwargs(graph, kwargs)
        return aot_module_simplified(*args, **kwargs)

    def install_post_compile(self) -> None:
        """Raises (and installs nothing) if ``post_compile`` has neither known form."""
        from torch._functorch._aot_autograd.runtime_wrappers import AOTDispatchAutograd

        if patching.patched(AOTDispatchAutograd, "post_compile", self._counted_post_compile):
            return
        check_post_compile_form(AOTDispatchAutograd.post_compile)
        # wrapt wraps the staticmethod itself: uninstall puts back exactly what was there.
        patching.patch(AOTDispatchAutograd, "post_compile", self._counted_post_compile)

    @staticmethod
    @passes_through
    def _counted_post_compile(
        post_compile: Callable[..., Any],
        _instance: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """The patched ``AOTDispatchAutograd.post_compile``: a backward loaded from the
        cache during a traced graph compile is traced at its runs."""
        graph = _current.get()
        if graph is not None:
            with guarded():
                args, kwargs = with_loaded_backward(args, kwargs, graph)
        return post_compile(*args, **kwargs)

    def uninstall(self) -> None:
        from torch._dynamo.backends import common
        from torch._functorch._aot_autograd.runtime_wrappers import AOTDispatchAutograd

        patching.unpatch(common, "aot_module_simplified", self._traced_aot)
        patching.unpatch(AOTDispatchAutograd, "post_compile", self._counted_post_compile)
