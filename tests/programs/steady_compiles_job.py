"""A job that compiles a new function every PAUSE_S seconds until it is killed.

    python steady_compiles_job.py

Each function has its own code object (frame compile id ``N/0`` for the N-th); it is
compiled (``backend="eager"``) and called once, then the job prints one line, flushed:
the compile's number and ``time.time_ns()`` when it ended. Never imports otel_dynamo:
enablement comes from the environment. Used to measure what is on disk after a SIGKILL,
which no handler can see.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch

PAUSE_S = 0.2


def make(number: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """A function of its own code object (frame compile id ``number/0``), compiled."""
    namespace: dict[str, Any] = {}
    exec(f"def step_{number}(x):\n    return (x + {number}).sin()\n", namespace)
    compiled: Callable[[torch.Tensor], torch.Tensor] = torch.compile(
        namespace[f"step_{number}"], backend="eager"
    )
    return compiled


number = 0
while True:
    make(number)(torch.ones(3))
    print(number, time.time_ns(), flush=True)
    number += 1
    time.sleep(PAUSE_S)
