"""A real traced torch.compile job for Prometheus to scrape (it never imports otel_dynamo).

Run with OTEL_DYNAMO_ENABLED=true and OTEL_DYNAMO_PROMETHEUS_PORT=<port>. Every round it
resets Dynamo and compiles again: a graph break, a shape and a dtype recompile, a training
step, a backend that fails to compile, one that fails at run time, the fault that
OTEL_DYNAMO_FAULT injects on torch.tanh, an inductor compile asking for CUDA graphs (a
skip on the CPU, and compile cache lookups), and a torch.export with decompositions, so
every rate() on the dashboards has fresh samples while it runs for ``--seconds``.

    python traced_job.py --seconds 120
"""

from __future__ import annotations

import argparse
import contextlib
import time

import torch

ROUND_PAUSE_S = 1.0


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.linear(x) * 2)
        print("graph break")
        return x.sigmoid()


def train_and_recompile(model: Net) -> None:
    compiled = torch.compile(model, backend="aot_eager")
    for batch in (4, 3):
        compiled(torch.randn(batch, 4)).sum().backward()
    with torch.no_grad():
        compiled(torch.randn(4, 4, dtype=torch.float64).float())


def fail_on_purpose() -> None:
    failing = (
        (torch.relu, "relu_compile_error_TESTING_ONLY"),
        (torch.relu, "relu_runtime_error_TESTING_ONLY"),
        (torch.tanh, "aot_eager"),  # OTEL_DYNAMO_FAULT targets torch.tanh
    )
    for fn, backend in failing:
        with contextlib.suppress(Exception):  # the failures are the point: they are recorded
            torch.compile(fn, backend=backend)(torch.ones(2))


def reduce_overhead_once() -> None:
    """Inductor with CUDA graphs asked for, on CPU tensors: a CUDA-graph skip and compile
    cache lookups (misses at first, hits in later rounds)."""
    compiled = torch.compile(lambda x: (x * 2).sin(), mode="reduce-overhead")
    compiled(torch.randn(8))


def export_once() -> None:
    program = torch.export.export(torch.nn.Linear(4, 2), (torch.randn(3, 4),))
    program.run_decompositions().module()(torch.randn(3, 4))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=120.0)
    args = parser.parse_args()
    model = Net()
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        torch._dynamo.reset()
        train_and_recompile(model)
        fail_on_purpose()
        reduce_overhead_once()
        export_once()
        print("round done", flush=True)
        time.sleep(ROUND_PAUSE_S)


if __name__ == "__main__":
    main()
