"""A short job for reading a run back from Jaeger: a graph break, shape and dtype
recompiles, a training step, and a backend that fails to compile (backend aot_eager:
fast on a CPU).

Never imports otel_dynamo: tracing is turned on from outside (OTEL_DYNAMO_ENABLED=true).
"""

from __future__ import annotations

import contextlib

import torch


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.linear(x) * 2)
        print("graph break")
        return x.sigmoid()


def main() -> None:
    torch.manual_seed(0)
    compiled = torch.compile(Net(), backend="aot_eager")
    for batch in (4, 3, 3):
        compiled(torch.randn(batch, 4)).sum().backward()
    with torch.no_grad():
        compiled(torch.randn(4, 4))
    with contextlib.suppress(Exception):  # the failure is the point: it is recorded
        torch.compile(torch.relu, backend="relu_compile_error_TESTING_ONLY")(torch.ones(2))


if __name__ == "__main__":
    main()
