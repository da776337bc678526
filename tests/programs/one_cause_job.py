"""A job with one cause of recompiles or graph breaks, chosen by its first argument, as
users write them (tests/fixes/): it prints what it computes, so that a fix that changed
the result would show. ``python one_cause_job.py SCENARIO``."""

from __future__ import annotations

import copy
import logging
import sys
from collections.abc import Callable

import torch

BACKEND = "eager"
SCALE = 1
GAIN = 0.5
MODE = "m0"
log = logging.getLogger("one_cause_job")


@torch.compile(backend=BACKEND)
def dimension(x, w):
    return (x * w).sum(0)


@torch.compile(backend=BACKEND)
def two_dimensions(x):
    return (x * 2).sum(0)


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
def global_float(x):
    return x * GAIN


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


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)

    def forward(self, x):
        return self.lin(x).relu().sum(0)


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


def changing_dimension() -> None:
    for n in (4, 8, 12, 16):
        show(dimension(torch.arange(n * 3.0).reshape(n, 3), torch.ones(3)))


def changing_two_dimensions() -> None:
    """Its rows change, then its columns: two recompiles of one argument, one per dimension."""
    for rows, columns in ((2, 3), (4, 3), (4, 5), (6, 7)):
        show(two_dimensions(torch.arange(rows * columns * 1.0).reshape(rows, columns)))


def changing_int() -> None:
    for n in (1, 2, 3, 4):
        show(int_argument(torch.ones(3), n))


def changing_float() -> None:
    for scale in (0.5, 1.5, 2.5, 3.5):
        show(float_argument(torch.ones(3), scale))


def changing_global() -> None:
    global SCALE
    for value in (1, 2, 3):
        SCALE = value
        show(global_int(torch.ones(3)))


def changing_global_float() -> None:
    global GAIN
    for value in (0.5, 1.5, 2.5, 3.5):
        GAIN = value
        show(global_float(torch.ones(3)))


def counting_module() -> None:
    torch.manual_seed(0)
    model = torch.compile(Counter(), backend=BACKEND)
    for _ in range(4):
        show(model(torch.ones(2, 3)).detach())


def module_batch() -> None:
    torch.manual_seed(0)
    model = torch.compile(Net(), backend=BACKEND)
    with torch.no_grad():
        for n in (4, 8, 12):
            show(model(torch.ones(n, 3)))


def changing_length() -> None:
    for n in (2, 3, 4):
        show(list_length([torch.ones(2) for _ in range(n)]))


def changing_dtype() -> None:
    for dtype in (torch.float32, torch.float64):
        show(dtype_change(torch.ones(3, dtype=dtype)))


def changing_requires_grad() -> None:
    for grad in (False, True):
        show(requires_grad_change(torch.ones(3, requires_grad=grad)).detach())


def past_the_limit() -> None:
    global MODE
    for index in range(12):
        MODE = "m" * (index + 1)
        show(recompile_limit(torch.ones(2)))


def twice(call: Callable[[], torch.Tensor]) -> Callable[[], None]:
    def run() -> None:
        for _ in range(2):
            show(call())

    return run


SCENARIOS: dict[str, Callable[[], None]] = {
    "dimension": changing_dimension,
    "two_dimensions": changing_two_dimensions,
    "int_argument": changing_int,
    "float_argument": changing_float,
    "global_int": changing_global,
    "global_float": changing_global_float,
    "module_counter": counting_module,
    "module_dimension": module_batch,
    "list_length": changing_length,
    "dtype_change": changing_dtype,
    "requires_grad_change": changing_requires_grad,
    "recompile_limit": past_the_limit,
    "prints": twice(lambda: prints(torch.ones(3))),
    "logs": twice(lambda: logs(torch.ones(3))),
    "item": twice(lambda: item(torch.arange(1, 4, dtype=torch.float32))),
    "nonzero": twice(lambda: nonzero(torch.arange(4, dtype=torch.float32))),
    "deep_copy": twice(lambda: deep_copy(torch.ones(3), {"k": 2})),
    "branch": twice(lambda: branch(torch.ones(3))),
}


def show(value: torch.Tensor) -> None:
    print([round(float(item), 4) for item in value.reshape(-1)])


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s %(message)s")
    SCENARIOS[sys.argv[1]]()
