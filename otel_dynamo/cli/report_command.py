"""``otel-dynamo report PATH...``: telemetry files summarized (terminal, JSON or HTML)."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from otel_dynamo._config.settings import ENV_CAPTURE
from otel_dynamo.cli.arguments import (
    EXIT_FAILED,
    EXIT_OK,
    announce,
    at_least,
    error,
    non_negative_int,
    positive_int,
    write_page,
)

if TYPE_CHECKING:
    from otel_dynamo.report import Report, Summary, TerminalLayout

COLOR_CHOICES = ("auto", "always", "never")
MIN_TERMINAL_WIDTH = 60


ARTIFACT_NAME = "<NN>-<kind>[-<run kind>][-graph<i>][-discarded].py|.txt"
"""How ``--artifacts`` names a graph text's file (report.render.graph_texts.file_name): the
text's order in its compile, its kind, the run kind where the kind does not say it, the
graph index, whether Dynamo discarded it; ``.txt`` for the guard tree, ``.py`` for code."""
CAPTURE_GRAPHS = f"{ENV_CAPTURE}=stacks,values,graphs"
"""The setting that records graph texts (``graphs`` needs ``values``; ``stacks`` keeps the
default's user stacks)."""
NO_GRAPH_TEXTS_HINT = f"none were recorded: run the job with {CAPTURE_GRAPHS} to capture them"


REPORT_HELP = (
    "summarize otel_dynamo telemetry files (OTLP/JSON Lines) or directories of them, or a "
    "run read back from Jaeger: frame compiles, graph breaks, recompiles, slow compiles, "
    "failures, and ranks that diverge"
)
JAEGER_PATH_HELP = (
    "or one Jaeger query address, the run chosen in its query string: "
    "http(s)://HOST:16686/?service=NAME[&start=TIME&end=TIME | &lookback=1h][&run_id=ID]"
    "[&limit=N] (times RFC 3339, e.g. 2026-12-05T10:00:00Z; headers and TLS from "
    "OTEL_DYNAMO_JAEGER_*: docs/report.md)"
)


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    from otel_dynamo.report import DEFAULT_RECOMPILE_LIMIT, DEFAULT_ROW_LIMIT, PARALLEL_MIN_BYTES

    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help=f"telemetry files, or directories to search; {JAEGER_PATH_HELP}",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the summary as JSON instead of tables"
    )
    parser.add_argument(
        "--html", metavar="FILE", type=Path, help="also write a self-contained HTML page"
    )
    parser.add_argument(
        "--perfetto",
        metavar="FILE",
        type=Path,
        help="also write the run as Chrome Trace Event JSON (ui.perfetto.dev, chrome://tracing)",
    )
    parser.add_argument(
        "--artifacts",
        metavar="DIR",
        type=Path,
        help=f"also write each captured graph text ({CAPTURE_GRAPHS}) to a file, "
        f"DIR/<process>/<compile id, / as ->/{ARTIFACT_NAME} (.txt for the guard tree)",
    )
    parser.add_argument(
        "--limit",
        type=non_negative_int,
        default=DEFAULT_ROW_LIMIT,
        metavar="N",
        help=f"rows per table in the terminal (default {DEFAULT_ROW_LIMIT}; 0: all)",
    )
    parser.add_argument(
        "--recompile-limit",
        type=positive_int,
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
    add_width_argument(parser)
    parser.add_argument(
        "--jobs",
        type=positive_int,
        default=None,
        metavar="N",
        help="processes reading the files at once, for inputs of "
        f"{PARALLEL_MIN_BYTES // (1024 * 1024)} MiB or more (default: every core this "
        "process may use; 1: read in this process)",
    )


def report_files(paths: list[Path]) -> int:
    """The terminal report of ``paths`` with every option at its default."""
    parser = argparse.ArgumentParser()
    add_report_arguments(parser)
    return run_report(parser.parse_args([str(path) for path in paths]))


def run_report(args: argparse.Namespace) -> int:
    from otel_dynamo import report

    # From reading to writing: the summary is large and holds no cycles, and the first
    # collection after reading would walk every row of it for nothing.
    with report.collection_paused():
        return _read_and_write(args)


def _read_and_write(args: argparse.Namespace) -> int:
    from otel_dynamo import report

    progress = report.TerminalProgress(sys.stderr)
    graphs = report.GraphTextCollector() if args.html is not None else None
    files = report.GraphTextFiles(args.artifacts) if args.artifacts is not None else None
    layout = None if args.json else _layout(args, sys.stdout)
    with _perfetto_writer(args.perfetto) as perfetto:
        if args.perfetto is not None and perfetto is None:
            return EXIT_FAILED
        # Read and summarized a few processes at a time: memory follows the largest process.
        try:
            done = read_source(
                args.paths,
                progress=progress,
                recompile_limit=args.recompile_limit,
                timeline=args.html is not None,
                visitor=report.Visitors(perfetto, graphs, files),
                workers=args.jobs,
                layout=layout,
            )
        except OSError as failed:
            progress.clear()
            error(f"{failed.filename}: cannot write graph texts: {failed.strerror}")
            return EXIT_FAILED
        except report.JaegerError as failed:
            progress.clear()
            error(report.printable(str(failed)))  # it may quote what the server said
            return EXIT_FAILED
    progress.clear()
    if files is not None:
        hint = "" if files.written else f"; {NO_GRAPH_TEXTS_HINT}"
        error(f"{files.written} graph texts written under {args.artifacts}{hint}")
    for problem in done.problems:
        error(report.printable(str(problem)))
    if done.records == 0:
        error("nothing to report: no OTLP/JSON records could be read from the given paths")
        return EXIT_FAILED
    if args.html is not None and done.timeline is not None:
        progress.step(f"writing {args.html}")
        if not write_page(args.html, done.page_chunks(graphs)):
            progress.clear()
            return EXIT_FAILED
    progress.clear()
    # --json in pieces: a large run's summary is never one string in memory
    pieces = report.json_chunks(done.summary) if args.json else [done.terminal_text()]
    write_report(pieces, sys.stdout)
    return EXIT_OK


def read_source(paths: Sequence[str | Path], **options: Any) -> Report:
    """``paths`` read as ``report.read_report`` reads them, or, where the one path is a
    Jaeger query address, as ``report.read_jaeger_report`` reads it (``options``: theirs);
    raises ``report.JaegerError`` (one line, no credentials) when that cannot be read."""
    from otel_dynamo import report

    addresses = [path for path in paths if report.is_jaeger_address(path)]
    if not addresses:
        return report.read_report(paths, **options)
    if len(paths) > 1:
        raise report.JaegerError(
            "a Jaeger address is read alone: give it as the only PATH "
            "(compare two runs with otel-dynamo diff)"
        )
    address = report.JaegerAddress.parse(str(addresses[0]))
    settings = report.JaegerSettings.from_environment()
    progress = options.get("progress")
    if isinstance(progress, report.TerminalProgress):
        total_ns = address.end_ns - address.start_ns
        shown = progress

        def on_slice(run: report.JaegerRun, done_ns: int) -> None:
            shown.window(done_ns, total_ns, run.traces)

        options["on_slice"] = on_slice
    return report.read_jaeger_report(address, settings=settings, **options)


def _layout(args: argparse.Namespace, stream: TextIO) -> TerminalLayout:
    from otel_dynamo import report

    return report.TerminalLayout(
        width=terminal_width(stream, asked=args.width),
        color=use_color(args.color, stream),
        limit=args.limit,
    )


def print_report(
    summary: Summary, args: argparse.Namespace, stream: TextIO, *, printable_text: bool
) -> None:
    """``summary`` as ``args`` ask, on ``stream``; ``printable_text``: as
    ``render_terminal`` takes it."""
    from otel_dynamo import report

    if args.json:  # in pieces: a large run's summary is never one string in memory
        write_report(report.json_chunks(summary), stream)
        return
    layout = _layout(args, stream)
    text = report.render_terminal(
        summary,
        width=layout.width,
        color=layout.color,
        limit=layout.limit,
        printable_text=printable_text,
    )
    write_report([text], stream)


def write_report(pieces: Iterable[str], stream: TextIO) -> None:
    """``pieces`` written on ``stream``; a reader that left (``| head``) is no error."""
    try:
        stream.writelines(pieces)
        stream.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


@contextlib.contextmanager
def _perfetto_writer(path: Path | None) -> Iterator[Any]:
    """A PerfettoWriter over ``path`` (None when not asked for, or when it cannot be
    opened: then said on stderr), closed and its file complete on the way out."""
    if path is None:
        yield None
        return
    from otel_dynamo import report

    try:
        stream = path.open("w", encoding="utf-8")
    except OSError as problem:
        error(f"{path}: cannot write the Perfetto trace: {problem.strerror}")
        yield None
        return
    with stream:
        writer = report.PerfettoWriter(stream)
        yield writer
        writer.close()
    announce(f"wrote the Perfetto trace {path}")


def use_color(choice: str, stream: TextIO) -> bool:
    from otel_dynamo.report import color_enabled

    if choice == "auto":
        return color_enabled(stream)
    return choice == "always"


def terminal_width(
    stream: TextIO, *, asked: int | None = None, environ: Mapping[str, str] | None = None
) -> int:
    """The report's width: ``--width N`` as asked (at least MIN_TERMINAL_WIDTH); else the
    terminal's columns, or for piped output ``COLUMNS`` where set, at most 100 (a cap,
    not a cut: lines wrap within it); else 100."""
    from otel_dynamo.report import DEFAULT_WIDTH

    if asked is not None:
        return max(MIN_TERMINAL_WIDTH, asked)
    if stream.isatty():
        columns = shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    else:
        text = (os.environ if environ is None else environ).get("COLUMNS", "").strip()
        columns = int(text) if text.isdigit() and int(text) > 0 else DEFAULT_WIDTH
    return max(MIN_TERMINAL_WIDTH, min(DEFAULT_WIDTH, columns))


def add_width_argument(parser: argparse.ArgumentParser) -> None:
    """``--width N``, for the terminal tables of ``report`` and ``diff``."""
    parser.add_argument(
        "--width",
        type=at_least(MIN_TERMINAL_WIDTH),
        metavar="N",
        help=(
            f"lay the tables out for N columns (at least {MIN_TERMINAL_WIDTH}; default: the "
            "terminal's, or COLUMNS when piped, at most 100)"
        ),
    )
