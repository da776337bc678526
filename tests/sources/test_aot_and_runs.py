"""AOT Autograd partition, inner compiles and compiled runs, in training and inference."""

from __future__ import annotations

import pytest
import torch
from _spans import named, one

import otel_dynamo
from otel_dynamo import names
from otel_dynamo._recording.recorder_lookup import make_recorder
from otel_dynamo._recording.records import RunIdentity
from otel_dynamo._recording.run_state import RunState
from otel_dynamo._sources.runs import RunProxy


def _mlp() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


def _train_steps(provider, steps: int, **options):
    model = _mlp()
    compiled = torch.compile(
        model, backend=otel_dynamo.traced("aot_eager", tracer_provider=provider, **options)
    )
    for _ in range(steps):
        compiled(torch.randn(3, 4)).sum().backward()
    return compiled


def test_training_step_records_partition_forward_and_backward(provider, exporter):
    """Forward + backward: partition, aot.forward and (lazy) aot.backward under the graph."""
    _train_steps(provider, 1)
    spans = exporter.get_finished_spans()
    graph = one(spans, names.SPAN_GRAPH)
    partition = one(spans, names.SPAN_AOT_PARTITION)
    forward, backward = one(spans, names.SPAN_AOT_FORWARD), one(spans, names.SPAN_AOT_BACKWARD)
    for span in (partition, forward, backward):
        assert span.parent.span_id == graph.context.span_id
        assert span.attributes[names.ATTR_COMPILE_ID] == "0/0"
    attrs = partition.attributes
    assert attrs[names.ATTR_AOT_PARTITIONER].endswith("min_cut_rematerialization_partition")
    for key in (
        names.ATTR_AOT_JOINT_NODE_COUNT,
        names.ATTR_AOT_FORWARD_NODE_COUNT,
        names.ATTR_AOT_BACKWARD_NODE_COUNT,
    ):
        assert isinstance(attrs[key], int) and attrs[key] > 0
    assert isinstance(attrs[names.ATTR_AOT_SAVED_TENSOR_COUNT], int)
    assert attrs[names.ATTR_AOT_SAVED_TENSOR_COUNT] > 0
    assert "_forward_" in forward.attributes[names.ATTR_AOT_GRAPH_NAME]
    assert "backward" in backward.attributes[names.ATTR_AOT_GRAPH_NAME]
    assert backward.start_time > graph.end_time  # compiled lazily, at the first backward


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_untraced_training_compile_beside_a_traced_one_trains_as_eager(provider, exporter, backend):
    """After a traced training compile, a plain one through AOT Autograd (where torch 2.8 to
    2.11 once crashed on our post_compile) computes eager's gradients and records nothing."""
    _train_steps(provider, 1)
    recorded = len(exporter.get_finished_spans())
    x = torch.randn(3, 4)
    eager_model, compiled_model = _mlp(), _mlp()
    eager_model(x).sum().backward()
    compiled = torch.compile(compiled_model, backend=backend)
    compiled(x).sum().backward()
    for eager_param, compiled_param in zip(
        eager_model.parameters(), compiled_model.parameters(), strict=True
    ):
        torch.testing.assert_close(compiled_param.grad, eager_param.grad)
    assert len(exporter.get_finished_spans()) == recorded


def test_runs_are_linked_to_their_compiling_span(provider, exporter):
    """run.forward / run.backward carry compile id and graph name and link to the graph span."""
    tracer = provider.get_tracer("user")
    compiled = torch.compile(
        _mlp(), backend=otel_dynamo.traced("aot_eager", tracer_provider=provider)
    )
    with tracer.start_as_current_span("step") as step:
        compiled(torch.randn(3, 4)).sum().backward()
    spans = exporter.get_finished_spans()
    graph = one(spans, names.SPAN_GRAPH)
    run_fw, run_bw = one(spans, names.SPAN_RUN_FORWARD), one(spans, names.SPAN_RUN_BACKWARD)
    assert run_fw.parent.span_id == step.get_span_context().span_id
    for run in (run_fw, run_bw):
        assert run.links[0].context.span_id == graph.context.span_id
        assert run.attributes[names.ATTR_COMPILE_ID] == "0/0"
        assert run.attributes[names.ATTR_RUN_INDEX] == 1
    aot_fw, aot_bw = one(spans, names.SPAN_AOT_FORWARD), one(spans, names.SPAN_AOT_BACKWARD)
    assert (
        run_fw.attributes[names.ATTR_AOT_GRAPH_NAME] == aot_fw.attributes[names.ATTR_AOT_GRAPH_NAME]
    )
    assert (
        run_bw.attributes[names.ATTR_AOT_GRAPH_NAME] == aot_bw.attributes[names.ATTR_AOT_GRAPH_NAME]
    )


def test_no_grad_call_records_inference_compile_and_run(provider, exporter):
    """Under no_grad AOT compiles an inference graph: aot.inference and run.inference."""
    compiled = torch.compile(
        _mlp(), backend=otel_dynamo.traced("aot_eager", tracer_provider=provider)
    )
    with torch.no_grad():
        compiled(torch.randn(3, 4))
    spans = exporter.get_finished_spans()
    inference = one(spans, names.SPAN_AOT_INFERENCE)
    assert "inference" in inference.attributes[names.ATTR_AOT_GRAPH_NAME]
    run = one(spans, names.SPAN_RUN_INFERENCE)
    assert run.attributes[names.ATTR_RUN_KIND] == names.RUN_KIND_INFERENCE
    assert not named(spans, names.SPAN_AOT_PARTITION)


def test_run_spans_all_records_every_run(provider, exporter):
    """run_spans='all': one span per forward and per backward run, indexed 1..n."""
    _train_steps(provider, 5, run_spans="all")
    spans = exporter.get_finished_spans()
    indexes = [s.attributes[names.ATTR_RUN_INDEX] for s in named(spans, names.SPAN_RUN_FORWARD)]
    assert indexes == [1, 2, 3, 4, 5]
    assert len(named(spans, names.SPAN_RUN_BACKWARD)) == 5


def test_run_spans_off_records_none(provider, exporter):
    """run_spans='off': no run spans at all, compile spans unchanged."""
    _train_steps(provider, 3, run_spans="off")
    spans = exporter.get_finished_spans()
    assert not [s for s in spans if s.name.startswith("torch.compile.run.")]
    assert one(spans, names.SPAN_GRAPH)


def test_default_policy_records_first_runs_then_powers_of_two(provider, exporter):
    """The default (auto) policy records runs 1-3, then 4, 8, 16: bounded, log-spaced."""
    _train_steps(provider, 17)
    spans = exporter.get_finished_spans()
    indexes = [s.attributes[names.ATTR_RUN_INDEX] for s in named(spans, names.SPAN_RUN_FORWARD)]
    assert indexes == [1, 2, 3, 4, 8, 16]


def test_decomp_partition_backend_names_its_partitioner(provider, exporter):
    """aot_eager_default_partitioner reports default_partition as its partitioner."""
    compiled = torch.compile(
        _mlp(),
        backend=otel_dynamo.traced("aot_eager_default_partitioner", tracer_provider=provider),
    )
    compiled(torch.randn(3, 4)).sum().backward()
    partition = one(exporter.get_finished_spans(), names.SPAN_AOT_PARTITION)
    assert partition.attributes[names.ATTR_AOT_PARTITIONER].endswith("default_partition")


# --- compiled backwards: inductor, the AOT Autograd cache, the proxy -----------------------


def _traced_step(provider, backend: str, **options):
    """One forward + backward inside a user span; returns that span."""
    tracer = provider.get_tracer("user")
    compiled = torch.compile(
        _mlp(), backend=otel_dynamo.traced(backend, tracer_provider=provider, **options)
    )
    with tracer.start_as_current_span("step") as step:
        compiled(torch.randn(3, 4)).sum().backward()
    return step


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_backward_run_span_attributes_are_the_same_for_aot_eager_and_inductor(
    provider, exporter, backend
):
    """run.backward: compile id, backend, kind, AOT graph name, index; linked, in the step."""
    with torch._functorch.config.patch(enable_autograd_cache=False):  # compilers must run
        step = _traced_step(provider, backend)
    spans = exporter.get_finished_spans()
    graph, run = one(spans, names.SPAN_GRAPH), one(spans, names.SPAN_RUN_BACKWARD)
    graph_name = one(spans, names.SPAN_AOT_BACKWARD).attributes[names.ATTR_AOT_GRAPH_NAME]
    assert dict(run.attributes) == {
        names.ATTR_COMPILE_ID: "0/0",
        names.ATTR_BACKEND: backend,
        names.ATTR_RUN_KIND: names.RUN_KIND_BACKWARD,
        names.ATTR_AOT_GRAPH_NAME: graph_name,
        names.ATTR_RUN_INDEX: 1,
    }
    assert isinstance(graph_name, str) and "backward" in graph_name
    assert [link.context.span_id for link in run.links] == [graph.context.span_id]
    assert run.parent.span_id == step.get_span_context().span_id


def test_traced_inductor_compile_saves_an_aot_autograd_cache_entry_that_loads(provider):
    """The backward wrapper keeps AOT's cache working: the traced compile saves, a reload hits."""
    from torch._dynamo.utils import counters
    from torch._inductor.utils import fresh_cache

    with fresh_cache(), torch._functorch.config.patch(enable_autograd_cache=True):
        counters.clear()
        _traced_step(provider, "inductor")
        assert counters["aot_autograd"]["autograd_cache_saved"] == 1
        torch._dynamo.reset()
        compiled = torch.compile(_mlp(), backend="inductor")
        compiled(torch.randn(3, 4)).sum().backward()
        assert counters["aot_autograd"]["autograd_cache_hit"] == 1


def test_backward_loaded_from_the_aot_autograd_cache_is_recorded(provider, exporter):
    """On an AOT cache hit no compiler runs; backward runs still get spans (no graph name)."""
    from torch._dynamo.utils import counters
    from torch._inductor.utils import fresh_cache

    with fresh_cache(), torch._functorch.config.patch(enable_autograd_cache=True):
        torch.compile(_mlp(), backend="inductor")(torch.randn(3, 4)).sum().backward()
        torch._dynamo.reset()
        counters.clear()
        step = _traced_step(provider, "inductor")
        assert counters["aot_autograd"]["autograd_cache_hit"] == 1
    spans = exporter.get_finished_spans()
    assert not named(spans, names.SPAN_AOT_BACKWARD)
    graph, run = one(spans, names.SPAN_GRAPH), one(spans, names.SPAN_RUN_BACKWARD)
    assert dict(run.attributes) == {
        names.ATTR_COMPILE_ID: "0/0",
        names.ATTR_BACKEND: "inductor",
        names.ATTR_RUN_KIND: names.RUN_KIND_BACKWARD,
        names.ATTR_RUN_INDEX: 1,
    }
    assert [link.context.span_id for link in run.links] == [graph.context.span_id]
    assert run.parent.span_id == step.get_span_context().span_id


class _Artefact:
    """Stands in for a compiled backward: boxed, clears its inputs, carries cache facts."""

    _boxed_call = True
    _fx_graph_cache_key = "key"

    def __init__(self) -> None:
        self.seen: list[int] = []

    def __call__(self, args: list) -> list:
        self.seen.append(id(args))
        out = [a * 2 for a in args]
        args.clear()
        return out


def _backward_state(mode: str) -> RunState:
    from otel_dynamo._config.run_span_policy import RunSpanPolicy

    return RunState(
        policy=RunSpanPolicy(mode), identity=RunIdentity(names.RUN_KIND_BACKWARD), link=None
    )


def _proxy(recorder, mode: str = "all") -> tuple[RunProxy, _Artefact]:
    artefact = _Artefact()
    return RunProxy(artefact, _backward_state(mode), recorder), artefact


def test_backward_proxy_hands_over_the_same_list_and_keeps_no_reference(provider):
    """Boxed call: the callee gets the caller's list itself (and may clear it); nothing kept."""
    import gc
    import weakref

    proxy, artefact = _proxy(make_recorder(tracer_provider=provider))
    tensor = torch.ones(2)
    args = [tensor]
    out = proxy(args)
    assert artefact.seen == [id(args)] and args == []
    assert torch.equal(out[0], torch.full((2,), 2.0))
    ref = weakref.ref(tensor)
    del tensor, out
    gc.collect()
    assert ref() is None


def test_backward_proxy_answers_with_the_wrapped_artefact_attributes(provider):
    """AOT reads _boxed_call and cache facts off the compiled backward, and unwraps it."""
    proxy, artefact = _proxy(make_recorder(tracer_provider=provider), "off")
    assert proxy._boxed_call is True
    assert proxy._fx_graph_cache_key == "key"
    assert proxy.__wrapped__ is artefact
    with pytest.raises(AttributeError):
        proxy.no_such_attribute  # noqa: B018


def test_backward_proxy_answers_the_calling_convention_itself(provider):
    """``_boxed_call``, read by AOT at every backward run, is the proxy's own attribute
    (no ``__getattr__`` call); a callable without it gives a proxy without it."""
    proxy, _artefact = _proxy(make_recorder(tracer_provider=provider), "off")
    assert vars(proxy)["_boxed_call"] is True

    def unboxed(*args: object) -> object:
        return args

    plain = RunProxy(unboxed, _backward_state("off"), make_recorder(tracer_provider=provider))
    assert "_boxed_call" not in vars(plain)
    assert getattr(plain, "_boxed_call", False) is False


def test_backward_proxy_reraises_the_callee_error_unchanged(provider, exporter):
    """A failing compiled backward raises the same exception; its run span is ERROR."""
    error = RuntimeError("boom")

    def failing(args: list) -> list:
        raise error

    proxy = RunProxy(failing, _backward_state("all"), make_recorder(tracer_provider=provider))
    with pytest.raises(RuntimeError) as raised:
        proxy([torch.ones(1)])
    assert raised.value is error
    run = one(exporter.get_finished_spans(), names.SPAN_RUN_BACKWARD)
    assert run.status.status_code.name == "ERROR"
    assert run.attributes[names.ATTR_ERROR_TYPE] == "RuntimeError"


def test_eager_backend_runs_the_realized_graph_forward(provider):
    """eager returns a lazy forward; the traced wrapper calls the recompiled forward directly."""
    captured = []
    traced = otel_dynamo.traced("eager", tracer_provider=provider)

    def capturing(gm, example_inputs):
        captured.append(traced(gm, example_inputs))
        return captured[-1]

    torch.compile(_mlp(), backend=capturing)(torch.randn(3, 4))
    inner = captured[0].__wrapped__
    assert inner.__name__ == "forward"
    assert not inner.__self__._needs_recompile()


@pytest.mark.parametrize("form", ["spec", "positional", "keyword"])
def test_post_compile_backward_is_counted_in_each_calling_form(provider, form):
    """AOTDispatchAutograd.post_compile takes one spec from torch 2.12 on, and (compiled
    forward, compiled backward, ..., fw_metadata=...) before: the compiled backward is
    wrapped in either form, every other argument handed over as it came."""
    import dataclasses

    from otel_dynamo._sources.aot import with_loaded_backward
    from otel_dynamo._sources.graph_compile import GraphCompile

    @dataclasses.dataclass(frozen=True)
    class Spec:
        compiled_fw_func: object
        compiled_bw_func: object

    graph = GraphCompile(make_recorder(tracer_provider=provider), compile_id="0/0", backend="b")
    forward, backward, meta = object(), (lambda *args: args), object()
    if form == "spec":
        (spec,), kwargs = with_loaded_backward((Spec(forward, backward),), {}, graph)
        found = spec.compiled_bw_func
        assert (spec.compiled_fw_func, kwargs) == (forward, {})
    elif form == "positional":
        args, kwargs = with_loaded_backward((forward, backward, 3), {"fw_metadata": meta}, graph)
        found = args[1]
        assert (args[0], args[2], kwargs) == (forward, 3, {"fw_metadata": meta})
    else:
        args, kwargs = with_loaded_backward(
            (), {"compiled_bw_func": backward, "fw_metadata": meta}, graph
        )
        found = kwargs["compiled_bw_func"]
        assert (args, kwargs["fw_metadata"]) == ((), meta)
    assert isinstance(found, RunProxy) and found.__wrapped__ is backward
