"""The report never crashes on input: hostile lines become problems, the rest is reported.

Each hostile file is fed to the real CLI beside a good one; the good one's compile must
still be in the report, and each bad line must be one ``file:line: why`` problem.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _report_support import FakeCompile, GraphBreak, write_traces

from otel_dynamo import names


def run_report_cli(arguments: list[str]) -> subprocess.CompletedProcess[str]:
    """The real CLI in its own process."""
    command = [sys.executable, "-m", "otel_dynamo.cli", "report", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def _span_line(frame_attributes: list[dict], *, start: str = "1700000000000000000") -> str:
    span = {
        "traceId": "0" * 31 + "1",
        "spanId": "0" * 15 + "1",
        "name": names.SPAN_FRAME,
        "startTimeUnixNano": start,
        "endTimeUnixNano": start,
        "attributes": frame_attributes,
    }
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})


def _attribute(key: str, value: dict) -> dict:
    return {"key": key, "value": value}


HOSTILE_LINES = {
    "deep": "[" * 100_000 + "]" * 100_000,
    "long_compile_id": _span_line(
        [_attribute(names.ATTR_COMPILE_ID, {"stringValue": "9" * 5000 + "/1"})]
    ),
    "infinite_count": _span_line(
        [
            _attribute(names.ATTR_COMPILE_ID, {"stringValue": "7/0"}),
            _attribute(names.ATTR_GUARD_COUNT, {"doubleValue": "Infinity"}),
            _attribute(names.ATTR_FRAME_GRAPH_COUNT, {"doubleValue": "NaN"}),
        ]
    ),
    "huge_timestamp": _span_line(
        [_attribute(names.ATTR_COMPILE_ID, {"stringValue": "8/0"})], start="9" * 400
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_LINES))
def test_hostile_file_beside_a_good_one_is_reported_not_fatal(tmp_path, case):
    """Exit 0, the good file's compile is in the summary, no traceback on stderr."""
    write_traces(tmp_path / "traces-good.jsonl", [FakeCompile(compile_id="3/0")])
    (tmp_path / f"traces-{case}.jsonl").write_text(HOSTILE_LINES[case] + "\n")
    done = run_report_cli([str(tmp_path), "--json"])
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    summary = json.loads(done.stdout)
    ids = [row["compile_id"] for process in summary["processes"] for row in process["compiles"]]
    assert "3/0" in ids


def test_too_deep_json_is_one_problem_naming_file_and_line(tmp_path):
    """100,000 nested brackets: 'file:1: JSON nested too deeply to read'."""
    write_traces(tmp_path / "traces-good.jsonl", [FakeCompile(compile_id="3/0")])
    (tmp_path / "traces-deep.jsonl").write_text(HOSTILE_LINES["deep"] + "\n")
    done = run_report_cli([str(tmp_path), "--json"])
    assert "traces-deep.jsonl:1: JSON nested too deeply to read" in done.stderr


HOSTILE_TEXT = "fwd\x1b]0;pwned\x07\r\x1b[2K\u202eevil"


def test_control_characters_never_reach_the_terminal_raw(tmp_path):
    """ESC, BEL, CR and bidi overrides in a function name are shown escaped, colour off."""
    write_traces(tmp_path / "traces.jsonl", [FakeCompile(compile_id="3/0", function=HOSTILE_TEXT)])
    # 200 columns: function names are shown whole up to 40 characters
    done = run_report_cli([str(tmp_path), "--color", "never", "--width", "200"])
    assert done.returncode == 0, done.stderr
    assert not any(char in done.stdout for char in "\x1b\x07\r\u202e")
    assert "fwd\\x1b]0;pwned\\x07\\r\\x1b[2K" in done.stdout  # shown, escaped


def test_with_colour_only_our_own_colour_codes_are_written(tmp_path):
    """--color always: every ESC in the output starts one of our SGR colour codes."""
    write_traces(tmp_path / "traces.jsonl", [FakeCompile(compile_id="3/0", function=HOSTILE_TEXT)])
    done = run_report_cli([str(tmp_path), "--color", "always"])
    escapes = re.findall(r"\x1b.{0,8}", done.stdout)
    assert escapes and all(re.match(r"\x1b\[[0-9;]*m", escape) for escape in escapes)
    assert "\x07" not in done.stdout and "\r" not in done.stdout


def test_json_output_escapes_what_json_leaves_raw(tmp_path):
    """--json: DEL, C1 (CSI U+009B), bidi overrides and U+2028 are written as \\u escapes,
    and the function name parses back exactly as it was in the file."""
    hostile = HOSTILE_TEXT + "\x7f\x9b2J\u2028\u2066é"
    write_traces(tmp_path / "traces.jsonl", [FakeCompile(compile_id="3/0", function=hostile)])
    done = run_report_cli([str(tmp_path), "--json"])
    assert done.returncode == 0, done.stderr
    assert not any(char in done.stdout for char in "\x1b\x07\r\x7f\x9b\u202e\u2028\u2066")
    assert "\\u009b2J" in done.stdout and "é" in done.stdout
    (process,) = json.loads(done.stdout)["processes"]
    assert [row["function"] for row in process["compiles"]] == [hostile]


PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
SURROGATE_MARK = "SURROGATEMARK"


def _with_escape(path: Path, escape: str) -> None:
    """``path`` with each SURROGATE_MARK written as the JSON escape ``escape`` (the SDK
    cannot write a lone surrogate: hostile files come from elsewhere)."""
    path.write_text(path.read_text().replace(SURROGATE_MARK, escape))


def _run_cli(command: str, arguments: list[str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "otel_dynamo.cli", command, *arguments],
        capture_output=True,
        timeout=120,
        check=False,
    )
    # Every byte written is UTF-8: decoding strictly raises otherwise.
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    )


@pytest.fixture
def surrogate_run(tmp_path: Path) -> Path:
    """A run whose compiled function is named "fwd" + a lone surrogate escape + "\\u0001":
    valid JSON, but no character."""
    (tmp_path / "run").mkdir()
    write_traces(
        tmp_path / "run" / "traces.jsonl",
        [FakeCompile(compile_id="3/0", function=f"fwd{SURROGATE_MARK}\x01")],
    )
    _with_escape(tmp_path / "run" / "traces.jsonl", "\\ud800")
    return tmp_path / "run"


SURROGATE_SHOWN = "fwd\\ud800\\x01"
"""The function's name in the terminal: the surrogate as its escape, the control too."""


@pytest.mark.parametrize("output", ["terminal", "--json", "--html", "--perfetto"])
def test_a_lone_surrogate_is_shown_as_its_escape_in_every_output(surrogate_run, output):
    """Exit 0 and no traceback; the surrogate is its six-character escape wherever the name
    is written (terminal, JSON, page, trace), every file valid UTF-8 (read strictly)."""
    written = surrogate_run.parent / "written"
    arguments = {
        "terminal": ["--color", "never"],
        "--json": ["--json"],
        "--html": ["--html", str(written)],
        "--perfetto": ["--perfetto", str(written)],
    }[output]
    done = _run_cli("report", [str(surrogate_run), *arguments])
    assert (done.returncode, "Traceback" in done.stderr) == (0, False), done.stderr
    if output == "--json":
        (process,) = json.loads(done.stdout)["processes"]
        assert [row["function"] for row in process["compiles"]] == ["fwd\\ud800\x01"]
    else:
        assert SURROGATE_SHOWN in done.stdout
    if output in ("--html", "--perfetto"):
        assert "fwd\\\\ud800\\u0001" in written.read_bytes().decode("utf-8")


@pytest.mark.parametrize("as_json", [False, True])
def test_diff_of_a_run_with_a_lone_surrogate_exits_0(surrogate_run, tmp_path, as_json):
    """diff BASE NEW where NEW names a function with a lone surrogate: exit 0, no
    traceback, the new function named with the surrogate's escape."""
    (tmp_path / "base").mkdir()
    write_traces(tmp_path / "base" / "traces.jsonl", [FakeCompile(compile_id="3/0")])
    done = _run_cli(
        "diff",
        [str(tmp_path / "base"), str(surrogate_run), "--color", "never"]
        + (["--json"] if as_json else []),
    )
    assert (done.returncode, "Traceback" in done.stderr) == (0, False), done.stderr
    assert ("fwd\\\\ud800" if as_json else "fwd\\ud800") in done.stdout


def test_a_surrogate_pair_is_the_character_it_encodes(tmp_path):
    """ "\\ud83d\\ude00" is one character (U+1F600), as JSON reads it: shown as itself."""
    write_traces(
        tmp_path / "traces.jsonl", [FakeCompile(compile_id="3/0", function=f"fwd{SURROGATE_MARK}")]
    )
    _with_escape(tmp_path / "traces.jsonl", "\\ud83d\\ude00")
    done = _run_cli("report", [str(tmp_path), "--json"])
    (process,) = json.loads(done.stdout)["processes"]
    assert [row["function"] for row in process["compiles"]] == ["fwd\U0001f600"]


def _long_values_run(directory: Path, length: int) -> Path:
    """A run whose second compile has a function name, a recompile reason and a graph-break
    reason each ``length`` characters long (words of 7 letters)."""
    long = ("abcdefg " * length)[:length]
    directory.mkdir()
    write_traces(
        directory / "traces.jsonl",
        [
            FakeCompile(compile_id="0/0"),
            FakeCompile(
                compile_id="0/1",
                function=long,
                recompile_reason=long,
                cache_size=1,
                graph_breaks=(GraphBreak(reason=long),),
            ),
        ],
    )
    return directory


def _python_lines(command: list[str]) -> int:
    """The lines of Python ``otel-dynamo COMMAND`` runs (tests/programs/counted_cli.py)."""
    done = subprocess.run(
        [sys.executable, str(PROGRAMS / "counted_cli.py"), *command],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    assert done.returncode == 0, done.stderr
    last = done.stderr.splitlines()[-1]
    assert last.startswith("python lines: "), done.stderr
    return int(last.removeprefix("python lines: "))


@pytest.mark.parametrize("command", ["report", "diff"])
def test_the_terminal_views_run_no_python_loop_over_a_long_value(tmp_path, command):
    """The terminal report and diff of a run with 20,000- and 200,000-character values
    run exactly as many lines of Python: the cost of a long value is in C (read, escape,
    cut), linear in its length; no loop takes one character per pass (column widths are
    computed, a wrapped cell wraps only the lines it shows)."""
    base = tmp_path / "base"
    base.mkdir()
    write_traces(base / "traces.jsonl", [FakeCompile(compile_id="0/0")])
    counts = []
    for length in (20_000, 200_000):
        run = _long_values_run(tmp_path / f"long-{length}", length)
        arguments = [str(run)] if command == "report" else [str(base), str(run)]
        counts.append(_python_lines([command, *arguments, "--color", "never"]))
    assert counts[0] == counts[1]


PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2


def _without_root_overrides() -> None:
    """Run in the child before exec: where it is root, drop the capabilities that let root
    read any directory, so that a chmod 000 directory is unreadable to it as to a user."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_an_unreadable_subdirectory_is_named_once(tmp_path):
    """A chmod 000 folder inside the run's directory, given again on its own: one
    "PATH: cannot read this directory: Permission denied" line on stderr; a .jsonl link
    to nowhere: one "PATH: not a regular file"; the readable file is still reported."""
    write_traces(tmp_path / "traces-good.jsonl", [FakeCompile(compile_id="3/0")])
    locked = tmp_path / "rank1"
    locked.mkdir()
    write_traces(locked / "traces.jsonl", [FakeCompile(compile_id="4/0")])
    (tmp_path / "traces-gone.jsonl").symlink_to(tmp_path / "nowhere")
    locked.chmod(0)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "otel_dynamo.cli", "report", str(tmp_path), str(locked)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            preexec_fn=_without_root_overrides,
        )
    except subprocess.SubprocessError as failed:
        pytest.skip(f"cannot drop root's capabilities here: {failed}")
    finally:
        locked.chmod(0o700)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"otel-dynamo: {tmp_path / 'traces-gone.jsonl'}: not a regular file",
        f"otel-dynamo: {locked}: cannot read this directory: Permission denied",
    ]
    assert "3/0" in done.stdout
