"""Instructions per compiled call, or per cold compile, traced against untraced, counted
by callgrind.

    python bench/bench_instructions.py [--calls 2000] [--backend eager] [--run-spans auto]
    python bench/bench_instructions.py --compiles 5 [--backend aot_eager]

Wall-clock benches on a shared machine cannot resolve a fraction of a microsecond (see
bench_overhead.py's noise floor); instruction counts can: callgrind counts the same
program the same way whatever else the machine is doing. Each variant runs in its own
process under ``valgrind --tool=callgrind``, collecting only inside ``math.fsum`` (which
nothing else calls) while it drives ``--calls`` calls of one graph of a 3-layer MLP:

- ``untraced``: the function the traced backend wraps (``__wrapped__``);
- ``traced``: the function Dynamo calls, as otel_dynamo's traced backend returned it.

Printed: instructions per call of each, and the instructions the traced wrapper adds per
call.

With ``--compiles N``, what is counted is N cold compiles of the MLP with a backward
(``torch._dynamo.reset()`` before each; inductor's caches off), after one compile outside
the count: ``untraced`` compiles with the backend by name, ``traced`` with otel_dynamo's
traced backend. One-time costs (imports, the providers, excluding our code from Dynamo)
fall in the first compile and are not counted; threads (the batch span processor,
OpenBLAS's) are never counted.

Two checkouts compare exactly: run this script of each (PYTHONPATH=that checkout).
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
DEFAULT_COMPILE_BACKEND = "aot_eager"
NO_CACHES = {"TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"}
"""Each counted compile is cold: inductor's FX graph and AOT Autograd caches are off."""
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


def measured_compiles(variant: str, *, compiles: int, backend: str) -> None:
    """In the process under callgrind: one compile outside the count, then ``compiles``
    cold compiles inside math.fsum."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_overhead import provider

    import otel_dynamo

    chosen = (
        otel_dynamo.traced(backend, tracer_provider=provider()) if variant == "traced" else backend
    )
    _cold_compile(chosen)
    math.fsum(_cold_compile(chosen) for _ in range(compiles))


def _cold_compile(backend: str | Callable[..., object]) -> float:
    """The MLP compiled from scratch, run once, and its backward run (compiled lazily)."""
    import torch
    from bench_overhead import mlp

    torch._dynamo.reset()
    torch.manual_seed(0)
    torch.compile(mlp(), backend=backend)(torch.randn(8, 32)).sum().backward()
    return 0.0


def _called(fn: Callable[..., object], args: list[object]) -> float:
    fn(*args)
    return 0.0


def collected_instructions(callgrind_stderr: str) -> int:
    """The instructions callgrind collected, from its summary on stderr."""
    found = _COLLECTED.search(callgrind_stderr)
    if found is None:
        raise ValueError(f"no 'Collected' line in callgrind's output:\n{callgrind_stderr[-2000:]}")
    return int(found.group(1))


def count(variant: str, *, options: list[str], folder: Path) -> int:
    """Instructions collected while one process of ``variant`` makes its calls or
    compiles (``options``: the child's command-line options)."""
    command = [
        "valgrind",
        "--tool=callgrind",
        f"--toggle-collect={COLLECTING_FUNCTION}",
        f"--callgrind-out-file={folder / variant}.callgrind",
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        variant,
        *options,
    ]
    # Only the traces go to the bench's provider; the logs and metrics otel_dynamo would
    # add with providers of its own are not exported (no files written).
    # A fixed hash seed: dict and set layouts, hence the counts, repeat from run to run.
    quiet = {"OTEL_LOGS_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "PYTHONHASHSEED": "0"}
    environ = {**os.environ, **quiet, **NO_CACHES}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=environ)
    if done.returncode != 0:
        raise RuntimeError(f"{variant} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return collected_instructions(done.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=DEFAULT_CALLS)
    parser.add_argument("--compiles", type=int, default=0, help="count N cold compiles instead")
    parser.add_argument("--backend", default=None)
    parser.add_argument("--run-spans", default=DEFAULT_RUN_SPANS)
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    default_backend = DEFAULT_COMPILE_BACKEND if args.compiles else DEFAULT_BACKEND
    backend = args.backend or default_backend
    if args.child:
        if args.compiles:
            measured_compiles(args.child, compiles=args.compiles, backend=backend)
        else:
            measured_calls(args.child, calls=args.calls, backend=backend, run_spans=args.run_spans)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
        return 1
    if args.compiles:
        options, unit, per = (
            [f"--compiles={args.compiles}", f"--backend={backend}"],
            "compile",
            args.compiles,
        )
        label = f"{backend}, {args.compiles} cold compiles of an MLP with backward"
    else:
        options = [f"--calls={args.calls}", f"--backend={backend}", f"--run-spans={args.run_spans}"]
        unit, per = "call", args.calls
        label = f"{backend}, run_spans={args.run_spans}, {args.calls} calls"
    with tempfile.TemporaryDirectory() as folder, ThreadPoolExecutor(os.cpu_count()) as pool:
        futures = {v: pool.submit(count, v, options=options, folder=Path(folder)) for v in VARIANTS}
        each = {variant: future.result() / per for variant, future in futures.items()}
    print(
        f"{label}: untraced {each['untraced']:,.0f} instructions/{unit}, traced "
        f"{each['traced']:,.0f}; added {each['traced'] - each['untraced']:+,.0f} "
        f"instructions/{unit} ({each['traced'] / each['untraced'] - 1:+.2%})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
