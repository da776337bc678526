"""A torch.export job that never imports otel_dynamo: enablement comes from outside.

Exports a small module (non-strict, dynamic batch), decomposes the program, runs the
exported module twice, then exports a module whose forward branches on a tensor's value
under strict mode, which fails (torch._dynamo.exc.Unsupported, caught here). Prints one
JSON line: the runs made and the failure's class.
"""

from __future__ import annotations

import json

import torch

RUNS = 2


class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x).relu()


class Branchy(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:  # data-dependent control flow: strict export cannot trace it
            return x + 1
        return x - 1


def main() -> None:
    batch = torch.export.Dim("batch")
    program = torch.export.export(Small(), (torch.randn(2, 4),), dynamic_shapes={"x": {0: batch}})
    program = program.run_decompositions()
    module = program.module()
    for _ in range(RUNS):
        module(torch.randn(3, 4))
    failure = None
    try:
        torch.export.export(Branchy(), (torch.randn(2, 4),), strict=True)
    except Exception as exc:  # the job reports what failed
        failure = f"{type(exc).__module__}.{type(exc).__qualname__}"
    print(json.dumps({"runs": RUNS, "failure": failure}))


if __name__ == "__main__":
    main()
