"""bench/bench_overhead.py runs end to end and prints every measurement the issue asks for."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "bench_overhead.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(BENCH), *args],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env=env,
        cwd=ROOT,
    )


@pytest.mark.slow
def test_smoke_run_prints_ratios_and_verdicts_for_every_target():
    """--smoke: cold-compile ratios, per-call overhead, run-span cost (with and without
    metrics) and RSS growth."""
    completed = _run("--smoke")
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    assert re.search(r"aot_eager mlp .* ratio +\d+\.\d+x", out)
    assert re.search(r"aot_eager encoder .* ratio +\d+\.\d+x", out)
    assert re.search(r"eager +untraced .* added [+-]\d+\.\d+ us/call", out)
    # A cost near zero may come out negative on a busy machine: the sign is allowed.
    assert re.search(r"run span cost .*: +-?\d+\.\d+ us per recorded run", out)
    assert re.search(r"with an SDK MeterProvider too .*: +-?\d+\.\d+ us", out)
    assert re.search(r"RSS growth over 2,000 calls .* traced [+-]\d+\.\d+ MB", out)
    assert len(re.findall(r"meets target|MISSES target", out)) == 6


def test_unknown_option_is_refused_with_usage():
    """A wrong option fails fast with argparse's usage message, measuring nothing."""
    completed = _run("--fast")
    assert completed.returncode == 2
    assert "usage:" in completed.stderr and "--fast" in completed.stderr
