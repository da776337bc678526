"""report.explain: torch._dynamo.explain's summary from recorded telemetry, checked against it.

Each test does the traced run first and reads its summary, and only then runs
``torch._dynamo.explain`` (which resets Dynamo before and after), so neither disturbs
the other's state.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from _report_support import write_small
from _spans import named
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import otel_dynamo
from otel_dynamo import names, report
from otel_dynamo._providers.json_lines import JsonLinesSpanExporter


def no_break(x):
    return torch.sin(x) + x.cos() * 2


def print_in_middle(x):
    x = x * 2
    print("middle")
    return x.relu()


def item_call(x):
    scale = x.sum().item()
    return x * scale


def print_first(x):
    print("first")
    return x.sin()


def loop_with_break(x):
    for _ in range(3):
        x = x + 1
        print("loop")
    return x


def _traced_summary(provider, exporter, fn) -> report.ExplainSummary:
    backend = otel_dynamo.traced("eager", tracer_provider=provider)
    torch.compile(fn, backend=backend)(torch.ones(4))
    return report.explain(exporter.get_finished_spans())


def _torch_explain(fn):
    torch._dynamo.reset()
    return torch._dynamo.explain(fn)(torch.ones(4))


@pytest.mark.parametrize("fn", [no_break, print_in_middle, item_call])
def test_counts_match_torch_explain_where_it_is_right(provider, exporter, capsys, fn):
    """Graph, break, op and guard counts and ops per graph equal explain's on these cases."""
    ours = _traced_summary(provider, exporter, fn)
    theirs = _torch_explain(fn)
    assert type(ours.graph_count) is int and ours.graph_count == theirs.graph_count
    assert type(ours.graph_break_count) is int
    assert ours.graph_break_count == theirs.graph_break_count
    assert type(ours.op_count) is int and ours.op_count == theirs.op_count
    assert [len(ops) for ops in ours.ops_per_graph] == [len(ops) for ops in theirs.ops_per_graph]
    assert len(ours.break_reasons) == len(theirs.break_reasons)
    assert type(ours.guard_count) is int and ours.guard_count == len(theirs.out_guards)


@pytest.mark.parametrize("fn", [print_in_middle, item_call])
def test_break_reason_has_the_user_stack_explain_gives(provider, exporter, capsys, fn):
    """Each break's innermost user frame is explain's file:line, with the function name."""
    ours = _traced_summary(provider, exporter, fn)
    theirs = _torch_explain(fn)
    (brk,) = ours.break_reasons
    (their_brk,) = theirs.break_reasons
    innermost = their_brk.user_stack[-1]
    assert brk.user_stack[-1] == f"{innermost.filename}:{innermost.lineno} in {fn.__name__}"
    assert all(isinstance(frame, str) for frame in brk.user_stack)
    assert isinstance(brk.reason, str) and brk.reason
    assert brk.compile_id == "0/0"


def test_ops_per_graph_name_the_call_function_targets(provider, exporter):
    """The graph's ops are its call_function targets; the call_method cos is not one."""
    ours = _traced_summary(provider, exporter, no_break)
    assert ours.ops_per_graph == (("torch.sin", "mul", "add"),)


def test_break_with_no_graph_before_it_is_counted_where_explain_misses_it(
    provider, exporter, capsys
):
    """print first: explain sees no break (no graph ended in it); we count and show it."""
    ours = _traced_summary(provider, exporter, print_first)
    theirs = _torch_explain(print_first)
    assert theirs.graph_break_count == 0 and theirs.break_reasons == []
    assert ours.graph_break_count == 1
    (brk,) = ours.break_reasons
    assert "print" in brk.reason
    assert (
        brk.user_stack[-1] == f"{__file__}:{print_first.__code__.co_firstlineno + 1} in print_first"
    )


def test_skipped_frame_is_named_where_explain_reports_minus_one(provider, exporter, capsys):
    """A loop break makes Dynamo skip the frame: explain says -1 breaks; we name frame and break."""
    ours = _traced_summary(provider, exporter, loop_with_break)
    theirs = _torch_explain(loop_with_break)
    assert theirs.graph_break_count == -1
    assert ours.graph_count == 0 and ours.graph_break_count == 1
    line = loop_with_break.__code__.co_firstlineno
    assert ours.skipped_frames == (f"loop_with_break ({__file__}:{line})",)
    (brk,) = ours.break_reasons
    assert brk.kind == "skip" and brk.reason.startswith("frame skipped")


def test_summary_does_not_reset_dynamo(provider, exporter, capsys):
    """After explain(spans) the compiled function runs from Dynamo's cache: no new compile."""
    compiled = torch.compile(
        print_in_middle, backend=otel_dynamo.traced("eager", tracer_provider=provider)
    )
    compiled(torch.ones(4))
    frames_before = len(named(exporter.get_finished_spans(), names.SPAN_FRAME))
    report.explain(exporter.get_finished_spans())
    compiled(torch.ones(4))
    assert len(named(exporter.get_finished_spans(), names.SPAN_FRAME)) == frames_before == 2


def test_recompile_reasons_are_listed(provider, exporter):
    """A dtype recompile shows with the guard that failed."""
    compiled = torch.compile(
        lambda x: (x * 2).relu(), backend=otel_dynamo.traced("eager", tracer_provider=provider)
    )
    compiled(torch.ones(4))
    compiled(torch.ones(4, dtype=torch.float64))
    ours = report.explain(exporter.get_finished_spans())
    assert ours.frame_count == 2 and ours.graph_count == 2
    assert ours.recompile_reasons == ("tensor 'x' dtype mismatch. expected Float, actual Double",)


def test_files_and_in_memory_spans_give_the_same_summary(provider, exporter, tmp_path, capsys):
    """The same run read back from an OTLP/JSON Lines file yields an equal summary."""
    path = tmp_path / "traces.jsonl"
    provider.add_span_processor(
        SimpleSpanProcessor(JsonLinesSpanExporter(path.open("a", encoding="utf-8")))
    )
    from_memory = _traced_summary(provider, exporter, print_in_middle)
    provider.force_flush()
    assert report.explain(tmp_path) == from_memory
    assert report.explain([str(path)]) == from_memory


def test_compile_times_list_each_dynamo_phase(provider, exporter, capsys):
    """Per Dynamo phase, one duration (float seconds) per time it ran: two frames, two each."""
    ours = _traced_summary(provider, exporter, print_in_middle)
    times = dict(ours.compile_times)
    assert len(times["entire_frame_compile"]) == 2
    assert all(type(value) is float and value >= 0 for value in times["build_guards"])


def test_str_reads_like_explain_output(provider, exporter, capsys):
    """str() has explain's headings, the break with its stack, and our extra sections."""
    text = str(_traced_summary(provider, exporter, print_in_middle))
    assert text.startswith("Graph Count: 2\nGraph Break Count: 1\nOp Count: 1\nBreak Reasons:\n")
    assert "  Break Reason 1:\n    Reason: Failed to trace builtin operator" in text
    line = print_in_middle.__code__.co_firstlineno + 2
    assert f"      {__file__}:{line} in print_in_middle\n" in text
    assert "Ops per Graph:\n  Ops 1:\n    mul\n  Ops 2:\n" in text
    assert "Guard Count: 17\n" in text and "Frame Compiles: 2\n" in text


def test_op_count_is_unknown_for_graphs_recorded_without_call_function_count(
    tmp_path: Path,
) -> None:
    """Telemetry without the call_function count (older writers): op_count None, not 0."""
    summary = report.explain(write_small(tmp_path))
    assert summary.graph_count > 0
    assert summary.op_count is None
    assert "Op Count: unknown\n" in str(summary)


def test_missing_path_raises_value_error_naming_it(tmp_path: Path) -> None:
    """Nothing readable: ValueError naming the path and why."""
    missing = tmp_path / "nowhere"
    with pytest.raises(ValueError, match=r"nowhere: no such file or directory"):
        report.explain(missing)


def test_bad_file_next_to_good_one_is_a_problem_not_an_error(tmp_path: Path) -> None:
    """A corrupt file beside a good one: the summary is made and names the bad line."""
    write_small(tmp_path)
    (tmp_path / "broken.jsonl").write_text("{not json\n")
    summary = report.explain(tmp_path)
    assert summary.graph_count > 0
    assert any("broken.jsonl:1" in problem for problem in summary.problems)


def test_item_that_is_not_a_span_raises_type_error() -> None:
    """A sequence mixing spans and other things is a TypeError naming the item."""
    with pytest.raises(TypeError, match=r"item 0 is a int, not a finished OpenTelemetry span"):
        report.explain([1, 2])


def test_no_spans_give_an_empty_summary() -> None:
    """An empty exporter: zero graphs and breaks, nothing raised."""
    summary = report.explain(())
    assert (summary.graph_count, summary.graph_break_count, summary.op_count) == (0, 0, 0)
