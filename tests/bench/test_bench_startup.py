"""bench/bench_startup.py: the ``otel_dynamo.pth`` line, tracing off, costs an interpreter
start at most INSTRUCTIONS_BOUND instructions and loads nothing."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from bench_startup import (  # noqa: E402
    INSTRUCTIONS_BOUND,
    installed_pth,
    pth_line_instructions,
    untouched_when_off,
)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_the_pth_line_with_tracing_off_stays_within_its_instruction_bound():
    """Processing a site folder that holds the installed line, variable unset, adds more
    than nothing and at most INSTRUCTIONS_BOUND instructions to the same start with an
    empty folder (callgrind counts, not times)."""
    without, with_line = pth_line_instructions(installed_pth())
    assert 0 < with_line - without <= INSTRUCTIONS_BOUND


def test_with_tracing_off_site_loads_no_otel_dynamo_module_and_no_finder():
    """``site.main()`` with the variable unset: no otel_dynamo module, sys.meta_path
    without a finder of ours."""
    assert untouched_when_off() == ([], True)
