"""Worker processes that compile while the job itself never does (never imports otel_dynamo).

python worker_compile_job.py dataloader-fork|dataloader-spawn|pool-terminate

* ``dataloader-fork`` / ``dataloader-spawn``: a ``DataLoader`` with two workers started
  that way, whose dataset normalizes each sample with a function each worker compiles on
  first use (``torch.compile`` is called there, so the workers build their telemetry
  after they start) and end with
  ``os._exit`` (fork) or ``sys.exit`` (spawn) after ``Process._bootstrap``.
* ``pool-terminate``: a spawn ``multiprocessing.Pool`` of two whose tasks call the same
  compiled function; leaving its ``with`` block terminates it, which sends SIGTERM to
  workers that may already be exiting (flushing).

Every sample and task calls the compiled function with the same shape: one compile per
worker. Prints one JSON line: the pids of the workers that compiled.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
from collections.abc import Callable

import torch
from torch.utils.data import DataLoader, Dataset

_compiled: Callable[[torch.Tensor], torch.Tensor] | None = None


def normalize(x: torch.Tensor) -> torch.Tensor:
    """Compiled on first use, in the worker: the job itself never calls torch.compile."""
    global _compiled
    if _compiled is None:
        _compiled = torch.compile(lambda t: (t - t.mean()) / (t.std() + 1e-5), backend="eager")
    return _compiled(x)


class NormalizedDataset(Dataset):
    """Eight samples, each normalized by the compiled function, tagged with the worker pid."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        return normalize(torch.arange(4.0) + index), os.getpid()


def task(index: int) -> int:
    normalize(torch.arange(4.0) + index)
    return os.getpid()


def main() -> None:
    mode = sys.argv[1]
    if mode == "pool-terminate":
        with multiprocessing.get_context("spawn").Pool(2) as pool:
            pids = set(pool.map(task, range(8), chunksize=1))
    else:
        context = mode.removeprefix("dataloader-")
        loader = DataLoader(
            NormalizedDataset(), batch_size=2, num_workers=2, multiprocessing_context=context
        )
        pids = {int(pid) for _, batch_pids in loader for pid in batch_pids}
    print(json.dumps({"workers": sorted(pids)}), flush=True)


if __name__ == "__main__":
    main()
