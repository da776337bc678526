"""Reading OTLP/JSON Lines files and directories into Telemetry (otel_dynamo.report)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from _report_support import (
    BASE_TIME_NS,
    MS,
    FakeCompile,
    request_line,
    resource_attributes,
    write_logs,
    write_small,
    write_traces,
)

from otel_dynamo import names
from otel_dynamo.report import load_telemetry
from otel_dynamo.report.read import files as read_module


def test_reads_every_span_the_sdk_exporter_wrote(tmp_path: Path) -> None:
    """All spans of a file written by the SDK's FileSpanExporter are read."""
    path = write_traces(tmp_path / "traces-1.jsonl", [FakeCompile("0/0", runs=2)])
    telemetry = load_telemetry([path])
    phases = (
        "entire_frame_compile",
        "bytecode_tracing",
        "backend_compile",
        "create_aot_dispatcher_function",
        "aot_collect_metadata",
        "build_guards",
    )
    assert Counter(span.name for span in telemetry.spans) == Counter(
        [names.SPAN_FRAME, names.SPAN_GRAPH, names.SPAN_AOT_FORWARD]
        + [f"{names.SPAN_PHASE} {phase}" for phase in phases]
        + [names.SPAN_RUN_FORWARD] * 2
    )


def test_decodes_attribute_types_from_the_sdk(tmp_path: Path) -> None:
    """Strings, ints (written as strings), string arrays and times decode to Python types."""
    path = write_traces(tmp_path / "t.jsonl", [FakeCompile("3/1", line=77, guards=2)])
    frame = next(s for s in load_telemetry([path]).spans if s.name == names.SPAN_FRAME)
    assert (
        frame.attributes[names.ATTR_COMPILE_ID],
        frame.attributes[names.ATTR_CODE_LINE],
        frame.attributes[names.ATTR_GUARDS],
        frame.start_ns,
        frame.duration_ns,
    ) == ("3/1", 77, ["check_tensor(L['x'], 0)", "check_tensor(L['x'], 1)"], BASE_TIME_NS, 100 * MS)


def test_accepts_int_values_as_numbers_and_missing_fields(tmp_path: Path) -> None:
    """intValue as a JSON number, and a span without ids, times or status, still reads."""
    span = {
        "name": names.SPAN_FRAME,
        "attributes": [{"key": names.ATTR_CODE_LINE, "value": {"intValue": 12}}],
    }
    path = tmp_path / "other.jsonl"
    path.write_text(request_line(span))
    (read,) = load_telemetry([path]).spans
    assert (
        read.attributes[names.ATTR_CODE_LINE],
        read.span_id,
        read.start_ns,
        read.status_code,
    ) == (
        12,
        "",
        0,
        0,
    )


def test_times_as_numbers_or_float_strings_are_read(tmp_path: Path) -> None:
    """startTimeUnixNano as a JSON number and endTimeUnixNano as "1.5e9" both decode."""
    span = {"name": "a", "startTimeUnixNano": 1_000_000_000, "endTimeUnixNano": "1.5e9"}
    path = tmp_path / "t.jsonl"
    path.write_text(request_line(span))
    (read,) = load_telemetry([path]).spans
    assert (read.start_ns, read.end_ns) == (1_000_000_000, 1_500_000_000)


def test_snake_case_field_names_are_read(tmp_path: Path) -> None:
    """A request with protobuf field names (resource_spans, span_id...) reads the same."""
    request = {
        "resource_spans": [
            {"scope_spans": [{"spans": [{"name": "a", "span_id": "s1", "parent_span_id": "p"}]}]}
        ]
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(request) + "\n")
    (read,) = load_telemetry([path]).spans
    assert (read.name, read.span_id, read.parent_span_id) == ("a", "s1", "p")


def test_groups_by_rank_from_the_resource(tmp_path: Path) -> None:
    """A resource with torch.distributed.rank makes the process "rank N"."""
    path = write_traces(
        tmp_path / "t.jsonl", [FakeCompile("0/0")], resource=resource_attributes(rank=5)
    )
    (process,) = load_telemetry([path]).processes
    assert (process.label, process.rank, process.world_size, process.pid) == ("rank 5", 5, 1, 4242)


def test_process_without_rank_is_host_and_pid(tmp_path: Path) -> None:
    """Without a rank, a process is named by host and pid."""
    path = write_traces(tmp_path / "t.jsonl", [FakeCompile("0/0")])
    (process,) = load_telemetry([path]).processes
    assert (process.label, process.rank) == ("node-a pid 4242", None)


def test_process_without_rank_or_pid_is_named_by_service(tmp_path: Path) -> None:
    """Without rank and pid (a bare SDK resource), the service name labels the process."""
    resource = {"service.name": "trainer"}
    path = write_traces(tmp_path / "t.jsonl", [FakeCompile("0/0")], resource=resource)
    (process,) = load_telemetry([path]).processes
    assert (process.label, process.key[0]) == ("trainer", "instance")


def test_directory_is_searched_recursively_for_jsonl_and_json(tmp_path: Path) -> None:
    """A directory yields its .jsonl and .json files, nested ones too, and nothing else."""
    (tmp_path / "a").mkdir()
    write_traces(tmp_path / "a" / "traces-1.jsonl", [FakeCompile("0/0")])
    write_traces(tmp_path / "traces-2.json", [FakeCompile("0/0")])
    (tmp_path / "notes.txt").write_text("not telemetry")
    telemetry = load_telemetry([tmp_path])
    assert sorted(Path(f.path).name for f in telemetry.files) == ["traces-1.jsonl", "traces-2.json"]


def test_logs_are_read_with_their_attributes(tmp_path: Path) -> None:
    """Log records keep their event name and attributes."""
    path = write_logs(
        tmp_path / "logs-1.jsonl",
        [{"event.name": names.LOG_FAULT_INJECTED, "torch.compile.fault.kind": "compile_error"}],
    )
    (record,) = load_telemetry([path]).logs
    assert (record.event_name, record.attributes["torch.compile.fault.kind"]) == (
        names.LOG_FAULT_INJECTED,
        "compile_error",
    )


def test_metric_points_are_counted(tmp_path: Path) -> None:
    """A metrics request is recognised by its top-level key and its data points counted."""
    request = {
        "resourceMetrics": [
            {
                "scopeMetrics": [
                    {
                        "metrics": [
                            {"name": "a", "sum": {"dataPoints": [{"asInt": "1"}, {"asInt": "2"}]}},
                            {"name": "b", "histogram": {"dataPoints": [{"count": "1"}]}},
                        ]
                    }
                ]
            }
        ]
    }
    path = tmp_path / "metrics-1.jsonl"
    path.write_text(json.dumps(request) + "\n")
    (stats,) = load_telemetry([path]).files
    assert (stats.metric_points, stats.spans, stats.bad_lines) == (3, 0, 0)


def test_pretty_printed_json_document_is_read(tmp_path: Path) -> None:
    """A .json file holding one request over many lines is read as one request."""
    span = {"name": names.SPAN_FRAME, "spanId": "ab"}
    request = json.loads(request_line(span))
    path = tmp_path / "hand-made.json"
    path.write_text(json.dumps(request, indent=2))
    telemetry = load_telemetry([path])
    assert ([s.span_id for s in telemetry.spans], telemetry.problems) == (["ab"], [])


def test_missing_path_is_a_problem_and_others_are_still_read(tmp_path: Path) -> None:
    """A path that does not exist is reported; the other paths are read."""
    path = write_small(tmp_path / "job")
    telemetry = load_telemetry([tmp_path / "nope", path])
    assert ([str(p) for p in telemetry.problems], len(telemetry.files)) == (
        [f"{tmp_path / 'nope'}: no such file or directory"],
        1,
    )


def test_empty_directory_is_a_problem(tmp_path: Path) -> None:
    """A directory without telemetry files is reported by name."""
    (tmp_path / "empty").mkdir()
    telemetry = load_telemetry([tmp_path / "empty"])
    assert [str(p) for p in telemetry.problems] == [
        f"{tmp_path / 'empty'}: no .jsonl or .json files in this directory"
    ]


def test_truncated_last_line_names_file_and_line(tmp_path: Path) -> None:
    """A line cut short (a killed process) is reported with its line; the rest is read."""
    good = request_line({"name": "a"}) + request_line({"name": "b"})
    path = tmp_path / "traces-9.jsonl"
    path.write_text(good + request_line({"name": "c"})[:40])
    telemetry = load_telemetry([path])
    assert (
        [s.name for s in telemetry.spans],
        [(p.line, p.message[:27]) for p in telemetry.problems],
    ) == (
        ["a", "b"],
        [(3, "truncated or corrupt JSON l")],
    )


def test_file_of_another_format_is_reported_once(tmp_path: Path) -> None:
    """A JSON Lines file of another format is one problem at line 1, nothing read from it."""
    path = tmp_path / "events.jsonl"
    path.write_text('{"event": "a"}\n{"event": "b"}\n')
    telemetry = load_telemetry([path])
    assert [str(p) for p in telemetry.problems] == [
        f"{path}:1: not an OTLP/JSON export request (expected resourceSpans, resourceLogs or "
        "resourceMetrics, found event); nothing read from this file"
    ]


def test_a_pretty_printed_document_of_another_kind_is_skipped_in_one_line(tmp_path: Path) -> None:
    """A report's own --json output saved beside the telemetry (indented JSON over many
    lines): one problem saying what it is, not one per line."""
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"schema_version": 2, "totals": {"runs": 1}}, indent=2))
    telemetry = load_telemetry([path])
    assert [str(p) for p in telemetry.problems] == [
        f"{path}: {read_module.NOT_TELEMETRY}; nothing read from this file"
    ]


def test_a_cut_string_is_named_with_one_at(tmp_path: Path) -> None:
    """A line cut inside a string: "Unterminated string starting at column N", not "at at"."""
    path = tmp_path / "traces-1.jsonl"
    path.write_text('{"resourceSpans": [{"name": "ab')
    (problem,) = load_telemetry([path]).problems
    assert problem.message.startswith(
        "truncated or corrupt JSON line (Unterminated string starting at column 29)"
    )


def test_binary_file_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 are reported as an unreadable line."""
    path = tmp_path / "blob.json"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    telemetry = load_telemetry([path])
    assert [
        (p.line, p.message.endswith("nothing read from this file")) for p in telemetry.problems
    ] == [(1, True)]


def test_many_bad_lines_are_capped_per_file(tmp_path: Path) -> None:
    """Past MAX_PROBLEMS_PER_FILE bad lines, the rest are counted in one problem."""
    path = tmp_path / "mixed.jsonl"
    path.write_text(request_line({"name": "ok"}) + "garbage\n" * 8)
    problems = load_telemetry([path]).problems
    assert [p.line for p in problems] == [2, 3, 4, 5, 6, None]
    assert problems[-1].message == "3 more unreadable lines not shown"


def test_explicit_empty_file_is_a_problem(tmp_path: Path) -> None:
    """An empty file named on the command line is reported as empty."""
    path = tmp_path / "traces-1.jsonl"
    path.touch()
    assert [str(p) for p in load_telemetry([path]).problems] == [f"{path}: empty file"]


def test_progress_is_reported_in_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The progress callback gets (bytes read, total bytes), ending at the total."""
    path = write_small(tmp_path)
    monkeypatch.setattr(read_module, "PROGRESS_STEP_BYTES", 1024)
    calls: list[tuple[int, int]] = []
    load_telemetry([path], progress=lambda done, total: calls.append((done, total)))
    size = path.stat().st_size
    assert (calls[-1], all(total == size for _, total in calls), len(calls) > 2) == (
        (size, size),
        True,
        True,
    )


def test_lines_ended_by_cr_or_crlf_are_numbered_as_a_text_file_numbers_them(
    tmp_path: Path,
) -> None:
    """A file whose lines end in CRLF, or in a lone CR, is read line by line as a text file
    reads it: every request read, a bad line named by its line number as a text file
    counts it."""
    path = tmp_path / "traces-1.jsonl"
    first, second = request_line({"name": "a"}).strip(), request_line({"name": "b"}).strip()
    path.write_bytes(f"{first}\r\n\r{second}\rgarbage\r\n".encode())
    telemetry = load_telemetry([path])
    assert (
        [span.name for span in telemetry.spans],
        [problem.line for problem in telemetry.problems],
        telemetry.files[0].lines,
    ) == (["a", "b"], [4], 3)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"a": NaN}', {"a": "nan"}),
        ('{"a": 1e400}', {"a": "inf"}),
        ('{"a": "\\ud800"}', {"a": "\\ud800"}),
        ('{"a": 123456789012345678901234567890}', {"a": 123456789012345678901234567890}),
        ('{"a": "\\ud83d\\ude00"}', {"a": "\U0001f600"}),
    ],
    ids=["nan", "past-double", "lone-surrogate", "past-int64", "surrogate-pair"],
)
def test_a_line_is_parsed_as_the_text_parser_parses_it(line: str, expected: object) -> None:
    """Each line ``parse_json_line`` reads (or leaves to ``parse_json``: UNPARSED) comes
    out as ``parse_json`` reads its text: NaN and a number past a double's range as json
    reads them, a lone surrogate as its escape text, a long integer exact."""
    parsed = read_module.parse_json_line(line.encode())
    if parsed is read_module.UNPARSED:
        parsed = read_module.parse_json(line)
    shown = {
        key: str(value) if isinstance(value, float) else value for key, value in parsed.items()
    }
    assert (shown, repr(parsed)) == (expected, repr(read_module.parse_json(line)))


def test_the_fast_decoder_leaves_to_json_every_line_it_would_read_otherwise() -> None:
    """NaN, a number past a double's range, a lone surrogate, invalid UTF-8, a BOM and
    invalid JSON are each UNPARSED; a usual export request is parsed."""
    refused = [
        b'{"a": NaN}',
        b'{"a": 1e400}',
        b'{"a": "\\udc00"}',
        b'{"a": "\xff"}',
        b"\xef\xbb\xbf{}",
    ]
    refused.append(b'{"a": 1,}')
    usual = request_line({"name": "a"}).encode()
    assert (
        [read_module.parse_json_line(line) is read_module.UNPARSED for line in refused],
        read_module.parse_json_line(usual) == json.loads(usual),
    ) == ([True] * 6, True)


@pytest.mark.parametrize(
    "character",
    [chr(code) for code in [*range(0, 9), *range(11, 32), *range(0x7F, 0xA0)]]
    + ["\u200e", "\u200f", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))],
    ids=lambda character: f"U+{ord(character):04X}",
)
def test_every_character_the_terminal_escapes_makes_a_line_unprintable(character: str) -> None:
    """Each character ``render.format.printable`` escapes is in ``UNPRINTABLE``, and, in a
    JSON string escaped (as json writes it) or raw (UTF-8, where JSON allows it raw),
    makes ``printable_json`` say the line may hold one."""
    escaped = json.dumps({"name": f"fwd{character}"}).encode()
    raw = json.dumps({"name": f"fwd{character}"}, ensure_ascii=False).encode()
    assert (
        read_module.UNPRINTABLE.search(character) is not None,
        read_module.printable_json(escaped),
        read_module.printable_json(raw),
    ) == (True, False, False)


def test_a_usual_line_is_printable_and_tab_newline_and_other_text_stay_so() -> None:
    """A line of ordinary text (tab and line feed escaped, accents, CJK, an emoji) is
    printable: the terminal view then shows it without a printable copy."""
    line = json.dumps({"name": "fwd\t\nnaïve 模型 \U0001f600"}, ensure_ascii=False).encode()
    ascii_line = json.dumps({"name": "fwd\t\nnaïve 模型 \U0001f600"}).encode()
    assert (read_module.printable_json(line), read_module.printable_json(ascii_line)) == (
        True,
        True,
    )


def test_telemetry_read_from_files_says_whether_its_text_is_printable(tmp_path: Path) -> None:
    """``Telemetry.printable_text`` is True for files of ordinary text, False when a line
    or a file's name holds a control character."""
    clean = tmp_path / "clean" / "traces-1.jsonl"
    clean.parent.mkdir()
    clean.write_text(request_line({"name": "a"}))
    escaped = tmp_path / "escaped" / "traces-1.jsonl"
    escaped.parent.mkdir()
    escaped.write_text(request_line({"name": "a\u001b[2J"}))
    named = tmp_path / "named" / "traces-\u001b.jsonl"
    named.parent.mkdir()
    named.write_text(request_line({"name": "a"}))
    assert [load_telemetry([path]).printable_text for path in (clean, escaped, named)] == [
        True,
        False,
        False,
    ]
