"""Tracing changes nothing: results, gradients, graph counts and recompiles are identical."""

from __future__ import annotations

import pytest
import torch
from torch._dynamo.utils import counters

import otel_dynamo


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))


def _run(backend) -> tuple[list[torch.Tensor], list[torch.Tensor], int]:
    torch._dynamo.reset()
    counters.clear()
    model = _model()
    compiled = torch.compile(model, backend=backend)
    torch.manual_seed(1)
    inputs = [torch.randn(4, 8), torch.randn(6, 8), torch.randn(4, 8, dtype=torch.float64).float()]
    outputs = []
    for x in inputs:
        out = compiled(x)
        out.sum().backward()
        outputs.append(out.detach())
    grads = [p.grad.clone() for p in model.parameters()]
    return outputs, grads, counters["stats"]["unique_graphs"]


@pytest.mark.parametrize(
    "backend", ["eager", "aot_eager", pytest.param("inductor", marks=pytest.mark.slow)]
)
def test_outputs_gradients_and_graph_count_are_bitwise_identical(provider, backend):
    """Traced and untraced runs give identical outputs, gradients and graph counts."""
    plain_out, plain_grads, plain_graphs = _run(backend)
    traced_out, traced_grads, traced_graphs = _run(
        otel_dynamo.traced(backend, tracer_provider=provider, run_spans="all")
    )
    assert all(torch.equal(a, b) for a, b in zip(plain_out, traced_out, strict=True))
    assert all(torch.equal(a, b) for a, b in zip(plain_grads, traced_grads, strict=True))
    assert traced_graphs == plain_graphs


def test_results_stay_on_the_input_device_and_inputs_are_untouched(provider):
    """Outputs live where inputs live; the input tensor's storage is not copied or changed."""
    x = torch.randn(4, 8)
    before = (x.data_ptr(), x.clone())
    out = torch.compile(
        _model(), backend=otel_dynamo.traced("aot_eager", tracer_provider=provider)
    )(x)
    assert out.device == x.device
    assert x.data_ptr() == before[0] and torch.equal(x, before[1])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA (run on a GPU machine)")
@pytest.mark.gpu
def test_traced_cuda_training_step_adds_no_device_sync(provider):
    """On CUDA, a traced training step triggers no synchronisation and keeps tensors on device."""
    model = _model().cuda()
    compiled = torch.compile(
        model, backend=otel_dynamo.traced("inductor", tracer_provider=provider, run_spans="all")
    )
    x = torch.randn(4, 8, device="cuda")
    compiled(x).sum().backward()  # compile outside the checked region
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(3):
            out = compiled(x)
            out.sum().backward()
    finally:
        torch.cuda.set_sync_debug_mode(0)
    assert out.is_cuda and all(p.grad.is_cuda for p in model.parameters())
