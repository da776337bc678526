"""The report's opening answer to why a job recompiles and why its graphs break: the
most frequent reasons over all processes, in plain words, each with where it happened."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from _report_support import FakeCompile, write_small, write_traces


def _cli(*argv: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "otel_dynamo", *argv],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "100"},
    )
    return done.stdout


def test_terminal_lists_why_it_recompiled_and_broke_before_the_processes(tmp_path: Path) -> None:
    """After where compile time went and before the first process's tables: the plain
    recompile reason and the graph-break reasons, counted, with the function and place."""
    lines = _cli("report", str(write_small(tmp_path))).splitlines()
    start = lines.index("Why it recompiled (1)")
    end = next(index for index, line in enumerate(lines) if line.startswith("── "))
    assert lines[start:end] == [
        "Why it recompiled (1)",
        "  count  reason                                     function  location",
        "     1x  input x: dtype changed from Float to Half  forward   project/model.py:10",
        "",
        "Why graphs broke (3)",
        "  count  reason                                         function  location",
        "     2x  Unsupported: builtin print() is not traceable  forward   project/model.py:20",
        "     1x  Data-dependent branching on tensor.item()      step      project/model.py:33",
        "",
    ]
    assert lines.index("Where compile time went (360.0 ms)") < start


def test_page_lists_why_it_recompiled_and_broke_before_the_timeline(tmp_path: Path) -> None:
    """The page's causes section holds every reason and comes before the timeline."""
    page = tmp_path / "report.html"
    _cli("report", str(write_small(tmp_path / "run")), "--html", str(page))
    text = page.read_text(encoding="utf-8")
    section = text[text.index('<section id="causes">') : text.index("<h2>Timeline</h2>")]
    assert "<h3>Why it recompiled (1)</h3>" in section
    assert "<h3>Why graphs broke (3)</h3>" in section
    assert "<td>input x: dtype changed from Float to Half</td>" in section
    assert "<td>step</td><td>project/model.py:33</td>" in section


def test_no_causes_when_nothing_recompiled_or_broke(tmp_path: Path) -> None:
    """A job with neither recompiles nor graph breaks has no causes lines."""
    write_traces(tmp_path / "traces-1.jsonl", [FakeCompile("0/0")])
    text = _cli("report", str(tmp_path))
    assert "Why it recompiled" not in text and "Why graphs broke" not in text
