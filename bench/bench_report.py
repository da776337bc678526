"""Benchmark ``otel-dynamo report``: 8 ranks x 1,000 frame compiles by default.

Generates the telemetry files with the OpenTelemetry SDK (tests/_report_support.py),
then times each step of the report and the whole command, and prints the sizes.

    python bench/bench_report.py [--ranks 8] [--compiles 1000] [--batch] [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from _report_support import write_job  # noqa: E402

from otel_dynamo import cli, report  # noqa: E402

T = TypeVar("T")
MB = 1000 * 1000


def timed(label: str, action: Callable[[], T]) -> T:
    start = time.perf_counter()
    result = action()
    print(f"{label:<28} {time.perf_counter() - start:8.3f} s")
    return result


def bench(directory: Path, *, ranks: int, compiles: int, batch: bool) -> None:
    timed(
        f"generate {ranks}x{compiles} (SDK)",
        lambda: write_job(
            directory,
            ranks=ranks,
            compiles_per_rank=compiles,
            diverging_rank=ranks // 2,
            batch=batch,
        ),
    )
    input_bytes = sum(path.stat().st_size for path in directory.iterdir())
    telemetry = timed("load_telemetry", lambda: report.load_telemetry([directory]))
    summary = timed("summarize", lambda: report.summarize(telemetry))
    text = timed("render_terminal", lambda: report.render_terminal(summary, color=False))
    as_json = timed("json.dumps(summary)", lambda: json.dumps(summary, indent=2))
    page = timed("render_html", lambda: report.render_html(telemetry, summary))
    html_path = directory.parent / "report.html"
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["report", str(directory), "--html", str(html_path)])
    print(f"{'otel-dynamo report --html':<28} {time.perf_counter() - start:8.3f} s")
    print(f"{'exit code':<28} {code:8d}")
    print(f"{'spans read':<28} {len(telemetry.spans):8d}")
    print(f"{'input files':<28} {input_bytes / MB:8.1f} MB")
    print(f"{'HTML page':<28} {len(page.encode()) / MB:8.2f} MB")
    print(f"{'--json output':<28} {len(as_json.encode()) / MB:8.2f} MB")
    print(f"{'terminal output':<28} {len(text.splitlines()):8d} lines")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--compiles", type=int, default=1000, help="frame compiles per rank")
    parser.add_argument("--batch", action="store_true", help="BatchSpanProcessor (512 per line)")
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    args = parser.parse_args()
    if args.keep is not None:
        bench(args.keep / "telemetry", ranks=args.ranks, compiles=args.compiles, batch=args.batch)
        return
    with tempfile.TemporaryDirectory() as temporary:
        bench(
            Path(temporary) / "telemetry",
            ranks=args.ranks,
            compiles=args.compiles,
            batch=args.batch,
        )


if __name__ == "__main__":
    main()
