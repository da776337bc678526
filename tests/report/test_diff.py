"""otel-dynamo diff BASE NEW: what changed between two runs (counts exact, times past a
threshold), as text, JSON and HTML, and --fail-on conditions that set the exit code."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from _report_support import (
    DTYPE_REASON,
    MODEL_FILE,
    PRINT_BREAK,
    FakeCompile,
    GraphBreak,
    run_chromium,
    small_compiles,
    write_logs,
    write_traces,
)
from _typed_shape import mismatches, schema_keys

from otel_dynamo import cli, names
from otel_dynamo.report import read_report
from otel_dynamo.report.diff import Diff, MinChange, diff_summaries, render_diff
from otel_dynamo.report.render.format import TOTAL_TITLES
from otel_dynamo.report.render.table import shown_name


def _write(directory: Path, compiles: list[FakeCompile]) -> Path:
    directory.mkdir(parents=True)
    write_traces(directory / "traces.jsonl", compiles)
    return directory


def _shifted(compile_: FakeCompile, lines: int) -> FakeCompile:
    """The same compile after an edit moved the code down by ``lines``."""
    breaks = tuple(
        dataclasses.replace(
            b,
            user_stack=tuple(
                re.sub(r":(\d+) in", lambda m: f":{int(m[1]) + lines} in", e) for e in b.user_stack
            ),
        )
        for b in compile_.graph_breaks
    )
    return dataclasses.replace(compile_, line=compile_.line + lines, graph_breaks=breaks)


NEW_BREAK = GraphBreak(
    "Data-dependent branching", "Data-dependent branching", (f"{MODEL_FILE}:77 in decode",)
)


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    """BASE: the small job. NEW: the same code moved 5 lines down, its failing compile
    fixed, one more recompile of forward, a new break in decode, forward 3 s slower."""
    base = small_compiles()
    new = [_shifted(c, 5) for c in base if c.compile_id != "1/0"]
    new[0] = dataclasses.replace(new[0], duration_ms=3100)
    new += [
        FakeCompile("0/2", start_ms=5000, cache_size=2, recompile_reason=DTYPE_REASON),
        FakeCompile("3/0", function="decode", line=70, start_ms=6000, graph_breaks=(NEW_BREAK,)),
    ]
    return _write(tmp_path / "base", base), _write(tmp_path / "new", new)


def _diff(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = cli.main(["diff", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_a_break_moved_by_an_edit_is_not_new_and_a_new_one_is(runs, capsys) -> None:
    """Breaks are matched by reason and the user's function and file: the print break
    whose lines moved is unchanged; the one in decode is new, with its file:line."""
    code, diff = _diff(capsys, str(runs[0]), str(runs[1]))
    assert code == 0
    breaks = diff["graph_breaks"]
    assert [
        (b["reason"], b["function"], b["file"], b["lines"], b["base_count"], b["new_count"])
        for b in breaks["new"]
    ] == [("Data-dependent branching", "decode", "project/model.py", [77], 0, 1)]
    assert breaks["gone"] == [] and breaks["changed"] == []
    assert PRINT_BREAK not in json.dumps(breaks["new"])


def test_recompiles_and_failures_new_gone_and_changed(runs, capsys) -> None:
    """One more dtype recompile of forward: changed 1 → 2; the failing helper compile
    fixed: its failure is gone."""
    _, diff = _diff(capsys, str(runs[0]), str(runs[1]))
    (changed,) = diff["recompiles"]["changed"]
    assert (
        changed["function"],
        changed["reason"],
        changed["base_count"],
        changed["new_count"],
    ) == ("forward", DTYPE_REASON, 1, 2)
    (gone,) = diff["failures"]["gone"]
    assert (gone["stage"], gone["function"], gone["new_count"]) == ("compile", "helper", 0)
    assert diff["totals"]["failures"] == {"base": 1, "new": 0, "change": -1, "relative": -1.0}


def test_compile_time_changes_only_past_the_threshold(runs, capsys) -> None:
    """forward: 0.3 s → 3.4 s is past 10 % and 0.5 s; with --min-change 10%,5s it is not."""
    _, diff = _diff(capsys, str(runs[0]), str(runs[1]))
    forward = next(row for row in diff["functions"] if row["function"] == "forward")
    assert forward["time_significant"] is True
    assert forward["frame_compiles"] == {"base": 2, "new": 3, "change": 1, "relative": 0.5}
    _, strict = _diff(capsys, str(runs[0]), str(runs[1]), "--min-change", "10%,5s")
    forward = next(row for row in strict["functions"] if row["function"] == "forward")
    assert forward["time_significant"] is False  # listed for its counts, not its time


@pytest.mark.parametrize(
    ("condition", "failed", "value"),
    [
        ("new_graph_breaks>0", True, 1.0),
        ("recompiles>+2", False, 1.0),
        ("recompiles>=+1", True, 1.0),
        ("compile_seconds>+20%", True, None),
        ("failures>0", False, 0.0),
        ("graph_breaks<=3", False, 4.0),
    ],
)
def test_fail_on_sets_the_exit_code(runs, capsys, condition, failed, value) -> None:
    """Each condition compares what its VALUE form says (new value, change or percent) and
    exit 1 means one held."""
    code, diff = _diff(capsys, str(runs[0]), str(runs[1]), "--fail-on", condition)
    (verdict,) = diff["conditions"]
    assert (code, verdict["condition"], verdict["failed"]) == (int(failed), condition, failed)
    if value is not None:
        assert verdict["value"] == value


def test_a_malformed_condition_is_a_usage_error_saying_what_is_accepted(runs, capsys) -> None:
    """--fail-on 'breaks>>1': exit 2 from argparse, naming the accepted forms."""
    with pytest.raises(SystemExit) as stopped:
        cli.main(["diff", str(runs[0]), str(runs[1]), "--fail-on", "breaks>>1"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "'breaks>>1': expected METRIC OP VALUE" in err and "new_graph_breaks" in err


def test_terminal_diff_fits_100_columns_and_lists_what_changed(runs, capsys) -> None:
    """The text view: totals, the new break with where it is, the gone failure, the
    function that slowed, the verdicts; no line over 100 columns."""
    code = cli.main(
        ["diff", str(runs[0]), str(runs[1]), "--color", "never", "--fail-on", "new_graph_breaks>0"]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert all(len(line) <= 100 for line in out.splitlines())
    assert "New graph breaks (1)" in out and "decode at project/model.py:77" in out
    assert "Gone failures (1)" in out and "Functions that changed" in out
    assert "FAILED  new_graph_breaks>0 (value 1)" in out


def test_html_page_is_self_contained_and_escapes_text(runs, capsys, tmp_path) -> None:
    """--html: one page, no external resource, every section titled; text escaped."""
    page_path = tmp_path / "diff.html"
    assert cli.main(["diff", str(runs[0]), str(runs[1]), "--html", str(page_path)]) == 0
    page = page_path.read_text(encoding="utf-8")
    assert re.findall(r"https?://|\bsrc\s*=|<link\b", page) == []
    assert "<h3>New graph breaks (1)</h3>" in page and "<h3>Gone failures (1)</h3>" in page
    assert "backend=&#x27;inductor&#x27; raised: boom" in page


def test_unreadable_base_is_exit_2_naming_it(tmp_path, capsys) -> None:
    """BASE with no telemetry: exit 2, the message says which side."""
    (tmp_path / "empty").mkdir()
    new = _write(tmp_path / "new", small_compiles())
    assert cli.main(["diff", str(tmp_path / "empty"), str(new)]) == 2
    assert f"BASE {tmp_path / 'empty'}: no OTLP/JSON records could be read" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize("raw", ["10", "-5%", "x%", "nan%"])
def test_a_bad_min_change_is_a_usage_error(runs, capsys, raw) -> None:
    """--min-change takes a percentage and/or seconds, neither negative."""
    with pytest.raises(SystemExit) as stopped:
        cli.main(["diff", str(runs[0]), str(runs[1]), f"--min-change={raw}"])
    assert stopped.value.code == 2


def test_a_bad_min_change_names_the_options_own_format(runs, capsys) -> None:
    """--min-change 5: the message shows the form the option takes (its metavar in
    --help), an example of it, and the parts alone."""
    with pytest.raises(SystemExit):
        cli.main(["diff", str(runs[0]), str(runs[1]), "--min-change", "5"])
    assert capsys.readouterr().err.splitlines()[-1] == (
        "otel-dynamo diff: error: argument --min-change: '5': '5' is neither a percentage "
        "nor seconds; give PERCENT%,SECONDSs (e.g. 10%,0.5s), or one of them (20% or 2s)"
    )


def test_the_same_run_twice_has_no_changes(tmp_path, capsys) -> None:
    """A run against itself: every count change 0, nothing new, gone or changed."""
    run = _write(tmp_path / "run", small_compiles())
    code, diff = _diff(capsys, str(run), str(run), "--fail-on", "new_graph_breaks>0")
    assert code == 0
    assert all(entry["change"] == 0 for entry in diff["totals"].values())
    assert all(
        diff[s][p] == []
        for s in ("graph_breaks", "recompiles", "failures")
        for p in ("new", "gone", "changed")
    )
    assert diff["functions"] == []


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {key for item in value.values() for key in _keys(item)}
    if isinstance(value, list):
        return {key for item in value for key in _keys(item)}
    return set()


def test_json_output_has_exactly_the_typed_shape(runs, capsys) -> None:
    """``diff --json`` prints an object of exactly the Diff type's keys and value types,
    at every depth (conditions included)."""
    _, diff = _diff(capsys, str(runs[0]), str(runs[1]), "--fail-on", "failures>0")
    assert diff["conditions"][0]["condition"] == "failures>0"
    assert mismatches(diff, Diff, "diff") == []


def test_every_schema_key_is_documented() -> None:
    """Each key of the diff's types appears as `key` in docs/diff-json.md."""
    doc = (Path(__file__).parents[2] / "docs" / "diff-json.md").read_text(encoding="utf-8")
    keys = schema_keys(Diff, set())
    assert len(keys) > 40
    assert sorted(key for key in keys if f"`{key}`" not in doc) == []


def test_every_json_key_is_documented(runs, capsys) -> None:
    """Each key --json prints, at any depth, appears as `key` in docs/diff-json.md."""
    _, diff = _diff(capsys, str(runs[0]), str(runs[1]), "--fail-on", "failures>0")
    doc = (Path(__file__).parents[2] / "docs" / "diff-json.md").read_text(encoding="utf-8")
    assert sorted(key for key in _keys(diff) if f"`{key}`" not in doc) == []


@pytest.fixture
def break_seen_twice(tmp_path: Path) -> tuple[Path, Path]:
    """BASE: the small job. NEW: also two compiles of decode, each breaking at one place."""
    base = small_compiles()
    new = [
        *base,
        FakeCompile("3/0", function="decode", line=70, start_ms=6000, graph_breaks=(NEW_BREAK,)),
        FakeCompile(
            "3/1",
            function="decode",
            line=70,
            start_ms=7000,
            cache_size=1,
            graph_breaks=(NEW_BREAK,),
        ),
    ]
    return _write(tmp_path / "base", base), _write(tmp_path / "new", new)


def test_the_heading_and_the_gate_count_new_graph_breaks_alike(break_seen_twice, capsys) -> None:
    """One new break place seen in 2 compiles: the heading says 2 and the gate compares 2."""
    base, new = map(str, break_seen_twice)
    code = cli.main(["diff", base, new, "--color", "never", "--fail-on", "new_graph_breaks>1"])
    out = capsys.readouterr().out
    assert code == 1
    assert "New graph breaks (2)" in out
    assert "FAILED  new_graph_breaks>1 (value 2)" in out


def test_the_html_page_opens_with_the_verdict(break_seen_twice, tmp_path, capsys) -> None:
    """--html with --fail-on: the fail-on table is the page's first section, and the new
    graph breaks' heading counts 2, as the gate does."""
    page = tmp_path / "diff.html"
    base, new = map(str, break_seen_twice)
    cli.main(["diff", base, new, "--html", str(page), "--fail-on", "new_graph_breaks>1"])
    capsys.readouterr()
    headings = re.findall(r"<h3>(.*?)</h3>", page.read_text())
    assert headings[0] == "Fail-on conditions (1)"
    assert "New graph breaks (2)" in headings


def test_a_relative_change_is_compared_rounded(tmp_path, capsys) -> None:
    """3 s of compiling, then 4.111 s: the gate compares 37.03 (percent), not 37.0333…"""
    base = _write(tmp_path / "base", [FakeCompile("0/0", duration_ms=3000)])
    new = _write(tmp_path / "new", [FakeCompile("0/0", duration_ms=4111)])
    condition = "compile_seconds>+20%"
    code = cli.main(["diff", str(base), str(new), "--json", "--fail-on", condition])
    diff = json.loads(capsys.readouterr().out)
    assert code == 1
    assert diff["conditions"] == [
        {"condition": condition, "compared": "percent", "value": 37.03, "failed": True}
    ]


def test_the_heading_says_process_in_the_singular(runs, capsys) -> None:
    """One process on each side: "1 process", not "1 processes"."""
    cli.main(["diff", *map(str, runs), "--color", "never"])
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "otel-dynamo diff: base 1 process (1 file) → new 1 process (1 file)"


def test_variants_are_not_compared_when_base_recorded_no_calls(tmp_path, capsys) -> None:
    """BASE without variant_calls events (an older otel_dynamo), NEW with them: nothing
    "became hot", the gate on it holds no failure, and the diff says why."""
    base = _write(tmp_path / "base", small_compiles())
    new = _write(tmp_path / "new", small_compiles())
    event = {
        "event.name": names.LOG_VARIANT_CALLS,
        names.ATTR_COMPILE_ID: "0/0",
        names.ATTR_RUN_KIND: names.RUN_KIND_FORWARD,
        names.ATTR_VARIANT_CALLS: 40,
    }
    write_logs(new / "logs.jsonl", [event])
    args = ["diff", str(base), str(new), "--fail-on", "variants_became_hot>0"]
    code, diff = _diff(capsys, *args[1:])
    assert code == 0
    assert diff["variants"] == {"compared": False, "became_hot": [], "became_cold": []}
    cli.main([*args, "--color", "never"])
    assert "Variants not compared" in capsys.readouterr().out


@pytest.mark.slow
def test_the_verdict_is_the_first_thing_chromium_shows_of_the_diff_page(
    break_seen_twice, tmp_path, capsys, chromium
) -> None:
    """In headless Chromium the diff page's first section is the failed gate, above every
    table of what changed."""
    page = tmp_path / "diff.html"
    base, new = map(str, break_seen_twice)
    cli.main(["diff", base, new, "--html", str(page), "--fail-on", "new_graph_breaks>1"])
    capsys.readouterr()
    dom = run_chromium(chromium, tmp_path / "profile", page.as_uri(), "--dump-dom").stdout
    main = dom[dom.index("<main>") :]
    first = re.search(r"<section>(.*?)</section>", main, re.S)
    assert first is not None
    assert re.findall(r"<h3>(.*?)</h3>", first.group(1)) == ["Fail-on conditions (1)"]
    assert "FAILED" in first.group(1) and "new_graph_breaks&gt;1" in first.group(1)


def test_a_function_compiled_another_way_is_listed_with_both_ways(tmp_path, capsys) -> None:
    """Same counts and times, but NEW asked for max-autotune and fullgraph: the function is
    a changed row whose compiled_with holds each run's way, and the terminal says it."""
    asked = {names.ATTR_BACKEND: "inductor", names.ATTR_COMPILE_MODE: "default"}
    tuned = {
        names.ATTR_BACKEND: "inductor",
        names.ATTR_COMPILE_MODE: "max-autotune",
        names.ATTR_COMPILE_FULLGRAPH: True,
    }
    base = _write(tmp_path / "base", [FakeCompile("0/0", attributes=asked)])
    new = _write(tmp_path / "new", [FakeCompile("0/0", attributes=tuned)])
    _, diff = _diff(capsys, str(base), str(new))
    (row,) = diff["functions"]
    assert row["compiled_with"] == {
        "base": ["inductor"],
        "new": ["inductor · max-autotune · fullgraph"],
    }
    assert cli.main(["diff", str(base), str(new)]) == 0
    out = capsys.readouterr().out
    assert "Compiled another way (1)" in out
    assert "forward (project/model.py): inductor → inductor · max-autotune · fullgraph" in out


def test_every_total_keeps_its_whole_name_at_80_and_100_columns(runs, capsys) -> None:
    """The totals table's names are never cut ("failed torch.export calls" included),
    at 80 columns as at 100."""
    base, new = (read_report([run]).summary for run in runs)
    diff = diff_summaries(base, new, min_change=MinChange())
    for columns in (80, 100):
        out = render_diff(diff, [], width=columns, color=False)
        assert all(len(line) <= columns for line in out.splitlines())
        for title in TOTAL_TITLES.values():
            assert f"  {title.strip()} " in out, (columns, title)


def test_the_mark_of_a_small_change_is_explained_at_the_top(runs, capsys, tmp_path) -> None:
    """The terminal diff's second line and the page's heading say what counts as changed
    and that "~" marks a smaller change, shown but not counted."""
    cli.main(["diff", str(runs[0]), str(runs[1]), "--color", "never"])
    explained = "a compile time counts as changed past 10% and 0.5 s; ~ marks a smaller change"
    assert capsys.readouterr().out.splitlines()[1] == explained
    page = tmp_path / "diff.html"
    cli.main(["diff", str(runs[0]), str(runs[1]), "--html", str(page)])
    assert f"<div>{explained}</div>" in page.read_text()


def test_the_diff_names_functions_as_the_report_does(tmp_path, capsys) -> None:
    """A function compiled on a module is ``Block.forward`` in every part of the diff: the
    functions that changed, the new graph break (matched to Block's forward by its line)
    and the new failure."""
    module = names.ATTR_COMPILE_MODULE_CLASS
    tiny = FakeCompile("0/0", line=10, attributes={module: "lm.TinyLM"})
    stack = (f"{MODEL_FILE}:34 in forward",)
    block = FakeCompile(
        "1/0",
        line=30,
        start_ms=1000,
        graph_breaks=(GraphBreak("one reason", "k", stack),),
        attributes={module: "lm.Block"},
    )
    failed = dataclasses.replace(
        block,
        compile_id="1/1",
        start_ms=2000,
        graph_breaks=(),
        outcome=names.OUTCOME_FAILURE,
        error_type="BackendCompilerFailed",
        error_message="boom",
    )
    base = _write(tmp_path / "base", [tiny])
    new = _write(tmp_path / "new", [tiny, block, failed])
    _, diff = _diff(capsys, str(base), str(new))
    assert [row["function"] for row in diff["functions"]] == ["Block.forward"]
    assert [item["function"] for item in diff["graph_breaks"]["new"]] == ["Block.forward"]
    assert [item["function"] for item in diff["failures"]["new"]] == ["Block.forward"]


def test_a_diff_of_two_runs_fits_every_width_with_names_cut_as_everywhere(tmp_path) -> None:
    """Two runs whose functions (long names, long paths) changed by seconds: at 60, 72,
    80, 100 and 200 columns no line of the terminal diff is longer than the width (the
    counts, then the file, are left out first), and each function is shown as every
    table at that width shows it (``shown_name``), never cut a second time."""
    folder = "/home/someone/projects/a_long_project_name/src/models"
    names_ = ("BertForSequenceClassification (wrapper)", "pool_and_score_the_hidden_states")
    base = [
        FakeCompile(f"{at}/0", function=name, file=f"{folder}/m{at}.py", duration_ms=25_130)
        for at, name in enumerate(names_)
    ]
    new = [
        dataclasses.replace(compile_, duration_ms=6_890, graphs=3, ops_per_graph=40)
        for compile_ in base
    ]
    base_summary, new_summary = (
        read_report([_write(tmp_path / side, compiles)]).summary
        for side, compiles in (("base", base), ("new", new))
    )
    diff = diff_summaries(base_summary, new_summary, min_change=MinChange())
    for columns in (60, 72, 80, 100, 200):
        lines = render_diff(diff, [], width=columns, color=False).splitlines()
        start = lines.index(next(line for line in lines if line.startswith("Functions that")))
        shown = [line.split("  ")[1] for line in lines[start + 2 : start + 4]]
        assert ([line for line in lines if len(line) > columns], sorted(shown)) == (
            [],
            sorted(shown_name(name, columns) for name in names_),
        ), columns
