"""A model and its loss function compiled separately, in a job that never imports
otel_dynamo (OTEL_DYNAMO_ENABLED=true turns tracing on from outside).

Both are compiled before either runs, with a counting backend around aot_eager; the
model has a graph break. Writes the counts (compile id -> graphs, ops) as JSON to argv[1].
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _counting import CountingBackend
from programs.compile_job import Net  # the same model, graph break included


def loss_fn(out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.mse_loss(out, target)


def main() -> None:
    counting = CountingBackend("aot_eager")
    model = torch.compile(Net(), backend=counting)
    loss = torch.compile(loss_fn, backend=counting)
    x, target = torch.randn(4, 8), torch.randn(4, 2)
    for _ in range(2):
        loss(model(x), target).backward()
    counts = {"graphs": dict(counting.graphs), "ops": dict(counting.ops)}
    Path(sys.argv[1]).write_text(json.dumps(counts))


if __name__ == "__main__":
    main()
