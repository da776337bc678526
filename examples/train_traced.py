"""A small real training loop under torch.compile, traced by otel_dynamo.

It has a deliberate graph break (a print inside forward), a shape recompile (the last
batch is smaller) and a dtype recompile (an evaluation pass in float64). Telemetry goes
to OTLP/JSON Lines files under ./otel-dynamo/ (no server needed); the script then prints
the report of what was recorded.

    python examples/train_traced.py [--backend aot_eager] [--steps 6] [--out ./otel-dynamo]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

import torch
from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

import otel_dynamo
from otel_dynamo import report


class TinyNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU())
        self.head = torch.nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(x)
        print("forward on a batch of", x.shape[0])  # deliberate graph break
        return self.head(hidden)


def make_provider(out_dir: pathlib.Path) -> TracerProvider:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"traces-example-{os.getpid()}-{time.time_ns()}.jsonl"
    provider = TracerProvider(resource=Resource.create({"service.name": "otel-dynamo-example"}))
    provider.add_span_processor(BatchSpanProcessor(FileSpanExporter(path=str(path))))
    return provider


def train(backend: str, steps: int, provider: TracerProvider) -> None:
    torch.manual_seed(0)
    model = TinyNet()
    compiled = torch.compile(model, backend=otel_dynamo.traced(backend, tracer_provider=provider))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    tracer = provider.get_tracer("example")
    for step in range(steps):
        batch = 8 if step < steps - 1 else 5  # the smaller last batch recompiles
        with tracer.start_as_current_span("train_step"):
            loss = compiled(torch.randn(batch, 16)).pow(2).mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    with torch.no_grad(), tracer.start_as_current_span("eval"):
        model.double()
        compiled(torch.randn(8, 16, dtype=torch.float64))  # dtype (and grad mode) recompile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="aot_eager")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("otel-dynamo"))
    args = parser.parse_args()
    provider = make_provider(args.out)
    train(args.backend, args.steps, provider)
    provider.shutdown()
    summary = report.summarize(report.load_telemetry([str(args.out)]))
    print(report.render_terminal(summary, color=report.color_enabled(sys.stdout)))
    print(f"telemetry written under {args.out}/ (OTLP/JSON Lines)")


if __name__ == "__main__":
    main()
