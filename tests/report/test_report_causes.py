"""The report's opening answer to why a job recompiles and why its graphs break: the
most frequent reasons over all processes, in plain words, each with where it happened."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from _report_support import FakeCompile, write_small, write_traces

from otel_dynamo.report import load_telemetry, summarize
from otel_dynamo.report.summary.function_names import FunctionNames, names_for


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


def _seven_breaks_in_a_deep_file(tmp_path: Path) -> Path:
    """Seven graph-break reasons of 52 characters each, in a function with a long name in
    a deeply nested file."""
    from _report_support import GraphBreak

    deep = "/home/someone/work/a-long-project-name/src/package/models/transformer_blocks.py"
    breaks = tuple(
        GraphBreak(
            f"Data-dependent branching on the value of tensor n{index}",
            "k",
            (f"{deep}:{40 + index} in attention_with_rotary_embeddings",),
        )
        for index in range(7)
    )
    compile_ = FakeCompile(
        "0/0",
        function="attention_with_rotary_embeddings",
        file=deep,
        line=30,
        graph_breaks=breaks,
    )
    return write_traces(tmp_path / "t.jsonl", [compile_])


def test_function_and_location_get_their_width_and_the_reason_wraps(tmp_path: Path) -> None:
    """At 100 columns the location keeps its whole width and the function its name cut to
    the report's one name width; the 52-character reason wraps at its spaces instead."""
    from otel_dynamo.report.render.table import shown_name

    lines = _cli("report", str(_seven_breaks_in_a_deep_file(tmp_path))).splitlines()
    start = lines.index("Why graphs broke (7)")
    first, second = lines[start + 2], lines[start + 3]
    function = shown_name("attention_with_rotary_embeddings", 100)
    assert all(len(line) <= 100 for line in lines)
    assert first.endswith(f"{function}  models/transformer_blocks.py:40"), first
    reason = " ".join([first[9:].split("  ")[0], second.strip()])
    assert reason == "Data-dependent branching on the value of tensor n0"


def test_limit_0_lists_every_reason_in_the_opening_tables(tmp_path: Path) -> None:
    """The opening table shows five reasons and says how many more; with --limit 0, all
    seven and no "more" line."""
    path = str(_seven_breaks_in_a_deep_file(tmp_path))
    default = _cli("report", path)
    assert "… 2 more reasons in the tables below" in default
    every = _cli("report", path, "--limit", "0").splitlines()
    start = every.index("Why graphs broke (7)")
    table = every[start : every.index("", start)]
    assert sum("Data-dependent branching" in line for line in table) == 7
    assert "more reasons in the tables below" not in "\n".join(every)


def test_function_names_are_made_once_for_the_rows_asked_for_in_turn(tmp_path: Path) -> None:
    """The tables of one process asking in turn for its rows' function names get one
    FunctionNames; another process's rows, or a copy of the same rows, get their own,
    naming a stack entry as their own rows name its function."""
    write_small(tmp_path)
    (section,) = summarize(load_telemetry([tmp_path]))["processes"]
    rows = section["compiles"]
    first = names_for(rows)
    assert names_for(rows) is first
    other_rows = [{**row, "module": "m.Other"} for row in rows]
    other = names_for(other_rows)
    assert type(other) is FunctionNames and other is not first
    assert names_for(list(rows)) is not first
    entry = f"{rows[0]['file']}:{rows[0]['line']} in {rows[0]['function']}"
    assert (first.entry(entry), other.entry(entry)) == (
        entry,
        entry.replace(" in forward", " in Other.forward"),
    )
