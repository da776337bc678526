"""The terminal view of the report (otel_dynamo.report.render_terminal)."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from _report_support import (
    MODEL_FILE,
    TRAIN_FILE,
    FakeCompile,
    GraphBreak,
    write_job,
    write_logs,
    write_small,
    write_traces,
)

from otel_dynamo import names
from otel_dynamo.report import color_enabled, load_telemetry, render_terminal, summarize
from otel_dynamo.report.summary.function_names import function_label, short_path

ANSI = re.compile(r"\x1b\[[0-9;]*m")
LONG = "x" * 300


def _render(*paths: Path, color: bool = False, **options: Any) -> str:
    return render_terminal(summarize(load_telemetry(paths)), color=color, **options)


def _small(tmp_path: Path, **options: Any) -> list[str]:
    return _render(write_small(tmp_path), **options).splitlines()


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_lines_fit_100_columns_even_with_long_names(tmp_path: Path) -> None:
    """Long functions, paths, reasons and stacks are cut; no line passes 100 columns."""
    compile_ = FakeCompile(
        f"0/1{LONG}",
        function=LONG,
        file=f"/{LONG}/{LONG}.py",
        recompile_reason=LONG,
        graph_breaks=(GraphBreak(LONG, LONG, (f"/{LONG}.py:1 in {LONG}",)),),
        error_type=LONG,
        error_message=LONG,
        outcome="failure",
    )
    text = _render(write_traces(tmp_path / "t.jsonl", [compile_]), color=True)
    assert max(len(ANSI.sub("", line)) for line in text.splitlines()) == 100


def test_multi_rank_report_fits_100_columns(tmp_path: Path) -> None:
    """The ranks table and divergence lines fit 100 columns too."""
    write_job(tmp_path, ranks=3, compiles_per_rank=10, diverging_rank=1, diverge_at=5)
    assert max(len(line) for line in _render(tmp_path).splitlines()) <= 100


def test_narrower_width_is_honoured(tmp_path: Path) -> None:
    """width=70 keeps every line within 70 columns."""
    assert max(len(line) for line in _small(tmp_path, width=70)) <= 70


def _with_calls(tmp_path: Path) -> Path:
    """The small process's files plus variant_calls events for 0/0 (40) and 0/1 (2)."""
    write_small(tmp_path)
    events = [
        {
            "event.name": names.LOG_VARIANT_CALLS,
            names.ATTR_COMPILE_ID: compile_id,
            names.ATTR_RUN_KIND: names.RUN_KIND_FORWARD,
            names.ATTR_VARIANT_CALLS: calls,
        }
        for compile_id, calls in (("0/0", 40), ("0/1", 2))
    ]
    write_logs(tmp_path / "logs.jsonl", events)
    return tmp_path


def test_a_narrow_frame_table_leaves_out_ops_then_graphs(tmp_path: Path) -> None:
    """width=70 with variant calls: the frame table leaves out ops, then graphs, to keep
    guards and calls beside the whole function name and location; lines fit."""
    lines = _render(_with_calls(tmp_path), width=70).splitlines()
    header = lines[lines.index("Frame compiles (4)") + 1].split()
    assert header == ["id", "function", "location", "outcome", "duration", "guards", "calls"]
    assert max(len(line) for line in lines) <= 70


def test_a_cold_recompile_shows_its_calls_as_cold(tmp_path: Path) -> None:
    """0/1 served 2 of 42 calls: its recompile row reads "2 cold"."""
    lines = _render(_with_calls(tmp_path), width=120).splitlines()
    row = lines[lines.index("Recompiles (1)") + 2]
    assert row.split()[:5] == ["0/1", "forward", "project/model.py:10", "1", "2"]
    assert row.split()[5] == "cold"


def test_no_escape_codes_without_color(tmp_path: Path) -> None:
    """color=False writes plain text."""
    assert "\x1b[" not in _render(write_small(tmp_path))


def test_color_marks_failures_red(tmp_path: Path) -> None:
    """color=True paints the failure outcome red."""
    assert "\x1b[31mfailure" in _render(write_small(tmp_path), color=True)


def test_color_enabled_on_a_terminal() -> None:
    """A TTY without NO_COLOR gets colour."""
    assert color_enabled(_Tty(), environ={}) is True


def test_no_color_on_a_pipe() -> None:
    """A stream that is not a TTY gets no colour."""
    assert color_enabled(io.StringIO(), environ={}) is False


def test_no_color_env_wins_on_a_terminal() -> None:
    """NO_COLOR set (non-empty) turns colour off even on a TTY."""
    assert color_enabled(_Tty(), environ={"NO_COLOR": "1"}) is False


def test_headline_counts(tmp_path: Path) -> None:
    """The first lines give processes, files and the totals."""
    assert _small(tmp_path)[:2] == [
        "otel-dynamo report: 1 process from 1 file",
        "4 frame compiles · 3 graphs · 3 graph breaks · 1 recompile · 1 failure · "
        "360.0 ms compiling",
    ]


def test_compile_table_row(tmp_path: Path) -> None:
    """A frame compile row: id, function, location, outcome, duration, graphs, ops, guards."""
    lines = _small(tmp_path)
    start = lines.index("Frame compiles (4)")
    assert lines[start + 1 : start + 3] == [
        "  id   function  location             outcome   duration  graphs  ops  guards",
        "  0/0  forward   project/model.py:10  success   100.0 ms       1   12       8",
    ]


def test_graph_break_group_shows_count_reason_and_stack(tmp_path: Path) -> None:
    """A graph-break group: count and reason, then the innermost frame and its caller."""
    lines = _small(tmp_path)
    start = lines.index("Graph breaks (3 in 2 reasons)")
    assert lines[start + 1 : start + 4] == [
        "      2x  Unsupported: builtin print() is not traceable [print]",
        "          2x at project/model.py:20 in forward",
        "             from project/train.py:40 in main",
    ]


def test_recompile_row_has_reason(tmp_path: Path) -> None:
    """A recompile row ends with the failed guard in plain words, Dynamo's text under it."""
    lines = _small(tmp_path)
    start = lines.index("Recompiles (1)")
    assert lines[start + 2 : start + 4] == [
        "  0/1  forward   project/model.py:10      1  input x: dtype changed from Float to Half",
        " " * 45 + "guard: tensor 'x' dtype mismatch. expected Float,",
    ]


def test_slowest_row_has_phases(tmp_path: Path) -> None:
    """The slowest compile's row gives its compile time and its parts, largest first."""
    lines = _small(tmp_path)
    start = lines.index("Slowest compiles (frame + lazy backward)")
    assert lines[start + 2] == (
        "  0/1  forward   200.0 ms         -  backend 120.0 ms · tracing 60.0 ms · AOT 40.0 ms ·"
    )
    # wrapped between parts, never cut, the continuation under its column
    assert lines[start + 3] == " " * 37 + "guards 10.0 ms"


def test_failure_row_has_error(tmp_path: Path) -> None:
    """A failure row names stage, compile, function and the error."""
    lines = _small(tmp_path)
    start = lines.index("Failures (1)")
    assert lines[start + 2] == (
        "  compile  1/0  helper    "
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: boom"
    )


def test_long_location_is_cut_at_the_start_keeping_the_line(tmp_path: Path) -> None:
    """A location too long for its column keeps its end: file name and line number."""
    compile_ = FakeCompile("0/0", function="f" * 60, file=f"/src/{'d' * 80}/model.py", line=123)
    lines = _render(write_traces(tmp_path / "t.jsonl", [compile_])).splitlines()
    row = lines[lines.index("Frame compiles (1)") + 2]
    assert row.split()[2:4] == ["…dddddddddddd/model.py:123", "success"]


def test_deep_user_stack_shows_three_frames_and_counts_the_rest(tmp_path: Path) -> None:
    """A user stack of 5 frames shows the innermost 3 and "… 2 outer frames"."""
    stack = tuple(f"/src/m{depth}.py:{depth} in f{depth}" for depth in range(5))
    compile_ = FakeCompile("0/0", graph_breaks=(GraphBreak("r", "k", stack),))
    lines = _render(write_traces(tmp_path / "t.jsonl", [compile_])).splitlines()
    start = lines.index("Graph breaks (1 in 1 reason)")
    assert lines[start + 2 : start + 6] == [
        "          1x at src/m4.py:4 in f4",
        "             from src/m3.py:3 in f3",
        "             from src/m2.py:2 in f2",
        "             … 2 outer frames",
    ]


def test_limit_cuts_tables_and_says_how_many_more(tmp_path: Path) -> None:
    """limit=2 shows two compile rows and counts the others."""
    lines = _small(tmp_path, limit=2)
    start = lines.index("Frame compiles (4)")
    assert lines[start + 4] == "  … 2 more (all of them: --limit 0, --json or --html)"


def test_limit_zero_shows_every_row(tmp_path: Path) -> None:
    """limit=0 shows all 4 compile rows."""
    lines = _small(tmp_path, limit=0)
    start = lines.index("Frame compiles (4)")
    assert [line.split()[0] for line in lines[start + 2 : start + 6]] == [
        "0/0",
        "0/1",
        "1/0",
        "2/0",
    ]


def test_code_at_the_recompile_limit_is_shown(tmp_path: Path) -> None:
    """A code object with 8 cache entries is listed AT LIMIT."""
    compiles = [FakeCompile(f"0/{n}", start_ms=n * 200, cache_size=n) for n in range(8)]
    lines = _render(write_traces(tmp_path / "t.jsonl", compiles)).splitlines()
    start = lines.index("Recompile limit: code close to or at it (1)")
    assert (
        lines[start + 2]
        == "  AT LIMIT  forward   project/model.py:10         8              8      8"
    )


def test_diverging_rank_is_flagged_with_its_first_difference(tmp_path: Path) -> None:
    """Under the ranks table, the diverging rank and the compile where it differs."""
    write_job(tmp_path, ranks=3, compiles_per_rank=10, diverging_rank=1, diverge_at=5)
    lines = _render(tmp_path).splitlines()
    assert lines[lines.index("Ranks (3)") + 5] == (
        "  rank 1 DIVERGES in graphs; first at 5/0: graphs 2, guards 8 "
        "(most ranks: graphs 1, guards 8)"
    )


def test_agreeing_ranks_say_so(tmp_path: Path) -> None:
    """Ranks that agree get one line saying so."""
    write_job(tmp_path, ranks=2, compiles_per_rank=3)
    lines = _render(tmp_path).splitlines()
    assert lines[lines.index("Ranks (2)") + 4] == (
        "  all ranks agree on graphs, recompiles and guards"
    )


def test_cut_ranks_table_keeps_the_diverging_rank(tmp_path: Path) -> None:
    """With limit=1 the one row shown is the diverging rank."""
    write_job(tmp_path, ranks=3, compiles_per_rank=10, diverging_rank=2, diverge_at=5)
    lines = _render(tmp_path, limit=1).splitlines()
    assert lines[lines.index("Ranks (3)") + 2].split()[:2] == ["rank", "2"]


def test_process_heading_names_rank_host_and_pid(tmp_path: Path) -> None:
    """Each process section starts with a rule naming it."""
    write_job(tmp_path, ranks=2, compiles_per_rank=1)
    heading = next(line for line in _render(tmp_path).splitlines() if line.startswith("── rank 1"))
    assert heading.rstrip("─") == "── rank 1 of 2 · run job-1 · node-a · pid 1001 · train "


LIBRARY = "/usr/lib/python3.11/site-packages/torch/nn/modules/module.py"


def test_a_long_reason_wraps_within_the_width_and_keeps_every_word(tmp_path: Path) -> None:
    """A 300-character recompile reason: every line of the table fits 100 columns, and
    read as words the reason is all there (nothing cut)."""
    reason = " ".join(f"guard{index} failed on L['x{index}']" for index in range(12))
    compile_ = FakeCompile("0/1", cache_size=1, recompile_reason=reason)
    lines = _render(write_traces(tmp_path / "t.jsonl", [compile_]), width=100).splitlines()
    start = lines.index("Recompiles (1)")
    table = lines[start + 2 : start + 9]
    assert all(len(line) <= 100 for line in table)
    assert reason in " ".join(" ".join(table).split())


def test_torch_and_library_frames_are_folded_after_the_innermost(tmp_path: Path) -> None:
    """A break in the user's forward, called through three torch module frames from the
    training loop: the forward, one "… 3 torch/library frames" line, then the loop."""
    stack = (
        "/src/train.py:40 in main",
        f"{LIBRARY}:1778 in _wrapped_call_impl",
        f"{LIBRARY}:1789 in _call_impl",
        f"{LIBRARY}:1778 in _wrapped_call_impl",
        "/src/model.py:20 in forward",
    )
    compile_ = FakeCompile("0/0", graph_breaks=(GraphBreak("r", "k", stack),))
    lines = _render(write_traces(tmp_path / "t.jsonl", [compile_])).splitlines()
    start = lines.index("Graph breaks (1 in 1 reason)")
    assert lines[start + 2 : start + 5] == [
        "          1x at src/model.py:20 in forward",
        "             … 3 torch/library frames",
        "             from src/train.py:40 in main",
    ]


def test_stacks_that_differ_only_in_library_frames_are_merged(tmp_path: Path) -> None:
    """Two breaks with the same reason whose stacks differ only in torch's line numbers
    read the same once folded: one stack line counting both."""
    stacks = [
        ("/src/train.py:40 in main", f"{LIBRARY}:{line} in _call_impl", "/src/model.py:20 in f")
        for line in (1789, 1790)
    ]
    breaks = tuple(GraphBreak("same reason", "k", stack) for stack in stacks)
    compile_ = FakeCompile("0/0", graph_breaks=breaks)
    lines = _render(write_traces(tmp_path / "t.jsonl", [compile_])).splitlines()
    start = lines.index("Graph breaks (2 in 1 reason)")
    stack_lines = [line for line in lines[start + 1 :] if line.startswith(" " * 10 + "2x at")]
    assert stack_lines == ["          2x at src/model.py:20 in f"]
    assert not any(line.startswith(" " * 10 + "1x at") for line in lines[start:])


def test_a_multi_line_error_is_one_line_with_the_first_line_of_its_cause(tmp_path: Path) -> None:
    """Dynamo's "backend='inductor' raised:" then the cause and advice on later lines: the
    failures table shows "raised: RuntimeError: boom …" and no row is broken by it."""
    message = "backend='inductor' raised:\nRuntimeError: boom\n\nSet TORCH_LOGS=+dynamo for more"
    compile_ = FakeCompile(
        "1/0",
        outcome=names.OUTCOME_FAILURE,
        error_type="torch._dynamo.exc.BackendCompilerFailed",
        error_message=message,
    )
    lines = _render(write_traces(tmp_path / "t.jsonl", [compile_])).splitlines()
    start = lines.index("Failures (1)")
    words = " ".join(" ".join(lines[start + 2 : start + 4]).split())
    assert "backend='inductor' raised: RuntimeError: boom …" in words
    assert "TORCH_LOGS" not in "\n".join(lines)


def test_the_ops_column_says_what_it_counts(tmp_path: Path) -> None:
    """Under the frame-compile table a dim line says what ops counts, and that
    torch._dynamo.explain's op_count counts call_function nodes only."""
    text = " ".join(line.strip() for line in _small(tmp_path))
    assert (
        "ops: call_function, call_method and call_module nodes, every compile summed "
        "(torch._dynamo.explain's op_count: call_function nodes only)"
    ) in text


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        (
            "/opt/venv/lib/python3.11/site-packages/transformers/utils/generic.py",
            "transformers/utils/generic.py",
        ),
        ("/usr/lib/python3/dist-packages/numpy/core/numeric.py", "numpy/core/numeric.py"),
        (r"C:\Py\Lib\site-packages\torch\nn\modules\module.py", "torch/nn/modules/module.py"),
        ("/env/lib/site-packages/vendored/site-packages/six.py", "six.py"),
        ("/home/me/project/train.py", "project/train.py"),
        ("train.py", "train.py"),
        ("/srv/site-packages-notes/model.py", "site-packages-notes/model.py"),
        ("/env/lib/site-packages/", "site-packages/"),
    ],
)
def test_short_path_shows_an_installed_file_from_its_package(path: str, shown: str) -> None:
    """A file under site-packages or dist-packages from its top-level package on (which
    package it is); any other path, its last two parts as before."""
    assert short_path(path) == shown


@pytest.mark.parametrize(
    ("function", "module", "shown"),
    [
        (
            "wrapper",
            "transformers.models.opt.modeling_opt.OPTForCausalLM",
            "OPTForCausalLM (wrapper)",
        ),
        ("forward", "mypkg.model.MLP", "MLP.forward"),
        ("step", None, "step"),
        (None, None, "?"),
        (None, "Top", "Top (?)"),
    ],
)
def test_a_function_run_on_a_module_is_shown_with_its_class(
    function: str | None, module: str | None, shown: str
) -> None:
    assert function_label(function, module) == shown


def _two_modules_one_file(tmp_path: Path) -> Path:
    """Two classes' ``forward`` in one file (TinyLM's at line 10, Block's at line 30), each
    compiled on its module; Block's breaks at line 34 (compile 1/0) and 1/1 fails."""
    module = names.ATTR_COMPILE_MODULE_CLASS
    breaks = (
        GraphBreak("one reason", "k", (f"{TRAIN_FILE}:5 in main", f"{MODEL_FILE}:34 in forward")),
    )
    compiles = [
        FakeCompile("0/0", line=10, attributes={module: "lm.TinyLM"}),
        FakeCompile(
            "1/0", line=30, start_ms=1000, graph_breaks=breaks, attributes={module: "lm.Block"}
        ),
    ]
    failed = FakeCompile(
        "1/1",
        line=30,
        start_ms=2000,
        outcome=names.OUTCOME_FAILURE,
        error_type="BackendCompilerFailed",
        error_message="boom",
        attributes={module: "lm.Block"},
    )
    return write_traces(tmp_path / "t.jsonl", [*compiles, failed])


def test_one_function_has_one_name_in_every_section(tmp_path: Path) -> None:
    """The frame table, the graph-break stack, the causes and the failures all call the
    function that broke and failed ``Block.forward`` (its line is below Block's def, not
    TinyLM's), never bare ``forward``."""
    text = _render(_two_modules_one_file(tmp_path), limit=0)
    assert "model.py:34 in Block.forward" in text
    assert " in forward" not in text
    causes = text[text.index("Why graphs broke") :].splitlines()[2]
    assert causes.split()[3:5] == ["Block.forward", "project/model.py:34"]
    failures = text[text.index("Failures") :].splitlines()[2]
    assert "Block.forward" in failures
    summary = summarize(load_telemetry([tmp_path / "t.jsonl"]))
    (process,) = summary["processes"]
    assert [function_label(r["function"], r["module"]) for r in process["compiles"]] == [
        "TinyLM.forward",
        "Block.forward",
        "Block.forward",
    ]


def test_printable_text_gives_the_same_view_without_the_copy(tmp_path: Path) -> None:
    """Told the text is printable (as the reader found), the view is the same text, row
    limit or not; a section the reader did not vouch for is still made printable."""
    write_job(tmp_path, ranks=2, compiles_per_rank=30, diverging_rank=1)
    telemetry = load_telemetry([tmp_path])
    summary = summarize(telemetry)
    hostile = summarize(load_telemetry([tmp_path]))
    hostile["processes"][0]["compiles"][0]["function"] = "fwd\x1b[2J"
    assert (
        telemetry.printable_text,
        render_terminal(summary, color=False, printable_text=True)
        == render_terminal(summary, color=False),
        render_terminal(summary, color=False, limit=0, printable_text=True)
        == render_terminal(summary, color=False, limit=0),
        "\x1b" in render_terminal(hostile, color=False),
    ) == (True, True, True, False)


def test_torchs_hints_shown_under_their_break_wrapped_at_spaces(tmp_path: Path) -> None:
    """Each hint torch gave for a break is one "torch's hint:" entry under its reason,
    wrapped within the width at spaces, in torch's order."""
    hints = (
        "For the common pattern `if tensor_cond: x = transform(x)`, consider making the code "
        "branchless by always applying the transform with torch.where.",
        "Use `torch.cond` to express dynamic control flow.",
    )
    brk = GraphBreak(reason="Data-dependent branching: if x.sum() > 0", kind="x", hints=hints)
    path = write_traces(tmp_path / "t.jsonl", [FakeCompile("0/0", graph_breaks=(brk,))])
    lines = _render(path, width=80).splitlines()
    said = [i for i, line in enumerate(lines) if "torch's hint:" in line]
    assert len(said) == 2 and all(len(line) <= 80 for line in lines)
    first = " ".join(line.strip() for line in lines[said[0] : said[1]])
    assert first == f"torch's hint: {hints[0]}"
    assert lines[said[1]].strip() == f"torch's hint: {hints[1]}"
