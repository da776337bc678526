"""bench/bench_launch_bound.py's child times steady steps and says what else ran; bench_gpu.py
skips cleanly without CUDA."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "bench_launch_bound.py"
GPU_BENCH = ROOT / "bench" / "bench_gpu.py"
TINY = (
    "--backend", "aot_eager", "--blocks", "1", "--width", "8", "--batch", "2",
    "--warmup-steps", "3", "--steps", "20",
)  # fmt: skip


def _run(script: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env={**clean, "PYTHONPATH": str(ROOT), **env},
        cwd=ROOT,
    )


def test_child_prints_steady_step_statistics_and_what_else_ran(tmp_path):
    """--child with tiny sizes: one JSON line with the step's statistics over exactly the
    timed steps, no compile among them, and the collections, faults and threads seen."""
    completed = _run(BENCH, "--child", *TINY, TORCHINDUCTOR_CACHE_DIR=str(tmp_path))
    assert completed.returncode == 0, completed.stderr
    (line,) = [x for x in completed.stdout.splitlines() if x.startswith("LAUNCH_BOUND ")]
    facts = json.loads(line.removeprefix("LAUNCH_BOUND "))
    assert facts["traced"] is False
    assert facts["config"]["steps"] == 20 and facts["config"]["backend"] == "aot_eager"
    assert facts["torch_threads"] == 1
    assert facts["compiles_during_timing"] == 0
    step = facts["step"]
    assert step["n"] == 20
    assert 0 < step["min_us"] <= step["median_us"] <= step["max_us"]
    assert step["min_us"] <= step["trimmed_mean_us"] <= step["max_us"]
    assert len(step["window_medians_us"]) == 8
    assert facts["wall_ms"] * 1e3 >= 20 * step["min_us"]
    assert len(facts["gc"]["collections"]) == 3
    assert {"minor_faults", "voluntary_switches", "user_s"} <= set(facts["process"])
    assert "MainThread" in {row["name"] for row in facts["threads"]}


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_gpu_bench_without_cuda_says_it_is_skipped_and_succeeds():
    """No CUDA: one line saying the GPU bench is skipped and why, exit status 0."""
    completed = _run(GPU_BENCH)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("bench_gpu: skipped: ")
    assert "CUDA" in completed.stdout and len(completed.stdout.splitlines()) == 1


def test_help_of_both_benches_lists_the_options():
    """--help works without measuring (and without CUDA for the GPU bench)."""
    for script in (BENCH, GPU_BENCH):
        completed = _run(script, "--help")
        assert completed.returncode == 0, completed.stderr
        assert "--pairs" in completed.stdout and "--aa" in completed.stdout
