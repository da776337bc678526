"""bench/bench_instructions.py: callgrind collects only inside math.fsum, so the count is
the measured calls' alone; and the program it measures runs both variants."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from bench_instructions import (  # noqa: E402
    COLLECTING_FUNCTION,
    DEFAULT_BACKEND,
    DEFAULT_COMPILE_BACKEND,
    DEFAULT_RUN_SPANS,
    collected_instructions,
    measured_calls,
    measured_compiles,
)

PROGRAM = """
import math
sum(range({outside}))
math.fsum(float(n * n) for n in range({inside}))
"""


def _collected(tmp_path: Path, *, outside: int, inside: int) -> int:
    done = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            f"--toggle-collect={COLLECTING_FUNCTION}",
            f"--callgrind-out-file={tmp_path / 'out'}.%p",
            sys.executable,
            "-c",
            PROGRAM.format(outside=outside, inside=inside),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return collected_instructions(done.stderr)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_only_the_work_inside_math_fsum_is_counted(tmp_path):
    """Work outside math.fsum adds nothing to the count; twice the calls inside, about
    twice the count."""
    base = _collected(tmp_path, outside=10, inside=20_000)
    busy_outside = _collected(tmp_path, outside=2_000_000, inside=20_000)
    twice_inside = _collected(tmp_path, outside=10, inside=40_000)
    assert abs(busy_outside - base) / base < 0.01
    assert 1.9 < twice_inside / base < 2.1


@pytest.mark.parametrize("variant", ["untraced", "traced"])
def test_the_measured_program_runs_each_variant(variant):
    """The program callgrind measures compiles the MLP and makes its calls (no valgrind)."""
    measured_calls(variant, calls=10, backend=DEFAULT_BACKEND, run_spans=DEFAULT_RUN_SPANS)


@pytest.mark.parametrize("variant", ["untraced", "traced"])
def test_the_measured_compiles_run_each_variant(variant):
    """The program callgrind measures with --compiles compiles the MLP cold, runs it and
    its backward, as many times as asked (no valgrind)."""
    import torch

    torch._dynamo.utils.counters.clear()
    measured_compiles(variant, compiles=2, backend=DEFAULT_COMPILE_BACKEND)
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == 3
