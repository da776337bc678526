"""Time and peak memory of ``otel-dynamo report`` on a large input: 1 GB by default.

Writes realistic telemetry files with the OpenTelemetry SDK (tests/_report_support.py:
8 ranks' worth of frame compiles at a time, one file per rank) until they reach the size
asked for, then runs the report command in a fresh process per output (terminal,
``--json``, ``--html``) and per ``--jobs`` value (reading processes; default 1 and every
core), and prints each one's wall time and peak memory (its process and its workers
together) beside the input size, and whether every ``--jobs`` value wrote the same bytes.
The bounds: under 1 GB of memory for 1 GB of input; the terminal report within 10 s and
the page within 20 s per GB.

    python bench/bench_report_memory.py [--size-mb 1000] [--compiles 1000] [--keep DIR]
        [--jobs 1,2]
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

from otel_dynamo.report import default_workers  # noqa: E402

MB = 1000 * 1000
BOUND_BYTES = 1000 * MB
OUTPUTS = {"terminal": [], "--json": ["--json"], "--html": ["--html", "{page}"]}
SECONDS_PER_GB = {"terminal": 10.0, "--html": 20.0}
"""The time bounds, per 1,000 MB of input."""


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


POLL_S = 0.05
"""How often the report's processes are measured (worker processes come and go)."""
PAGE = os.sysconf("SC_PAGE_SIZE")


def peak_rss(arguments: list[str], output: Path) -> tuple[float, int, int]:
    """(seconds, peak RSS in bytes, exit status) of one report command writing its
    stdout to ``output``: its process and its worker processes together, sampled every
    POLL_S (wait4's figure would be the largest single process's, not the sum)."""
    command = [sys.executable, "-m", "otel_dynamo.cli", "report", *arguments]
    start = time.perf_counter()
    peak = 0
    with output.open("w") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.DEVNULL)
        while process.poll() is None:
            peak = max(peak, _tree_rss(process.pid))
            time.sleep(POLL_S)
    return time.perf_counter() - start, peak, process.returncode


def _tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and every process descending from it (Linux /proc)."""
    parents: dict[int, int] = {}
    resident: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/statm", encoding="ascii") as statm:
                pages = int(statm.read().split()[1])
        except (OSError, IndexError, ValueError):  # ended meanwhile
            continue
        parents[int(entry)] = int(fields[1])
        resident[int(entry)] = pages * PAGE
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        total += resident.get(pid, 0)
        pending += [child for child, parent in parents.items() if parent == pid]
    return total


def bench(directory: Path, *, size_mb: int, compiles: int, jobs: list[int]) -> None:
    start = time.perf_counter()
    ranks, size = generate(directory / "telemetry", size_bytes=size_mb * MB, compiles=compiles)
    print(
        f"generated {ranks} ranks x {compiles} compiles: {size / MB:.0f} MB "
        f"in {time.perf_counter() - start:.0f} s"
    )
    for label, extra in OUTPUTS.items():
        written: dict[int, bytes] = {}
        for count in jobs:
            page = directory / f"report-{count}.html"
            stdout = directory / f"stdout-{count}.txt"
            arguments = [str(directory / "telemetry"), "--jobs", str(count)]
            arguments += [part.format(page=page) for part in extra]
            seconds, rss, code = peak_rss(arguments, stdout)
            written[count] = (page if extra[-1:] == ["{page}"] else stdout).read_bytes()
            within = rss < BOUND_BYTES * size / (1000 * MB)
            bound_s = SECONDS_PER_GB.get(label)
            timed = "" if bound_s is None else f", {bound_s * size / (1000 * MB):.0f} s bound"
            if bound_s is not None:
                within = within and seconds <= bound_s * size / (1000 * MB)
            print(
                f"  report {label:<9} --jobs {count}  exit {code}  {seconds:6.1f} s  peak RSS "
                f"{rss / MB:7.0f} MB ({rss / size:.2f}x input{timed}): "
                f"{'within' if within else 'OVER'} the bounds"
            )
        verdict = "the same bytes" if len(set(written.values())) == 1 else "DIFFERENT bytes"
        print(f"  {label}: every --jobs value wrote {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1000, help="input size (default 1000)")
    parser.add_argument("--compiles", type=int, default=1000, help="frame compiles per rank")
    parser.add_argument(
        "--keep", type=Path, help="write the files here and keep them (reused next time)"
    )
    parser.add_argument(
        "--jobs",
        default=f"1,{default_workers()}",
        help="comma-separated --jobs values to run each output with (default 1 and every core)",
    )
    args = parser.parse_args()
    jobs = sorted({int(value) for value in args.jobs.split(",")})
    if args.keep is not None:
        bench(args.keep, size_mb=args.size_mb, compiles=args.compiles, jobs=jobs)
        return
    with tempfile.TemporaryDirectory(prefix="otel-dynamo-bench-") as temporary:
        bench(Path(temporary), size_mb=args.size_mb, compiles=args.compiles, jobs=jobs)


if __name__ == "__main__":
    main()
