"""The terminal report of a real job at 60, 80, 100 and 200 columns: no line longer than
the width, no identifier split across lines, one name per function in every section and
on the page (tests/programs/mixed_modes_job.py: long torch-made names, mixed compile
modes, a CUDA-graph skip on the CPU)."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _export_support import PROGRAMS

from otel_dynamo.report.render.format import duration
from otel_dynamo.report.render.table import ELLIPSIS, shown_name
from otel_dynamo.report.summary.phases import PHASE_TITLES

JOB = PROGRAMS / "mixed_modes_job.py"
TIMEOUT_S = 600
WIDTHS = (60, 80, 100, 200)
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
RESUME = re.compile(r"torch_dynamo_resume_in_\w+")

pytestmark = pytest.mark.slow


def _otel_dynamo(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "otel_dynamo", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=True,
        cwd=cwd,
    )
    return done.stdout


@pytest.fixture(scope="module")
def telemetry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("mixed_modes")
    out = tmp_path / "telemetry"
    _otel_dynamo("run", "--out", str(out), "--", sys.executable, str(JOB), cwd=tmp_path)
    return out


@pytest.fixture(scope="module")
def summary(telemetry: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(_otel_dynamo("report", "--json", str(telemetry)))
    return loaded


def _identifiers(value: object, found: set[str]) -> set[str]:
    """Every identifier in every string of the ``--json`` summary."""
    if isinstance(value, str):
        found.update(IDENTIFIER.findall(value))
    elif isinstance(value, dict):
        for item in value.values():
            _identifiers(item, found)
    elif isinstance(value, list):
        for item in value:
            _identifiers(item, found)
    return found


def _labels(summary: dict[str, Any]) -> set[str]:
    (process,) = summary["processes"]
    return {row["function"] for row in process["compiles"] if row["function"]}


@pytest.mark.parametrize("width", WIDTHS)
def test_no_line_is_longer_than_the_width(telemetry: Path, width: int) -> None:
    """``--width N``: every line of the report fits N columns."""
    lines = _otel_dynamo("report", "--width", str(width), str(telemetry)).splitlines()
    assert [line for line in lines if len(line) > width] == []


@pytest.mark.parametrize("width", WIDTHS)
def test_no_wrapped_line_starts_with_a_separator(telemetry: Path, width: int) -> None:
    """A list of parts ("backend 38.2 ms · tracing 23.7 ms") wraps after a "·", never
    before one: no line's text starts with "·" (nor is a lone "·")."""
    lines = _otel_dynamo("report", "--width", str(width), str(telemetry)).splitlines()
    assert [line for line in lines if line.strip().startswith("·")] == []


@pytest.mark.parametrize("width", WIDTHS)
def test_no_identifier_is_split_across_lines(
    telemetry: Path, summary: dict[str, Any], width: int
) -> None:
    """No two pieces on consecutive lines join into an identifier of the run (a guard's
    source, a config name, a function) while either piece alone is none of its words."""
    known = _identifiers(summary, set())
    lines = _otel_dynamo("report", "--width", str(width), str(telemetry)).splitlines()
    split = [
        (before, after)
        for line, following in itertools.pairwise(lines)
        for before in _cell_ends(line)
        for after in _cell_starts(following)
        if before + after in known and (before not in known or after not in known)
    ]
    assert split == []


def _cell_ends(line: str) -> list[str]:
    """Identifiers that end a cell: the line's end, or a gap of two spaces, follows."""
    return [found[1] for found in re.finditer(rf"({IDENTIFIER.pattern})(?=$|  )", line)]


def _cell_starts(line: str) -> list[str]:
    """Identifiers that start a cell: the line's start or two spaces before them."""
    return [found[1] for found in re.finditer(rf"(?:^|  )\s*({IDENTIFIER.pattern})", line)]


@pytest.mark.parametrize("width", WIDTHS)
def test_a_resume_function_has_one_name_in_every_section(
    telemetry: Path, summary: dict[str, Any], width: int
) -> None:
    """Each of torch's resume functions shows in every table as one text: whole, or cut
    alike (``shown_name``); running text shows it whole."""
    resumes = {label for label in _labels(summary) if RESUME.fullmatch(label)}
    assert len(resumes) == 2
    text = _otel_dynamo("report", "--width", str(width), str(telemetry))
    cut = {shown_name(label, width) for label in resumes}
    shown = set(re.findall(rf"torch_d[\w{ELLIPSIS}]*", text))
    assert shown <= resumes | cut
    assert cut <= shown


def test_the_recompile_limit_names_the_function_as_the_frame_table_does(telemetry: Path) -> None:
    """The recompile-limit table calls the model's forward ``TinyLM.forward``, not
    ``forward``."""
    lines = _otel_dynamo("report", "--width", "100", str(telemetry)).splitlines()
    start = next(at for at, line in enumerate(lines) if line.startswith("Recompile limit"))
    assert lines[start + 2].split()[2] == "TinyLM.forward"


def test_a_cudagraph_skip_on_the_cpu_says_why(telemetry: Path, summary: dict[str, Any]) -> None:
    """Every CUDA-graph skip is shown; where torch's reason names nothing after its colon
    ("multiple devices: "), the report says the graph has no CUDA device."""
    (process,) = summary["processes"]
    skips = process["cudagraphs"]["skips"]
    text = " ".join(_otel_dynamo("report", "--width", "60", str(telemetry)).split())
    assert len(skips) == 4
    assert text.count("cpu_device (") == len(skips)
    for skip in skips:
        reason = skip["reason"].strip()
        if reason.endswith(":"):
            assert f"{reason} the graph has no CUDA device" in text
        else:
            assert reason in text


def test_the_page_timeline_names_the_function_as_the_tables_do(
    telemetry: Path, tmp_path: Path
) -> None:
    """The page's timeline labels a compile ``0/0 TinyLM.forward``, as every table names
    it, never the bare code name ``0/0 forward``."""
    page = tmp_path / "report.html"
    _otel_dynamo("report", "--html", str(page), str(telemetry))
    html = page.read_text(encoding="utf-8")
    assert '"0/0 TinyLM.forward"' in html
    assert '"0/0 forward"' not in html


@pytest.mark.parametrize("width", WIDTHS)
def test_every_part_of_a_slow_compile_is_shown_whole(
    telemetry: Path, summary: dict[str, Any], width: int
) -> None:
    """Each timed part of each of the slowest compiles ("loading from cache 1.50 s") is in
    the report whole at every width: wrapped, never cut to "cache lookups 1.3…"."""
    (process,) = summary["processes"]
    parts = {
        f"{PHASE_TITLES[phase]} {duration(value)}"
        for row in process["slowest"]
        for phase, value in row["phases"].items()
        if value
    }
    text = " ".join(_otel_dynamo("report", "--width", str(width), str(telemetry)).split())
    assert len(parts) > 5
    assert sorted(part for part in parts if part not in text) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_a_count_stays_on_the_line_of_its_noun(telemetry: Path, width: int) -> None:
    """ "7 graph breaks", "4 recompiles": a wrapped line never ends in the count (or in
    "graph") with its noun on the next line."""
    text = _otel_dynamo("report", "--width", str(width), str(telemetry))
    assert re.findall(r"(?:\d|graph) *\n *(?:graph|breaks?|recompiles?)\b", text) == []
