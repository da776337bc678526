"""Instructions per compiled call, traced against untraced, counted by callgrind.

    python bench/bench_instructions.py [--calls 2000] [--backend eager] [--run-spans auto]

Wall-clock benches on a shared machine cannot resolve a fraction of a microsecond (see
bench_overhead.py's noise floor); instruction counts can: callgrind counts the same
program the same way whatever else the machine is doing. Each variant runs in its own
process under ``valgrind --tool=callgrind``, collecting only inside ``math.fsum`` (which
nothing else calls) while it drives ``--calls`` calls of one graph of a 3-layer MLP:

- ``untraced``: the function the traced backend wraps (``__wrapped__``);
- ``traced``: the function Dynamo calls, as otel_dynamo's traced backend returned it.

Printed: instructions per call of each, and the instructions the traced wrapper adds per
call. Two checkouts compare exactly: run this script of each (PYTHONPATH=that checkout).
Needs valgrind (Debian's package); each variant takes a few minutes (torch's import
under callgrind).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

VARIANTS = ("untraced", "traced")
COLLECTING_FUNCTION = "math_fsum"
"""The C function of ``math.fsum``: the calls measured run inside it, and nothing else does."""
DEFAULT_CALLS = 2_000
DEFAULT_BACKEND = "eager"
DEFAULT_RUN_SPANS = "auto"
_COLLECTED = re.compile(r"Collected\s*:\s*([0-9]+)")


def measured_calls(variant: str, *, calls: int, backend: str, run_spans: str) -> None:
    """In the process under callgrind: compile, warm up, then the calls inside math.fsum."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import torch
    from bench_overhead import WARMUP_CALLS, compile_captured, provider

    import otel_dynamo

    traced = otel_dynamo.traced(backend, tracer_provider=provider(), run_spans=run_spans)
    graph = compile_captured(traced)
    fn = graph.run if variant == "traced" else graph.run.__wrapped__
    args = graph.inputs
    with torch.no_grad():
        for _ in range(WARMUP_CALLS):
            fn(*args)
        math.fsum(_called(fn, args) for _ in range(calls))


def _called(fn: Callable[..., object], args: list[object]) -> float:
    fn(*args)
    return 0.0


def collected_instructions(callgrind_stderr: str) -> int:
    """The instructions callgrind collected, from its summary on stderr."""
    found = _COLLECTED.search(callgrind_stderr)
    if found is None:
        raise ValueError(f"no 'Collected' line in callgrind's output:\n{callgrind_stderr[-2000:]}")
    return int(found.group(1))


def count(variant: str, *, calls: int, backend: str, run_spans: str, folder: Path) -> int:
    """Instructions collected while one process of ``variant`` makes its calls."""
    command = [
        "valgrind",
        "--tool=callgrind",
        f"--toggle-collect={COLLECTING_FUNCTION}",
        f"--callgrind-out-file={folder / variant}.callgrind",
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        variant,
        f"--calls={calls}",
        f"--backend={backend}",
        f"--run-spans={run_spans}",
    ]
    # Only the traces go to the bench's provider; the logs and metrics otel_dynamo would
    # add with providers of its own are not exported (no files written).
    # A fixed hash seed: dict and set layouts, hence the counts, repeat from run to run.
    quiet = {"OTEL_LOGS_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "PYTHONHASHSEED": "0"}
    environ = {**os.environ, **quiet}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=environ)
    if done.returncode != 0:
        raise RuntimeError(f"{variant} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return collected_instructions(done.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=DEFAULT_CALLS)
    parser.add_argument("--backend", default=DEFAULT_BACKEND)
    parser.add_argument("--run-spans", default=DEFAULT_RUN_SPANS)
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    options = {"calls": args.calls, "backend": args.backend, "run_spans": args.run_spans}
    if args.child:
        measured_calls(args.child, **options)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as folder, ThreadPoolExecutor(os.cpu_count()) as pool:
        futures = {v: pool.submit(count, v, folder=Path(folder), **options) for v in VARIANTS}
        per_call = {variant: future.result() / args.calls for variant, future in futures.items()}
    print(
        f"{args.backend}, run_spans={args.run_spans}, {args.calls} calls: untraced "
        f"{per_call['untraced']:,.0f} instructions/call, traced {per_call['traced']:,.0f}; "
        f"added {per_call['traced'] - per_call['untraced']:+,.0f} instructions/call"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
