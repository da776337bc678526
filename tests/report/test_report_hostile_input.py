"""The report never crashes on input: hostile lines become problems, the rest is reported.

Each hostile file is fed to the real CLI beside a good one; the good one's compile must
still be in the report, and each bad line must be one ``file:line: why`` problem.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from _report_support import FakeCompile, write_traces

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
    done = run_report_cli([str(tmp_path), "--color", "never"])
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
