"""bench/bench_sigkill.py kills a compiling job and reads back what reached the files."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "bench_sigkill.py"
SUMMARY = re.compile(
    r"^1 kills: compiles counted in metrics (\d+)/(\d+), frame spans (\d+)/\2, "
    r"frame_compiled events (\d+)/\2; the lost ones ended at most [\d.]+ s before the kill; "
    r"torn lines 0; last lines cut by the kill [0-3]$"
)


@pytest.mark.slow
def test_one_round_prints_what_reached_the_files_of_the_compiles_that_ended(tmp_path):
    """One round: a per-round line and a summary whose counts never exceed the compiles
    that ended, with at least one compile ended, and no torn line (the kill may cut the
    last line of a file being written: of the three files, metrics, traces and logs)."""
    clean = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    clean["TMPDIR"] = str(tmp_path)  # the bench's job writes its files in a temporary folder
    completed = subprocess.run(
        [sys.executable, str(BENCH), "--rounds", "1"],
        env=clean,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    lines = completed.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("round 1: ")
    match = SUMMARY.match(lines[1])
    assert match is not None, lines[1]
    counted, ended, spans, events = (int(group) for group in match.groups())
    assert ended >= 1
    assert max(counted, spans, events) <= ended
