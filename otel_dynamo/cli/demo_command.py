"""``otel-dynamo demo``: train the demo model traced, then show its report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from otel_dynamo._config.settings import DEFAULT_OUTPUT_DIR, ENV_OUTPUT_DIR
from otel_dynamo.cli.arguments import EXIT_FAILED, EXIT_OK, PROG, at_least, error, write_page
from otel_dynamo.cli.report_command import add_width_argument, print_report

if TYPE_CHECKING:
    from otel_dynamo.cli.demo_training import DemoRun


DEMO_HELP = (
    "train a small model under torch.compile (a graph break; shape, grad-mode and dtype "
    "recompiles) with telemetry to local files, then print its report and write the HTML page"
)
"""What the demo really does (demo_training): a ``print`` in ``forward`` breaks the graph,
a smaller last batch recompiles on shape, evaluation under ``torch.no_grad`` on grad mode,
and float64 evaluation on dtype."""


def add_demo_arguments(parser: argparse.ArgumentParser) -> None:
    from otel_dynamo.cli import demo_training
    from otel_dynamo.report import DEFAULT_ROW_LIMIT

    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="where telemetry files and the HTML page go "
        f"(default: ${ENV_OUTPUT_DIR}, else {DEFAULT_OUTPUT_DIR})",
    )
    parser.add_argument(
        "--backend",
        default=demo_training.DEFAULT_BACKEND,
        help=(
            f"the Dynamo backend to trace (default {demo_training.DEFAULT_BACKEND}; "
            "inductor is slower)"
        ),
    )
    parser.add_argument(
        "--steps",
        type=at_least(demo_training.MIN_STEPS),
        default=demo_training.DEFAULT_STEPS,
        metavar="N",
        help=(
            f"training steps (default {demo_training.DEFAULT_STEPS}, "
            f"at least {demo_training.MIN_STEPS})"
        ),
    )
    add_width_argument(parser)
    parser.set_defaults(json=False, color="auto", limit=DEFAULT_ROW_LIMIT)


def run_demo(args: argparse.Namespace) -> int:
    from otel_dynamo._providers.files import prepare_directory
    from otel_dynamo.cli import demo_training

    out = args.out if args.out is not None else demo_training.default_output_dir()
    reason = prepare_directory(out)
    if reason is not None:
        error(f"{out}: cannot write telemetry there: {reason}")
        return EXIT_FAILED
    # Short lines: a terminal of 60 columns shows each whole, unbroken.
    print(
        f"{PROG} demo: training a small model under torch.compile\n"
        f"  backend {args.backend}, {args.steps} steps; telemetry to {out}/ ...",
        file=sys.stderr,
    )
    try:
        run = demo_training.run_demo(output_dir=out, backend=args.backend, steps=args.steps)
    except demo_training.DemoError as problem:
        error(str(problem))
        return EXIT_FAILED
    return _show_demo(run, args)


def _show_demo(run: DemoRun, args: argparse.Namespace) -> int:
    """Report the demo's own files in the terminal and as an HTML page next to them."""
    from otel_dynamo import report
    from otel_dynamo.cli import demo_training

    telemetry = report.load_telemetry(run.files)
    for problem in telemetry.problems:
        error(str(problem))
    if telemetry.records == 0:
        error(f"the demo recorded no telemetry in {run.output_dir}")
        return EXIT_FAILED
    summary = report.summarize(telemetry)
    html = run.output_dir / demo_training.HTML_NAME
    if not write_page(html, report.render_html(telemetry, summary)):
        return EXIT_FAILED
    print_report(summary, args, sys.stdout, printable_text=telemetry.printable_text)
    files = "\n".join(f"  {path}" for path in run.files)
    print(f"\ntelemetry files (OTLP/JSON Lines):\n{files}\nHTML report: {html}")
    again = f"{PROG} report {run.output_dir} --html FILE"
    print(f"demo took {run.seconds:.1f} s; explore the files again with:\n  {again}")
    return EXIT_OK
