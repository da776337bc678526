"""A job whose compile fails with an error text that carries secrets (a URL with user,
password and a query token), then compiles and runs a function that works; tracing on
from outside (OTEL_DYNAMO_ENABLED=true). ``--debug-logging`` turns the job's own logging
on at DEBUG for every logger, as a job being debugged would.

Never imports otel_dynamo. Prints one line: ``done``.
"""

from __future__ import annotations

import argparse
import logging

import torch

LEAKY_ERROR = "could not fetch http://trainer:PASSWORD4242@models.internal/w?token=TOKEN4242"


def leaky_backend(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> object:
    raise RuntimeError(LEAKY_ERROR)


def double(x: torch.Tensor) -> torch.Tensor:
    return (x * 2).sin()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--debug-logging", action="store_true")
    args = parser.parse_args()
    if args.debug_logging:
        logging.basicConfig(level=logging.DEBUG)
    try:
        torch.compile(double, backend=leaky_backend)(torch.randn(4))
    except Exception as error:  # the job expects its backend to fail
        assert "TOKEN4242" in str(error)
    torch._dynamo.reset()
    torch.compile(double, backend="eager")(torch.randn(4))
    print("done")


if __name__ == "__main__":
    main()
