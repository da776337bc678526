"""A job that recompiles the common ways: a tensor's shape, a Python float and a list's
length change between calls (backend aot_eager: fast, with AOT autograd and a backward).

Never imports otel_dynamo: tracing is turned on from outside (OTEL_DYNAMO_ENABLED=true).
Frame compiles: ``scaled`` 3 (0/0; 0/1 for x of size 8 instead of 4; 0/2 for scale 2.5
instead of 64.75), ``summed`` 2 (1/0; 1/1 for 4 tensors instead of 3).
"""

from __future__ import annotations

import torch


def scaled(x: torch.Tensor, scale: float) -> torch.Tensor:
    return (x * scale).relu().sum()


def summed(xs: list[torch.Tensor]) -> torch.Tensor:
    return torch.stack(xs).sum()


def main() -> None:
    torch.manual_seed(0)
    compiled = torch.compile(scaled, backend="aot_eager", dynamic=False)
    compiled(torch.randn(4, requires_grad=True), 64.75).backward()
    compiled(torch.randn(8, requires_grad=True), 64.75).backward()
    compiled(torch.randn(8, requires_grad=True), 2.5).backward()
    stacked = torch.compile(summed, backend="aot_eager", dynamic=False)
    stacked([torch.randn(2)] * 3)
    stacked([torch.randn(2)] * 4)


if __name__ == "__main__":
    main()
