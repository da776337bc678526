"""What otel_dynamo costs at interpreter start, enabled or not.

    python bench/bench_startup.py [--runs 40]

- the installed ``otel_dynamo.pth`` line, executed as ``site`` does, with
  OTEL_DYNAMO_ENABLED unset (target: far under the 5 ms budget);
- ``python -c pass`` wall time with the variable unset, and with it set (the start-up
  hook then registers its import hook; torch and OpenTelemetry still load only at the
  first torch.compile), medians of alternating runs;
- which heavy modules are imported at start in each case (must be none).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from otel_dynamo._enablement.startup import PTH_NAME, installed_startup_hook

HEAVY = ("torch", "opentelemetry", "structlog")
LINE_REPEATS = 20_000


def installed_pth() -> Path:
    found = installed_startup_hook()
    if found is None:
        raise SystemExit(f"{PTH_NAME} is not installed: pip install -e . first")
    return found


def line_cost_us(line: str) -> float:
    """Microseconds per execution of the .pth line with the variable unset."""
    os.environ.pop("OTEL_DYNAMO_ENABLED", None)
    code = compile(line, PTH_NAME, "exec")
    started = time.perf_counter()
    for _ in range(LINE_REPEATS):
        exec(code, {})
    return (time.perf_counter() - started) / LINE_REPEATS * 1e6


def start_ms(enabled: str | None) -> float:
    env = {k: v for k, v in os.environ.items() if k != "OTEL_DYNAMO_ENABLED"}
    if enabled is not None:
        env["OTEL_DYNAMO_ENABLED"] = enabled
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    return (time.perf_counter() - started) * 1e3


def heavy_modules(enabled: str | None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "OTEL_DYNAMO_ENABLED"}
    if enabled is not None:
        env["OTEL_DYNAMO_ENABLED"] = enabled
    code = (
        "import json, sys; print(json.dumps(sorted({m.split('.')[0] for m in sys.modules"
        f" if m.startswith({HEAVY!r})}})))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    line = installed_pth().read_text().strip()
    print(f"{PTH_NAME} line, variable unset: {line_cost_us(line):.2f} us per interpreter start")
    unset, enabled = [], []
    for _ in range(args.runs):  # alternate so drift hits both alike
        unset.append(start_ms(None))
        enabled.append(start_ms("true"))
    median_unset, median_enabled = statistics.median(unset), statistics.median(enabled)
    print(f"python -c pass, unset:   {median_unset:.1f} ms (median of {args.runs})")
    added = median_enabled - median_unset
    print(f"python -c pass, enabled: {median_enabled:.1f} ms (+{added:.1f} ms)")
    print(f"heavy modules at start, unset: {heavy_modules(None)}; enabled: {heavy_modules('true')}")


if __name__ == "__main__":
    main()
