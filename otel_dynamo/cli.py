"""The ``otel-dynamo`` command line.

Each subcommand is one :class:`Subcommand` in :data:`SUBCOMMANDS`: a function that
declares its arguments and a function that runs it. Adding a command is adding an
entry there. Runners import what they need when they run, so ``otel-dynamo report``
never imports torch (``otel-dynamo demo`` does, to train its model).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from otel_dynamo._demo import DemoRun

PROG = "otel-dynamo"
EXIT_OK = 0
EXIT_FAILED = 1
"""Nothing could be read, or the HTML page could not be written."""

COLOR_CHOICES = ("auto", "always", "never")
MIN_TERMINAL_WIDTH = 60


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
    return args.run(args)


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


# --- report -----------------------------------------------------------------------

REPORT_HELP = (
    "Summarize otel_dynamo telemetry files (OTLP/JSON Lines) or directories of them: "
    "frame compiles, graph breaks, recompiles, slow compiles, failures, and ranks that diverge."
)


def _add_report_arguments(parser: argparse.ArgumentParser) -> None:
    from otel_dynamo.report import DEFAULT_RECOMPILE_LIMIT, DEFAULT_ROW_LIMIT

    parser.add_argument(
        "paths", nargs="+", metavar="PATH", help="telemetry files, or directories to search"
    )
    parser.add_argument(
        "--json", action="store_true", help="print the summary as JSON instead of tables"
    )
    parser.add_argument(
        "--html", metavar="FILE", type=Path, help="also write a self-contained HTML page"
    )
    parser.add_argument(
        "--limit",
        type=_non_negative_int,
        default=DEFAULT_ROW_LIMIT,
        metavar="N",
        help=f"rows per table in the terminal (default {DEFAULT_ROW_LIMIT}; 0: all)",
    )
    parser.add_argument(
        "--recompile-limit",
        type=_positive_int,
        default=DEFAULT_RECOMPILE_LIMIT,
        metavar="N",
        help=f"the job's torch._dynamo.config.recompile_limit (default {DEFAULT_RECOMPILE_LIMIT})",
    )
    parser.add_argument(
        "--color",
        choices=COLOR_CHOICES,
        default="auto",
        help="colour the tables: auto (on a terminal, unless NO_COLOR is set), always, never",
    )


def _run_report(args: argparse.Namespace) -> int:
    from otel_dynamo import report

    progress = report.TerminalProgress(sys.stderr)
    telemetry = report.load_telemetry(args.paths, progress=progress)
    progress.clear()
    for problem in telemetry.problems:
        _error(str(problem))
    if telemetry.records == 0:
        _error("nothing to report: no OTLP/JSON records could be read from the given paths")
        return EXIT_FAILED
    progress.step("summarizing")
    summary = report.summarize(telemetry, recompile_limit=args.recompile_limit)
    if args.html is not None:
        progress.step(f"writing {args.html}")
        if not _write_html(args.html, report.render_html(telemetry, summary)):
            progress.clear()
            return EXIT_FAILED
    progress.clear()
    _print_report(summary, args, sys.stdout)
    return EXIT_OK


def _print_report(summary: dict[str, Any], args: argparse.Namespace, stream: TextIO) -> None:
    from otel_dynamo import report

    if args.json:
        text = json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
    else:
        color = _use_color(args.color, stream)
        text = report.render_terminal(
            summary, width=_terminal_width(stream), color=color, limit=args.limit
        )
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        # `otel-dynamo report ... | head`: the reader left; that is not an error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


def _write_html(path: Path, page: str) -> bool:
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as error:
        _error(f"{path}: cannot write the HTML page: {error.strerror}")
        return False
    return True


def _use_color(choice: str, stream: TextIO) -> bool:
    from otel_dynamo.report import color_enabled

    if choice == "auto":
        return color_enabled(stream)
    return choice == "always"


def _terminal_width(stream: TextIO) -> int:
    """At most 100 columns; fewer on a narrower terminal."""
    from otel_dynamo.report import DEFAULT_WIDTH

    if not stream.isatty():
        return DEFAULT_WIDTH
    columns = shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    return max(MIN_TERMINAL_WIDTH, min(DEFAULT_WIDTH, columns))


# --- demo -------------------------------------------------------------------------

DEMO_HELP = (
    "Train a small model under torch.compile (a graph break, a shape and a dtype "
    "recompile) with telemetry to local files, then print its report and write the HTML page."
)


def _add_demo_arguments(parser: argparse.ArgumentParser) -> None:
    from otel_dynamo import _demo
    from otel_dynamo.report import DEFAULT_ROW_LIMIT

    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="where telemetry files and the HTML page go "
        "(default: $OTEL_DYNAMO_OUTPUT_DIR, else ./otel-dynamo)",
    )
    parser.add_argument(
        "--backend",
        default=_demo.DEFAULT_BACKEND,
        help=f"the Dynamo backend to trace (default {_demo.DEFAULT_BACKEND}; inductor is slower)",
    )
    parser.add_argument(
        "--steps",
        type=_at_least(_demo.MIN_STEPS),
        default=_demo.DEFAULT_STEPS,
        metavar="N",
        help=f"training steps (default {_demo.DEFAULT_STEPS}, at least {_demo.MIN_STEPS})",
    )
    parser.set_defaults(json=False, color="auto", limit=DEFAULT_ROW_LIMIT)


def _run_demo(args: argparse.Namespace) -> int:
    from otel_dynamo import _demo
    from otel_dynamo._files import prepare_directory

    out = args.out if args.out is not None else _demo.default_output_dir()
    reason = prepare_directory(out)
    if reason is not None:
        _error(f"{out}: cannot write telemetry there: {reason}")
        return EXIT_FAILED
    print(
        f"{PROG} demo: training a small model under torch.compile "
        f"(backend {args.backend}, {args.steps} steps), telemetry to {out}/ ...",
        file=sys.stderr,
    )
    try:
        run = _demo.run_demo(output_dir=out, backend=args.backend, steps=args.steps)
    except _demo.DemoError as error:
        _error(str(error))
        return EXIT_FAILED
    return _show_demo(run, args)


def _show_demo(run: DemoRun, args: argparse.Namespace) -> int:
    """Report the demo's own files in the terminal and as an HTML page next to them."""
    from otel_dynamo import _demo, report

    telemetry = report.load_telemetry(run.files)
    for problem in telemetry.problems:
        _error(str(problem))
    if telemetry.records == 0:
        _error(f"the demo recorded no telemetry in {run.output_dir}")
        return EXIT_FAILED
    summary = report.summarize(telemetry)
    html = run.output_dir / _demo.HTML_NAME
    if not _write_html(html, report.render_html(telemetry, summary)):
        return EXIT_FAILED
    _print_report(summary, args, sys.stdout)
    files = "\n".join(f"  {path}" for path in run.files)
    print(f"\ntelemetry files (OTLP/JSON Lines):\n{files}\nHTML report: {html}")
    again = f"{PROG} report {run.output_dir} --html FILE"
    print(f"demo took {run.seconds:.1f} s; explore the files again with: {again}")
    return EXIT_OK


# --- shared helpers -----------------------------------------------------------------


def _error(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)


def _non_negative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {text}")
    return value


def _positive_int(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more, got {text}")
    return value


def _at_least(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = _int(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {minimum} or more, got {text}")
        return value

    return parse


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


RUN_HELP = "run a command with torch.compile tracing on (sets OTEL_DYNAMO_ENABLED=true)"


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    from otel_dynamo._run_command import add_run_arguments

    add_run_arguments(parser)


def _run_run(args: argparse.Namespace) -> int:
    from otel_dynamo._run_command import run_command

    return run_command(args)


SUBCOMMANDS: tuple[Subcommand, ...] = (
    Subcommand("report", REPORT_HELP, _add_report_arguments, _run_report),
    Subcommand("demo", DEMO_HELP, _add_demo_arguments, _run_demo),
    Subcommand("run", RUN_HELP, _add_run_arguments, _run_run),
)
"""Every subcommand, in the order ``otel-dynamo --help`` lists them."""


if __name__ == "__main__":
    sys.exit(main())
