"""A job whose compile is interrupted by Ctrl-C: the backend says it started, then waits.

python interrupted_compile_job.py READY_FILE

Run with OTEL_DYNAMO_ENABLED=true; the test sends SIGINT once READY_FILE exists, while
the backend (inside Dynamo's frame compile) sleeps. The job never imports otel_dynamo.
"""

from __future__ import annotations

import pathlib
import sys
import time

import torch


def slow_backend(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]):
    pathlib.Path(sys.argv[1]).write_text("compiling")
    time.sleep(120)  # interrupted long before
    return gm.forward


def main() -> None:
    compiled = torch.compile(lambda x: torch.sin(x) + 1, backend=slow_backend)
    compiled(torch.randn(4))


if __name__ == "__main__":
    main()
