"""On a CUDA device: device time of recorded runs without a sync, held to CUDA events the
test takes itself, and CUDA-graph decisions held to torch's counters. Skipped where no
CUDA device is present (the logic is tested on the CPU in tests/recording/test_device_time.py
and tests/sources/test_cudagraphs_and_caches.py)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from _telemetry_support import Signals
from torch._dynamo.utils import counters

from otel_dynamo import names
from otel_dynamo._lifecycle import exit_steps

pytestmark = [
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA (run on a GPU machine)"),
    pytest.mark.gpu,
]
TOLERANCE = 0.10
"""Device time within 10 % of the test's own events around the same call."""


def _settled(signals: Signals) -> list[Any]:
    torch.cuda.synchronize()
    exit_steps.settle(final=False)
    return signals.finished()


def _model() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Linear(256, 256), torch.nn.GELU(), torch.nn.Linear(256, 256)
    ).cuda()


def test_a_traced_training_step_with_device_timing_never_syncs() -> None:
    """Every run recorded and timed: the steady steps run under sync debug mode "error",
    and every run span gets its device time."""
    torch._dynamo.reset()
    signals = Signals()
    model = _model()
    compiled = torch.compile(model, backend=signals.traced("inductor", run_spans="all"))
    x = torch.randn(64, 256, device="cuda")
    compiled(x).sum().backward()
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(5):
            compiled(x).sum().backward()
    finally:
        torch.cuda.set_sync_debug_mode(0)
    runs = [span for span in _settled(signals) if span.name.startswith("torch.compile.run.")]
    assert len(runs) == 12  # 6 forward, 6 backward
    for span in runs:
        assert span.attributes[names.ATTR_RUN_DEVICE] == f"cuda:{torch.cuda.current_device()}"
        assert span.attributes[names.ATTR_RUN_DEVICE_DURATION] > 0


def test_device_time_matches_the_tests_own_events() -> None:
    """A compiled call whose kernels take milliseconds: the run span's device time is
    within 10 % of CUDA events the test records around the same call."""
    torch._dynamo.reset()
    signals = Signals()
    compiled = torch.compile(
        lambda a: (a @ a).relu() @ a, backend=signals.traced("inductor", run_spans="all")
    )
    a = torch.randn(4096, 4096, device="cuda")
    compiled(a)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    compiled(a)
    end.record()
    spans = [span for span in _settled(signals) if span.name == names.SPAN_RUN_INFERENCE]
    ours = spans[-1].attributes[names.ATTR_RUN_DEVICE_DURATION]
    theirs = start.elapsed_time(end) / 1e3
    assert theirs > 0.001
    assert abs(ours - theirs) <= TOLERANCE * theirs


def test_reduce_overhead_with_a_mutated_input_records_torchs_skip() -> None:
    """mode="reduce-overhead", an input mutated in place: the skips and partitions
    recorded equal torch's counters, and the reason is torch's own statement."""
    torch._dynamo.reset()
    counters.clear()
    signals = Signals()

    def step(x: torch.Tensor, buffer: torch.Tensor) -> torch.Tensor:
        buffer.add_(1)
        return (x * 2).sin() + buffer

    compiled = torch.compile(step, backend=signals.traced("inductor"), mode="reduce-overhead")
    x, buffer = torch.randn(64, device="cuda"), torch.zeros(64, device="cuda")
    for _ in range(3):
        compiled(x, buffer)
    spans = _settled(signals)
    skipped = [
        span
        for span in spans
        if span.attributes.get(names.ATTR_CUDAGRAPH_DECISION) == names.CUDAGRAPH_SKIPPED
    ]
    assert len(skipped) == counters["inductor"]["cudagraph_skips"] >= 1
    assert any("mutat" in span.attributes[names.ATTR_CUDAGRAPH_SKIP_REASON] for span in skipped)
    partitions = sum(
        span.attributes.get(names.ATTR_CUDAGRAPH_PARTITIONS, 0)
        for span in spans
        if names.ATTR_CUDAGRAPH_DECISION in span.attributes
    )
    assert partitions == counters["inductor"]["cudagraph_partitions"]


def test_a_graphed_graph_is_said_graphed_and_its_replays_are_timed() -> None:
    """reduce-overhead without mutation: the graph is graphed, and runs (CUDA graph
    replays) get a device time."""
    torch._dynamo.reset()
    signals = Signals()
    compiled = torch.compile(
        lambda x: (x * 2).sin(),
        backend=signals.traced("inductor", run_spans="all"),
        mode="reduce-overhead",
    )
    x = torch.randn(64, device="cuda")
    for _ in range(4):
        compiled(x)
    spans = _settled(signals)
    (graph,) = [span for span in spans if span.name == names.SPAN_GRAPH]
    assert graph.attributes[names.ATTR_CUDAGRAPH_DECISION] == names.CUDAGRAPH_GRAPHED
    runs = [span for span in spans if span.name == names.SPAN_RUN_INFERENCE]
    assert len(runs) == 4
    assert all(span.attributes[names.ATTR_RUN_DEVICE_DURATION] > 0 for span in runs)
