"""The ``otel-dynamo`` command line.

Each subcommand is one :class:`Subcommand` in :data:`SUBCOMMANDS`: a function that
declares its arguments and a function that runs it. Adding a command is adding an
entry there. Runners import what they need when they run, so ``otel-dynamo report``
never imports torch (``otel-dynamo demo`` does, to train its model).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Sequence

from otel_dynamo.cli import demo_command, diff_command, report_command
from otel_dynamo.cli.arguments import PROG

__all__ = ["main"]


@dataclasses.dataclass(frozen=True)
class Subcommand:
    """One ``otel-dynamo`` subcommand."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``otel-dynamo`` with ``argv`` (default: the process's arguments); the exit code."""
    args = build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run  # the subcommand's (set_defaults)
    return run(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="OpenTelemetry for torch.compile: tools over its telemetry."
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for command in SUBCOMMANDS:
        sub = commands.add_parser(command.name, help=command.help, description=command.help)
        command.add_arguments(sub)
        sub.set_defaults(run=command.run)
    return parser


RUN_HELP = "run a command with torch.compile tracing on (sets OTEL_DYNAMO_ENABLED=true)"


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    from otel_dynamo.cli.run_command import add_run_arguments

    add_run_arguments(parser)


def _run_run(args: argparse.Namespace) -> int:
    from otel_dynamo.cli.run_command import run_command

    return run_command(args)


SUBCOMMANDS: tuple[Subcommand, ...] = (
    Subcommand(
        "report",
        report_command.REPORT_HELP,
        report_command.add_report_arguments,
        report_command.run_report,
    ),
    Subcommand(
        "diff", diff_command.DIFF_HELP, diff_command.add_diff_arguments, diff_command.run_diff
    ),
    Subcommand(
        "demo", demo_command.DEMO_HELP, demo_command.add_demo_arguments, demo_command.run_demo
    ),
    Subcommand("run", RUN_HELP, _add_run_arguments, _run_run),
)
"""Every subcommand, in the order ``otel-dynamo --help`` lists them."""


if __name__ == "__main__":
    sys.exit(main())
