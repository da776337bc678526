"""Every cause of a one-cause job has a fix record, and a record with actions, applied
mechanically from the record alone (tests/programs/apply_fix_record.py, written from
docs/report-json.md, not otel_dynamo's own hook), removes the cause and leaves the job's
output the same. Real jobs (tests/programs/one_cause_job.py), real compiles, on every
torch the matrix runs (this folder is torch-facing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from otel_dynamo.causes.records import Fix
from otel_dynamo.causes.resumed import same_code
from otel_dynamo.report import load_telemetry, summarize
from otel_dynamo.report.summary.schema import CauseRow, Summary

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
JOB = PROGRAMS / "one_cause_job.py"
APPLY = PROGRAMS / "apply_fix_record.py"
TIMEOUT_S = 300

FIXED_BY_ACTIONS = {
    "dimension": ("recompile", ["mark_dynamic"]),
    "two_dimensions": ("recompile", ["mark_dynamic"]),
    "int_argument": ("recompile", ["env"]),
    "float_argument": ("recompile", ["compile_kwargs"]),
    "global_int": ("recompile", ["env"]),
    "global_float": ("recompile", ["compile_kwargs"]),
    "module_counter": ("recompile", ["config", "env"]),
    "module_dimension": ("recompile", ["mark_dynamic"]),
    "prints": ("graph_break", ["config_add"]),
    "item": ("graph_break", ["config"]),
    "nonzero": ("graph_break", ["config"]),
}
"""Scenario: the kind of its cause and the action kinds of its fix."""
SAID_IN_WORDS = {
    "list_length": "torch.stack",
    "dtype_change": "once per dtype",
    "requires_grad_change": "with and once without gradients",
    "logs": "move the log call out of",
    "branch": "torch.cond",
}
"""Scenario: what its fix's summary says (no exact action can be known)."""


def _run(tmp_path: Path, name: str, command: list[str]) -> tuple[str, Summary]:
    out = tmp_path / name
    env = {**os.environ, "OTEL_DYNAMO_ENABLED": "true", "OTEL_DYNAMO_OUTPUT_DIR": str(out)}
    done = subprocess.run(
        [sys.executable, *command],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout, summarize(load_telemetry([out]))


def _causes(summary: Summary) -> list[CauseRow]:
    (process,) = summary["processes"]
    return process["what_to_do"]


def _at(summary: Summary, cause: CauseRow) -> tuple[int, int]:
    """Recompiles and graph breaks in the cause's function, of any cause there: at any
    line, or in a function Dynamo resumes it with after a break (a moved cause counts)."""
    found = [
        row
        for row in _causes(summary)
        if row["file"] == cause["file"]
        and same_code(row["function"], cause["function"])
        and row["kind"] != "recompile_limit"
    ]
    return sum(row["recompiles"] for row in found), sum(row["graph_breaks"] for row in found)


@pytest.mark.parametrize("scenario", sorted(FIXED_BY_ACTIONS))
def test_a_fix_with_actions_applied_from_the_record_removes_its_cause(
    tmp_path: Path, scenario: str
) -> None:
    """The job's one cause has a fix whose actions, applied by a program that reads only
    the record, leave no recompile or break at the cause's code and the same output."""
    kind, action_kinds = FIXED_BY_ACTIONS[scenario]
    plain_out, traced = _run(tmp_path, "traced", [str(JOB), scenario])
    (cause,) = _causes(traced)
    assert (cause["kind"], cause["function"]) == (
        kind,
        "forward" if scenario.startswith("module_") else scenario,
    )
    fix: Fix = cause["fixes"][0]
    assert sorted(action["kind"] for action in fix["actions"]) == action_kinds
    record = tmp_path / "record.json"
    record.write_text(json.dumps(fix), encoding="utf-8")
    fixed_out, fixed = _run(tmp_path, "fixed", [str(APPLY), str(record), str(JOB), scenario])
    assert _at(fixed, cause) == (0, 0)
    assert (fix["expect"]["recompiles"] or 0, fix["expect"]["graph_breaks"] or 0) == (0, 0)
    assert fixed_out == plain_out


@pytest.mark.parametrize("scenario", sorted(SAID_IN_WORDS))
def test_a_cause_with_no_exact_change_has_its_fix_in_words(tmp_path: Path, scenario: str) -> None:
    """Where no exact change can be known, the fix has no action and its summary says the
    rewrite; a value that needs its own graph says the recompiles remain."""
    _, traced = _run(tmp_path, "traced", [str(JOB), scenario])
    (cause,) = _causes(traced)
    (fix,) = cause["fixes"]
    assert fix["actions"] == []
    assert SAID_IN_WORDS[scenario] in fix["summary"]
    if scenario in ("dtype_change", "requires_grad_change"):
        assert fix["expect"]["recompiles"] == cause["recompiles"] == 1


def test_a_logger_break_is_not_fixed_by_dropping_the_log_line(tmp_path: Path) -> None:
    """torch's lever for a logger's break drops the log line: the fix says so and offers
    no action that would."""
    _, traced = _run(tmp_path, "traced", [str(JOB), "logs"])
    (cause,) = _causes(traced)
    (fix,) = cause["fixes"]
    assert fix["actions"] == []
    assert fix["differs_from_torch"] is not None
    assert "drop" in fix["differs_from_torch"]


def test_the_recompile_limit_is_offered_as_what_it_is(tmp_path: Path) -> None:
    """Past the recompile limit, the limit is its own cause: no action, and its record
    says the recompiles remain (raising the limit hides them)."""
    _, traced = _run(tmp_path, "traced", [str(JOB), "recompile_limit"])
    (limit,) = [row for row in _causes(traced) if row["kind"] == "recompile_limit"]
    (fix,) = limit["fixes"]
    assert (fix["actions"], fix["expect"]["recompiles"]) == ([], limit["recompiles"])
    assert limit["recompiles"] >= 7
