"""The report's "what to do": each cause of a process's recompiles and graph breaks, with
its fixes, on the entries it made and ranked by what it cost; the terminal and the page
open with it."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from _report_support import MODEL_FILE, FakeCompile, GraphBreak, write_traces

from otel_dynamo import cli, names
from otel_dynamo.report import load_telemetry, render_html, render_terminal, summarize
from otel_dynamo.report.summary.schema import ProcessSection

SIZE = "tensor 'x' size mismatch at index 0. expected 4, actual 8"
ARGUMENTS = {names.ATTR_CODE_ARGUMENTS: ["self", "x"]}


def _process(tmp_path: Path, compiles: list[FakeCompile]) -> ProcessSection:
    path = write_traces(tmp_path / "t.jsonl", compiles)
    (process,) = summarize(load_telemetry([path]))["processes"]
    return process


def _recompiled(*, attributes: dict[str, object], duration_ms: int = 100) -> list[FakeCompile]:
    return [
        FakeCompile("0/0", attributes=attributes),
        FakeCompile(
            "0/1",
            start_ms=1000,
            duration_ms=duration_ms,
            cache_size=1,
            recompile_reason=SIZE,
            attributes=attributes,
        ),
    ]


def test_a_changing_argument_dimension_is_marked_dynamic_at_its_position(tmp_path: Path) -> None:
    """Where the frame span names the compiled function's parameters, the argument's fix
    is mark_dynamic with its position among them (self included) and the dimension."""
    process = _process(tmp_path, _recompiled(attributes=ARGUMENTS))
    (fix,) = process["recompiles"][0]["fixes"]
    assert fix["actions"] == [
        {
            "kind": "mark_dynamic",
            "file": MODEL_FILE,
            "line": 10,
            "function": "forward",
            "shown": "forward",
            "argument": "x",
            "position": 1,
            "dims": [0],
        }
    ]
    assert fix["expect"] == {"recompiles": 0, "graph_breaks": None}
    assert fix["summary"].startswith("mark dimension 0 of x dynamic before each call of forward")


def test_without_the_parameters_the_dimension_is_made_dynamic_by_its_source(
    tmp_path: Path,
) -> None:
    """Telemetry that does not name the parameters (an older otel_dynamo) cannot say the
    argument's position: the fix names torch's own variable for the source instead."""
    process = _process(tmp_path, _recompiled(attributes={}))
    (fix,) = process["recompiles"][0]["fixes"]
    assert fix["actions"] == [
        {"kind": "env", "name": "TORCH_COMPILE_DYNAMIC_SOURCES", "value": "L['x']"}
    ]


def test_a_cause_names_its_entries_and_what_it_cost(tmp_path: Path) -> None:
    """One cause per (location, kind, subject), with the compile ids of its recompiles and
    the seconds of the compiles it made."""
    process = _process(tmp_path, _recompiled(attributes=ARGUMENTS, duration_ms=250))
    (cause,) = process["what_to_do"]
    assert {key: cause[key] for key in ("kind", "subject", "recompiles", "recompile_ids")} == {
        "kind": "recompile",
        "subject": "size L['x']",
        "recompiles": 1,
        "recompile_ids": ["0/1"],
    }
    assert cause["compile_seconds"] == 0.25
    assert cause["fixes"] == process["recompiles"][0]["fixes"]


def test_causes_are_ranked_by_compile_seconds(tmp_path: Path) -> None:
    """A graph break whose compiles took longer comes before a recompile that took less."""
    slow_break = FakeCompile(
        "1/0",
        function="step",
        line=30,
        start_ms=5000,
        duration_ms=900,
        graph_breaks=(GraphBreak(),),
    )
    process = _process(tmp_path, [*_recompiled(attributes=ARGUMENTS), slow_break])
    assert [cause["kind"] for cause in process["what_to_do"]] == ["graph_break", "recompile"]


def test_a_grouped_break_gets_the_fix_of_each_of_its_stacks(tmp_path: Path) -> None:
    """One reason broken in two functions is two causes; the break entry carries both
    fixes (each names its own function)."""
    hint = "Set `torch._dynamo.config.capture_scalar_outputs = True` to capture it."
    breaks = [
        GraphBreak(
            reason="item",
            kind="item",
            user_stack=(f"{MODEL_FILE}:{line} in {name}",),
            hints=(hint,),
        )
        for line, name in ((20, "forward"), (40, "head"))
    ]
    compiles = [
        FakeCompile(f"{n}/0", start_ms=1000 * n, graph_breaks=(brk,))
        for n, brk in enumerate(breaks)
    ]
    process = _process(tmp_path, compiles)
    (group,) = process["graph_breaks"]
    capture = "let torch capture it: torch._dynamo.config.capture_scalar_outputs = True"
    assert [fix["summary"] for fix in group["fixes"]] == [
        f"{capture} (the break in forward (model.py:20))",
        f"{capture} (the break in head (model.py:40))",
    ]
    assert group["fixes"][0]["source"]["torch_hint"] == hint
    assert len(process["what_to_do"]) == 2


def test_the_terminal_opens_with_what_to_do_within_80_columns(tmp_path: Path) -> None:
    """At 80 columns the report's first section is What to do, no line wider."""
    path = write_traces(tmp_path / "t.jsonl", _recompiled(attributes=ARGUMENTS))
    text = render_terminal(summarize(load_telemetry([path])), color=False, width=80)
    lines = text.splitlines()
    first = lines.index("") + 1
    assert lines[first] == "What to do (1 cause, costliest first)"
    assert lines[first + 2] == "     input x: dimension 0 changed from 4 to 8"
    assert max(len(line) for line in lines) <= 80


def test_a_fix_found_not_working_is_not_shown(tmp_path: Path) -> None:
    """A fix whose verdict is not_working stays in the summary and is not shown; the
    cause says no fix worked."""
    path = write_traces(tmp_path / "t.jsonl", _recompiled(attributes=ARGUMENTS))
    summary = summarize(load_telemetry([path]))
    counts = {"recompiles": 1, "graph_breaks": 0, "compile_seconds": 0.1}
    summary["processes"][0]["what_to_do"][0]["fixes"][0]["verdict"] = {
        "status": "not_working",
        "before": counts,
        "after": counts,
        "output_same": True,
        "run_time": {"before_s": 0.5, "before_again_s": 0.5, "after_s": 0.5},
        "note": "",
    }
    text = render_terminal(summary, color=False)
    assert "mark_dynamic" not in text
    assert "no fix worked on this job (see --json)" in text


def test_verified_fixes_paste_as_python_within_the_width(tmp_path: Path) -> None:
    """At 40 columns the verified mark_dynamic fix pastes as a comment line saying where
    and the call, each within the width, and the block is Python as pasted."""
    path = write_traces(tmp_path / "t.jsonl", _recompiled(attributes=ARGUMENTS))
    summary = summarize(load_telemetry([path]))
    counts = {"recompiles": 1, "graph_breaks": 0, "compile_seconds": 0.1}
    fix = summary["processes"][0]["what_to_do"][0]["fixes"][0]
    fix["verdict"] = {
        "status": "verified",
        "before": counts,
        "after": {**counts, "recompiles": 0},
        "output_same": True,
        "run_time": {"before_s": 0.5, "before_again_s": 0.5, "after_s": 0.5},
        "note": "",
    }
    lines = render_terminal(summary, color=False, width=40).splitlines()
    start = lines.index("Verified fixes, to paste") + 1
    block = lines[start : lines.index("", start)]
    assert block[0].startswith("  # before each call of ")
    assert block[-1] == "  torch._dynamo.mark_dynamic(x, 0)"
    assert max(len(line) for line in block) <= 40
    compile(textwrap.dedent("\n".join(block)), "pasted", "exec")


def test_the_page_opens_with_what_to_do(tmp_path: Path) -> None:
    """The page's what-to-do section comes before where compile time went."""
    path = write_traces(tmp_path / "t.jsonl", _recompiled(attributes=ARGUMENTS))
    telemetry = load_telemetry([path])
    page = render_html(telemetry, summarize(telemetry))
    assert 0 < page.index('<section id="what-to-do">') < page.index('<section id="compile-time">')
    assert "torch._dynamo.mark_dynamic(x, 0)" in page


def test_a_break_cause_names_its_function_as_the_frame_tables_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`otel-dynamo report` (whose tables are made where the files are read) names the
    function a break happened in with its module's class, in the cause and in its fix."""
    module = {names.ATTR_COMPILE_MODULE_CLASS: "lm.Block"}
    brk = GraphBreak(user_stack=(f"{MODEL_FILE}:34 in forward",))
    path = write_traces(
        tmp_path / "t.jsonl", [FakeCompile("0/0", line=30, graph_breaks=(brk,), attributes=module)]
    )
    assert cli.main(["report", str(path)]) == 0
    text = capsys.readouterr().out
    todo = text[text.index("What to do") :].splitlines()
    assert todo[1].startswith("  1. Block.forward (project/model.py:34) · 1 graph break")
    assert "(the break in Block.forward (model.py:34);" in " ".join(" ".join(todo[3:6]).split())


def test_a_wrapper_name_stays_on_one_line_where_its_cause_wraps(tmp_path: Path) -> None:
    """A function named with a space (its module's class, then its code name: "Block
    (scaled_residual)") is never broken at that space in the what-to-do heading or fix,
    at any width from 40 to 100 columns."""
    module = {names.ATTR_COMPILE_MODULE_CLASS: "lm.Block"}
    brk = GraphBreak(user_stack=(f"{MODEL_FILE}:34 in scaled_residual",))
    compiles = [
        FakeCompile(
            "0/0", function="scaled_residual", line=30, graph_breaks=(brk,), attributes=module
        )
    ]
    summary = summarize(load_telemetry([write_traces(tmp_path / "t.jsonl", compiles)]))
    label = "Block (scaled_residual)"
    for width in range(40, 101):
        text = render_terminal(summary, color=False, width=width)
        todo = text[text.index("What to do") : text.index("Where compile time went")]
        whole = sum(line.count(label) for line in todo.splitlines())
        assert (width, whole) == (width, " ".join(todo.split()).count(label))
        assert whole >= 2  # the heading and the fix


def test_a_cause_of_two_dimensions_is_one_cause_freeing_both(tmp_path: Path) -> None:
    """x's rows change (0/1), then its columns (0/2): one cause whose words name both
    dimensions, and whose fix, on the cause and on both recompile entries, marks both."""
    second = "tensor 'x' size mismatch at index 1. expected 3, actual 5"
    compiles = [
        *_recompiled(attributes=ARGUMENTS),
        FakeCompile(
            "0/2", start_ms=2000, cache_size=2, recompile_reason=second, attributes=ARGUMENTS
        ),
    ]
    process = _process(tmp_path, compiles)
    (cause,) = process["what_to_do"]
    assert (cause["recompiles"], cause["what"]) == (
        2,
        "input x: dimension 0 changed from 4 to 8; input x: dimension 1 changed from 3 to 5",
    )
    fixed = [cause["fixes"], *(row["fixes"] for row in process["recompiles"])]
    assert [[action["dims"] for fix in found for action in fix["actions"]] for found in fixed] == [
        [[0, 1]]
    ] * 3


def test_a_tenth_cause_text_starts_under_its_heading(tmp_path: Path) -> None:
    """With ten causes shown (``limit=0``), at 60, 80 and 100 columns, every line of the
    tenth below its first starts in the column its function starts in ("  10. " is one
    wider than "  9. "), its fix's continuation five further, as the first's do under
    "  1. "."""
    compiles = [
        FakeCompile(
            f"{n}/0",
            function=f"step_{n}",
            line=10 + n,
            start_ms=1000 * n,
            duration_ms=1000 - 10 * n,  # costliest first: step_0 first, step_9 tenth
            graph_breaks=(GraphBreak(user_stack=(f"{MODEL_FILE}:{10 + n} in step_{n}",)),),
        )
        for n in range(10)
    ]
    summary = summarize(load_telemetry([write_traces(tmp_path / "t.jsonl", compiles)]))
    for width in (60, 80, 100):
        lines = render_terminal(summary, color=False, width=width, limit=0).splitlines()
        for number, column in ((1, 5), (10, 6)):
            below = _cause_lines(lines, number)
            fix = next(i for i, line in enumerate(below) if line[column:].startswith("fix: "))
            indents = [len(line) - len(line.lstrip(" ")) for line in below]
            assert (width, number, indents) == (
                width,
                number,
                [column] * (fix + 1) + [column + len("fix: ")] * (len(below) - fix - 1),
            )


def _cause_lines(lines: list[str], number: int) -> list[str]:
    """The lines of cause ``number`` of What to do below its first."""
    first = next(i for i, line in enumerate(lines) if line.startswith(f"  {number}. "))
    end = next(
        i
        for i in range(first + 1, len(lines))
        if not lines[i] or re.match(r"  \d+\. ", lines[i]) is not None
    )
    return lines[first + 1 : end]


def _stack_value_recompiles(*reasons: str) -> list[FakeCompile]:
    resume = "torch_dynamo_resume_in_forward_at_20"
    return [
        FakeCompile("1/0", function=resume, line=20),
        *(
            FakeCompile(
                f"1/{n}",
                function=resume,
                line=20,
                start_ms=1000 * n,
                cache_size=n,
                recompile_reason=reason,
            )
            for n, reason in enumerate(reasons, start=1)
        ),
    ]


def test_a_value_on_dynamos_stack_is_one_cause_whatever_it_held(tmp_path: Path) -> None:
    """A resumed function recompiling as a value on Dynamo's stack (no source: ___stack0)
    changes from 27, then from 26, is one cause of two recompiles, its subject the
    guard's kind and the value's stack slot, its words those of the first, naming the
    slot."""
    reasons = ("___stack0 == 27  # print(x)  # model.py:20 in f", "___stack0 == 26")
    process = _process(tmp_path, _stack_value_recompiles(*reasons))
    (cause,) = process["what_to_do"]
    assert (cause["subject"], cause["recompiles"], cause["recompile_ids"]) == (
        "int ___stack0",
        2,
        ["1/1", "1/2"],
    )
    assert cause["what"] == "stack value ___stack0: a Python int value changed (was 27)"


def test_two_stack_slots_are_two_causes_each_named(tmp_path: Path) -> None:
    """Values in two slots of Dynamo's stack recompiling one resumed function are two
    causes, and their words say which slot each is about."""
    process = _process(tmp_path, _stack_value_recompiles("___stack0 == 27", "___stack1 == 27"))
    assert [(cause["subject"], cause["what"]) for cause in process["what_to_do"]] == [
        ("int ___stack0", "stack value ___stack0: a Python int value changed (was 27)"),
        ("int ___stack1", "stack value ___stack1: a Python int value changed (was 27)"),
    ]


def test_two_failed_guards_on_one_value_are_one_recompile(tmp_path: Path) -> None:
    """A recompile whose reason names two failed guards of one cause (the value differed
    from two cache entries' values) counts once for that cause."""
    process = _process(tmp_path, _stack_value_recompiles("___stack0 == 27; ___stack0 == 26"))
    (cause,) = process["what_to_do"]
    assert (cause["subject"], cause["recompiles"], cause["recompile_ids"]) == (
        "int ___stack0",
        1,
        ["1/1"],
    )
