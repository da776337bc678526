"""``otel-dynamo report`` on a real torch.export job (tests/programs/export_job.py).

The job, run once under ``OTEL_DYNAMO_ENABLED=true``, exports ``Small`` (non-strict,
dynamic batch), decomposes it, runs the exported module twice, then fails to export
``Branchy`` (data-dependent branch, strict). The report runs as a user runs it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _export_support import (
    PROGRAMS,
    child_environ,
    json_attributes,
    json_spans,
    one_file,
    read_jsonl,
    run_program,
)
from _report_support import write_small

from otel_dynamo import names

JOB = PROGRAMS / "export_job.py"
JOB_RUNS = 2
SMALL = "__main__.Small"
BRANCHY = "__main__.Branchy"
UNSUPPORTED = "torch._dynamo.exc.Unsupported"
DATA_DEPENDENT = "Data-dependent branching"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def telemetry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The telemetry folder of one run of the export job."""
    out = tmp_path_factory.mktemp("export_job")
    env = child_environ(OTEL_DYNAMO_ENABLED="true", OTEL_DYNAMO_OUTPUT_DIR=str(out))
    done = run_program(JOB, env=env, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.summary() == {"runs": JOB_RUNS, "failure": UNSUPPORTED}
    return out


def _report(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "otel_dynamo", "report", *args],
        env=child_environ(NO_COLOR="1"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def summary(telemetry: Path) -> dict[str, Any]:
    """``otel-dynamo report --json`` of the job's folder."""
    return json.loads(_report(str(telemetry), "--json"))


@pytest.fixture(scope="module")
def section(summary: dict[str, Any]) -> dict[str, Any]:
    """The job's one process."""
    (process,) = summary["processes"]
    return process


def _without_times(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in row.items() if k not in ("duration_s", "start_unix_nano")} for row in rows
    ]


def test_each_export_call_is_a_row(section: dict[str, Any]) -> None:
    """torch_export.exports: one row per torch.export.export call, in call order, with its
    module class, strict, dynamic shapes, the program's counts, outcome and error."""
    assert _without_times(section["torch_export"]["exports"]) == [
        {
            "module_class": SMALL,
            "strict": False,
            "dynamic_shapes": True,
            "outcome": "success",
            "op_count": 2,
            "node_count": 6,
            "parameter_count": 2,
            "buffer_count": 0,
            "ops": ["aten.linear.default=1", "aten.relu.default=1"],
            "error_type": None,
            "error_message": None,
            "error_kind": None,
        },
        {
            "module_class": BRANCHY,
            "strict": True,
            "dynamic_shapes": False,
            "outcome": "failure",
            "op_count": None,
            "node_count": None,
            "parameter_count": None,
            "buffer_count": None,
            "ops": [],
            "error_type": UNSUPPORTED,
            "error_message": DATA_DEPENDENT,
            "error_kind": DATA_DEPENDENT,
        },
    ]


def test_export_durations_are_the_spans(section: dict[str, Any], telemetry: Path) -> None:
    """Each export row's duration_s is its span's, to the microsecond."""
    spans = [s for s in json_spans(one_file(telemetry, "traces")) if s["name"] == names.SPAN_EXPORT]
    expected = [
        round((int(s["endTimeUnixNano"]) - int(s["startTimeUnixNano"])) / 1e9, 6)
        for s in sorted(spans, key=lambda s: int(s["startTimeUnixNano"]))
    ]
    assert [row["duration_s"] for row in section["torch_export"]["exports"]] == expected


def test_decomposition_is_a_row(section: dict[str, Any]) -> None:
    """torch_export.decompositions: the run_decompositions call with its op counts and
    op changes (linear became permute + addmm under the default table)."""
    assert _without_times(section["torch_export"]["decompositions"]) == [
        {
            "module_class": SMALL,
            "outcome": "success",
            "op_count_before": 2,
            "op_count_after": 3,
            "ops_added": ["aten.addmm.default=+1", "aten.permute.default=+1"],
            "ops_removed": ["aten.linear.default=-1"],
            "default_table": True,
            "error_type": None,
            "error_message": None,
        }
    ]


def test_runs_of_the_exported_module_are_counted_per_class(section: dict[str, Any]) -> None:
    """torch_export.runs: the exported module's recorded runs, by its module class."""
    (row,) = section["torch_export"]["runs"]
    assert {k: v for k, v in row.items() if k != "duration_s"} == {
        "module_class": SMALL,
        "runs": JOB_RUNS,
        "failed": 0,
    }


def test_failed_export_is_an_export_failure(section: dict[str, Any]) -> None:
    """torch_export.failures: the failed strict export with torch's kind; it is not
    listed again among the compile failures (only the frame compile Dynamo ran is)."""
    assert section["torch_export"]["failures"] == [
        {
            "operation": "export",
            "module_class": BRANCHY,
            "strict": True,
            "error_type": UNSUPPORTED,
            "error_message": DATA_DEPENDENT,
            "error_kind": DATA_DEPENDENT,
            "classified": False,
            "case": None,
        }
    ]
    assert [row["span"] for row in section["failures"]] == [names.SPAN_FRAME]


def test_totals_count_exports(summary: dict[str, Any]) -> None:
    """totals: exports, export_failures, decompositions, and export_seconds the sum of
    the export and decomposition durations."""
    totals = summary["totals"]
    calls = [
        *summary["processes"][0]["torch_export"]["exports"],
        *summary["processes"][0]["torch_export"]["decompositions"],
    ]
    assert {key: totals[key] for key in ("exports", "export_failures", "decompositions")} == {
        "exports": 2,
        "export_failures": 1,
        "decompositions": 1,
    }
    assert totals["export_seconds"] == round(sum(row["duration_s"] for row in calls), 6)


def _metric_runs(telemetry: Path) -> dict[str, int]:
    """The torch.compile.runs metric's last (cumulative) value per run kind."""
    latest: dict[str, tuple[int, int]] = {}
    for line in read_jsonl(one_file(telemetry, "metrics")):
        for resource in line["resourceMetrics"]:
            for scope in resource["scopeMetrics"]:
                for metric in scope["metrics"]:
                    if metric["name"] != names.METRIC_RUNS:
                        continue
                    for point in metric["sum"]["dataPoints"]:
                        kind = json_attributes(point["attributes"])[names.ATTR_RUN_KIND]
                        at = int(point["timeUnixNano"])
                        if kind not in latest or at >= latest[kind][0]:
                            latest[kind] = (at, int(point["asInt"]))
    return {kind: value for kind, (_, value) in latest.items()}


def test_report_runs_equal_the_runs_metric(summary: dict[str, Any], telemetry: Path) -> None:
    """The report's runs per kind and totals.runs are what the torch.compile.runs metric
    in the same files says: the exported module's runs, kind export."""
    metric = _metric_runs(telemetry)
    runs = summary["processes"][0]["runs"]
    assert metric == {names.RUN_KIND_EXPORT: JOB_RUNS}
    assert {kind: count for kind, count in runs.items() if count} == metric
    assert summary["totals"]["runs"] == sum(metric.values())


def test_frame_compile_of_a_failed_strict_export_has_the_qualified_error_type(
    telemetry: Path, section: dict[str, Any]
) -> None:
    """The frame compile Dynamo ran for the strict export failed with
    torch._dynamo.exc.Unsupported: its span's error.type and the report's failure say
    the qualified name, as the export span does (docs/what-is-recorded.md)."""
    spans = json_spans(one_file(telemetry, "traces"))
    (frame,) = [span for span in spans if span["name"] == names.SPAN_FRAME]
    assert json_attributes(frame["attributes"])[names.ATTR_ERROR_TYPE] == UNSUPPORTED
    assert [row["error_type"] for row in section["failures"]] == [UNSUPPORTED]


def test_terminal_shows_the_torch_export_section(telemetry: Path) -> None:
    """The terminal report opens the process with its torch.export tables, and the
    overview counts exports and decompositions."""
    lines = _report(str(telemetry)).splitlines()
    durations = re.compile(r" +\d+(\.\d+)? (s|ms|µs)")  # right-aligned: width varies
    masked = [durations.sub(" <t>", line).rstrip() for line in lines]
    assert masked[2] == "2 exports (1 failed) · 1 decomposition"
    start = masked.index("torch.export calls (2)")
    assert masked[start : start + 4] == [
        "torch.export calls (2)",
        "  module            strict  dynamic  ops  nodes  params  duration  outcome",
        "  __main__.Small    no      yes        2      6       2 <t>  success",
        "  __main__.Branchy  yes     no         -      -       - <t>  failure",
    ]
    runs = masked.index("Runs of exported programs (2)")
    assert masked[runs + 2] == "  __main__.Small     2       0 <t>"
    failures = masked.index("torch.export failures (1)")
    assert masked[failures + 2] == (
        "  export     __main__.Branchy  torch._dynamo.exc.Unsupported: Data-dependent branching"
        " (strict)"
    )


def test_terminal_has_no_torch_export_section_without_exports(tmp_path: Path) -> None:
    """A torch.compile job's report has no torch.export lines."""
    write_small(tmp_path)
    assert [line for line in _report(str(tmp_path)).splitlines() if "export" in line] == []


def test_html_page_has_the_torch_export_tables(telemetry: Path, tmp_path: Path) -> None:
    """The HTML page shows the process's torch.export tables first, with their rows."""
    page_path = tmp_path / "report.html"
    _report(str(telemetry), "--html", str(page_path))
    page = page_path.read_text(encoding="utf-8")
    match = re.search(
        r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S
    )
    assert match is not None
    (process,) = json.loads(match.group(1))["processes"]
    tables = {table["title"]: table for table in process["tables"]}
    assert [table["title"] for table in process["tables"][:4]] == [
        "torch.export calls",
        "torch.export decompositions",
        "Runs of exported programs",
        "torch.export failures",
    ]
    assert [row[0] for row in tables["torch.export calls"]["rows"]] == [SMALL, BRANCHY]
    assert tables["torch.export failures"]["rows"] == [
        [
            ["export", "bad"],
            BRANCHY,
            "torch._dynamo.exc.Unsupported: Data-dependent branching (strict)",
        ]
    ]


def test_frame_compile_of_a_strict_export_names_the_exported_forward(
    summary: dict[str, Any],
) -> None:
    """torch names neither the code nor the compile id of a strict export's frame compile:
    the report names it after the exported module's forward, in compiles and failures."""
    (process,) = summary["processes"]
    (row,) = process["compiles"]
    (failure,) = process["failures"]
    assert (row["compile_id"], row["function"], row["outcome"]) == (
        None,
        "__main__.Branchy.forward",
        "failure",
    )
    assert (failure["stage"], failure["function"], failure["span"]) == (
        "compile",
        "__main__.Branchy.forward",
        "torch.compile.frame",
    )


def test_terminal_failures_never_show_a_span_name_as_the_function(telemetry: Path) -> None:
    """The terminal's Failures table shows the exported forward as the function, not the
    span's name."""
    lines = _report(str(telemetry)).splitlines()
    failures = lines[lines.index("Failures (1)") + 2]
    assert "__main__.Branchy.forward" in failures
    assert "torch.compile.frame" not in failures


def test_runs_heading_counts_runs_in_the_terminal_and_the_page(
    telemetry: Path, tmp_path: Path
) -> None:
    """The runs of exported programs are counted the same in both views: 2 runs of one
    module class, "(2)" in the terminal and a count of 2 on the page's table."""
    assert "Runs of exported programs (2)" in _report(str(telemetry)).splitlines()
    page_path = tmp_path / "report.html"
    _report(str(telemetry), "--html", str(page_path))
    page = page_path.read_text(encoding="utf-8")
    match = re.search(
        r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S
    )
    assert match is not None
    (process,) = json.loads(match.group(1))["processes"]
    (runs,) = [
        table for table in process["tables"] if table["title"] == "Runs of exported programs"
    ]
    assert (runs["count"], len(runs["rows"])) == (2, 1)
