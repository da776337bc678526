"""What every ``otel-dynamo`` subcommand shares: exit codes, errors, number arguments."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

PROG = "otel-dynamo"
EXIT_OK = 0
EXIT_FAILED = 1
"""Nothing could be read, or the HTML page could not be written."""


def error(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)


def non_negative_int(text: str) -> int:
    value = int_argument(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {text}")
    return value


def positive_int(text: str) -> int:
    value = int_argument(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more, got {text}")
    return value


def at_least(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int_argument(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {minimum} or more, got {text}")
        return value

    return parse


def int_argument(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
