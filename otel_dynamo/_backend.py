"""The traced backend: looks up the inner backend, records, then delegates."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from opentelemetry import trace

from otel_dynamo import _aot_hooks, _graph_facts, _hub, names
from otel_dynamo._dynamo_stream import current_compile_id
from otel_dynamo._recorder import Recorder
from otel_dynamo._runs import RunState, wrap_unboxed_run

_log = logging.getLogger("otel_dynamo")
T = TypeVar("T")

INDUCTOR = "inductor"
INDUCTOR_KWARGS = frozenset({"mode", "options"})


def is_control_flow(exc: BaseException) -> bool:
    """Dynamo's restart-analysis and skip-frame exceptions steer compilation; no failure."""
    from torch._dynamo import exc as dynamo_exc

    flow = tuple(
        cls
        for cls in (
            getattr(dynamo_exc, "RestartAnalysis", None),
            getattr(dynamo_exc, "SkipFrame", None),
        )
        if cls is not None
    )
    return isinstance(exc, flow)


class GraphCompile:
    """One backend call on one graph: what AOT hooks and run wrappers report to."""

    def __init__(self, recorder: Recorder, *, compile_id: str | None, backend: str) -> None:
        self.recorder = recorder
        self.compile_id = compile_id or ""
        self.backend = backend
        self.context: Any = None
        self.link: Any = None
        self.run_kind: str | None = None
        self.graph_name: str | None = None

    def enter(self, span: Any) -> None:
        self.context = trace.set_span_in_context(span)
        self.link = span.get_span_context()

    def safely(self, fn: Callable[[], T]) -> T | None:
        """Run a piece of instrumentation; on error log it and go on without it."""
        try:
            return fn()
        except Exception:
            _log.warning("otel_dynamo: instrumentation error (ignored)", exc_info=True)
            return None

    def inner_compiled(self, kind: str, graph_name: str | None) -> None:
        if kind != names.RUN_KIND_BACKWARD:
            self.run_kind, self.graph_name = kind, graph_name

    def run_state(self, kind: str, graph_name: str | None) -> RunState:
        attributes: dict[str, Any] = {
            names.ATTR_COMPILE_ID: self.compile_id,
            names.ATTR_BACKEND: self.backend,
            names.ATTR_RUN_KIND: kind,
        }
        if graph_name:
            attributes[names.ATTR_AOT_GRAPH_NAME] = graph_name
        state = RunState(
            kind=kind,
            policy=self.recorder.settings.run_spans,
            attributes=attributes,
            link=self.link,
        )
        self.recorder.metrics.track_run(state)
        return state


def backend_name(backend: Any) -> str:
    if isinstance(backend, str):
        return backend
    return str(
        getattr(backend, "compiler_name", None)
        or getattr(backend, "__name__", None)
        or type(backend).__name__
    )


class TracedBackend:
    """A Dynamo backend that traces ``inner`` and otherwise behaves exactly like it."""

    def __init__(
        self, backend: str | Callable[..., Any], *, recorder_factory: Callable[[], Recorder]
    ) -> None:
        from torch._dynamo.backends.registry import lookup_backend

        self.inner = lookup_backend(backend)  # unknown names raise torch's InvalidBackend
        self.backend = backend_name(backend)
        self.__name__ = getattr(self.inner, "__name__", self.backend)
        self._recorder_factory = recorder_factory
        self._inductor_wrappers: dict[str, Any] = {}
        _hub.install()
        # Frame events arrive before the backend is called: report them here from now on.
        _hub.activate(recorder_factory())

    def __repr__(self) -> str:
        return f"otel_dynamo.traced({self.backend!r})"

    def reset(self) -> None:
        if hasattr(self.inner, "reset"):
            self.inner.reset()

    def get_compiler_config(self) -> Any:
        getter = getattr(self.inner, "get_compiler_config", None)
        return getter() if getter else None

    def __call__(self, gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        recorder = self._recorder_factory()
        _hub.activate(recorder)
        compile_id = current_compile_id()
        graph = GraphCompile(recorder, compile_id=compile_id, backend=self.backend)
        attributes = (
            graph.safely(lambda: self._graph_attributes(recorder, gm, example_inputs, compile_id))
            or {}
        )
        with recorder.compile_span(
            names.SPAN_GRAPH,
            attributes,
            context=recorder.frame_context(compile_id),
            is_control_flow=is_control_flow,
        ) as span:
            graph.enter(span)
            token = _aot_hooks.activate(graph)
            try:
                compiled = self._delegate(gm, example_inputs, **kwargs)
            finally:
                _aot_hooks.deactivate(token)
        graph.safely(lambda: recorder.events.graph_compiled(attributes, span))
        return graph.safely(lambda: self._wrap_runs(graph, compiled, example_inputs)) or compiled

    def _graph_attributes(
        self, recorder: Recorder, gm: Any, example_inputs: Any, compile_id: str | None
    ) -> dict:
        limits = recorder.limits
        recorder.metrics.graph_compiled(self.backend)
        return {
            names.ATTR_BACKEND: self.backend,
            names.ATTR_COMPILE_ID: compile_id or "",
            names.ATTR_GRAPH_INDEX: recorder.note_graph(compile_id, self.backend),
            **_graph_facts.graph_attributes(gm, top=limits.top_ops),
            **_graph_facts.input_attributes(example_inputs, max_items=limits.list_length),
            **_graph_facts.break_attributes(gm, capture_stacks=limits.capture_stacks),
        }

    def _delegate(self, gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        if kwargs and self.backend == INDUCTOR and set(kwargs) <= INDUCTOR_KWARGS:
            return self._inductor_with(kwargs)(gm, example_inputs)
        return self.inner(gm, example_inputs, **kwargs)

    def _inductor_with(self, kwargs: dict[str, Any]) -> Any:
        """What torch.compile(backend="inductor", mode=..., options=...) would call."""
        import torch

        key = repr(sorted(kwargs.items()))
        if key not in self._inductor_wrappers:
            self._inductor_wrappers[key] = torch._TorchCompileInductorWrapper(
                kwargs.get("mode"), kwargs.get("options"), None
            )
        return self._inductor_wrappers[key]

    def _wrap_runs(self, graph: GraphCompile, compiled: Any, example_inputs: Any) -> Any:
        kind = graph.run_kind or _runtime_kind(example_inputs)
        state = graph.run_state(kind, graph.graph_name)
        return wrap_unboxed_run(realized(compiled), state, graph.recorder)


def realized(compiled: Any) -> Any:
    """What Dynamo would call for ``compiled``: a lazy GraphModule's real forward.

    Dynamo recompiles a lazy GraphModule (or its ``_lazy_forward``, what ``eager``
    returns) as soon as the backend returns it and calls the real forward. Behind our
    wrapper it cannot see one, and every run would go through ``_lazy_forward`` and
    ``Module.__call__`` (about 3 us), so we do the same here.
    """
    from torch.fx._lazy_graph_module import _LazyGraphModule

    if isinstance(compiled, _LazyGraphModule):
        _LazyGraphModule.force_recompile(compiled)
        return compiled
    owner = getattr(compiled, "__self__", None)
    if isinstance(owner, _LazyGraphModule) and getattr(compiled, "__name__", "") == "_lazy_forward":
        _LazyGraphModule.force_recompile(owner)
        return owner.forward
    return compiled


def _runtime_kind(example_inputs: Any) -> str:
    """Forward unless no input requires grad or grad is off (then AOT compiles inference)."""
    import torch

    needs_grad = torch.is_grad_enabled() and any(
        getattr(value, "requires_grad", False) for value in example_inputs
    )
    return names.RUN_KIND_FORWARD if needs_grad else names.RUN_KIND_INFERENCE
