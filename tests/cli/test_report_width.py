"""The terminal report's width: ``--width N`` for piped output (and ``COLUMNS``), the
terminal's own columns otherwise, at most 100 unless asked."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _report_support import FakeCompile, write_traces

from otel_dynamo.cli.report_command import terminal_width

LONG_REASON = "tensor 'x' size mismatch at index 0. expected 4, actual 8"


def _report(tmp_path: Path, *options: str, columns: str | None = None) -> list[str]:
    path = write_traces(
        tmp_path / "t.jsonl",
        [
            FakeCompile("0/0"),
            FakeCompile("0/1", start_ms=1000, cache_size=1, recompile_reason=LONG_REASON),
        ],
    )
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    done = subprocess.run(
        [sys.executable, "-m", "otel_dynamo", "report", str(path), *options],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=env,
    )
    return done.stdout.splitlines()


@pytest.mark.parametrize("width", [80, 100, 200])
def test_width_lays_piped_output_out_for_n_columns(tmp_path: Path, width: int) -> None:
    """``--width N``: no line is longer than N, and the process heading's rule fills N."""
    lines = _report(tmp_path, "--width", str(width))
    assert max(len(line) for line in lines) == width


def test_columns_sets_the_width_of_piped_output(tmp_path: Path) -> None:
    """With ``COLUMNS=80`` and no ``--width``, piped output is 80 columns wide."""
    lines = _report(tmp_path, columns="80")
    assert max(len(line) for line in lines) == 80


def test_the_width_rules() -> None:
    """Asked: as asked (at least 60); piped: COLUMNS capped at 100, else 100."""
    piped = io.StringIO()
    assert terminal_width(piped, asked=150) == 150
    assert terminal_width(piped, environ={"COLUMNS": "300"}) == 100
    assert terminal_width(piped, environ={"COLUMNS": "72"}) == 72
    assert terminal_width(piped, environ={"COLUMNS": "wide"}) == 100
    assert terminal_width(piped, environ={}) == 100


def test_a_width_below_60_is_refused(tmp_path: Path) -> None:
    """``--width 20``: one argparse error naming the least accepted."""
    path = write_traces(tmp_path / "t.jsonl", [FakeCompile("0/0")])
    done = subprocess.run(
        [sys.executable, "-m", "otel_dynamo", "report", str(path), "--width", "20"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "argument --width: expected 60 or more, got 20" in done.stderr
