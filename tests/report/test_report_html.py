"""The HTML page of the report (otel_dynamo.report.render_html), in a real browser too."""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from _report_support import (
    FakeCompile,
    GraphBreak,
    count_color,
    png_pixels,
    request_line,
    run_chromium,
    write_job,
    write_small,
    write_traces,
)

from otel_dynamo.report import Process, load_telemetry, render_html, summarize
from otel_dynamo.report.render.html import timeline as _html_timeline

FRAME_BAR_RGB = (0x3D, 0x6F, 0xB5)
"""Colour of frame-compile bars on the timeline (COLORS[0] in the page's script)."""


def _page(*paths: Path) -> str:
    telemetry = load_telemetry(paths)
    return render_html(telemetry, summarize(telemetry))


def _data(page: str) -> dict[str, Any]:
    match = re.search(
        r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S
    )
    assert match is not None
    return json.loads(match.group(1))


def _body_attributes(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """The attributes of <body> in the DOM Chromium dumped."""
    match = re.search(r"<body([^>]*)>", result.stdout)
    assert match is not None, f"no <body> in Chromium's output; stderr: {result.stderr[-2000:]}"
    return {
        key: html.unescape(value)
        for key, value in re.findall(r'([\w-]+)="([^"]*)"', match.group(1))
    }


def test_page_loads_nothing_from_outside(tmp_path: Path) -> None:
    """No external scripts, styles, fonts, images or links: one self-contained file."""
    page = _page(write_small(tmp_path))
    found = re.findall(r"https?://|\bsrc\s*=|<link\b|@import|url\(", page)
    assert found == []


def test_page_embeds_every_table_of_each_process(tmp_path: Path) -> None:
    """Each process carries the twelve tables, compile rows included."""
    (process,) = _data(_page(write_small(tmp_path)))["processes"]
    assert [(t["title"], len(t["rows"])) for t in process["tables"]] == [
        ("Frame compiles", 4),
        ("Graph breaks", 2),
        ("Recompiles", 1),
        ("Recompile limit: code close to or at it", 0),
        ("Slowest compiles (frame + lazy backward; the parts add up)", 4),
        ("Failures", 1),
        ("Compiles that never finished", 0),
        ("Injected faults", 0),
        ("Accuracy checks", 0),
        ("Device time of recorded runs, by graph", 0),
        ("CUDA graphs: 0 of 0 graphs graphed; skips", 0),
        ("Compile cache bypasses", 0),
    ]


def test_compile_row_cells_are_formatted(tmp_path: Path) -> None:
    """A compile row holds formatted cells, the outcome with its CSS class."""
    (process,) = _data(_page(write_small(tmp_path)))["processes"]
    assert process["tables"][0]["rows"][0] == [
        "0/0",
        "forward",
        "project/model.py:10",
        ["success", "ok"],
        "100.0 ms",
        "1",
        "12",
        "8",
        "-",
    ]


def test_timeline_holds_all_compile_and_run_spans(tmp_path: Path) -> None:
    """One lane for the process with its 34 spans; frames at row 0, runs on the last row."""
    timeline = _data(_page(write_small(tmp_path)))["timeline"]
    (lane,) = timeline["lanes"]
    assert (timeline["shown"], timeline["total"], lane["count"], lane["rows"], lane["run_row"]) == (
        34,
        34,
        34,
        7,
        6,
    )


def test_timeline_starts_are_deltas_in_microseconds(tmp_path: Path) -> None:
    """Decoded starts of frame bars are the compiles' start offsets (0, 1, 2, 3 s)."""
    (lane,) = _data(_page(write_small(tmp_path)))["timeline"]["lanes"]
    starts, total = [], 0
    for delta, kind in zip(lane["ds"], lane["k"], strict=True):
        total += delta
        if kind in (
            _html_timeline.KIND_FRAME,
            _html_timeline.KIND_FRAME + _html_timeline.ERROR_FLAG,
        ):
            starts.append(total)
    assert starts == [0, 1_000_000, 2_000_000, 3_000_000]


def test_timeline_marks_failed_frames(tmp_path: Path) -> None:
    """The failed frame's bar carries the error flag."""
    (lane,) = _data(_page(write_small(tmp_path)))["timeline"]["lanes"]
    flagged = [lane["compiles"][c] for c, k in zip(lane["c"], lane["k"], strict=True) if k == 8]
    assert flagged == ["1/0 helper"]


def test_timeline_keeps_frames_and_runs_when_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over the span limit, deeper spans go first: 4 frames and 2 runs stay."""
    monkeypatch.setattr(_html_timeline, "MAX_TIMELINE_SPANS", 6)
    timeline = _data(_page(write_small(tmp_path)))["timeline"]
    (lane,) = timeline["lanes"]
    assert (timeline["shown"], timeline["total"], sorted(lane["k"])) == (6, 34, [0, 0, 0, 4, 4, 8])


def _cut_after_each_part(parts: list[list[list[int]]], limit: int) -> list[list[int]]:
    """The cut as a sort of every held bar after each part: bars from the first priority
    that does not fit whole are dropped (the lanes' priorities, in order)."""
    lanes: list[list[int]] = []
    for part in parts:
        lanes += [list(lane) for lane in part]
        held = sorted(priority for lane in lanes for priority in lane)
        if len(held) > limit:
            lanes = [[p for p in lane if p < held[limit]] for lane in lanes]
    return lanes


def test_timeline_cut_as_parts_arrive_equals_sorting_everything_each_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Parts of several lanes added one by one, some of them alone over the limit: the
    bars kept are exactly those a sort of every held bar after each part keeps, lane by
    lane and in order."""
    monkeypatch.setattr(_html_timeline, "MAX_TIMELINE_SPANS", 10)
    parts = [
        [[0, 2, 2, 3], [0, 1]],
        [[0, 3, 3, 3, 3]],
        [[0, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4]],
        [[0, 4], [0]],
        [[1, 1, 1]],
        [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0]],
    ]
    builder = _html_timeline.TimelineBuilder()
    for index, part in enumerate(parts):
        lanes = [
            (
                Process(key=("rank", "", f"{index}-{lane_index}"), label=f"{index}-{lane_index}"),
                _html_timeline.LaneBars.of(
                    _html_timeline._Bar(0, 1, 0, 0, priority, "", "") for priority in lane
                ),
            )
            for lane_index, lane in enumerate(part)
        ]
        builder.extend(_html_timeline.TimelinePart(lanes=lanes, total=sum(map(len, part))))
    held = [  # in the order the bars were placed
        [priority for _, priority in sorted(zip(bars.index, bars.priority, strict=True))]
        for bars in builder._bars.values()
    ]
    assert held == _cut_after_each_part(parts, 10)
    assert sum(map(len, held)) <= 10


def test_overlapping_siblings_get_their_own_rows(tmp_path: Path) -> None:
    """A graph span beside a phase span of the same time range is drawn one row lower."""
    frame = {"spanId": "f", "name": "torch.compile.frame", "endTimeUnixNano": "9000"}
    spans = [
        frame,
        {
            "spanId": "p",
            "parentSpanId": "f",
            "name": "torch.compile.phase x",
            "startTimeUnixNano": "1000",
            "endTimeUnixNano": "8000",
        },
        {
            "spanId": "g",
            "parentSpanId": "f",
            "name": "torch.compile.graph",
            "startTimeUnixNano": "2000",
            "endTimeUnixNano": "7000",
        },
    ]
    path = tmp_path / "t.jsonl"
    path.write_text(request_line(*spans))
    (lane,) = _data(_page(path))["timeline"]["lanes"]
    assert sorted(zip(lane["k"], lane["y"], strict=True)) == [(0, 0), (1, 1), (2, 2)]


def test_data_cannot_close_the_script_element(tmp_path: Path) -> None:
    """A reason holding "</script>" stays data: escaped in the page, intact once parsed."""
    evil = "</script><script>alert(1)</script>"
    compile_ = FakeCompile("0/0", graph_breaks=(GraphBreak(evil),))
    page = _page(write_traces(tmp_path / "t.jsonl", [compile_]))
    (process,) = _data(page)["processes"]
    assert (evil in page, process["tables"][1]["rows"][0][1]) == (False, evil)


def test_input_problems_are_listed_on_the_page(tmp_path: Path) -> None:
    """Problems found while reading are shown, escaped, at the top of the page."""
    write_small(tmp_path)
    (tmp_path / "bad.jsonl").write_text("<oops>\n")
    page = _page(tmp_path)
    assert f"<li>{tmp_path}/bad.jsonl:1: truncated or corrupt JSON line" in page


def test_placeholder_text_in_input_stays_text(tmp_path: Path) -> None:
    """A path named "missing-@SCRIPT@.jsonl" is listed as it is; the script is in the page
    once, not pasted into the problems list."""
    write_small(tmp_path)
    telemetry = load_telemetry([tmp_path, tmp_path / "missing-@SCRIPT@.jsonl"])
    page = render_html(telemetry, summarize(telemetry))
    assert "missing-@SCRIPT@.jsonl: " in page
    assert page.count("function") == _page(tmp_path).count("function")


@pytest.mark.slow
def test_malformed_filter_in_the_url_does_not_stop_the_page(tmp_path: Path, chromium: str) -> None:
    """#filter=%E0%A4%A (a broken escape): the timeline is still drawn and the page ready."""
    write_job(tmp_path / "job", ranks=1, compiles_per_rank=5)
    (tmp_path / "r.html").write_text(_page(tmp_path / "job"), encoding="utf-8")
    url = (tmp_path / "r.html").as_uri() + "#filter=%E0%A4%A"
    body = _body_attributes(run_chromium(chromium, tmp_path / "profile", url, "--dump-dom"))
    assert body.get("data-ready") == "1"
    assert int(body.get("data-timeline-bars", "0")) > 0


@pytest.mark.slow
def test_page_renders_timeline_and_tables_in_headless_chromium(
    tmp_path: Path, chromium: str
) -> None:
    """In Chromium the script draws every bar and every row and marks <body> as ready."""
    write_job(tmp_path / "job", ranks=2, compiles_per_rank=20, diverging_rank=1, diverge_at=5)
    (tmp_path / "r.html").write_text(_page(tmp_path / "job"), encoding="utf-8")
    url = (tmp_path / "r.html").as_uri()
    body = _body_attributes(run_chromium(chromium, tmp_path / "profile", url, "--dump-dom"))
    # 2 ranks x 20 compiles x 10 spans, plus the 4 spans of rank 1's extra graph; tables:
    # per rank 20 compiles + 1 graph break + 5 slowest, plus the 2 rows of the ranks table.
    assert (
        body.get("data-ready"),
        body.get("data-timeline-bars"),
        body.get("data-table-rows"),
        body.get("data-visible-rows"),
    ) == ("1", "404", "54", "54")


@pytest.mark.slow
def test_filter_from_the_url_hides_other_rows_in_chromium(tmp_path: Path, chromium: str) -> None:
    """#filter=block_3 leaves only the two compile rows of block_3 (one per rank)."""
    write_job(tmp_path / "job", ranks=2, compiles_per_rank=20)
    (tmp_path / "r.html").write_text(_page(tmp_path / "job"), encoding="utf-8")
    url = (tmp_path / "r.html").as_uri() + "#filter=block_3"
    body = _body_attributes(run_chromium(chromium, tmp_path / "profile", url, "--dump-dom"))
    assert (body.get("data-table-rows"), body.get("data-visible-rows")) == ("54", "2")


@pytest.mark.slow
def test_screenshot_shows_the_timeline(tmp_path: Path, chromium: str) -> None:
    """A screenshot is a non-blank PNG in which the frame-compile bars are visible (below
    where compile time went and why it recompiled and broke)."""
    write_job(tmp_path / "job", ranks=2, compiles_per_rank=20)
    (tmp_path / "r.html").write_text(_page(tmp_path / "job"), encoding="utf-8")
    shot = tmp_path / "shot.png"
    result = run_chromium(
        chromium,
        tmp_path / "profile",
        (tmp_path / "r.html").as_uri(),
        f"--screenshot={shot}",
        "--window-size=1200,1600",
        "--hide-scrollbars",
    )
    assert shot.exists(), f"no screenshot; Chromium stderr: {result.stderr[-2000:]}"
    width, height, rows = png_pixels(shot)
    colors = {row[x : x + 3] for row in rows[::10] for x in range(0, len(row), 30)}
    assert (width, height, len(colors) > 20, count_color(rows, FRAME_BAR_RGB) > 2000) == (
        1200,
        1600,
        True,
        True,
    )


def _two_stacks_one_reason(tmp_path: Path) -> Path:
    """Three breaks of one reason: twice from one call site, once from another."""
    stacks = [
        (f"/src/train.py:{line} in main", "/src/model.py:20 in forward") for line in (40, 40, 41)
    ]
    breaks = tuple(GraphBreak("one reason", "k", stack) for stack in stacks)
    return write_traces(tmp_path / "t.jsonl", [FakeCompile("0/0", graph_breaks=breaks)])


def test_graph_break_heading_counts_breaks_not_rows(tmp_path: Path) -> None:
    """The graph-break table counts breaks (3, as the summary), not rows (2 stacks)."""
    (process,) = _data(_page(_two_stacks_one_reason(tmp_path)))["processes"]
    table = next(t for t in process["tables"] if t["title"] == "Graph breaks")
    assert (table["count"], len(table["rows"])) == (3, 2)
    assert [row[0] for row in table["rows"]] == ["2", "1"]


def test_each_graph_break_row_lists_exactly_its_own_compile_ids(tmp_path: Path) -> None:
    """One reason, two call sites: compiles 0/0 and 2/0 broke at the first, 1/0 at the
    second; each row lists the compile ids of its own breaks, and only those."""
    first = ("/src/train.py:40 in main", "/src/model.py:20 in forward")
    second = ("/src/train.py:41 in main", "/src/model.py:20 in forward")
    compiles = [
        FakeCompile(compile_id, start_ms=start, graph_breaks=(GraphBreak("one reason", "k", at),))
        for compile_id, start, at in (
            ("0/0", 0, first),
            ("1/0", 1000, second),
            ("2/0", 2000, first),
        )
    ]
    (process,) = _data(_page(write_traces(tmp_path / "t.jsonl", compiles)))["processes"]
    table = next(t for t in process["tables"] if t["title"] == "Graph breaks")
    assert [(row[0], row[4]) for row in table["rows"]] == [("2", "0/0, 2/0"), ("1", "1/0")]


def test_graph_break_heading_shows_the_break_count_in_chromium(
    tmp_path: Path, chromium: str
) -> None:
    """Drawn by the page's script: the heading reads "Graph breaks (3)"."""
    (tmp_path / "r.html").write_text(_page(_two_stacks_one_reason(tmp_path)), encoding="utf-8")
    url = (tmp_path / "r.html").as_uri()
    dom = run_chromium(chromium, tmp_path / "profile", url, "--dump-dom").stdout
    assert "<h3>Graph breaks (3)</h3>" in dom


@pytest.mark.slow
def test_the_page_says_what_the_ops_column_counts(tmp_path: Path, chromium: str) -> None:
    """In Chromium the frame-compile table is followed by the note on what ops counts."""
    write_job(tmp_path / "job", ranks=1, compiles_per_rank=3)
    (tmp_path / "r.html").write_text(_page(tmp_path / "job"), encoding="utf-8")
    dom = run_chromium(chromium, tmp_path / "profile", (tmp_path / "r.html").as_uri(), "--dump-dom")
    notes = re.findall(r'<p class="note">([^<]*)</p>', dom.stdout)
    assert [note for note in notes if note.startswith("ops: ")] == [
        "ops: call_function, call_method and call_module nodes, every compile summed "
        "(torch._dynamo.explain's op_count: call_function nodes only)"
    ]


def test_empty_sections_fold_into_one_line_in_chromium(tmp_path: Path, chromium: str) -> None:
    """One compile with nothing else: the tables with rows are drawn with headings; every
    table without rows is named once, on the line that ends the process's section, and
    has no heading of its own."""
    path = write_traces(tmp_path / "t.jsonl", [FakeCompile("0/0")])
    page = _page(path)
    (process,) = _data(page)["processes"]
    empty = [t["title"] for t in process["tables"] if not t["rows"]]
    assert empty  # recompiles, graph breaks, failures, ... had nothing
    (tmp_path / "r.html").write_text(page, encoding="utf-8")
    url = (tmp_path / "r.html").as_uri()
    dom = run_chromium(chromium, tmp_path / "profile", url, "--dump-dom").stdout
    headings = re.findall(r"<h3>([^<(]*) \(\d+\)</h3>", dom)
    assert not set(headings) & set(empty)
    assert "Frame compiles" in headings
    folded = re.findall(r'<p class="empty">([^<]*)</p>', dom)
    assert folded == ["None recorded: " + ", ".join(title.lower() for title in empty)]


WORDS_BROKEN_SCRIPT = """<script>
(function () {
  var broken = [];
  document.querySelectorAll("td, th").forEach(function (cell) {
    var walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (var node = walker.nextNode(); node; node = walker.nextNode()) {
      var pattern = /\\S+/g, found;
      while ((found = pattern.exec(node.data)) !== null) {
        var range = document.createRange();
        range.setStart(node, found.index);
        range.setEnd(node, found.index + found[0].length);
        var tops = {};
        Array.prototype.forEach.call(range.getClientRects(), function (r) {
          if (r.width > 0) tops[Math.round(r.top)] = true;
        });
        if (Object.keys(tops).length > 1) broken.push(found[0]);
      }
    }
  });
  document.body.dataset.brokenWords = broken.slice(0, 5).join(" | ") || "none";
})();
</script>"""
"""Appended to a copy of the page by the test: names the words drawn across two lines."""


@pytest.mark.slow
def test_no_word_is_broken_across_lines_in_a_900_pixel_window(
    tmp_path: Path, chromium: str
) -> None:
    """At 900 px, long function names, locations and reasons keep every word whole: a
    table too wide for the window scrolls instead of breaking words."""
    long_file = "/home/someone/projects/job/yourjob_with_a_long_module_name.py"
    compiles = [
        FakeCompile(
            f"{index}/0",
            function=f"torch_dynamo_resume_in_forward_at_{50 + index}",
            file=long_file,
            line=50 + index,
            start_ms=index * 1000,
            recompile_reason="tensor 'L['self']._modules['embedding']._parameters['weight']' "
            "dtype mismatch. expected Float, actual Double",
            graph_breaks=(
                GraphBreak(
                    "Data-dependent branching on a tensor's value inside forward",
                    "k",
                    (f"{long_file}:{50 + index} in forward",),
                ),
            ),
        )
        for index in range(3)
    ]
    page = _page(write_traces(tmp_path / "t.jsonl", compiles))
    (tmp_path / "r.html").write_text(
        page.replace("</body>", WORDS_BROKEN_SCRIPT + "</body>"), encoding="utf-8"
    )
    result = run_chromium(
        chromium,
        tmp_path / "profile",
        (tmp_path / "r.html").as_uri(),
        "--dump-dom",
        "--window-size=900,1600",
    )
    assert _body_attributes(result).get("data-broken-words") == "none"


def test_times_past_64_bits_are_kept_exact_on_the_timeline(tmp_path: Path) -> None:
    """A frame span ending at the largest time OTLP holds (2**64 - 1 ns: past a signed
    64-bit column) is drawn with its exact duration; ordinary times fit 64-bit columns."""
    end = (1 << 64) - 1
    start = end - 5_000_000
    path = tmp_path / "traces-1.jsonl"
    path.write_text(
        request_line(
            {
                "spanId": "f",
                "name": "torch.compile.frame",
                "startTimeUnixNano": str(start),
                "endTimeUnixNano": str(end),
            }
        )
    )
    timeline = _html_timeline.timeline_data(load_telemetry([path]))
    (lane,) = timeline["lanes"]
    ordinary = _html_timeline.LaneBars.of([(1, 2, 0, 0, 0, "", "")])
    assert (
        timeline["origin_unix_nano"],
        lane["d"],
        type(ordinary.start_ns).__name__,
    ) == (start, [5000], "array")
