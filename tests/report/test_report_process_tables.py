"""A table both the terminal and the page show is defined once (render/process_tables.py),
made for a terminal's layout or for the page; the page takes the terminal's cells
through one conversion (render/table.page_table)."""

from __future__ import annotations

from pathlib import Path

from _report_support import FakeCompile, write_traces

from otel_dynamo.report import load_telemetry, summarize
from otel_dynamo.report.render import process_tables
from otel_dynamo.report.render.table import Cell, Column, TerminalLayout, page_table
from otel_dynamo.report.summary.schema import ProcessSection

SIZE_GUARD = "tensor 'x' size mismatch at index 0. expected 2, actual 4"
LONG_FUNCTION = "torch_dynamo_resume_in_a_rather_long_function_name_at_120"


def _section(tmp_path: Path) -> ProcessSection:
    """One process: a first compile of a long-named function, then its recompile on a
    changed size."""
    write_traces(
        tmp_path / "traces.jsonl",
        [
            FakeCompile("0/0", function=LONG_FUNCTION),
            FakeCompile(
                "0/1", function=LONG_FUNCTION, start_ms=500, cache_size=1,
                recompile_reason=SIZE_GUARD,
            ),
        ],
    )  # fmt: skip
    telemetry = load_telemetry([tmp_path])
    return summarize(telemetry)["processes"][0]


def test_each_terminal_style_becomes_the_page_class_of_its_meaning() -> None:
    """green is ok, red and red_bold are bad, yellow is warn; a dimmed or plain cell is
    its text alone; a cell with a hover text is [text, class or "", hover text]."""
    columns = [Column(header) for header in "abcdefg"]
    row = [
        Cell("x", "green"), Cell("x", "red"), Cell("x", "red_bold"), Cell("x", "yellow"),
        Cell("x", "dim"), "x", Cell("words", hover="guard"),
    ]  # fmt: skip
    table = page_table("T", columns, [row])
    assert table["rows"] == [
        [["x", "ok"], ["x", "bad"], ["x", "bad"], ["x", "warn"], "x", "x", ["words", "", "guard"]]
    ]


def test_the_page_right_aligns_the_columns_the_terminal_does() -> None:
    """A page table's ``right`` lists the indices of the right-aligned columns, in order."""
    columns = [Column("id"), Column("count", right=True), Column("name"), Column("s", right=True)]
    table = page_table("T", columns, [])
    assert (table["title"], table["columns"], table["right"]) == (
        "T",
        ["id", "count", "name", "s"],
        [1, 3],
    )


def test_a_recompile_reason_shows_its_guard_on_hover_on_the_page(tmp_path: Path) -> None:
    """The page's recompile row has the plain reason, Dynamo's guard as its hover text,
    and no row of its own for the guard."""
    table = process_tables.recompiles(_section(tmp_path), None)
    assert [column.header for column in table.columns] == [
        "id", "function", "location", "cache size", "calls", "reason",
    ]  # fmt: skip
    assert len(table.rows) == 1
    reason = table.rows[0][-1]
    assert isinstance(reason, Cell)
    assert reason.hover == SIZE_GUARD
    assert reason.text != SIZE_GUARD and reason.text.startswith("input x")


def test_a_recompile_reason_shows_its_guard_on_a_dim_line_on_the_terminal(
    tmp_path: Path,
) -> None:
    """The terminal's recompile row has the plain reason; the guard follows on a row of
    its own, dimmed, every other cell of it empty."""
    layout = TerminalLayout(width=100)
    table = process_tables.recompiles(_section(tmp_path), layout)
    assert table.columns[3].header == "cache"
    assert len(table.rows) == 2
    reason, guard = table.rows[0][-1], table.rows[1]
    assert isinstance(reason, str) and reason.startswith("input x")
    assert guard[:-1] == ["", "", "", ""]
    assert guard[-1] == Cell(f"guard: {SIZE_GUARD}", "dim")


def test_names_are_cut_on_the_terminal_and_whole_on_the_page(tmp_path: Path) -> None:
    """One name per function: the page shows it whole, a terminal cuts it to its one
    width (``TerminalLayout.name``) in the same table."""
    section = _section(tmp_path)
    layout = TerminalLayout(width=60)
    on_page = process_tables.compiles(section, None).rows[0][1]
    on_terminal = process_tables.compiles(section, layout).rows[0][1]
    assert on_page == LONG_FUNCTION
    assert on_terminal == layout.name(LONG_FUNCTION)
    assert on_terminal != LONG_FUNCTION and len(on_terminal) == 16


def test_a_terminal_makes_cells_of_its_shown_rows_only(tmp_path: Path) -> None:
    """A terminal limited to one row makes one frame-compile row (the rest are counted by
    its table); the page makes them all."""
    section = _section(tmp_path)
    assert len(process_tables.compiles(section, TerminalLayout(limit=1)).rows) == 1
    assert len(process_tables.compiles(section, None).rows) == 2
