"""``otel-dynamo report`` on the command line (otel_dynamo.cli)."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _export_support import child_environ
from _report_support import (
    FakeCompile,
    resource_attributes,
    small_compiles,
    write_job,
    write_small,
    write_traces,
)

from otel_dynamo import cli, report
from otel_dynamo.cli.report_command import ARTIFACT_NAME
from otel_dynamo.names import ATTR_ACCURACY_PASSED, ATTR_FAULT_KIND, ATTR_FAULT_TARGET
from otel_dynamo.report import TerminalProgress, load_telemetry, summarize


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["report", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_report_prints_the_summary_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A readable directory: tables on stdout, nothing on stderr, exit 0."""
    write_small(tmp_path)
    code, out, err = _run(capsys, str(tmp_path))
    assert (code, out.splitlines()[0], err) == (0, "otel-dynamo report: 1 process from 1 file", "")


def test_json_prints_exactly_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json prints summarize()'s dict as JSON."""
    write_small(tmp_path)
    code, out, _ = _run(capsys, str(tmp_path), "--json")
    assert (code, json.loads(out)) == (0, summarize(load_telemetry([tmp_path])))


def test_recompile_limit_option_reaches_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--recompile-limit is the limit the summary uses."""
    write_small(tmp_path)
    _, out, _ = _run(capsys, str(tmp_path), "--json", "--recompile-limit", "2")
    assert json.loads(out)["processes"][0]["near_recompile_limit"][0]["status"] == "at_limit"


def test_jobs_option_reaches_the_reader_and_changes_no_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--jobs N is the number of reading processes read_report is given; the report
    printed is the same with 1 and with 2."""
    write_job(tmp_path, ranks=3, compiles_per_rank=5)
    given: list[int | None] = []
    real = report.read_report

    def recording(*args: Any, **kwargs: Any) -> report.Report:
        given.append(kwargs["workers"])
        return real(*args, **kwargs)

    monkeypatch.setattr(report, "read_report", recording)
    monkeypatch.setattr(report.stream, "PARALLEL_MIN_BYTES", 0)
    _, alone, _ = _run(capsys, str(tmp_path), "--jobs", "1")
    _, shared, _ = _run(capsys, str(tmp_path), "--jobs", "2")
    _, default, _ = _run(capsys, str(tmp_path))
    assert given == [1, 2, None]
    assert shared == alone == default


def test_jobs_option_takes_one_or_more(capsys: pytest.CaptureFixture[str]) -> None:
    """--jobs 0 is refused by the parser, naming what it accepts."""
    with pytest.raises(SystemExit) as exited:
        _run(capsys, ".", "--jobs", "0")
    assert exited.value.code == 2
    assert "--jobs: expected 1 or more, got 0" in capsys.readouterr().err


def test_html_option_writes_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--html FILE writes an HTML page and still prints the tables."""
    write_small(tmp_path / "job")
    code, out, _ = _run(capsys, str(tmp_path / "job"), "--html", str(tmp_path / "r.html"))
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert (code, page.startswith("<!DOCTYPE html>"), out.startswith("otel-dynamo report")) == (
        0,
        True,
        True,
    )


def test_unwritable_html_path_fails_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An HTML path in a missing directory: message naming it, exit 1."""
    write_small(tmp_path)
    target = tmp_path / "no-dir" / "r.html"
    code, _, err = _run(capsys, str(tmp_path), "--html", str(target))
    assert (code, err) == (
        1,
        f"otel-dynamo: {target}: cannot write the HTML page: No such file or directory\n",
    )


def test_nothing_readable_exits_1_naming_the_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only a missing path: its problem and 'nothing to report' on stderr, exit 1."""
    code, out, err = _run(capsys, str(tmp_path / "missing"))
    assert (code, out, err.splitlines()) == (
        1,
        "",
        [
            f"otel-dynamo: {tmp_path / 'missing'}: no such file or directory",
            "otel-dynamo: nothing to report: "
            "no OTLP/JSON records could be read from the given paths",
        ],
    )


def test_bad_file_next_to_good_one_is_reported_and_exit_is_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A corrupt file is named on stderr; the good one is reported; exit 0."""
    write_small(tmp_path)
    (tmp_path / "broken.jsonl").write_text('{"resourceSpans": [\n')
    code, out, err = _run(capsys, str(tmp_path))
    assert (
        code,
        "4 frame compiles" in out,
        err.startswith(f"otel-dynamo: {tmp_path}/broken.jsonl:1: "),
    ) == (
        0,
        True,
        True,
    )


def test_empty_directory_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty directory: named on stderr, exit 1."""
    code, _, err = _run(capsys, str(tmp_path))
    assert (code, err.splitlines()[0]) == (
        1,
        f"otel-dynamo: {tmp_path}: no .jsonl or .json files in this directory",
    )


def test_color_always_forces_escape_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--color always colours even when stdout is not a terminal."""
    write_small(tmp_path)
    _, out, _ = _run(capsys, str(tmp_path), "--color", "always")
    assert "\x1b[" in out


def test_color_auto_is_plain_on_a_pipe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """By default, output that is not a terminal has no escape codes."""
    write_small(tmp_path)
    _, out, _ = _run(capsys, str(tmp_path))
    assert "\x1b[" not in out


def test_limit_option_must_be_a_number(capsys: pytest.CaptureFixture[str]) -> None:
    """--limit abc is a usage error (exit 2) that says what was expected."""
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["report", "x", "--limit", "abc"])
    assert (
        exit_info.value.code,
        "expected a whole number, got 'abc'" in capsys.readouterr().err,
    ) == (
        2,
        True,
    )


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """otel-dynamo without a command exits 2 with usage on stderr."""
    with pytest.raises(SystemExit) as exit_info:
        cli.main([])
    assert (exit_info.value.code, capsys.readouterr().err.startswith("usage: otel-dynamo")) == (
        2,
        True,
    )


def test_subcommand_dispatches_to_its_registered_runner() -> None:
    """`report` is registered in SUBCOMMANDS and parsing it selects that entry's runner."""
    (report,) = [command for command in cli.SUBCOMMANDS if command.name == "report"]
    assert cli.build_parser().parse_args(["report", "x"]).run is report.run


def test_progress_is_silent_when_stderr_is_not_a_terminal() -> None:
    """TerminalProgress writes nothing to a pipe, however large the input."""
    stream = io.StringIO()
    progress = TerminalProgress(stream, min_total_bytes=1)
    progress(50, 100)
    progress.step("summarizing")
    progress.clear()
    assert stream.getvalue() == ""


def test_progress_on_a_terminal_shows_and_clears_one_line() -> None:
    """On a TTY, progress rewrites one line (carriage returns) and erases it at the end."""

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    progress = TerminalProgress(stream, min_total_bytes=100)
    progress(50 * 1024 * 1024, 200 * 1024 * 1024)
    progress.clear()
    line = "otel-dynamo: reading 50 of 200 MB (25%)"
    assert stream.getvalue() == f"\r{line}\r{' ' * len(line)}\r"


def test_progress_skips_small_inputs() -> None:
    """Below the size threshold nothing is shown, even on a TTY."""

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    TerminalProgress(stream, min_total_bytes=1000)(10, 100)
    assert stream.getvalue() == ""


def test_report_runs_without_importing_torch(tmp_path: Path) -> None:
    """`otel-dynamo report` in a fresh interpreter: exit 0, torch never imported."""
    write_small(tmp_path)
    code = (
        "import sys; from otel_dynamo.cli import main; "
        f"rc = main(['report', {str(tmp_path)!r}, '--json']); "
        "sys.exit(rc if 'torch' not in sys.modules else 99)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert (result.returncode, json.loads(result.stdout)["totals"]["frame_compiles"]) == (0, 4)


SCHEMA_DOC = Path(__file__).resolve().parents[2] / "docs" / "report-json.md"
DYNAMIC_KEYS = frozenset({"dynamo_phases"})
"""Keys whose own keys are Dynamo's phase names, not part of the schema."""


def _keys(value: Any) -> Iterator[str]:
    """Every key of every object in ``value``, at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            if key not in DYNAMIC_KEYS:
                yield from _keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item)


def _every_row_filled(directory: Path) -> None:
    """Two diverging ranks with breaks, recompiles, failures, faults, accuracy, near-limit code."""
    extras = {ATTR_FAULT_KIND: "compile_error", ATTR_FAULT_TARGET: "inductor"}
    extras[ATTR_ACCURACY_PASSED] = False
    hot = [FakeCompile(f"9/{n}", function="hot", cache_size=n) for n in range(8)]
    compiles = [*small_compiles(), FakeCompile("5/0", attributes=extras), *hot]
    for rank in range(2):
        extra = [FakeCompile("7/0", graphs=3)] if rank else []
        resource = resource_attributes(rank=rank, world_size=2, pid=100 + rank)
        write_traces(directory / f"rank{rank}.jsonl", [*compiles, *extra], resource=resource)


def test_every_json_key_is_documented_in_the_readme(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each key --json prints, at any depth, appears as `key` in docs/report-json.md."""
    _every_row_filled(tmp_path)
    code, out, _ = _run(capsys, str(tmp_path), "--json")
    summary = json.loads(out)
    assert code == 0 and summary["ranks"]["diverged"] and summary["totals"]["faults"] == 2
    section = SCHEMA_DOC.read_text(encoding="utf-8")
    missing = sorted({key for key in _keys(summary) if f"`{key}`" not in section})
    assert missing == []


def test_every_file_written_is_announced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--html and --perfetto each say on stderr which file they wrote; stdout stays the
    report."""
    write_small(tmp_path / "run")
    page, trace = tmp_path / "report.html", tmp_path / "trace.json"
    code, out, err = _run(
        capsys, str(tmp_path / "run"), "--html", str(page), "--perfetto", str(trace)
    )
    assert code == 0, err
    assert f"otel-dynamo: wrote the HTML page {page}" in err.splitlines()
    assert f"otel-dynamo: wrote the Perfetto trace {trace}" in err.splitlines()
    assert "wrote" not in out


def test_artifacts_with_no_graph_texts_names_the_setting_that_captures_them(
    tmp_path: Path,
) -> None:
    """`report DIR --artifacts OUT` on a run recorded without graph texts: exit 0 and one
    line on stderr saying none were written and naming OTEL_DYNAMO_CAPTURE's value that
    records them (a value the variable accepts, with graphs in it)."""
    from otel_dynamo._config.settings import load_settings

    run, out = tmp_path / "run", tmp_path / "graphs"
    write_small(run)
    done = subprocess.run(
        [sys.executable, "-m", "otel_dynamo", "report", str(run), "--artifacts", str(out)],
        env=child_environ(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"otel-dynamo: 0 graph texts written under {out}; none were recorded: run the job "
        "with OTEL_DYNAMO_CAPTURE=stacks,values,graphs to capture them"
    ]
    settings = load_settings({"OTEL_DYNAMO_CAPTURE": "stacks,values,graphs"})
    assert (settings.problems, "graphs" in settings.capture) == ((), True)


def _artifact_name_regex() -> re.Pattern[str]:
    """ARTIFACT_NAME as a regular expression: <part> a word, [...] optional, .py|.txt."""
    stem, suffixes, rest = ARTIFACT_NAME.partition(".py|.txt")
    assert (suffixes, rest) == (".py|.txt", "")
    optional = stem.replace("[", "(?:").replace("]", ")?")
    return re.compile(re.sub(r"<[^>]+>", r"\\w+", optional) + r"\.(?:py|txt)")


@pytest.mark.parametrize(
    ("kind", "run_kind", "graph_index", "discarded", "name"),
    [
        ("dynamo_guards", None, None, False, "03-dynamo_guards.txt"),
        (
            "inductor_output_code",
            "backward",
            0,
            False,
            "03-inductor_output_code-backward-graph0.py",
        ),
        ("dynamo_output_graph", None, 0, True, "03-dynamo_output_graph-graph0-discarded.py"),
    ],
)
def test_the_stated_artifact_name_is_the_one_written(
    kind: str, run_kind: str | None, graph_index: int | None, discarded: bool, name: str
) -> None:
    """ARTIFACT_NAME (`<NN>-<kind>[-<run kind>][-graph<i>][-discarded].py|.txt`), which
    --help, docs/report.md and docs/what-is-recorded.md state, matches the names the
    report writes, guard trees' .txt included."""
    from otel_dynamo.report.render.graph_texts import GraphText, file_name

    text = GraphText("p", "0/0", kind, graph_index, "", 0, False, None, run_kind, None, discarded)
    assert file_name(3, text) == name
    assert _artifact_name_regex().fullmatch(name)


def test_help_and_docs_state_the_artifact_name() -> None:
    """`report --help` and both docs that describe --artifacts give the same name pattern."""
    docs = Path(__file__).parents[2] / "docs"
    texts = [(docs / page).read_text() for page in ("report.md", "what-is-recorded.md")]
    help_text = subprocess.run(
        [sys.executable, "-m", "otel_dynamo", "report", "--help"],
        env=child_environ(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert ARTIFACT_NAME == "<NN>-<kind>[-<run kind>][-graph<i>][-discarded].py|.txt"
    assert all(f"/{ARTIFACT_NAME}`" in text for text in texts)
    assert ARTIFACT_NAME in "".join(line.strip() + " " for line in help_text.splitlines())
