"""Tracing changes nothing: results, gradients, graph counts and recompiles are identical,
and no tensor is copied or moved."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import torch
from _spans import named
from torch._dynamo.utils import clear_compilation_metrics, counters, get_compilation_metrics

import otel_dynamo
from otel_dynamo import names
from otel_dynamo._lifecycle import exit_steps

BACKENDS = ["eager", "aot_eager", pytest.param("inductor", marks=pytest.mark.slow)]
BATCHES = (4, 6, 5)  # 6 recompiles (size mismatch); 5 then runs the dynamic-shape graph


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))


@dataclasses.dataclass
class Training:
    """What a few compiled training steps produced, and what Dynamo compiled for them."""

    outputs: list[torch.Tensor]
    grads: list[torch.Tensor]
    graphs: int
    compiles: list[tuple[str, str | None]]  # (compile id, recompile reason) per compile


def _train(backend: Any) -> Training:
    torch._dynamo.reset()
    counters.clear()
    clear_compilation_metrics()
    model = _model()
    compiled = torch.compile(model, backend=backend)
    torch.manual_seed(1)
    outputs = []
    # No AOT Autograd cache: the traced run must compile through the traced compilers.
    with torch._functorch.config.patch(enable_autograd_cache=False):
        for batch in BATCHES:
            out = compiled(torch.randn(batch, 8))
            out.sum().backward()
            outputs.append(out.detach())
    return Training(
        outputs=outputs,
        grads=[p.grad.clone() for p in model.parameters()],
        graphs=counters["stats"]["unique_graphs"],
        compiles=[(str(m.compile_id), m.recompile_reason) for m in get_compilation_metrics()],
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_outputs_and_gradients_are_bitwise_identical(provider, backend):
    """Traced (every run a span) and untraced training steps give bitwise equal tensors."""
    plain = _train(backend)
    traced = _train(otel_dynamo.traced(backend, tracer_provider=provider, run_spans="all"))
    assert len(traced.outputs) == len(BATCHES)
    for a, b in zip(plain.outputs, traced.outputs, strict=True):
        assert a.dtype == b.dtype and torch.equal(a, b)
    for a, b in zip(plain.grads, traced.grads, strict=True):
        assert a.dtype == b.dtype and torch.equal(a, b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_graph_count_and_recompiles_are_unchanged(provider, exporter, backend):
    """Same number of graphs, same compile ids, same recompile reasons, traced or not."""
    plain = _train(backend)
    traced = _train(otel_dynamo.traced(backend, tracer_provider=provider))
    assert plain.graphs == traced.graphs == 2
    assert traced.compiles == plain.compiles
    reasons = [reason for _, reason in traced.compiles if reason]
    assert len(reasons) == 1 and "size mismatch" in reasons[0]
    assert len(named(exporter.get_finished_spans(), names.SPAN_GRAPH)) == 2


class _Aliasing(torch.nn.Module):
    """Returns a fresh tensor, a view of its parameter and a view of its input."""

    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(8, 8))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return x @ self.w, self.w.t(), x.view(-1)


def _storage(outputs: tuple[torch.Tensor, ...], module: _Aliasing, x: torch.Tensor) -> list:
    """Which outputs share memory with the parameter or the input."""
    return [
        (out.data_ptr() == module.w.data_ptr(), out.data_ptr() == x.data_ptr()) for out in outputs
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_outputs_alias_the_same_parameter_and_input_memory(provider, backend):
    """No copy: outputs that view a parameter or an input share its memory exactly as untraced."""
    torch.manual_seed(0)
    module, x = _Aliasing(), torch.randn(3, 8)
    plain = _storage(torch.compile(module, backend=backend)(x), module, x)
    torch._dynamo.reset()
    traced_backend = otel_dynamo.traced(backend, tracer_provider=provider, run_spans="all")
    traced = _storage(torch.compile(module, backend=traced_backend)(x), module, x)
    assert traced == plain == [(False, False), (True, False), (False, True)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_training_keeps_parameters_and_gradients_in_place(provider, backend):
    """Parameters keep their storage; gradients accumulate into the same tensors, on CPU."""
    model = _model()
    compiled = torch.compile(
        model, backend=otel_dynamo.traced(backend, tracer_provider=provider, run_spans="all")
    )
    params = [(p.data_ptr(), p.device) for p in model.parameters()]
    compiled(torch.randn(4, 8)).sum().backward()
    grads = [p.grad.data_ptr() for p in model.parameters()]
    out = compiled(torch.randn(4, 8))
    out.sum().backward()
    assert [(p.data_ptr(), p.device) for p in model.parameters()] == params
    assert [p.grad.data_ptr() for p in model.parameters()] == grads
    assert out.device.type == "cpu" and all(p.grad.device.type == "cpu" for p in model.parameters())


def test_inputs_are_neither_copied_nor_changed(provider):
    """The input tensor keeps its storage and values through a traced call."""
    x = torch.randn(4, 8)
    before = (x.data_ptr(), x.clone())
    out = torch.compile(
        _model(), backend=otel_dynamo.traced("aot_eager", tracer_provider=provider)
    )(x)
    assert out.device == x.device
    assert x.data_ptr() == before[0] and torch.equal(x, before[1])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA (run on a GPU machine)")
@pytest.mark.gpu
def test_traced_cuda_training_step_adds_no_device_sync(provider, exporter):
    """On CUDA a traced training step (every run a span) never synchronises the device,
    and every tensor (output, parameters, gradients) stays on it."""
    model = _model().cuda()
    compiled = torch.compile(
        model, backend=otel_dynamo.traced("inductor", tracer_provider=provider, run_spans="all")
    )
    x = torch.randn(4, 8, device="cuda")
    compiled(x).sum().backward()  # compiles forward and backward outside the checked region
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(3):
            out = compiled(x)
            out.sum().backward()
    finally:
        torch.cuda.set_sync_debug_mode(0)
    torch.cuda.synchronize()
    tensors = [out, *model.parameters(), *(p.grad for p in model.parameters())]
    assert all(t.is_cuda for t in tensors)
    exit_steps.settle(final=False)  # run spans end once their device time is read
    spans = exporter.get_finished_spans()
    assert len(named(spans, names.SPAN_RUN_FORWARD)) == 4
    assert len(named(spans, names.SPAN_RUN_BACKWARD)) == 4
