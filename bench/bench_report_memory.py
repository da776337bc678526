"""Peak memory of ``otel-dynamo report`` on a large input: 1 GB by default.

Writes realistic telemetry files with the OpenTelemetry SDK (tests/_report_support.py:
8 ranks' worth of frame compiles at a time, one file per rank) until they reach the size
asked for, then runs the report command in a fresh process per output (terminal,
``--json``, ``--html``) and prints each one's wall time and peak RSS (``wait4``) beside
the input size. The issue's bound: under 1 GB of memory for 1 GB of input.

    python bench/bench_report_memory.py [--size-mb 1000] [--compiles 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from _report_support import job_compiles, resource_attributes, write_traces  # noqa: E402

MB = 1000 * 1000
BOUND_BYTES = 1000 * MB
OUTPUTS = {"terminal": [], "--json": ["--json"], "--html": ["--html", "{dir}/report.html"]}


def generate(directory: Path, *, size_bytes: int, compiles: int) -> tuple[int, int]:
    """Files of one rank each until ``size_bytes``; returns (ranks, bytes). Files already
    there (``--keep`` of an earlier run) count."""
    directory.mkdir(parents=True, exist_ok=True)
    existing = list(directory.glob("traces-*.jsonl"))
    total, rank = sum(path.stat().st_size for path in existing), len(existing)
    while total < size_bytes:
        resource = resource_attributes(pid=10_000 + rank)
        path = directory / f"traces-{10_000 + rank}.jsonl"
        write_traces(path, job_compiles(compiles), resource=resource, batch=True)
        total += path.stat().st_size
        rank += 1
    return rank, total


def peak_rss(arguments: list[str]) -> tuple[float, int, int]:
    """(seconds, peak RSS in bytes, exit status) of one report process."""
    command = [sys.executable, "-m", "otel_dynamo.cli", "report", *arguments]
    start = time.perf_counter()
    with open(os.devnull, "w") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.DEVNULL)
        _pid, status, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status)


def bench(directory: Path, *, size_mb: int, compiles: int) -> None:
    start = time.perf_counter()
    ranks, size = generate(directory / "telemetry", size_bytes=size_mb * MB, compiles=compiles)
    print(
        f"generated {ranks} ranks x {compiles} compiles: {size / MB:.0f} MB "
        f"in {time.perf_counter() - start:.0f} s"
    )
    for label, extra in OUTPUTS.items():
        arguments = [str(directory / "telemetry")]
        arguments += [part.format(dir=directory) for part in extra]
        seconds, rss, code = peak_rss(arguments)
        verdict = "within" if rss < BOUND_BYTES * size / (1000 * MB) else "OVER"
        print(
            f"  report {label:<9} exit {code}  {seconds:6.1f} s  peak RSS {rss / MB:7.0f} MB"
            f"  ({rss / size:.2f}x input; {verdict} the bound)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1000, help="input size (default 1000)")
    parser.add_argument("--compiles", type=int, default=1000, help="frame compiles per rank")
    parser.add_argument(
        "--keep", type=Path, help="write the files here and keep them (reused next time)"
    )
    args = parser.parse_args()
    if args.keep is not None:
        bench(args.keep, size_mb=args.size_mb, compiles=args.compiles)
        return
    with tempfile.TemporaryDirectory(prefix="otel-dynamo-bench-") as temporary:
        bench(Path(temporary), size_mb=args.size_mb, compiles=args.compiles)


if __name__ == "__main__":
    main()
