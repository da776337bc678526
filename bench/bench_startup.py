"""What otel_dynamo costs at interpreter start, enabled or not.

    python bench/bench_startup.py [--runs 40]

- the ``otel_dynamo.pth`` line with OTEL_DYNAMO_ENABLED unset: its imports in a fresh
  ``python -S`` interpreter with only ``os`` loaded (what ``site`` itself loads before any
  .pth line; other packages' .pth lines may load more), as ``python -X importtime`` times
  them (target: far under the 5 ms budget);
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

import otel_dynamo
from otel_dynamo._enablement.startup import PTH_NAME, installed_startup_hook

HEAVY = ("torch", "opentelemetry", "structlog")
HOOK_MODULE = "otel_dynamo._enablement.site_hook"


def installed_pth() -> Path:
    found = installed_startup_hook()
    if found is None:
        raise SystemExit(f"{PTH_NAME} is not installed: pip install -e . first")
    return found


def hook_import_us() -> float:
    """Microseconds the .pth line's imports and hook take in a fresh ``python -S``
    interpreter that has loaded ``os`` (as site has), variable unset."""
    env = {k: v for k, v in os.environ.items() if k != "OTEL_DYNAMO_ENABLED"}
    root = str(Path(otel_dynamo.__file__).resolve().parent.parent)
    code = f"import os, sys; sys.path.insert(0, {root!r}); import {HOOK_MODULE} as h; h.run()"
    out = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", "-c", code],
        env=env,
        check=True,
        capture_output=True,
    )
    for row in out.stderr.decode().splitlines():
        columns = row.split("|")
        if len(columns) == 3 and columns[2].strip() == HOOK_MODULE:
            return float(columns[1])
    raise SystemExit(f"{HOOK_MODULE} could not be imported from {root}")


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
    installed_pth()
    hook = statistics.median(hook_import_us() for _ in range(args.runs))
    print(f"{PTH_NAME} line, variable unset: {hook / 1e3:.2f} ms per interpreter start")
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
