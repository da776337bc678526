"""read_report: the same summary and timeline as reading everything at once, built one
group of processes at a time (memory follows the largest process, not the input)."""

from __future__ import annotations

import gc
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _export_support import child_environ
from _report_support import (
    FakeCompile,
    job_compiles,
    request_line,
    resource_attributes,
    string_attribute,
    write_job,
    write_logs,
    write_traces,
)

from otel_dynamo import names
from otel_dynamo.report import (
    GraphTextCollector,
    PerfettoWriter,
    Telemetry,
    TerminalLayout,
    Visitors,
    json_chunks,
    load_telemetry,
    read_report,
    render_json,
    render_page,
    render_terminal,
    stream,
    summarize,
)
from otel_dynamo.report.render.html.timeline import timeline_data


def _whole(paths: list[Path]) -> tuple[dict, dict]:
    telemetry = load_telemetry(paths)
    return summarize(telemetry), timeline_data(telemetry)


def test_streamed_summary_and_timeline_equal_reading_everything(tmp_path):
    """Four ranks (one diverging), each with a logs file beside its traces, a metrics-like
    file of its own and an unreadable file: summary, timeline, problems and record count
    equal those of load_telemetry + summarize."""
    write_job(tmp_path, ranks=4, compiles_per_rank=30, diverging_rank=2)
    for rank in range(4):
        resource = resource_attributes(rank=rank, world_size=4, pid=1000 + rank)
        write_logs(
            tmp_path / f"logs-{rank}.jsonl",
            [{"event.name": names.LOG_STILL_COMPILING, names.ATTR_COMPILE_ID: "9/0"}],
            resource=resource,
        )
    (tmp_path / "broken.jsonl").write_text("{not json\n")
    done = read_report([tmp_path], timeline=True)
    summary, timeline = _whole([tmp_path])
    assert done.summary == summary
    assert done.timeline == timeline
    (problem,) = summary["inputs"]["problems"]
    assert (problem["path"], problem["line"]) == (str(tmp_path / "broken.jsonl"), 1)
    assert [str(each) for each in done.problems] == [f"{problem['path']}:1: {problem['message']}"]
    assert done.records == load_telemetry([tmp_path]).records
    assert len(summary["processes"]) == 4


def test_a_process_split_across_files_is_still_one_process(tmp_path):
    """A hand-merged file whose first line names another process, then lines of a process
    already summarized: the grouping is wrong, so the two files are read again as one
    group; the result is still that of load_telemetry + summarize, with rank 0 one process."""
    rank0 = resource_attributes(rank=0, world_size=2, pid=1000)
    rank1 = resource_attributes(rank=1, world_size=2, pid=1001)
    write_traces(tmp_path / "a.jsonl", [FakeCompile(compile_id="0/0")], resource=rank0)
    write_traces(tmp_path / "b.jsonl", [FakeCompile(compile_id="0/0")], resource=rank1)
    with (tmp_path / "b.jsonl").open("a") as stream:
        stream.write(_frame_line(rank0) + "\n")
    done = read_report([tmp_path], timeline=True)
    summary, timeline = _whole([tmp_path])
    assert (done.summary, done.timeline) == (summary, timeline)
    ids = {
        section["rank"]: [row["compile_id"] for row in section["compiles"]]
        for section in done.summary["processes"]
    }
    assert ids == {0: ["0/0", "1/0"], 1: ["0/0"]}


def _files_of(telemetry: Telemetry) -> list[str]:
    return [Path(stats.path).name for stats in telemetry.files]


class _GroupFilesVisitor:
    """Records the files of each group read, and how often the reading began again."""

    part = staticmethod(_files_of)

    def __init__(self) -> None:
        self.groups: list[list[str]] = []
        self.restarts = 0

    def merge(self, part: list[str]) -> None:
        self.groups.append(part)

    def restart(self) -> None:
        self.groups.clear()
        self.restarts += 1


def test_files_of_many_processes_are_read_as_groups_that_share_none(tmp_path):
    """Two files each holding ranks 0 and 1 (as a Collector's file exporter writes them),
    their first lines naming different ranks, beside rank 2's own file: the two are read
    again as one group and rank 2 stays a group of its own; the result is that of
    load_telemetry + summarize."""
    ranks = [resource_attributes(rank=rank, world_size=3, pid=1000 + rank) for rank in range(3)]
    write_traces(tmp_path / "a.jsonl", [FakeCompile(compile_id="0/0")], resource=ranks[0])
    write_traces(tmp_path / "b.jsonl", [FakeCompile(compile_id="0/0")], resource=ranks[1])
    write_traces(tmp_path / "c.jsonl", [FakeCompile(compile_id="0/0")], resource=ranks[2])
    for name, other in (("a.jsonl", ranks[1]), ("b.jsonl", ranks[0])):
        with (tmp_path / name).open("a") as lines:
            lines.write(_frame_line(other) + "\n")
    visitor = _GroupFilesVisitor()
    done = read_report([tmp_path], timeline=True, visitor=visitor, workers=1)
    assert (done.summary, done.timeline) == _whole([tmp_path])
    assert visitor.groups == [["a.jsonl", "b.jsonl"], ["c.jsonl"]]
    assert visitor.restarts == 1
    ids = {
        section["rank"]: sorted(row["compile_id"] for row in section["compiles"])
        for section in done.summary["processes"]
    }
    assert ids == {0: ["0/0", "1/0"], 1: ["0/0", "1/0"], 2: ["0/0"]}


def test_a_first_line_blank_as_text_is_skipped_when_grouping_files(tmp_path):
    """A file of rank 0 whose first line holds only a no-break space (blank to the
    reader, though not ASCII whitespace) is grouped by its next line, with rank 0's other
    file: one group, read once."""
    rank0 = resource_attributes(rank=0, world_size=1, pid=1000)
    write_traces(tmp_path / "a.jsonl", [FakeCompile(compile_id="0/0")], resource=rank0)
    lines = (tmp_path / "a.jsonl").read_bytes()
    (tmp_path / "b.jsonl").write_bytes("\u00a0\n".encode() + lines)
    visitor = _GroupFilesVisitor()
    done = read_report([tmp_path], visitor=visitor, workers=1)
    assert visitor.groups == [["a.jsonl", "b.jsonl"]]
    assert visitor.restarts == 0
    assert [section["rank"] for section in done.summary["processes"]] == [0]


def _otlp_resource(attributes: dict) -> dict:
    def value(item: object) -> dict:
        return {"intValue": str(item)} if isinstance(item, int) else {"stringValue": str(item)}

    return {"attributes": [{"key": key, "value": value(item)} for key, item in attributes.items()]}


_PEAKS = """
import json, sys, tracemalloc
from otel_dynamo.report import load_telemetry, read_report, summarize

def peak(action):
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

paths = [sys.argv[1]]
summarize(load_telemetry(paths[:0]))  # the report's modules imported before measuring
streamed = peak(lambda: read_report(paths))
whole = peak(lambda: summarize(load_telemetry(paths)))
print(json.dumps([streamed, whole]))
"""
"""Measured in a process of its own: nothing else in it allocates meanwhile (a test
process holds other tests' exporters and their threads)."""


def test_memory_follows_the_largest_process_not_the_input(tmp_path):
    """Eight ranks: the peak of read_report is well under half of reading them all."""
    for rank in range(8):
        resource = resource_attributes(rank=rank, world_size=8, pid=1000 + rank)
        write_traces(tmp_path / f"traces-{rank}.jsonl", job_compiles(150), resource=resource)
    done = subprocess.run(
        [sys.executable, "-c", _PEAKS, str(tmp_path)],
        env=child_environ(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    streamed, whole = json.loads(done.stdout)
    assert streamed < whole / 2, (streamed, whole)


def test_json_of_the_streamed_summary_round_trips(tmp_path):
    """The streamed summary is plain JSON data (as --json prints it)."""
    write_job(tmp_path, ranks=2, compiles_per_rank=5)
    summary = read_report([tmp_path]).summary
    assert json.loads(json.dumps(summary)) == summary


def _worker_pid(telemetry: Telemetry) -> int:
    return os.getpid()


class _PidVisitor:
    """Records the process each group's part was taken in."""

    part = staticmethod(_worker_pid)

    def __init__(self) -> None:
        self.pids: list[int] = []

    def merge(self, part: int) -> None:
        self.pids.append(part)

    def restart(self) -> None:
        self.pids.clear()


def _everything(paths: list[Path], *, workers: int) -> tuple[list[str], list[int]]:
    """Every output read_report feeds, as text: summary JSON, timeline, Perfetto trace,
    graph texts, problems, records and whether the text is printable; and the pids the
    groups were read in."""
    trace = io.StringIO()
    perfetto, graphs, pids = PerfettoWriter(trace), GraphTextCollector(), _PidVisitor()
    done = read_report(
        paths, timeline=True, visitor=Visitors(perfetto, graphs, pids), workers=workers
    )
    perfetto.close()
    texts = {label: graphs.page_data(label) for label in graphs.by_process}
    outputs = (
        render_json(done.summary),
        json.dumps(done.timeline),
        trace.getvalue(),
        json.dumps(texts),
        json.dumps([str(problem) for problem in done.problems]),
        str(done.records),
        str(done.printable_text),
    )
    return list(outputs), sorted(set(pids.pids))


_COMPARED = """
import json, os, sys
from pathlib import Path
from otel_dynamo.report import stream
stream.PARALLEL_MIN_BYTES = 0
import test_report_streaming as here
alone, alone_pids = here._everything([Path(sys.argv[1])], workers=1)
shared, shared_pids = here._everything([Path(sys.argv[1])], workers=2)
print(json.dumps([alone, alone_pids, shared, shared_pids, os.getpid()]))
"""
"""Both reads in a process of its own, which runs no other thread."""


def _with_tests_importable(env: dict[str, str]) -> dict[str, str]:
    """``env`` with this module and the suite's helpers on the path."""
    here = Path(__file__).resolve().parent
    env["PYTHONPATH"] = os.pathsep.join([str(here), str(here.parent), env["PYTHONPATH"]])
    return env


def _in_a_fresh_process(script: str, folder: Path) -> list[object]:
    """What ``script`` prints (JSON) about ``folder``, run in a fresh process: here earlier
    tests may have left threads, and then (by design) no worker is forked."""
    done = subprocess.run(
        [sys.executable, "-c", script, str(folder)],
        env=_with_tests_importable(child_environ()),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    printed: list[object] = json.loads(done.stdout)
    return printed


def _frame_line(resource: dict[str, object]) -> str:
    """One frame span line of the process ``resource`` describes (compile 1/0)."""
    return request_line(
        {
            "traceId": "3" * 32,
            "spanId": "4" * 16,
            "name": names.SPAN_FRAME,
            "startTimeUnixNano": "1700000100000000000",
            "endTimeUnixNano": "1700000101000000000",
            "attributes": [string_attribute(names.ATTR_COMPILE_ID, "1/0")],
        },
        resource=_otlp_resource(resource),
    )


def test_worker_processes_give_every_output_byte_for_byte(tmp_path, monkeypatch):
    """Six ranks (one diverging), logs, graph texts and an unreadable file, read by two
    worker processes: summary JSON, timeline, Perfetto trace, graph texts, problems and
    record count are byte for byte those read in one process, and the groups were read
    in two processes other than this one (in this one where it runs other threads)."""
    monkeypatch.setattr(stream, "PARALLEL_MIN_BYTES", 0)
    write_job(tmp_path, ranks=6, compiles_per_rank=20, diverging_rank=3)
    for rank in range(6):
        resource = resource_attributes(rank=rank, world_size=6, pid=1000 + rank)
        graph_text = {
            "event.name": names.LOG_GRAPH_TEXT,
            names.ATTR_COMPILE_ID: "0/0",
            names.ATTR_GRAPH_TEXT_KIND: names.GRAPH_TEXT_DYNAMO,
            names.ATTR_GRAPH_TEXT: f"class GraphModule: # rank {rank}",
        }
        write_logs(
            tmp_path / f"logs-{rank}.jsonl",
            [{"event.name": names.LOG_STILL_COMPILING, names.ATTR_COMPILE_ID: "9/0"}, graph_text],
            resource=resource,
        )
    (tmp_path / "broken.jsonl").write_text("{not json\n")
    alone, alone_pids, shared, shared_pids, reader = _in_a_fresh_process(_COMPARED, tmp_path)
    assert shared == alone
    assert alone_pids == [reader]
    assert reader not in shared_pids
    assert len(shared_pids) == 2
    assert "class GraphModule: # rank 5" in alone[3]


_LOST = """
import json, os, sys
from pathlib import Path
from otel_dynamo.report import stream
stream.PARALLEL_MIN_BYTES = 0
import test_report_streaming as here
reader, reads = os.getpid(), stream._read_group
def dying(task, meter=None):
    if os.getpid() != reader:
        os._exit(9)  # a worker gone mid-read, as the kernel's out-of-memory killer leaves it
    return reads(task, meter)
asked, read = [], stream._read
def counted(*args, **options):
    asked.append(options["workers"])
    return read(*args, **options)
stream._read_group, stream._read = dying, counted
fallen_back, fallen_back_pids = here._everything([Path(sys.argv[1])], workers=2)
stream._read_group, stream._read = reads, read
alone, _ = here._everything([Path(sys.argv[1])], workers=1)
print(json.dumps([alone, fallen_back, fallen_back_pids, reader, asked]))
"""
"""Workers that die at their first group, then the same read in one process."""


def test_a_worker_that_dies_makes_the_report_read_everything_again_here(tmp_path):
    """Two worker processes that die mid-read (exit 9): read_report reads everything
    again in the reporting process (asked for two workers, then one), and every output is
    byte for byte the one-process read's."""
    write_job(tmp_path, ranks=4, compiles_per_rank=10, diverging_rank=2)
    alone, fallen_back, fallen_back_pids, reader, asked = _in_a_fresh_process(_LOST, tmp_path)
    assert asked == [2, 1]  # with workers, which died; then here
    assert fallen_back == alone
    assert set(fallen_back_pids) == {reader}


def test_worker_processes_still_find_a_process_split_across_files(tmp_path, monkeypatch):
    """Read by two workers, a process found in two groups (hand-merged files) still makes
    the report read those groups again as one: one process per rank, as in one process."""
    monkeypatch.setattr(stream, "PARALLEL_MIN_BYTES", 0)
    rank0 = resource_attributes(rank=0, world_size=2, pid=1000)
    rank1 = resource_attributes(rank=1, world_size=2, pid=1001)
    write_traces(tmp_path / "a.jsonl", [FakeCompile(compile_id="0/0")], resource=rank0)
    write_traces(tmp_path / "b.jsonl", [FakeCompile(compile_id="0/0")], resource=rank1)
    with (tmp_path / "b.jsonl").open("a") as lines:
        lines.write(_frame_line(rank0) + "\n")
    shared, _ = _everything([tmp_path], workers=2)
    alone, _ = _everything([tmp_path], workers=1)
    assert shared == alone
    assert [each["process"] for each in json.loads(shared[0])["processes"]] == [
        "rank 0",
        "rank 1",
    ]


def test_the_report_says_its_text_is_printable_unless_one_file_may_not_be(tmp_path):
    """``Report.printable_text``: True for a job's ordinary files; False once one rank's
    file holds an escaped control character, whichever group it is in."""
    write_job(tmp_path, ranks=3, compiles_per_rank=5)
    clean = read_report([tmp_path]).printable_text
    resource = resource_attributes(rank=3, world_size=4, pid=1003)
    write_traces(
        tmp_path / "traces-1003.jsonl",
        [FakeCompile(compile_id="0/0", function="fwd\u001b]0;title\u0007")],
        resource=resource,
    )
    with (tmp_path / "traces-1003.jsonl").open("a") as lines:
        lines.write(_frame_line(resource).replace("1/0", "1/0\u009b") + "\n")
    assert (clean, read_report([tmp_path]).printable_text) == (True, False)


def test_a_small_input_is_read_in_this_process(tmp_path):
    """Under PARALLEL_MIN_BYTES of input no worker process is started, whatever
    ``workers`` says."""
    write_job(tmp_path, ranks=3, compiles_per_rank=5)
    pids = _PidVisitor()
    read_report([tmp_path], visitor=pids, workers=4)
    assert pids.pids == [os.getpid()] * 3


def test_the_cycle_collector_is_left_as_it_was(tmp_path):
    """read_report pauses Python's cycle collector while it reads, and leaves it enabled
    or disabled as it found it."""
    write_job(tmp_path, ranks=2, compiles_per_rank=3)
    states = []
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            read_report([tmp_path])
            states.append(gc.isenabled())
    finally:
        gc.enable()
    assert states == [True, False]


@pytest.mark.parametrize(
    "value",
    [
        {"processes": [{"x": [1, {"y": []}], "z": {}}, {"q": "\u2028\x85\u202e\x1b"}], "c": []},
        {"a": float("nan"), "b": [float("inf"), 1.5e-07, 1e16, -0.0, 10**30]},
        {"a": "\ud800x", "b": [1]},
        {"k": {2: "an int key", None: "none", True: "bool", 2.5: "float"}, "d": {}},
        {"s": 'tab\tline\ncr\r"quote\\ slash/ é 模型 \U0001f600'},
        [1, [2]],
        "text",
        None,
        {},
    ],
    ids=["nested", "numbers", "surrogate", "keys", "strings", "list", "string", "null", "empty"],
)
def test_json_pieces_are_the_indented_json_of_the_standard_library(value):
    """``json_chunks`` writes what ``json.dumps(value, indent=2, ensure_ascii=False)``
    writes (NaN, a lone surrogate, non-string keys, empty containers included), with DEL,
    C1, bidi and line separators escaped, and a line feed."""
    expected = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    for character in "\x85\u202e\u2028":
        expected = expected.replace(character, f"\\u{ord(character):04x}")
    assert "".join(json_chunks(value)) == expected


def test_a_large_summary_is_written_a_process_at_a_time(tmp_path):
    """The summary of four ranks is written in pieces, none holding two processes'
    sections, and the pieces join into the summary's JSON."""
    write_job(tmp_path, ranks=4, compiles_per_rank=10, diverging_rank=2)
    summary = read_report([tmp_path]).summary
    pieces = list(json_chunks(summary))
    sections = [piece for piece in pieces if '"compiles": [' in piece]
    assert (
        [piece.count('"compiles": [') for piece in sections],
        json.loads("".join(pieces)) == json.loads(json.dumps(summary)),
    ) == ([1, 1, 1, 1], True)


def test_the_page_from_the_readers_tables_is_the_page_made_here(tmp_path, monkeypatch):
    """Read by two worker processes with a timeline, the report carries each process's
    page tables, in the summary's order; the page made from them is byte for byte the
    page that makes them itself from the summary."""
    monkeypatch.setattr(stream, "PARALLEL_MIN_BYTES", 0)
    write_job(tmp_path, ranks=3, compiles_per_rank=10, diverging_rank=1)
    done = read_report([tmp_path], timeline=True, workers=2)
    assert done.timeline is not None
    assert (
        [bool(process.page_tables) for process in done.processes],
        done.page_text() == render_page(done.summary, done.timeline),
    ) == ([True] * 3, True)


def test_the_terminal_report_from_the_readers_tables_is_the_report_made_here(tmp_path, monkeypatch):
    """Read by two worker processes with a terminal layout, the report carries each
    process's tables as text, in the summary's order; the terminal report made from them
    is byte for byte the one that makes them itself from the summary, for processes
    labelled only once all are read (rank 0 of three runs, told apart by run id) and for
    one whose files hold a control character (made printable)."""
    monkeypatch.setattr(stream, "PARALLEL_MIN_BYTES", 0)
    write_job(tmp_path, ranks=3, compiles_per_rank=10, diverging_rank=1)
    hostile = FakeCompile("0/0", function="f\x1bx", recompile_reason="size\x07")
    for run_id in ("job-7", "job-8"):  # rank 0 twice: told apart by run id in finish()
        resource = {**resource_attributes(rank=0, world_size=1), names.RESOURCE_RUN_ID: run_id}
        compiles = [hostile, FakeCompile("0/1", recompile_reason="x")] if run_id == "job-8" else []
        write_traces(
            tmp_path / f"traces-{run_id}.jsonl", compiles or [FakeCompile("1/0")], resource=resource
        )
    for layout in (TerminalLayout(), TerminalLayout(width=80, color=True, limit=0)):
        done = read_report([tmp_path], workers=2, layout=layout)
        options = {"width": layout.width, "color": layout.color, "limit": layout.limit}
        made = done.terminal_text()
        assert (len(done.processes), made == render_terminal(done.summary, **options)) == (5, True)
        assert "f\\x1bx" in made and "rank 0 (run job-8)" in made and "f\x1bx" not in made


def test_a_report_read_without_a_layout_or_timeline_refuses_to_render_them(tmp_path):
    """A report read without a terminal layout has no terminal lines to render, and one
    read without a timeline no page: each says which option of read_report it needed;
    the frame-compile rows are in the summary either way."""
    write_job(tmp_path, ranks=2, compiles_per_rank=3, diverging_rank=1)
    done = read_report([tmp_path])
    with pytest.raises(ValueError, match=r"read_report\(\.\.\., layout=\.\.\.\)"):
        done.terminal_text()
    with pytest.raises(ValueError, match=r"read_report\(\.\.\., timeline=True\)"):
        done.page_text()
    assert [len(section["compiles"]) for section in done.summary["processes"]] == [3, 3]


def test_the_page_comes_in_pieces_each_process_tables_one_of_them(tmp_path, monkeypatch):
    """Read by two worker processes, the page comes in pieces (``Report.page_chunks``):
    each process's tables are a piece of their own, in the summary's order, and the
    pieces join into the page ``render_page`` makes from the summary."""
    monkeypatch.setattr(stream, "PARALLEL_MIN_BYTES", 0)
    write_job(tmp_path, ranks=4, compiles_per_rank=20, diverging_rank=2)
    done = read_report([tmp_path], workers=2, timeline=True)
    assert done.timeline is not None
    pieces = list(done.page_chunks())
    tables = [process.page_tables for process in done.processes]
    assert (
        [piece for piece in pieces if piece in tables] == tables,
        len(tables),
        "".join(pieces) == render_page(done.summary, done.timeline),
    ) == (True, 4, True)
