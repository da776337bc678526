"""Frame and graph spans from real torch.compile runs: names, keys and types."""

from __future__ import annotations

import pytest
import torch
from _spans import children, named, one

import otel_dynamo
from otel_dynamo import names


def _mlp() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


def test_frame_span_carries_code_location_guards_and_compile_id(provider, exporter):
    """A frame compile becomes torch.compile.frame with id, code location and guards."""

    def double_relu(x):
        return torch.relu(x) * 2

    backend = otel_dynamo.traced("eager", tracer_provider=provider, capture=("stacks", "guards"))
    compiled = torch.compile(double_relu, backend=backend)
    compiled(torch.randn(3))
    frame = one(exporter.get_finished_spans(), names.SPAN_FRAME)
    attrs = frame.attributes
    assert attrs[names.ATTR_COMPILE_ID] == "0/0"
    assert attrs[names.ATTR_CODE_FUNCTION] == "double_relu"
    assert attrs[names.ATTR_CODE_FILE] == __file__
    assert isinstance(attrs[names.ATTR_CODE_LINE], int)
    assert isinstance(attrs[names.ATTR_GUARD_COUNT], int) and attrs[names.ATTR_GUARD_COUNT] > 0
    assert all(isinstance(guard, str) for guard in attrs[names.ATTR_GUARDS])
    assert any(guard.startswith("TENSOR_MATCH") for guard in attrs[names.ATTR_GUARDS])
    assert attrs[names.ATTR_GRAPH_BREAK_COUNT] == 0
    assert tuple(attrs[names.ATTR_GRAPH_BREAK_REASONS]) == ()
    assert attrs[names.ATTR_OUTCOME] == names.OUTCOME_SUCCESS
    assert names.ATTR_RECOMPILE_REASON not in attrs


def test_guard_text_is_opt_in(provider, exporter):
    """By default the frame span has its guard count, not the guard text."""
    compiled = torch.compile(
        lambda x: x.cos() + 1, backend=otel_dynamo.traced("eager", tracer_provider=provider)
    )
    compiled(torch.randn(3))
    attrs = one(exporter.get_finished_spans(), names.SPAN_FRAME).attributes
    assert attrs[names.ATTR_GUARD_COUNT] > 0
    assert names.ATTR_GUARDS not in attrs


def test_graph_span_is_child_of_frame_with_dynamo_op_count(provider, exporter):
    """torch.compile.graph nests under its frame; op_count equals Dynamo's graph_op_count."""
    from torch._dynamo.utils import get_compilation_metrics

    compiled = torch.compile(_mlp(), backend=otel_dynamo.traced("eager", tracer_provider=provider))
    compiled(torch.randn(3, 4))
    spans = exporter.get_finished_spans()
    frame, graph = one(spans, names.SPAN_FRAME), one(spans, names.SPAN_GRAPH)
    assert graph.parent.span_id == frame.context.span_id
    assert graph.context.trace_id == frame.context.trace_id
    attrs = graph.attributes
    assert attrs[names.ATTR_BACKEND] == "eager"
    assert attrs[names.ATTR_COMPILE_ID] == "0/0"
    assert attrs[names.ATTR_GRAPH_OP_COUNT] == get_compilation_metrics()[-1].graph_op_count == 3
    assert attrs[names.ATTR_GRAPH_NODE_COUNT] > attrs[names.ATTR_GRAPH_OP_COUNT]
    assert list(attrs[names.ATTR_GRAPH_OPS]) == ["linear=2", "relu=1"]
    assert attrs[names.ATTR_GRAPH_INPUT_COUNT] == 5
    assert "[3, 4]" in attrs[names.ATTR_GRAPH_INPUT_SHAPES]
    assert list(attrs[names.ATTR_GRAPH_INPUT_DTYPES]) == ["float32"]
    assert list(attrs[names.ATTR_GRAPH_INPUT_DEVICES]) == ["cpu"]


def _sin_plus_cos(x):
    return torch.sin(x) + x.cos() * 2  # sin, add, mul: call_function; cos: call_method


def test_graph_span_counts_call_function_nodes_as_explain_does(provider, exporter):
    """call_function_count leaves out call_method nodes, unlike op_count; every target listed."""
    compiled = torch.compile(
        _sin_plus_cos, backend=otel_dynamo.traced("eager", tracer_provider=provider)
    )
    compiled(torch.randn(3))
    attrs = one(exporter.get_finished_spans(), names.SPAN_GRAPH).attributes
    assert attrs[names.ATTR_GRAPH_OP_COUNT] == 4
    count = attrs[names.ATTR_GRAPH_CALL_FUNCTION_COUNT]
    assert type(count) is int and count == 3
    ops = attrs[names.ATTR_GRAPH_CALL_FUNCTION_OPS]
    assert isinstance(ops, tuple) and all(isinstance(op, str) for op in ops)
    assert sorted(ops) == ["add=1", "mul=1", "torch.sin=1"]


def test_call_function_ops_are_capped_by_max_list_length(provider, exporter):
    """Past max_list_length the last item says how many targets were left out; count exact."""
    backend = otel_dynamo.traced("eager", tracer_provider=provider, max_list_length=2)
    torch.compile(_sin_plus_cos, backend=backend)(torch.randn(3))
    attrs = one(exporter.get_finished_spans(), names.SPAN_GRAPH).attributes
    ops = attrs[names.ATTR_GRAPH_CALL_FUNCTION_OPS]
    assert len(ops) == 2 and ops[0].endswith("=1") and ops[1] == "… 2 more"
    assert attrs[names.ATTR_GRAPH_CALL_FUNCTION_COUNT] == 3


def test_dynamo_phases_are_child_spans_with_dynamo_timestamps(provider, exporter):
    """Dynamo's own phases (bytecode_tracing, backend_compile, build_guards) nest in the frame."""
    compiled = torch.compile(
        lambda x: x.sin() + 1, backend=otel_dynamo.traced("eager", tracer_provider=provider)
    )
    compiled(torch.randn(3))
    spans = exporter.get_finished_spans()
    frame = one(spans, names.SPAN_FRAME)
    phases = [s for s in spans if s.name.startswith(names.SPAN_PHASE + " ")]
    phase_names = {s.attributes[names.ATTR_PHASE_NAME] for s in phases}
    assert {"bytecode_tracing", "backend_compile", "build_guards"} <= phase_names
    ids = {s.context.span_id for s in phases} | {frame.context.span_id}
    assert all(s.parent.span_id in ids for s in phases)
    assert all(frame.start_time <= s.start_time <= s.end_time <= frame.end_time for s in phases)


def test_every_span_has_its_own_id_and_frames_root_their_own_traces(provider, exporter):
    """Dynamo's restore of global random state does not make span or trace ids repeat."""
    compiled = torch.compile(
        _mlp(), backend=otel_dynamo.traced("aot_eager", tracer_provider=provider)
    )
    compiled(torch.randn(3, 4)).sum().backward()
    compiled(torch.randn(5, 4, dtype=torch.float64).float())
    with torch.no_grad():
        compiled(torch.randn(3, 4))
    spans = exporter.get_finished_spans()
    span_ids = [s.context.span_id for s in spans]
    assert len(span_ids) == len(set(span_ids))
    frames = named(spans, names.SPAN_FRAME)
    assert len(frames) >= 2
    assert all(frame.parent is None for frame in frames)
    assert len({frame.context.trace_id for frame in frames}) == len(frames)


def test_frame_under_user_span_is_its_child(provider, exporter):
    """A compile that starts inside a user's span joins that span's trace."""
    tracer = provider.get_tracer("user")
    compiled = torch.compile(
        lambda x: x.cos(), backend=otel_dynamo.traced("eager", tracer_provider=provider)
    )
    with tracer.start_as_current_span("train_step") as step:
        compiled(torch.randn(2))
    frame = one(exporter.get_finished_spans(), names.SPAN_FRAME)
    assert frame.parent.span_id == step.get_span_context().span_id


def test_telemetry_survives_dynamo_reset_either_side_of_wrapping(provider, exporter):
    """torch._dynamo.reset() before or after traced() still yields frame and graph spans."""
    backend = otel_dynamo.traced("eager", tracer_provider=provider)
    torch._dynamo.reset()
    torch.compile(lambda x: x + 1, backend=backend)(torch.randn(2))
    torch._dynamo.reset()
    late = otel_dynamo.traced("eager", tracer_provider=provider)
    torch.compile(lambda x: x - 1, backend=late)(torch.randn(2))
    spans = exporter.get_finished_spans()
    assert len(named(spans, names.SPAN_FRAME)) == 2
    assert len(named(spans, names.SPAN_GRAPH)) == 2
    assert all(children(spans, frame) for frame in named(spans, names.SPAN_FRAME))


def test_unknown_backend_name_fails_at_wrap_time_with_torch_error():
    """traced('no_such_backend') raises torch's InvalidBackend immediately."""
    from torch._dynamo.exc import InvalidBackend

    with pytest.raises(InvalidBackend):
        otel_dynamo.traced("no_such_backend")


def test_traced_keeps_the_inner_backend_name():
    """The wrapper keeps __name__, so torch's messages name the same backend."""
    from torch._dynamo.backends.registry import lookup_backend

    assert otel_dynamo.traced("aot_eager").__name__ == lookup_backend("aot_eager").__name__


def test_bad_option_value_names_option_and_accepted_values():
    """traced(run_spans='sometimes') fails with a message naming value and accepted values."""
    from otel_dynamo._config.settings import ConfigError

    with pytest.raises(ConfigError, match=r"run_spans='sometimes'.*accepted: off, all"):
        otel_dynamo.traced("eager", run_spans="sometimes")


def test_untraced_compile_beside_a_traced_one_records_nothing(provider, exporter):
    """A plain torch.compile running after a traced one leaves no frame span behind."""
    traced = torch.compile(
        lambda x: x.sin(), backend=otel_dynamo.traced("eager", tracer_provider=provider)
    )
    traced(torch.ones(3))
    before = len(exporter.get_finished_spans())
    torch.compile(lambda x: x.cos() * 2, backend="eager")(torch.ones(3))
    assert len(exporter.get_finished_spans()) == before
    frames = [s for s in exporter.get_finished_spans() if s.name == names.SPAN_FRAME]
    assert [f.attributes[names.ATTR_COMPILE_ID] for f in frames] == ["0/0"]
