"""A job with one cause of recompiles or graph breaks, chosen by its first argument, as
users write them (tests/fixes/): it prints what it computes, so that a fix that changed
the result would show. ``python one_cause_job.py SCENARIO``."""

from __future__ import annotations

import copy
import logging
import sys

import torch

BACKEND = "eager"
SCALE = 1
MODE = "m0"
log = logging.getLogger("one_cause_job")


@torch.compile(backend=BACKEND)
def dimension(x, w):
    return (x * w).sum(0)


@torch.compile(backend=BACKEND)
def int_argument(x, n):
    return x * n + 1


@torch.compile(backend=BACKEND)
def float_argument(x, scale):
    return x * scale


@torch.compile(backend=BACKEND)
def global_int(x):
    return x * SCALE


@torch.compile(backend=BACKEND)
def list_length(xs):
    return sum(x.sum() for x in xs)


@torch.compile(backend=BACKEND)
def dtype_change(x):
    return x * 2


@torch.compile(backend=BACKEND)
def requires_grad_change(x):
    return x * 2


@torch.compile(backend=BACKEND)
def recompile_limit(x):
    return x * len(MODE)


class Counter(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.step = 0

    def forward(self, x):
        self.step += 1
        return self.lin(x) * self.step


@torch.compile(backend=BACKEND)
def prints(x):
    y = x * 2
    print("y computed")
    return y + 1


@torch.compile(backend=BACKEND)
def logs(x):
    y = x * 2
    log.info("y computed")
    return y + 1


@torch.compile(backend=BACKEND)
def item(x):
    return x / x.max().item()


@torch.compile(backend=BACKEND)
def nonzero(x):
    return torch.nonzero(x > 1).sum() + x.sum()


@torch.compile(backend=BACKEND)
def deep_copy(x, cfg):
    return x * copy.deepcopy(cfg)["k"]


@torch.compile(backend=BACKEND)
def branch(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


def run(scenario: str) -> None:
    global SCALE, MODE
    if scenario == "dimension":
        for n in (4, 8, 12, 16):
            show(dimension(torch.arange(n * 3.0).reshape(n, 3), torch.ones(3)))
    elif scenario == "int_argument":
        for n in (1, 2, 3, 4):
            show(int_argument(torch.ones(3), n))
    elif scenario == "float_argument":
        for scale in (0.5, 1.5, 2.5, 3.5):
            show(float_argument(torch.ones(3), scale))
    elif scenario == "global_int":
        for SCALE in (1, 2, 3):
            show(global_int(torch.ones(3)))
    elif scenario == "module_counter":
        torch.manual_seed(0)
        model = torch.compile(Counter(), backend=BACKEND)
        for _ in range(4):
            show(model(torch.ones(2, 3)).detach())
    elif scenario == "list_length":
        for n in (2, 3, 4):
            show(list_length([torch.ones(2) for _ in range(n)]))
    elif scenario == "dtype_change":
        for dtype in (torch.float32, torch.float64):
            show(dtype_change(torch.ones(3, dtype=dtype)))
    elif scenario == "requires_grad_change":
        for grad in (False, True):
            show(requires_grad_change(torch.ones(3, requires_grad=grad)).detach())
    elif scenario == "recompile_limit":
        for index in range(12):
            MODE = "m" * (index + 1)
            show(recompile_limit(torch.ones(2)))
    else:
        run_breaking(scenario)


def run_breaking(scenario: str) -> None:
    calls = {
        "prints": lambda: prints(torch.ones(3)),
        "logs": lambda: logs(torch.ones(3)),
        "item": lambda: item(torch.arange(1, 4, dtype=torch.float32)),
        "nonzero": lambda: nonzero(torch.arange(4, dtype=torch.float32)),
        "deep_copy": lambda: deep_copy(torch.ones(3), {"k": 2}),
        "branch": lambda: branch(torch.ones(3)),
    }
    for _ in range(2):
        show(calls[scenario]())


def show(value: torch.Tensor) -> None:
    print([round(float(item), 4) for item in value.reshape(-1)])


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s %(message)s")
    run(sys.argv[1])
