"""A training job that never imports otel_dynamo: enablement must come from outside.

Compiles a module (graph break inside) with the backend named by JOB_BACKEND (torch's
default, inductor, when unset) through ``nn.Module.compile``, runs two training steps,
and prints one JSON line: the loss and whether torch was imported before the job ran.
With ``--ddp`` it joins a gloo process group first (torchrun sets the rendezvous).
"""

from __future__ import annotations

import json
import os
import sys

TORCH_PRELOADED = "torch" in sys.modules

import torch  # noqa: E402


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = torch.nn.Linear(8, 8)
        self.second = torch.nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.first(x).relu()
        print("graph break here", file=sys.stderr)
        return self.second(hidden)


def main() -> None:
    if "--ddp" in sys.argv:
        torch.distributed.init_process_group("gloo")
    torch.manual_seed(0)
    model = Net()
    backend = os.environ.get("JOB_BACKEND")
    model.compile(**({"backend": backend} if backend else {}))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        loss = model(torch.randn(4, 8)).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    if "--ddp" in sys.argv:
        torch.distributed.destroy_process_group()
    print(json.dumps({"loss": loss.item(), "torch_preloaded": TORCH_PRELOADED}))


if __name__ == "__main__":
    main()
