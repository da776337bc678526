"""What otel_dynamo costs at interpreter start, enabled or not.

    python bench/bench_startup.py [--runs 20]

- instructions (callgrind) the ``otel_dynamo.pth`` line adds to an interpreter start with
  OTEL_DYNAMO_ENABLED unset, counted as installed: ``python -c pass`` in a fresh virtual
  environment whose site-packages holds the installed line, against the same environment
  without it (target: at most 0.5 M; the line asks for one variable and imports nothing);
  the whole ``python -c pass`` for scale;
- whether, with the variable unset, any otel_dynamo module is loaded or ``sys.meta_path``
  changed (must be neither);
- ``python -c pass`` wall time with the variable unset, and with it set (the start-up
  hook then registers its import hook; torch and OpenTelemetry still load only at the
  first torch.compile), medians of alternating runs;
- which heavy modules are imported at start in each case (must be none).

Needs valgrind (Debian's package) for the instruction counts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

from otel_dynamo._enablement.startup import PTH_NAME, installed_startup_hook

HEAVY = ("torch", "opentelemetry", "structlog")
INSTRUCTIONS_BOUND = 500_000
"""What the line may add to an interpreter start with tracing off."""
_COLLECTED = re.compile(r"Collected\s*:\s*([0-9]+)")
_ENABLED = "OTEL_DYNAMO_ENABLED"


def installed_pth() -> Path:
    found = installed_startup_hook()
    if found is None:
        raise SystemExit(f"{PTH_NAME} is not installed: pip install -e . first")
    return found


def _environ(enabled: str | None) -> dict[str, str]:
    # A fixed hash seed: dict and set layouts, hence the counts, repeat from run to run.
    env = {k: v for k, v in os.environ.items() if k != _ENABLED}
    env["PYTHONHASHSEED"] = "0"
    if enabled is not None:
        env[_ENABLED] = enabled
    return env


def instructions(command: list[str]) -> int:
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
        env=_environ(None),
        capture_output=True,
        text=True,
        check=True,
    )
    found = _COLLECTED.search(done.stderr)
    if found is None:
        raise SystemExit(f"no 'Collected' line in callgrind's output:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def pth_line_instructions(pth: Path) -> tuple[int, int]:
    """Instructions of ``python -c pass`` in a fresh virtual environment without and with
    the installed line in its site-packages, variable unset: a real start, ``site`` and
    all (the line is read, compiled and run as in any installed environment; the package
    itself is never imported with the variable unset, so the line is all it needs)."""
    with tempfile.TemporaryDirectory() as root:
        environment = Path(root, "venv")
        venv.create(environment, with_pip=False)
        python = environment / "bin" / "python"
        site_packages = Path(
            subprocess.run(
                [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        )
        without = instructions([str(python), "-c", "pass"])
        shutil.copyfile(pth, site_packages / PTH_NAME)
        with_line = instructions([str(python), "-c", "pass"])
    return without, with_line


def untouched_when_off() -> tuple[list[str], bool]:
    """otel_dynamo modules loaded, and whether sys.meta_path is as without the line."""
    code = (
        "import sys; before = list(sys.meta_path); import site; site.main(); "
        "import json; print(json.dumps([sorted(m for m in sys.modules"
        " if m.startswith('otel_dynamo')), [type(f).__module__ for f in sys.meta_path"
        " if type(f).__module__.startswith('otel_dynamo')] == []]))"
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", code], env=_environ(None), check=True, capture_output=True
    )
    loaded, untouched = json.loads(out.stdout)
    return loaded, untouched


def start_ms(enabled: str | None) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=_environ(enabled), check=True)
    return (time.perf_counter() - started) * 1e3


def heavy_modules(enabled: str | None) -> list[str]:
    code = (
        "import json, sys; print(json.dumps(sorted({m.split('.')[0] for m in sys.modules"
        f" if m.startswith({HEAVY!r})}})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=_environ(enabled), check=True, capture_output=True
    )
    return json.loads(out.stdout)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    pth = installed_pth()
    within = True
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (Debian: apt-get install valgrind): no counts")
    else:
        without, with_line = pth_line_instructions(pth)
        added = with_line - without
        within = added <= INSTRUCTIONS_BOUND
        print(
            f"{PTH_NAME} line, variable unset: +{added:,} instructions per interpreter start"
            f" ({without:,} -> {with_line:,}; bound {INSTRUCTIONS_BOUND:,})"
        )
        whole = instructions([sys.executable, "-c", "pass"])
        print(f"python -c pass, whole: {whole:,} instructions")
    loaded, untouched = untouched_when_off()
    print(f"variable unset: otel_dynamo modules loaded {loaded}; meta_path untouched: {untouched}")
    unset, enabled = [], []
    for _ in range(args.runs):  # alternate so drift hits both alike
        unset.append(start_ms(None))
        enabled.append(start_ms("true"))
    median_unset, median_enabled = statistics.median(unset), statistics.median(enabled)
    print(f"python -c pass, unset:   {median_unset:.1f} ms (median of {args.runs})")
    added_ms = median_enabled - median_unset
    print(f"python -c pass, enabled: {median_enabled:.1f} ms (+{added_ms:.1f} ms)")
    print(f"heavy modules at start, unset: {heavy_modules(None)}; enabled: {heavy_modules('true')}")
    return 0 if within and untouched and not loaded else 1


if __name__ == "__main__":
    sys.exit(main())
