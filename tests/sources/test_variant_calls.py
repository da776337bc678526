"""Hot and cold variants: the calls each compile id served, counted in a real job and
shown by the report, its --json, its diff and the torch.compile.variant.calls metric."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _export_support import PROGRAMS, child_environ, one_file, read_jsonl, run_program

from otel_dynamo import names
from otel_dynamo.report import read_report
from otel_dynamo.report.diff.compare import MinChange, diff_summaries

JOB = PROGRAMS / "variants_job.py"
TIMEOUT_S = 240

pytestmark = pytest.mark.slow  # each test runs real jobs in processes of their own


def _run(out: Path, *arguments: str) -> dict[str, Any]:
    env = child_environ(OTEL_DYNAMO_ENABLED="true", OTEL_DYNAMO_OUTPUT_DIR=str(out))
    done = run_program(JOB, *arguments, env=env, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(done.summary())


@pytest.fixture(scope="module")
def forty_then_two(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run that calls the first shape 40 times, then a second one twice."""
    out = tmp_path_factory.mktemp("forty_then_two")
    _run(out, "--calls", "40,2")
    return out


@pytest.fixture(scope="module")
def two_then_forty(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same shapes, the first called twice, the second 40 times."""
    out = tmp_path_factory.mktemp("two_then_forty")
    _run(out, "--calls", "2,40")
    return out


def _compiles(out: Path) -> list[dict[str, Any]]:
    (process,) = read_report([out]).summary["processes"]
    return list(process["compiles"])


def test_each_variant_counts_the_calls_the_job_made_with_it(tmp_path: Path) -> None:
    """Three shapes called 5, 2 and 3 times: the three compile ids served 5, 2 and 3 calls."""
    made = _run(tmp_path, "--calls", "5,2,3")
    rows = _compiles(tmp_path)
    assert [row["compile_id"] for row in rows] == ["0/0", "0/1", "0/2"]
    assert [row["calls"] for row in rows] == [made["calls"][b] for b in ("2", "3", "4")]
    assert [row["calls"] for row in rows] == [5, 2, 3]
    assert [row["backward_calls"] for row in rows] == [None, None, None]


def test_a_recompile_that_served_few_calls_is_cold(forty_then_two: Path) -> None:
    """40 calls of one shape, then 2 of another: the recompile served 2/42 of the calls, a
    cold variant in the compiles and the recompiles section; the first one is hot."""
    (process,) = read_report([forty_then_two]).summary["processes"]
    first, second = process["compiles"]
    assert (first["calls"], first["hot"], second["calls"], second["hot"]) == (40, True, 2, False)
    assert second["call_share"] == 2 / 42
    (recompile,) = process["recompiles"]
    assert (recompile["compile_id"], recompile["calls"], recompile["hot"]) == ("0/1", 2, False)


def test_training_variants_count_their_backward_calls(tmp_path: Path) -> None:
    """Training steps (aot_eager): each variant's backward ran once per call it served."""
    _run(tmp_path, "--calls", "3,2", "--train", "--backend", "aot_eager")
    rows = _compiles(tmp_path)
    assert [(row["calls"], row["backward_calls"]) for row in rows] == [(3, 3), (2, 2)]


def test_the_variant_calls_metric_ends_at_each_compile_ids_calls(tmp_path: Path) -> None:
    """torch.compile.variant.calls: the last point of each compile id holds its calls."""
    _run(tmp_path, "--calls", "4,1")
    last: dict[tuple[str, str], int] = {}
    for line in read_jsonl(one_file(tmp_path, "metrics")):
        for resource in line["resourceMetrics"]:
            for scope in resource["scopeMetrics"]:
                for metric in scope["metrics"]:
                    if metric["name"] != names.METRIC_VARIANT_CALLS:
                        continue
                    for point in metric["sum"]["dataPoints"]:
                        labels = {a["key"]: a["value"]["stringValue"] for a in point["attributes"]}
                        key = (labels[names.ATTR_COMPILE_ID], labels[names.ATTR_RUN_KIND])
                        last[key] = int(point["asInt"])
    inference = names.RUN_KIND_INFERENCE
    assert last == {("0/0", inference): 4, ("0/1", inference): 1}


def test_diff_names_a_variant_that_became_hot(forty_then_two: Path, two_then_forty: Path) -> None:
    """BASE calls the second shape 2 times in 42, NEW 40 times in 42: the diff lists that
    recompile under became_hot and the first compile under became_cold."""
    base, new = forty_then_two, two_then_forty
    diff = diff_summaries(
        read_report([base]).summary, read_report([new]).summary, min_change=MinChange()
    )
    (hot,) = diff["variants"]["became_hot"]
    (cold,) = diff["variants"]["became_cold"]
    assert (hot["base_calls"], hot["new_calls"], hot["function"]) == (2, 40, cold["function"])
    assert hot["reason"] is not None and "size mismatch" in hot["reason"]
    assert (cold["base_calls"], cold["new_calls"], cold["reason"]) == (40, 2, None)


def test_a_diff_gate_fails_on_a_variant_that_became_hot(
    forty_then_two: Path, two_then_forty: Path
) -> None:
    """`otel-dynamo diff --fail-on variants_became_hot>0` exits 1 when one became hot, 0
    for a run compared with itself."""
    base, new = forty_then_two, two_then_forty
    codes = []
    for first, second in ((base, new), (base, base)):
        command = [sys.executable, "-m", "otel_dynamo", "diff", str(first), str(second)]
        command += ["--fail-on", "variants_became_hot>0"]
        done = subprocess.run(
            command,
            env=child_environ(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
        codes.append(done.returncode)
    assert codes == [1, 0]


def test_the_terminal_report_marks_a_cold_variant(forty_then_two: Path) -> None:
    """The recompiles table of `otel-dynamo report` shows the cold variant's calls as "2 cold"."""
    done = subprocess.run(
        [sys.executable, "-m", "otel_dynamo", "report", str(forty_then_two)],
        env=child_environ(NO_COLOR="1", COLUMNS="140"),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    recompiles = done.stdout.split("Recompiles (1)")[1]
    assert "2 cold" in recompiles.splitlines()[2]


def test_a_forked_child_reports_only_the_calls_it_served(tmp_path: Path) -> None:
    """The parent calls 5 times, then a forked multiprocessing child 2 times: the parent's
    process reports 5 calls for 0/0, the child's process 2 (not 7)."""
    _run(tmp_path, "--calls", "5", "--fork-calls", "2")
    processes = read_report([tmp_path]).summary["processes"]
    calls = sorted(
        row["calls"] for p in processes for row in p["compiles"] if row["calls"] is not None
    )
    variant_events = sorted(
        int(a["value"]["intValue"])
        for line in (read_jsonl(path) for path in tmp_path.glob("logs-*.jsonl"))
        for request in line
        for resource in request["resourceLogs"]
        for scope in resource["scopeLogs"]
        for record in scope["logRecords"]
        if record.get("eventName") == names.LOG_VARIANT_CALLS
        for a in record["attributes"]
        if a["key"] == names.ATTR_VARIANT_CALLS
    )
    assert variant_events == [2, 5]
    assert calls == [5]  # the child compiled nothing: its calls have no compile row of its own
