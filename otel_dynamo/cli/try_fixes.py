"""``otel-dynamo run --try-fixes -- COMMAND``: prove each fix on the user's own job.

The job runs traced, as ``otel-dynamo run`` runs it, then again as it is (output that
differs between the two plain runs — timestamps, timings — is compared by counts only),
then once per fix the report derived from those runs that has actions and no
``code_edit``, with that fix applied by otel_dynamo's start-up hook (the job's code is not
changed), then once with every verified fix together. Each re-run has a time limit,
writes its telemetry to its own folder and sees ``OTEL_DYNAMO_FIX_TRIAL`` (a re-run
repeats the job's side effects). A fix's verdict compares, at its cause's code location,
the recompiles, graph breaks and compile seconds, and the exit status, the standard
output and the job's own lines on standard error (not torch's warnings, not ours), and
how long the job's compiled graphs ran (said where outside the two plain runs' times).

Only fixes derived from the telemetry this command's own first run wrote are applied.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, TextIO

from otel_dynamo._config.settings import ENV_FIX_ACTIONS, ENV_FIX_TRIAL, ENV_OUTPUT_DIR
from otel_dynamo.causes.fixes import env_value, verdict_words
from otel_dynamo.causes.records import (
    ACTION_CODE_EDIT,
    ACTION_ENV,
    NOT_WORKING,
    PARTIAL,
    VERIFIED,
    Action,
    Counts,
    Expect,
    Fix,
    FixesTogether,
    RunTime,
    Verdict,
    VerdictStatus,
)
from otel_dynamo.causes.resumed import same_code
from otel_dynamo.cli.report_command import terminal_width
from otel_dynamo.cli.run_command import exit_status
from otel_dynamo.cli.run_command import forwarding_signals as _forwarding_signals

if TYPE_CHECKING:
    from otel_dynamo.report import Summary

TRIALS_SUFFIX = "-try-fixes"
"""Re-runs write under ``DIR-try-fixes/`` beside the telemetry directory DIR (the report
reads a directory with its subfolders: the re-runs stay out of the job's own report)."""
TOGETHER_FILE = "all-fixes.json"
"""In the trials' folder: the re-run with every verified fix together (``FixesTogether``)."""
DEFAULT_MIN_TIMEOUT_S = 120.0
TIMEOUT_FACTOR = 4.0
"""A re-run's default time limit: four times the first run's wall time, at least
DEFAULT_MIN_TIMEOUT_S."""
STOPPED_STATUSES = frozenset({128 + signal.SIGINT, 128 + signal.SIGTERM})
"""A re-run ended by Ctrl-C or SIGTERM (sent here, and on to it) ends the trying."""
RUN_TIME_MARGIN = 0.25
"""A re-run's compiled run time is said to differ when it is this much (relative) above
the longer or below the shorter of the two plain runs', or more where the plain runs
differ by more (tiny jobs' times vary a lot)."""
FLOAT_TOLERANCE = 1e-4
"""Printed numbers this close (relative) are the same result computed by other kernels."""
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_NOT_THE_JOBS = re.compile(
    r"^(?:otel[-_]dynamo|[IWE]\d{4} |\s)|Warning: |/torch/|torch\._|\(Triggered internally"
)
"""Lines on stderr that are not the job's own records: ours, torch's logs (glog style),
Python warnings with their source line, torch's paths."""


@dataclasses.dataclass(frozen=True)
class RunResult:
    """One run of the job: how it ended, what it printed, where its telemetry is."""

    status: int | None  # None: it ran past its time limit and was stopped
    stdout: list[str]
    stderr: list[str]
    seconds: float
    telemetry: list[Path]


CauseKey = tuple[str | None, int | None, str | None, str, str]
"""A cause as ``what_to_do`` names it: (file, line, function, kind, subject)."""


@dataclasses.dataclass(frozen=True)
class Trial:
    """A fix to try (the same actions, however many causes and processes offer it): its
    records, each of which gets its verdict, and the causes it is the fix of."""

    fix: Fix
    records: list[Fix]
    locations: list[CauseKey]

    def judge(self, verdict: Verdict | None) -> None:
        for record in self.records:
            record["verdict"] = verdict


@dataclasses.dataclass(frozen=True)
class _Job:
    """The job as the first runs found it: how to run it again, what it printed and
    recorded, what varies between two plain runs, and each re-run's time limit."""

    command: list[str]
    env: Mapping[str, str]
    trials_dir: Path
    limit_s: float
    first: RunResult
    summary: Summary
    unstable: _Unstable
    plain_run_s: tuple[float | None, float | None]
    """The compiled graphs' run seconds in the first and the second plain run."""

    def rerun(self, label: str, actions: list[Action]) -> RunResult:
        return _rerun(self, label, actions)


def try_fixes(
    command: list[str], env: dict[str, str], out: Path, *, timeout_s: float | None
) -> int:
    """Run the job, try its fixes, print the report with verdicts; the first run's exit
    status."""
    trials_dir = Path(f"{out}{TRIALS_SUFFIX}")
    _say(
        "--try-fixes: the job runs twice as it is, then once per fix with actions found "
        "in its telemetry, then once with every verified fix; each re-run repeats the "
        f"job's side effects ({ENV_FIX_TRIAL} tells it it is one) and writes its telemetry "
        f"under {trials_dir}"
    )
    first = _run(command, env, out, timeout_s=None, echo=True)
    if first.status is None or not first.telemetry:
        _say("the job wrote no telemetry: nothing to try")
        return first.status or 0
    recorded = _Recorded.of(first.telemetry)
    summary = recorded.summary
    trials = _trials(summary)
    if not trials:
        _say("no fix with actions to try")
        _print_report(summary, trials_dir)
        return first.status
    limit = timeout_s or max(DEFAULT_MIN_TIMEOUT_S, TIMEOUT_FACTOR * first.seconds)
    runs = 1 + len(trials) + (1 if len(trials) > 1 else 0)
    _say(
        f"{len(trials)} fix{'es' if len(trials) != 1 else ''} to try: {runs} re-runs at most, "
        f"each stopped after {limit:.0f} s (--fix-timeout)"
    )
    second = _run(
        command, {**env, ENV_FIX_TRIAL: "plain 2"}, _fresh(trials_dir / "plain-2"), timeout_s=limit
    )
    again = _Recorded.of(second.telemetry).run_s if second.telemetry else None
    job = _Job(
        command,
        env,
        trials_dir,
        limit,
        first,
        summary,
        _unstable(first, second),
        (recorded.run_s, again),
    )
    for number, trial in enumerate(trials, start=1):
        label = f"fix {number} of {len(trials)}"
        _say(f"{label}: {trial.fix['summary']}")
        tried = job.rerun(label, trial.fix["actions"])
        if tried.status in STOPPED_STATUSES:
            _say(f"{label} was stopped by a signal: no verdict, no more fixes tried")
            break
        trial.judge(_verdict(job, trial, tried))
        _say(f"{label}: {_status_line(trial.fix['verdict'])}")
    else:
        _together(job, trials)
    _print_report(summary, trials_dir)
    return first.status


def _trials(summary: Summary) -> list[Trial]:
    """Each distinct fix with actions and no code edit, with the causes it fixes."""
    found: dict[str, Trial] = {}
    for section in summary["processes"]:
        for cause in section["what_to_do"]:
            for fix in cause["fixes"]:
                actions = fix["actions"]
                if not actions or any(a["kind"] == ACTION_CODE_EDIT for a in actions):
                    continue
                key = json.dumps(actions, sort_keys=True)
                trial = found.setdefault(key, Trial(fix, [], []))
                trial.records.append(fix)
                where: CauseKey = (
                    cause["file"],
                    cause["line"],
                    cause["function"],
                    cause["kind"],
                    cause["subject"],
                )
                if where not in trial.locations:
                    trial.locations.append(where)
    return list(found.values())


def _run(
    command: list[str],
    env: Mapping[str, str],
    directory: Path,
    *,
    timeout_s: float | None,
    echo: bool = False,
) -> RunResult:
    """One run of the job writing its telemetry to ``directory``. With ``echo`` (the
    first run, the user's own) what it prints is shown as it prints it and a signal sent
    here reaches it; a re-run runs in a session of its own, all of it stopped at
    ``timeout_s``."""
    started = time.time()
    run_env = {**env, ENV_OUTPUT_DIR: str(directory)}
    with _forwarding_signals() as forward_to:
        child = subprocess.Popen(
            command,
            env=run_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=not echo,
        )
        forward_to(child)
        out = _Collected(child.stdout, sys.stdout if echo else None)
        err = _Collected(child.stderr, sys.stderr if echo else None)
        try:
            status: int | None = exit_status(child.wait(timeout=timeout_s))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            status = None
    seconds = time.time() - started
    written = (
        sorted(path for path in directory.rglob("*.jsonl") if path.stat().st_mtime >= started - 1)
        if directory.is_dir()
        else []
    )
    return RunResult(status, out.lines(), err.lines(), seconds, written)


class _Collected:
    """A child's output stream read to its end on a thread of its own: kept, and shown
    on ``shown`` as it comes."""

    def __init__(self, stream: IO[str] | None, shown: TextIO | None) -> None:
        self._kept: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream, shown), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str] | None, shown: TextIO | None) -> None:
        if stream is None:
            return
        for line in stream:
            self._kept.append(line)
            if shown is not None:
                shown.write(line)
                shown.flush()

    def lines(self) -> list[str]:
        self._thread.join()
        return "".join(self._kept).splitlines()


def _rerun(job: _Job, label: str, actions: list[Action]) -> RunResult:
    """The job again with ``actions`` applied: ``env`` ones in its environment, the others
    by the start-up hook (OTEL_DYNAMO_FIX_ACTIONS)."""
    run_env = {**job.env, ENV_FIX_TRIAL: label}
    applied = [action for action in actions if action["kind"] != ACTION_ENV]
    if applied:
        run_env[ENV_FIX_ACTIONS] = json.dumps(applied)
    for action in actions:
        if action["kind"] == ACTION_ENV:
            run_env[action["name"]] = env_value(
                run_env.get(action["name"]), action["value"], action["name"]
            )
    directory = _fresh(job.trials_dir / label.replace(" ", "-"))
    return _run(job.command, run_env, directory, timeout_s=job.limit_s)


def _fresh(directory: Path) -> Path:
    """``directory``, emptied: a re-run's own folder, from an earlier --try-fixes."""
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    return directory


def _counts_at(
    summary: Summary,
    locations: Iterable[CauseKey],
    original: Summary | None,
) -> tuple[Counts, list[str]]:
    """Recompiles, breaks and compile seconds of ``locations``' causes in ``summary``, and
    of any cause in their functions (at any line, or in the functions Dynamo resumes them
    with after a break) that ``original`` did not have: a fix that moves a cause has not
    removed it. With those moved causes, each said ("1 graph break in f (job.py:6)")."""
    wanted = set(locations)
    functions = {(where[0], where[2]) for where in wanted}
    known = _cause_keys(original) if original is not None else set()
    counts: Counts = {"recompiles": 0, "graph_breaks": 0, "compile_seconds": 0.0}
    moved: list[str] = []
    for section in summary["processes"]:
        for cause in section["what_to_do"]:
            key = (cause["file"], cause["line"], cause["function"], cause["kind"], cause["subject"])
            new_there = (
                original is not None
                and key not in known
                and any(
                    cause["file"] == file and same_code(cause["function"], function)
                    for file, function in functions
                )
            )
            if key not in wanted and not new_there:
                continue
            recompiles = cause["recompiles"] if cause["kind"] != "recompile_limit" else 0
            counts["recompiles"] += recompiles
            counts["graph_breaks"] += cause["graph_breaks"]
            counts["compile_seconds"] = round(
                counts["compile_seconds"] + cause["compile_seconds"], 6
            )
            if new_there:
                place = (cause["file"] or "").replace("\\", "/").rsplit("/", 1)[-1]
                where = f"{cause['function']} ({place}:{cause['line']})"
                moved.append(f"{_how_many(recompiles, cause['graph_breaks'])} in {where}")
    return counts, moved


def _how_many(recompiles: int, graph_breaks: int) -> str:
    """``1 recompile, 2 graph breaks``: the counts that are not 0."""
    counted = ((recompiles, "recompile"), (graph_breaks, "graph break"))
    return ", ".join(f"{n} {noun}{'s' if n != 1 else ''}" for n, noun in counted if n)


def _cause_keys(summary: Summary) -> set[tuple[object, ...]]:
    return {
        (cause["file"], cause["line"], cause["function"], cause["kind"], cause["subject"])
        for section in summary["processes"]
        for cause in section["what_to_do"]
    }


@dataclasses.dataclass(frozen=True)
class _Unstable:
    """What differs between the two plain runs: those lines are compared by count only."""

    stdout: frozenset[int] | None  # None: not even the line count was the same
    stderr: frozenset[int] | None


def _unstable(first: RunResult, second: RunResult) -> _Unstable:
    return _Unstable(
        _differing(first.stdout, second.stdout),
        _differing(_jobs_lines(first.stderr), _jobs_lines(second.stderr)),
    )


def _differing(one: list[str], other: list[str]) -> frozenset[int] | None:
    if len(one) != len(other):
        return None
    return frozenset(index for index, (a, b) in enumerate(zip(one, other, strict=True)) if a != b)


def _jobs_lines(stderr: list[str]) -> list[str]:
    """The job's own lines on stderr (its log records, its prints there)."""
    return [line for line in stderr if not _NOT_THE_JOBS.search(line)]


@dataclasses.dataclass(frozen=True)
class _Comparison:
    same: bool
    notes: list[str]


def _compare(first: RunResult, tried: RunResult, unstable: _Unstable) -> _Comparison:
    notes: list[str] = []
    if tried.status != first.status:
        return _Comparison(False, [f"exit status {tried.status}, was {first.status}"])
    same = True
    for what, before, after, varying in (
        ("stdout", first.stdout, tried.stdout, unstable.stdout),
        ("the job's stderr", _jobs_lines(first.stderr), _jobs_lines(tried.stderr), unstable.stderr),
    ):
        if len(before) != len(after):
            return _Comparison(False, [f"{what}: {len(after)} lines, was {len(before)}"])
        if varying is None:
            notes.append(f"{what} differs between two plain runs: compared by line count only")
            continue
        if varying:
            notes.append(
                f"{what}: {len(varying)} lines that differ between plain runs compared by count"
            )
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            if old == new or index in varying:
                continue
            if _close_numbers(old, new):
                notes.append(f"{what}: printed numbers differ in the last digits (other kernels)")
                continue
            same = False
            notes.append(f"{what} line {index + 1} changed")
            break
    return _Comparison(same, list(dict.fromkeys(notes)))


def _close_numbers(old: str, new: str) -> bool:
    """The same line but for numbers within FLOAT_TOLERANCE of each other."""
    if _NUMBER.sub("#", old) != _NUMBER.sub("#", new):
        return False
    pairs = zip(_NUMBER.findall(old), _NUMBER.findall(new), strict=True)
    return all(
        math.isclose(float(a), float(b), rel_tol=FLOAT_TOLERANCE, abs_tol=1e-9) for a, b in pairs
    )


@dataclasses.dataclass(frozen=True)
class _Recorded:
    """What a run's telemetry says: its summary and how long its compiled graphs ran."""

    summary: Summary
    run_s: float | None

    @classmethod
    def of(cls, paths: list[Path]) -> _Recorded:
        from otel_dynamo import report

        telemetry = report.load_telemetry(paths)
        run_s = report.compiled_run_seconds(telemetry.spans, telemetry.logs)
        return cls(report.summarize(telemetry), run_s)


def _verdict(job: _Job, trial: Trial, tried: RunResult) -> Verdict | None:
    """The verdict of one re-run with ``trial``'s fix; None when it ran past its limit."""
    return _judge(job, trial.fix["expect"], trial.locations, tried)


def _judge(
    job: _Job, expected: Expect, locations: list[CauseKey], tried: RunResult
) -> Verdict | None:
    """A re-run's verdict at ``locations`` against what the fixes tried expect there;
    None when it ran past its limit."""
    if tried.status is None:
        return None
    before, _ = _counts_at(job.summary, locations, None)
    after: Counts = {"recompiles": 0, "graph_breaks": 0, "compile_seconds": 0.0}
    run_time: RunTime = {
        "before_s": job.plain_run_s[0],
        "before_again_s": job.plain_run_s[1],
        "after_s": None,
    }
    compared = _compare(job.first, tried, job.unstable)
    notes = list(compared.notes)
    if tried.telemetry:
        recorded = _Recorded.of(tried.telemetry)
        after, moved = _counts_at(recorded.summary, locations, job.summary)
        if moved:
            notes.append("moved, not removed: " + "; ".join(moved))
        run_time["after_s"] = recorded.run_s
        notes.extend(_run_time_notes(run_time))
    else:
        notes.append("the re-run wrote no telemetry")
    return {
        "status": _status(
            expected, before, after, output_same=compared.same and bool(tried.telemetry)
        ),
        "before": before,
        "after": after,
        "output_same": compared.same,
        "run_time": run_time,
        "note": "; ".join(notes),
    }


def _run_time_notes(run_time: RunTime) -> list[str]:
    """A note where the compiled graphs ran longer or shorter with the fix than in either
    plain run, by more than RUN_TIME_MARGIN and than the plain runs differ by."""
    after = run_time["after_s"]
    plain = [s for s in (run_time["before_s"], run_time["before_again_s"]) if s is not None]
    if after is None or not plain or min(plain) <= 0:
        return []
    margin = 1 + max(RUN_TIME_MARGIN, max(plain) / min(plain) - 1)
    if min(plain) <= after * margin and after <= max(plain) * margin:
        return []
    shown = ", ".join(_seconds(seconds) for seconds in plain)
    how = "longer" if after > max(plain) else "shorter"
    return [f"the compiled graphs ran {how}: {_seconds(after)} (plain runs: {shown})"]


def _seconds(seconds: float) -> str:
    """As the report writes a time: ``41.6 ms``, ``2.35 s``."""
    if seconds < 1:
        return f"{seconds * 1000:.1f} ms"
    return f"{seconds:.2f} s"


def _status(expected: Expect, before: Counts, after: Counts, *, output_same: bool) -> VerdictStatus:
    if not output_same:
        return NOT_WORKING
    gone = after["recompiles"] <= (expected["recompiles"] or 0) and after["graph_breaks"] <= (
        expected["graph_breaks"] or 0
    )
    fewer = (after["recompiles"] + after["graph_breaks"]) < (
        before["recompiles"] + before["graph_breaks"]
    )
    if gone and (fewer or before["recompiles"] + before["graph_breaks"] == 0):
        return VERIFIED
    return PARTIAL if fewer else NOT_WORKING


def _status_line(verdict: Verdict | None) -> str:
    return "ran past its time limit: no verdict" if verdict is None else verdict_words(verdict)


def _together(job: _Job, trials: list[Trial]) -> None:
    """Every verified fix at once (where two or more are): said, with its counts, and
    written to ``TOGETHER_FILE``."""
    verified = [
        trial
        for trial in trials
        if trial.fix["verdict"] is not None and trial.fix["verdict"]["status"] == VERIFIED
    ]
    if len(verified) < 2:
        return
    actions = [action for trial in verified for action in trial.fix["actions"]]
    tried = job.rerun("all fixes", actions)
    record: FixesTogether = {
        "fixes": [trial.fix["summary"] for trial in verified],
        "actions": actions,
        "verdict": _together_verdict(job, verified, tried),
    }
    path = job.trials_dir / TOGETHER_FILE
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    verdict = record["verdict"]
    if verdict is None:
        _say(f"all verified fixes together: ran past its time limit, no verdict ({path})")
        return
    before, after = verdict["before"], verdict["after"]
    _say(
        f"all {len(verified)} verified fixes together: {verdict['status']}: recompiles "
        f"{before['recompiles']} → {after['recompiles']}, graph breaks "
        f"{before['graph_breaks']} → {after['graph_breaks']}, output "
        f"{'the same' if verdict['output_same'] else 'changed'} ({path})"
    )


def _together_verdict(job: _Job, verified: list[Trial], tried: RunResult) -> Verdict | None:
    """The re-run's verdict at every location, against what the fixes expect together."""
    expect: Expect = {
        "recompiles": sum(trial.fix["expect"]["recompiles"] or 0 for trial in verified),
        "graph_breaks": sum(trial.fix["expect"]["graph_breaks"] or 0 for trial in verified),
    }
    return _judge(job, expect, [where for trial in verified for where in trial.locations], tried)


def _print_report(summary: Summary, trials_dir: Path) -> None:
    """The report of the first run, each fix with its verdict (the verified ones to
    paste at its end), as wide as ``otel-dynamo report``'s, and its ``--json`` in the
    trials' folder."""
    from otel_dynamo import report

    width = terminal_width(sys.stdout)
    color = report.color_enabled(sys.stdout)
    sys.stdout.write(report.render_terminal(summary, width=width, color=color))
    trials_dir.mkdir(parents=True, exist_ok=True)
    path = trials_dir / "report.json"
    path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    _say(f"the report with every fix and its verdict: {path}")


def _say(message: str) -> None:
    print(f"otel-dynamo run: {message}", file=sys.stderr)
