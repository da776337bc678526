"""Where compile time went (``compile_time``) and recompile reasons in plain words, read
from a real job that recompiles on a shape, a Python float and a list length
(tests/programs/recompiling_job.py), through the CLI as a user runs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _report_support import write_small

from otel_dynamo.report import load_telemetry, summarize

PROGRAM = Path(__file__).parents[1] / "programs" / "recompiling_job.py"
SHAPE = "input x: dimension 0 changed from 4 to 8"
FLOAT = "input scale: a Python float value changed (was 64.75)"
LENGTH = "the length of xs changed (was 3)"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The telemetry directory of one run of the recompiling job."""
    out = tmp_path_factory.mktemp("recompiling") / "telemetry"
    env = {**os.environ, "OTEL_DYNAMO_ENABLED": "true", "OTEL_DYNAMO_OUTPUT_DIR": str(out)}
    subprocess.run([sys.executable, str(PROGRAM)], env=env, check=True, timeout=300)
    return out


def _cli(*argv: str) -> str:
    """stdout of ``otel-dynamo ARGV`` run as a user runs it (a pipe: 100 columns)."""
    done = subprocess.run(
        [sys.executable, "-m", "otel_dynamo", *argv],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    return done.stdout


def _summary(recorded: Path) -> dict[str, Any]:
    summary: dict[str, Any] = json.loads(_cli("report", str(recorded), "--json"))
    return summary


@pytest.mark.slow
def test_phase_split_adds_up_to_total_compile_seconds(recorded: Path) -> None:
    """The phases' seconds of the real job add up to totals.compile_seconds (rounding)."""
    summary = _summary(recorded)
    phases = sum(row["seconds"] for row in summary["compile_time"]["phases"])
    assert round(phases, 6) == summary["totals"]["compile_seconds"]


@pytest.mark.slow
def test_process_phase_split_adds_up_to_its_compile_seconds(recorded: Path) -> None:
    """A process's phases add up to its own totals.compile_seconds."""
    section = _summary(recorded)["processes"][0]
    phases = sum(row["seconds"] for row in section["compile_time"]["phases"])
    assert round(phases, 6) == section["totals"]["compile_seconds"]


@pytest.mark.slow
def test_cold_and_cached_add_up_to_compile_seconds(recorded: Path) -> None:
    """No compile cache in an aot_eager job: all 5 compiles cold, all the time cold."""
    summary = _summary(recorded)
    cache = summary["compile_time"]["cache"]
    assert (cache["cold_compiles"], cache["warm_compiles"], cache["cold_seconds"]) == (
        5,
        0,
        summary["totals"]["compile_seconds"],
    )


@pytest.mark.slow
def test_slowest_functions_sum_compiles_and_recompiles_per_location(recorded: Path) -> None:
    """scaled (3 compiles, 2 recompiles) before summed (2, 1); their seconds add up."""
    summary = _summary(recorded)
    rows = summary["compile_time"]["slowest_functions"]
    shown = [(row["function"], row["line"], row["compiles"], row["recompiles"]) for row in rows]
    total = round(sum(row["compile_seconds"] for row in rows), 6)
    assert (shown, total) == (
        [("scaled", 14, 3, 2), ("summed", 18, 2, 1)],
        summary["totals"]["compile_seconds"],
    )


@pytest.mark.slow
def test_terminal_opens_with_what_to_do_then_where_compile_time_went(recorded: Path) -> None:
    """After the headline totals: what to do about the job's recompiles (its three
    causes), then the block of where compile time went, titled with the same compile
    time."""
    lines = _cli("report", str(recorded)).splitlines()
    total = re.search(r"· (\S+ \S+) compiling$", lines[1])
    assert total is not None
    assert lines[2:4] == ["", "What to do (3 causes, costliest first)"]
    where = lines.index(f"Where compile time went ({total[1]})")
    assert lines[where - 1] == "" and lines[where + 1].startswith("  by phase    AOT ")


@pytest.mark.slow
def test_page_shows_where_compile_time_went_before_the_timeline(
    recorded: Path, tmp_path: Path
) -> None:
    """The HTML page's compile-time section comes before the timeline."""
    page = tmp_path / "report.html"
    _cli("report", str(recorded), "--html", str(page))
    text = page.read_text(encoding="utf-8")
    assert 0 < text.index('<section id="compile-time">') < text.index("<h2>Timeline</h2>")


@pytest.mark.slow
def test_json_keeps_the_raw_reason_beside_the_plain_one(recorded: Path) -> None:
    """--json: each recompile's raw guard in reason, its plain reading in reason_plain."""
    rows = _summary(recorded)["processes"][0]["recompiles"]
    assert [(row["reason"].split("  #")[0].strip(), row["reason_plain"]) for row in rows] == [
        ("tensor 'x' size mismatch at index 0. expected 4, actual 8", SHAPE),
        ("scale == 64.75", FLOAT),
        ("len(xs) == 3", LENGTH),
    ]


def _flat(text: str) -> str:
    """Text with runs of whitespace (line breaks of wrapped cells) as one space."""
    return re.sub(r"\s+", " ", text)


@pytest.mark.slow
def test_same_plain_wording_in_terminal_page_and_diff(recorded: Path, tmp_path: Path) -> None:
    """The shape and the float recompile read the same in the report's terminal and HTML,
    and in the diff's terminal and HTML (against a run that had neither)."""
    base = tmp_path / "base"
    write_small(base)
    report_page, diff_page = tmp_path / "report.html", tmp_path / "diff.html"
    outputs = {
        "report terminal": _flat(_cli("report", str(recorded))),
        "report page": _cli("report", str(recorded), "--html", str(report_page))
        and report_page.read_text(encoding="utf-8"),
        "diff terminal": _flat(_cli("diff", str(base), str(recorded))),
        "diff page": _cli("diff", str(base), str(recorded), "--html", str(diff_page))
        and diff_page.read_text(encoding="utf-8"),
    }
    assert {where: (SHAPE in text, FLOAT in text) for where, text in outputs.items()} == {
        where: (True, True) for where in outputs
    }


def test_small_job_split_in_exact_values(tmp_path: Path) -> None:
    """Phase spans only (no recorded split): AOT nests in the backend compile, so the
    backend counts what AOT leaves; the rest of each compile is unrecorded."""
    summary = summarize(load_telemetry([write_small(tmp_path)]))
    phases = {row["phase"]: row["seconds"] for row in summary["compile_time"]["phases"]}
    assert phases == {
        "tracing": 0.108,
        "aot": 0.06,
        "backend": 0.156,
        "guards": 0.018,
        "cache": 0.0,
        "cache_load": 0.0,
        "other": 0.0,
        "unrecorded": 0.018,
    }
