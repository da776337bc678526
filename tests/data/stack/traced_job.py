"""A real traced torch.compile job for Prometheus to scrape (it never imports otel_dynamo).

Run with OTEL_DYNAMO_ENABLED=true and OTEL_DYNAMO_PROMETHEUS_PORT=<port>: it compiles
with a graph break, a shape and a dtype recompile, a backend that fails to compile and
one that fails at run time (and whatever OTEL_DYNAMO_FAULT injects), then keeps running
the compiled function for ``--seconds`` so the scrape endpoint stays up and counting.

    python traced_job.py --seconds 120
"""

from __future__ import annotations

import argparse
import time

import torch


def with_break(x: torch.Tensor) -> torch.Tensor:
    x = torch.relu(x * 2)
    print("graph break")
    return x.sigmoid()


def compile_everything() -> torch.nn.Module:
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    compiled = torch.compile(lambda x: model(with_break(x)), backend="aot_eager")
    for batch in (4, 3):
        compiled(torch.randn(batch, 4)).sum().backward()
    compiled(torch.randn(4, 4, dtype=torch.float64).float())
    for backend in ("relu_compile_error_TESTING_ONLY", "relu_runtime_error_TESTING_ONLY"):
        try:
            torch.compile(torch.relu, backend=backend)(torch.ones(2))
        except Exception as error:  # the failures are the point: they are recorded
            print(f"{backend}: {type(error).__name__}")
        torch._dynamo.reset()
    return compiled


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=120.0)
    args = parser.parse_args()
    compiled = compile_everything()
    print("ready", flush=True)
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        compiled(torch.randn(4, 4)).sum().backward()
        time.sleep(0.2)


if __name__ == "__main__":
    main()
