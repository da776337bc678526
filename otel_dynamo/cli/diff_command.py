"""``otel-dynamo diff BASE NEW``: what changed between two runs, and a CI gate on it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from otel_dynamo.cli.arguments import EXIT_OK, error, write_page
from otel_dynamo.cli.report_command import add_width_argument

if TYPE_CHECKING:
    from otel_dynamo.report.diff import Diff, Verdict

DIFF_HELP = "compare two runs' telemetry: what changed, with --fail-on conditions for CI"
EXIT_GATE_FAILED = 1
"""A --fail-on condition held."""
EXIT_UNREADABLE = 2
"""BASE or NEW held no readable record, or the HTML page could not be written (argparse
uses 2 for bad arguments too)."""


def add_diff_arguments(parser: argparse.ArgumentParser) -> None:
    from otel_dynamo.report.diff import DEFAULT_MIN_CHANGE, MIN_CHANGE_FORMAT

    parser.add_argument(
        "base",
        help="the base run: a telemetry file or directory, or a Jaeger query address "
        "(http(s)://HOST:16686/?service=NAME&...: docs/report.md)",
    )
    parser.add_argument(
        "new", help="the new run: a telemetry file or directory, or a Jaeger query address"
    )
    parser.add_argument(
        "--min-change",
        type=_min_change,
        default=DEFAULT_MIN_CHANGE,
        metavar=MIN_CHANGE_FORMAT,
        help="a compile time changed when it moved by both that share of the base and that "
        "many seconds (default %(default)s)",
    )
    parser.add_argument(
        "--fail-on",
        type=_condition,
        action="append",
        default=[],
        metavar="CONDITION",
        help="exit 1 when it holds, e.g. new_graph_breaks>0, recompiles>+2, "
        "compile_seconds>+20%% (repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="print the diff as JSON")
    parser.add_argument("--html", metavar="FILE", type=Path, help="also write one HTML page")
    parser.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto", help="colour the tables"
    )
    add_width_argument(parser)


def _min_change(text: str) -> Any:
    from otel_dynamo.report.diff import MinChange

    try:
        return MinChange.parse(text)
    except ValueError as problem:
        raise argparse.ArgumentTypeError(str(problem)) from None


def _condition(text: str) -> Any:
    from otel_dynamo.report.diff import Condition

    try:
        return Condition.parse(text)
    except ValueError as problem:
        raise argparse.ArgumentTypeError(str(problem)) from None


def run_diff(args: argparse.Namespace) -> int:
    from otel_dynamo import report
    from otel_dynamo.cli.report_command import read_source
    from otel_dynamo.report.diff import MinChange, diff_summaries

    summaries = []
    for label, path in (("BASE", args.base), ("NEW", args.new)):
        try:
            done = read_source([path])
        except report.JaegerError as failed:
            error(report.printable(f"{label}: {failed}"))  # it may quote what the server said
            return EXIT_UNREADABLE
        for problem in done.problems:
            error(report.printable(str(problem)))
        if done.records == 0:
            error(f"{label} {path}: no OTLP/JSON records could be read")
            return EXIT_UNREADABLE
        summaries.append(done.summary)
    min_change = args.min_change
    if isinstance(min_change, str):
        min_change = MinChange.parse(min_change)
    diff = diff_summaries(summaries[0], summaries[1], min_change=min_change)
    verdicts = [condition.evaluate(diff) for condition in args.fail_on]
    diff["conditions"] = verdicts
    if args.html is not None and not _write_html(args.html, diff, verdicts):
        return EXIT_UNREADABLE
    _print(diff, verdicts, args)
    return EXIT_GATE_FAILED if any(verdict["failed"] for verdict in verdicts) else EXIT_OK


def _print(diff: Diff, verdicts: list[Verdict], args: argparse.Namespace) -> None:
    from otel_dynamo import report
    from otel_dynamo.cli.report_command import terminal_width, use_color
    from otel_dynamo.report.diff import render_diff

    if args.json:
        text = "".join(report.json_chunks(diff))
    else:
        width = terminal_width(sys.stdout, asked=args.width)
        text = render_diff(diff, verdicts, width=width, color=use_color(args.color, sys.stdout))
    sys.stdout.write(text)
    sys.stdout.flush()


def _write_html(path: Path, diff: Diff, verdicts: list[Verdict]) -> bool:
    from otel_dynamo.report.diff import render_diff_html

    return write_page(path, render_diff_html(diff, verdicts))


def dumps(diff: Diff) -> str:
    """The diff as compact JSON (tests, scripts)."""
    return json.dumps(diff, separators=(",", ":"))
