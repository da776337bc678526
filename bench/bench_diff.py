"""Benchmark ``otel-dynamo diff``: two runs of 8 ranks x 1,000 frame compiles by default.

Generates both runs with the OpenTelemetry SDK (tests/_report_support.py): the base where
every rank compiles alike, the new one where one rank diverges (an extra graph and more
recompiles from its 17th compile on). Then runs ``otel-dynamo diff BASE NEW --json`` in a
fresh process, three times, and prints its wall time and peak memory (max RSS).

    python bench/bench_diff.py [--ranks 8] [--compiles 1000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from _report_support import write_job  # noqa: E402

MB = 1000 * 1000
DIFF_EXIT_CODES = (0, 1)
"""0: nothing past --fail-on (none given here); 1 would be a tripped gate."""


def run_diff(base: Path, new: Path) -> tuple[float, float, dict[str, object]]:
    """Seconds, peak RSS in MB of the child and its parsed JSON, for one diff process."""
    command = [sys.executable, "-m", "otel_dynamo", "diff", str(base), str(new), "--json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=600)
    seconds = time.perf_counter() - start
    if done.returncode not in DIFF_EXIT_CODES:
        sys.exit(f"bench: diff exited {done.returncode}: {done.stderr[-2000:]}")
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the largest child so far: runs are alike, so it holds.
    return seconds, max(peak_kb, before) * 1024 / MB, json.loads(done.stdout)


def bench(directory: Path, *, ranks: int, compiles: int, runs: int) -> None:
    base, new = directory / "base", directory / "new"
    start = time.perf_counter()
    write_job(base, ranks=ranks, compiles_per_rank=compiles)
    write_job(new, ranks=ranks, compiles_per_rank=compiles, diverging_rank=ranks // 2)
    print(f"{'generate both runs (SDK)':<28} {time.perf_counter() - start:8.1f} s")
    for path in (base, new):
        size = sum(p.stat().st_size for p in path.iterdir()) / MB
        print(f"{'input ' + path.name:<28} {size:8.1f} MB")
    for run in range(runs):
        seconds, peak_mb, result = run_diff(base, new)
        print(f"{f'otel-dynamo diff, run {run + 1}':<28} {seconds:8.2f} s  peak {peak_mb:7.0f} MB")
    functions = result.get("functions", [])
    changed = len(functions) if isinstance(functions, list) else 0
    print(f"{'functions changed (found)':<28} {changed:8d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--compiles", type=int, default=1000, help="frame compiles per rank")
    parser.add_argument("--runs", type=int, default=3, help="diff processes timed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        bench(Path(temporary), ranks=args.ranks, compiles=args.compiles, runs=args.runs)


if __name__ == "__main__":
    main()
