"""A traced training job whose DataLoader forks worker processes (never imports otel_dynamo).

With ``--compile-in-workers`` each worker also compiles (its dataset normalizes samples
with a compiled function). Prints one JSON line with the loss once both epochs are done.
"""

from __future__ import annotations

import json
import sys

import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset


@torch.compile(backend="eager")
def normalize(x: torch.Tensor) -> torch.Tensor:
    return (x - x.mean()) / (x.std() + 1e-5)


class NormalizedDataset(Dataset):
    """Samples normalized by a compiled function: each worker compiles it."""

    def __init__(self, inputs: torch.Tensor, targets: torch.Tensor) -> None:
        self.inputs, self.targets = inputs, targets

    def __len__(self) -> int:
        return len(self.inputs)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        return normalize(self.inputs[index]), self.targets[index]


class Regressor(torch.nn.Module):
    """A user module: Dynamo compiles it (torch.nn's own containers are not compiled alone)."""

    def __init__(self) -> None:
        super().__init__()
        self.hidden = torch.nn.Linear(8, 8)
        self.out = torch.nn.Linear(8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.hidden(x).relu())


def main() -> None:
    torch.manual_seed(0)
    inputs, targets = torch.randn(64, 8), torch.randn(64, 1)
    if "--compile-in-workers" in sys.argv:
        data: Dataset = NormalizedDataset(inputs, targets)
    else:
        data = TensorDataset(inputs, targets)
    loader = DataLoader(data, batch_size=16, num_workers=2, multiprocessing_context="fork")
    model = Regressor()
    model.compile(backend="aot_eager")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(2):
        for inputs, targets in loader:
            loss = torch.nn.functional.mse_loss(model(inputs), targets)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    print(json.dumps({"loss": loss.item()}))


if __name__ == "__main__":
    main()
