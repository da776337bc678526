"""What every ``otel-dynamo`` subcommand shares: exit codes, errors, number arguments."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

PROG = "otel-dynamo"
EXIT_OK = 0
EXIT_FAILED = 1
"""Nothing could be read, or the HTML page could not be written."""


def error(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)


def announce(message: str) -> None:
    """What a command did beside its output (a file it wrote), on stderr: stdout stays
    the report or its JSON."""
    print(f"{PROG}: {message}", file=sys.stderr)


def write_page(path: Path, page: str | Iterable[str], *, what: str = "HTML page") -> bool:
    """Write ``page`` (its text, or its pieces in order) to ``path`` and say so; an error
    naming the path when it cannot."""
    try:
        with path.open("w", encoding="utf-8") as stream:
            stream.writelines([page] if isinstance(page, str) else page)
    except OSError as problem:
        error(f"{path}: cannot write the {what}: {problem.strerror}")
        return False
    announce(f"wrote the {what} {path}")
    return True


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


def positive_float(text: str) -> float:
    """A number of seconds above 0 (``1.5``); an error naming what was given."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number above 0, got {text}")
    return value
