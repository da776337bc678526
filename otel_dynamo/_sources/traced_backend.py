"""The traced backend: looks up the inner backend, records, then delegates."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

from opentelemetry.util.types import AttributeValue

from otel_dynamo import names
from otel_dynamo._recording.boundary import guarded
from otel_dynamo._recording.pass_through import passes_through
from otel_dynamo._recording.recorder import Recorder
from otel_dynamo._recording.records import GraphIdentity
from otel_dynamo._sources import (
    aids,
    aot,
    cudagraphs,
    device_clock,
    graph_facts,
    taps,
)
from otel_dynamo._sources.aids import faults
from otel_dynamo._sources.dynamo_exclusion import exclude_loaded_modules
from otel_dynamo._sources.dynamo_stream import current_compile_id
from otel_dynamo._sources.graph_compile import GraphCompile, is_control_flow
from otel_dynamo._sources.routing import (
    MAX_CHAIN,
    RECORDER_LOOKUP_ATTRIBUTE,
    keep_route_for_lazy_backward,
)
from otel_dynamo._sources.runs import wrap_unboxed_run
from otel_dynamo._sources.stack_room import with_room
from otel_dynamo._sources.suppression import suppressed
from otel_dynamo._sources.traceback_frames import keep_only_outermost_frame_of_ours

INDUCTOR = "inductor"
INDUCTOR_KWARGS = frozenset({"mode", "options"})
FORWARDED_ATTRIBUTES = ("compiler_name", "backend_ctx_ctor")


UNHASHABLE_BACKEND_HASH = 0x0BAC
"""The hash of every identity whose backend has none of its own."""


class BackendIdentity:
    """What Dynamo compares when it decides whether a cache entry's backend is the one
    compiling now, for the backend a traced backend wraps.

    Dynamo keeps, per cache entry, the innermost backend of the compiler that made it and
    reuses the entry only for a compiler whose innermost backend is the same object or
    compares equal to it (``backend_match`` in torch's C cache lookup, 2.8 to 2.15; an
    ``__eq__`` that raises counts as unequal). Two traced backends compare as their
    identities do, so a traced job makes exactly the decisions of the plain one:
    ``torch.compile``'s own wrappers of equal backends are equal, two
    ``functools.partial`` objects are not.
    """

    __slots__ = ("backend",)

    def __init__(self, backend: object) -> None:
        self.backend = innermost_backend(backend)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BackendIdentity):
            return NotImplemented
        if self.backend is other.backend:
            return True
        try:
            return bool(self.backend == other.backend)
        except Exception:  # as torch's lookup: an equality that fails means unequal
            return False

    def __hash__(self) -> int:
        try:
            return hash(self.backend)
        except TypeError:  # torch's compile wrappers define equality and no hash (and
            return UNHASHABLE_BACKEND_HASH  # compare equal across subclasses: one value)

    def __repr__(self) -> str:
        return f"BackendIdentity({self.backend!r})"


@functools.cache
def backend_chain_attribute() -> str:
    """The attribute torch follows down a compiler to the backend its cache entries keep:
    ``_torchdynamo_orig_backend`` from torch 2.9 on (pytorch/pytorch#156901),
    ``_torchdynamo_orig_callable`` on 2.8."""
    import torch
    from torch.torch_version import TorchVersion

    before_rename = TorchVersion(torch.__version__) < "2.9"
    return "_torchdynamo_orig_callable" if before_rename else "_torchdynamo_orig_backend"


def innermost_backend(backend: object) -> object:
    """``backend`` followed down Dynamo's wrapper chain, as torch's cache lookup does."""
    attribute = backend_chain_attribute()
    for _ in range(MAX_CHAIN):
        inner = getattr(backend, attribute, None)
        if inner is None:
            return backend
        backend = inner
    return backend


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
        self,
        backend: str | Callable[..., Any],
        *,
        recorder_lookup: Callable[[], Recorder],
        name: str | None = None,
    ) -> None:
        from torch._dynamo.backends.registry import lookup_backend

        self.inner = lookup_backend(backend)  # unknown names raise torch's InvalidBackend
        self.identity = BackendIdentity(self.inner)
        self.backend = name or backend_name(backend)
        self.__name__ = getattr(self.inner, "__name__", self.backend)
        if hasattr(self.inner, "__qualname__"):  # named as Dynamo names the backend itself
            self.__qualname__ = self.inner.__qualname__
            self.__module__ = getattr(self.inner, "__module__", None) or self.__module__
        # Optional attributes Dynamo reads off a backend. Copied, never forwarded through
        # __getattr__: Dynamo's C frame callback crashes on a class that defines one.
        for attribute in FORWARDED_ATTRIBUTES:
            if hasattr(self.inner, attribute):
                setattr(self, attribute, getattr(self.inner, attribute))
        # Dynamo's frame events of compiles by this backend report to this recorder.
        setattr(self, RECORDER_LOOKUP_ATTRIBUTE, recorder_lookup)
        self._recorder_lookup = recorder_lookup
        self._inductor_wrappers: dict[str, Any] = {}
        taps.install()
        faults.warn_active(recorder_lookup().settings.fault)
        exclude_loaded_modules()  # those the recorder's making imported

    def __repr__(self) -> str:
        return f"otel_dynamo.traced({self.backend!r})"

    def __eq__(self, other: object) -> bool:
        """Equal exactly when the backends both wrap would be, for Dynamo's backend match."""
        if not isinstance(other, TracedBackend):
            return NotImplemented
        return self.identity == other.identity

    def __hash__(self) -> int:
        return hash(self.identity)

    def reset(self) -> None:
        if hasattr(self.inner, "reset"):
            self.inner.reset()

    def get_compiler_config(self) -> Any:
        getter = getattr(self.inner, "get_compiler_config", None)
        return getter() if getter else None

    @passes_through
    @with_room
    def __call__(self, gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        """Record the graph's compile, and delegate it, from this one frame (the only one
        of ours a traceback through a traced compile shows: ``traceback_frames``)."""
        if suppressed():  # suppress_instrumentation(): compiled as untraced, runs too
            return self.inner(gm, example_inputs, **kwargs)
        compiling = self._begin(gm, example_inputs, kwargs)
        backend, options = self._callee(kwargs), self._passed(kwargs)
        with compiling.step as span, compiling.watching as watch:
            try:
                compiling.before_compile(span)
                compiled = backend(gm, example_inputs, **options)  # otel_dynamo's traced backend
                compiling.after_compile(watch, compiled)
            except BaseException as exc:
                compiling.failed(exc)
                raise
        return compiling.finished(compiled)

    def _begin(self, gm: Any, example_inputs: Any, kwargs: dict[str, Any]) -> TracedGraphCompile:
        exclude_loaded_modules()  # modules of ours imported since the last compile
        recorder = self._recorder_lookup()
        graph = GraphCompile(recorder, compile_id=current_compile_id(), backend=self.backend)
        identity = GraphIdentity(graph.compile_id, self.backend)
        attributes: dict[str, AttributeValue] = {}
        with guarded():
            identity, attributes = self._described(recorder, identity, gm, example_inputs)
        self._prepare(graph, example_inputs, kwargs)
        return TracedGraphCompile(
            self,
            graph,
            gm=gm,
            example_inputs=example_inputs,
            identity=identity,
            attributes=attributes,
        )

    def _described(
        self, recorder: Recorder, identity: GraphIdentity, gm: Any, example_inputs: Any
    ) -> tuple[GraphIdentity, dict[str, AttributeValue]]:
        """The graph counted in its frame, with its index and size, and its span's
        attributes."""
        limits = recorder.limits
        graph_break = graph_facts.graph_break(gm, identity.compile_id)
        index = recorder.note_graph(identity.compile_id, self.backend)
        shape = graph_facts.graph_shape(gm)
        identity = dataclasses.replace(
            identity, graph_index=index, op_count=shape.op_count, node_count=shape.node_count
        )
        attributes = {
            names.ATTR_BACKEND: self.backend,
            names.ATTR_COMPILE_ID: identity.compile_id,
            names.ATTR_GRAPH_INDEX: index,
            **graph_facts.shape_attributes(shape, top=limits.top_ops, max_items=limits.list_length),
            **graph_facts.input_attributes(example_inputs, max_items=limits.list_length),
            **(limits.break_attributes(graph_break) if graph_break else {}),
        }
        return identity, attributes

    def _prepare(self, graph: GraphCompile, example_inputs: Any, kwargs: dict[str, Any]) -> None:
        """What the graph's lazy backward, runs and CUDA-graph decision need, each piece on
        its own: one that fails leaves the others."""
        with guarded():
            keep_route_for_lazy_backward()
        with guarded():
            graph.device_clock = device_clock.clock_for(example_inputs)
        with guarded():
            graph.input_devices = graph_facts.input_devices(example_inputs)
        with guarded():
            graph.cudagraph_requested = self._asks_for_cudagraphs(kwargs)

    def _aids_for(
        self, graph: GraphCompile, compiling: aids.Compiling, identity: GraphIdentity
    ) -> tuple[aids.GraphAid, ...]:
        """The debugging aids of this graph (see ``aids.AIDS``), built in their order."""
        aided = aids.AidedGraph(
            recorder=graph.recorder,
            compile_id=graph.compile_id,
            backend=self.backend,
            graph_index=identity.graph_index or 0,
        )
        applied = aids.aids_for(aided, compiling)
        graph.records_first_run = any(aid.records_first_run for aid in applied)
        return applied

    def _passed(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The options ``torch.compile`` passes the backend: none to inductor when they are
        built into the callee (``_callee``), else all of them."""
        return {} if self._callee(kwargs) is not self.inner else kwargs

    def _callee(self, kwargs: dict[str, Any]) -> Any:
        """What compiles: inductor with ``torch.compile``'s mode and options, else the
        inner backend."""
        if kwargs and self.backend == INDUCTOR and set(kwargs) <= INDUCTOR_KWARGS:
            return self._inductor_with(kwargs)
        return self.inner

    def _asks_for_cudagraphs(self, kwargs: dict[str, Any]) -> bool:
        return cudagraphs.requested() or cudagraphs.asked_by(self._callee(kwargs))

    def _inductor_with(self, kwargs: dict[str, Any]) -> Any:
        """What torch.compile(backend="inductor", mode=..., options=...) would call."""
        import torch

        key = repr(sorted(kwargs.items()))
        if key not in self._inductor_wrappers:
            self._inductor_wrappers[key] = torch._TorchCompileInductorWrapper(  # type: ignore[no-untyped-call]  # untyped in torch
                kwargs.get("mode"), kwargs.get("options"), None
            )
        return self._inductor_wrappers[key]

    def _wrap_runs(
        self,
        graph: GraphCompile,
        applied: tuple[aids.GraphAid, ...],
        compiled: Any,
        example_inputs: Any,
    ) -> Any:
        """``compiled`` in each aid's wrapper, in their order, then in the run recording."""
        kind = graph.run_kind or _runtime_kind(example_inputs)
        state = graph.run_state(kind, graph.graph_name)
        compiled = realized(compiled)
        for aid in applied:
            compiled = aid.wrap_compiled(compiled, state)
        return wrap_unboxed_run(compiled, state, graph.run_recorder())


class TracedGraphCompile:
    """One graph compile by a traced backend, recorded around the backend's own call.

    The traced backend's frame enters ``step`` (the graph span, current while the backend
    compiles) and ``watching`` (CUDA-graph skips), calls ``before_compile``, delegates,
    then calls ``after_compile`` and, the span closed, ``finished``; or, the span open,
    ``failed``: every piece of recording is here, and none of it can fail the compile.
    """

    def __init__(
        self,
        backend: TracedBackend,
        graph: GraphCompile,
        *,
        gm: Any,
        example_inputs: Any,
        identity: GraphIdentity,
        attributes: dict[str, AttributeValue],
    ) -> None:
        self.backend = backend
        self.graph = graph
        self.identity = identity
        self.attributes = attributes
        self.gm = gm
        self.example_inputs = example_inputs
        recorder = graph.recorder
        self.step = recorder.compile_span(
            names.SPAN_GRAPH,
            attributes,
            graph=identity,
            context=recorder.frame_context(graph.compile_id or None),
            is_control_flow=is_control_flow,
        )
        self.watching = cudagraphs.watching(asked=graph.cudagraph_requested)
        self.applied: tuple[aids.GraphAid, ...] = ()
        self.compiling: aids.Compiling | None = None
        self._token: Any = None

    def before_compile(self, span: Any) -> None:
        """With the graph span open: the AOT hooks report to this graph, the aids act
        (inject the faults due). A fault injected raises here, as the backend would."""
        graph = self.graph
        graph.enter(span)
        self._token = aot.activate(graph)
        compiling = aids.Compiling(
            gm=self.gm, example_inputs=self.example_inputs, span=span, attributes=self.attributes
        )
        self.compiling = compiling
        with guarded():
            self.applied = self.backend._aids_for(graph, compiling, self.identity)
        for aid in self.applied:
            aid.before_compile(compiling)

    def after_compile(self, watch: cudagraphs.Watch | None, compiled: Any) -> None:
        """The backend returned: whether inductor CUDA-graphed the graph."""
        self._deactivate()
        graph = self.graph
        if watch is not None and graph.cudagraph_requested:
            kind = graph.run_kind or _runtime_kind(self.example_inputs)
            with guarded():
                graph.cudagraph_decided(self.step.span, kind, watch, graph.inner_output)

    def failed(self, exc: BaseException) -> None:
        """The compile raised ``exc`` (about to be re-raised unchanged), the graph span still
        open so that what the aids record of it lands there; a Dynamo restart is control
        flow, not a failure the aids hear of."""
        self._deactivate()
        discarded = is_control_flow(exc)
        if isinstance(exc, Exception) and not discarded and self.compiling is not None:
            for aid in self.applied:
                aid.compile_failed(self.compiling)
        with guarded():
            self._settle(discarded=discarded)
        keep_only_outermost_frame_of_ours(exc)

    def finished(self, compiled: Any) -> Any:
        """What Dynamo gets: ``compiled``, its runs recorded."""
        with guarded():
            self._settle(discarded=False)
        with guarded():
            self.graph.recorder.log_events.graph_compiled(self.identity, self.step.span)
        wrapped = compiled
        with guarded():
            wrapped = self.backend._wrap_runs(
                self.graph, self.applied, compiled, self.example_inputs
            )
        return wrapped

    def _deactivate(self) -> None:
        if self._token is not None:
            aot.deactivate(self._token)
            self._token = None

    def _settle(self, *, discarded: bool) -> None:
        """Count the graph, or, when a Dynamo restart threw it away, uncount it."""
        if discarded:
            self.graph.recorder.discard_graph(self.graph.compile_id or None)
        else:
            self.graph.recorder.metrics.graph_compiled(self.backend.backend)


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
