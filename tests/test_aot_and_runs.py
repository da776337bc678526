"""AOT Autograd partition, inner compiles and compiled runs, in training and inference."""

from __future__ import annotations

import torch

import otel_dynamo
from otel_dynamo import names
from tests._spans import named, one


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
