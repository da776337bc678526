"""A job that calls one compiled model with several input shapes, so each shape is a
variant (a cache entry, one compile id) that serves a known number of calls.

``--calls 40,2`` makes 40 calls with batch 2, then 2 with batch 3 (automatic dynamic
shapes off, so each batch size is its own variant). ``--train`` runs each call as a
training step (forward and backward). Under torchrun, ``--diverge-rank R --extra N``
gives rank R batch 9 for its last N steps (a ragged shard of the data): a recompile
the other ranks never make. Every rank makes the same steps and all-reduces its loss
after each, as a data-parallel job would. ``--fork-calls N`` then forks a
``multiprocessing`` child that calls the first shape N more times.
Prints one JSON line: the calls made per batch size.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os

import torch

FIRST_BATCH = 2
DIVERGING_BATCH = 9


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", default="3")
    parser.add_argument("--train", action="store_true")
    parser.add_argument("--backend", default="eager")
    parser.add_argument("--diverge-rank", type=int, default=None)
    parser.add_argument("--extra", type=int, default=0)
    parser.add_argument("--fork-calls", type=int, default=0)
    options = parser.parse_args()
    distributed = "RANK" in os.environ and "WORLD_SIZE" in os.environ
    if distributed:
        torch.distributed.init_process_group("gloo")
    rank = int(os.environ.get("RANK", "0"))
    torch._dynamo.config.automatic_dynamic_shapes = False
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    compiled = torch.compile(model, backend=options.backend)
    batches = [
        FIRST_BATCH + index
        for index, calls in enumerate(options.calls.split(","))
        for _ in range(int(calls))
    ]
    if rank == options.diverge_rank and options.extra > 0:
        batches[-options.extra :] = [DIVERGING_BATCH] * options.extra
    made: dict[int, int] = {}
    for batch in batches:
        _step(compiled, torch.randn(batch, 4), train=options.train, distributed=distributed)
        made[batch] = made.get(batch, 0) + 1
    if options.fork_calls:
        child = multiprocessing.get_context("fork").Process(
            target=_calls, args=(compiled, FIRST_BATCH, options.fork_calls)
        )
        child.start()
        child.join()
    if distributed:
        torch.distributed.destroy_process_group()
    print(json.dumps({"rank": rank, "calls": made}))


def _calls(compiled: torch.nn.Module, batch: int, calls: int) -> None:
    for _ in range(calls):
        _step(compiled, torch.randn(batch, 4), train=False, distributed=False)


def _step(compiled: torch.nn.Module, x: torch.Tensor, *, train: bool, distributed: bool) -> None:
    with torch.set_grad_enabled(train):
        loss = compiled(x).sum()
        if train:
            loss.backward()
    if distributed:
        torch.distributed.all_reduce(loss.detach())


if __name__ == "__main__":
    main()
