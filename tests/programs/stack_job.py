"""One rank of the job the real-stack test runs under torchrun (it never imports
otel_dynamo: tracing is turned on from outside, OTEL_DYNAMO_ENABLED=true).

``--kind trigger`` does, each round (Dynamo reset between rounds, so every round compiles
again): a training step with a graph break, a shape and a dtype recompile, recompiles of
a function specialised on a Python int until its cache holds more entries than the
recompile-limit alert allows, a backend that fails to compile and one that fails at run
time, the fault OTEL_DYNAMO_FAULT injects on torch.tanh, an inductor compile asking for
CUDA graphs on CPU tensors (a CUDA-graph skip; first round only, it is slow), a
torch.export with decompositions (first round only) and, with
``--slow-compile-seconds``, a compile whose backend takes that long (first round only).
The rank named by ``--diverge-rank`` makes more int recompiles than the others.

``--kind clean`` compiles one function once and calls it with the same inputs: no break,
no recompile, no failure.

Rounds repeat until ``--seconds`` have passed (at least one). At exit each rank writes,
into ``--timing-dir``, how long the interpreter took from the end of ``main`` to its
last exit handler: the part of the job's time the telemetry's exit flush adds.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

INT_RECOMPILES = 9
"""Int specialisations per round: the cache reaches 9 entries (the alert fires past 6)."""
EXTRA_INT_RECOMPILES = 4


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.linear(x) * 2)
        print("graph break")
        return x.sigmoid()


def scaled(x: torch.Tensor, factor: int) -> torch.Tensor:
    return x * factor + 1


def train_and_recompile(model: Net) -> None:
    compiled = torch.compile(model, backend="aot_eager")
    for batch in (4, 3):
        compiled(torch.randn(batch, 4)).sum().backward()
    with torch.no_grad():
        compiled(torch.randn(4, 4, dtype=torch.float64).float())
        compiled(torch.randn(4, 4).double().float())


def int_recompiles(count: int) -> None:
    compiled = torch.compile(scaled, backend="aot_eager")
    for factor in range(count):
        compiled(torch.ones(3), factor)


def fail_on_purpose() -> None:
    failing = (
        (torch.relu, "relu_compile_error_TESTING_ONLY"),
        (torch.relu, "relu_runtime_error_TESTING_ONLY"),
        (torch.tanh, "aot_eager"),  # OTEL_DYNAMO_FAULT targets torch.tanh
    )
    for fn, backend in failing:
        with contextlib.suppress(Exception):  # the failures are the point: they are recorded
            torch.compile(fn, backend=backend)(torch.ones(2))


def reduce_overhead() -> None:
    compiled = torch.compile(lambda x: (x * 2).sin(), mode="reduce-overhead")
    compiled(torch.randn(8))


def export_with_decompositions() -> None:
    program = torch.export.export(torch.nn.Linear(4, 2), (torch.randn(3, 4),))
    program.run_decompositions().module()(torch.randn(3, 4))


def slow_compile(seconds: float) -> None:
    def slow_backend(
        gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]
    ) -> Callable[..., Any]:
        time.sleep(seconds)
        return gm.forward

    torch.compile(lambda x: x.cos() + 1, backend=slow_backend)(torch.ones(2))


def trigger_round(model: Net, first: bool, diverges: bool, slow_seconds: float) -> None:
    train_and_recompile(model)
    int_recompiles(INT_RECOMPILES + (EXTRA_INT_RECOMPILES if diverges else 0))
    fail_on_purpose()
    if first:
        reduce_overhead()
        export_with_decompositions()
        if slow_seconds > 0:
            slow_compile(slow_seconds)


def clean_round() -> None:
    compiled = torch.compile(scaled, backend="aot_eager")
    x = torch.ones(3)
    for _ in range(3):
        compiled(x, 2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kind", choices=("trigger", "clean"), required=True)
    parser.add_argument("--seconds", type=float, default=0.0)
    parser.add_argument("--diverge-rank", type=int, default=-1)
    parser.add_argument("--timing-dir", type=Path, required=True)
    parser.add_argument("--slow-compile-seconds", type=float, default=0.0)
    args = parser.parse_args()
    rank = int(os.environ.get("RANK", "0"))
    ended: list[float] = []

    def write_timing() -> None:
        # Registered before the first compile starts otel_dynamo's exit flush: it runs last.
        flush = time.monotonic() - ended[0] if ended else None
        path = args.timing_dir / f"rank-{rank}.json"
        path.write_text(json.dumps({"exit_seconds": flush}), encoding="utf-8")

    atexit.register(write_timing)
    torch.manual_seed(0)
    # Every new int or shape a recompile (no automatic dynamic), up to 64 per function.
    torch._dynamo.config.automatic_dynamic_shapes = False
    torch._dynamo.config.recompile_limit = 64
    model = Net()
    deadline = time.monotonic() + args.seconds
    first = True
    while first or time.monotonic() < deadline:
        torch._dynamo.reset()
        if args.kind == "trigger":
            trigger_round(model, first, rank == args.diverge_rank, args.slow_compile_seconds)
        else:
            clean_round()
        first = False
        print(f"rank {rank}: round done", flush=True)
    ended.append(time.monotonic())


if __name__ == "__main__":
    main()
