"""A table both the terminal and the page show is defined once (render/shared_tables.py),
made for a terminal's layout or for the page; the page takes the terminal's cells
through one conversion (render/table.page_table)."""

from __future__ import annotations

from pathlib import Path

from _report_support import FakeCompile, write_job, write_traces

from otel_dynamo.report import load_telemetry, summarize
from otel_dynamo.report.render import shared_tables
from otel_dynamo.report.render.format import outcome_cell
from otel_dynamo.report.render.table import Cell, Column, TerminalLayout, page_table
from otel_dynamo.report.summary.schema import ProcessSection, Summary

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
    table = shared_tables.recompiles(_section(tmp_path), None)
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
    table = shared_tables.recompiles(_section(tmp_path), layout)
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
    on_page = shared_tables.compiles(section, None).rows[0][1]
    on_terminal = shared_tables.compiles(section, layout).rows[0][1]
    assert on_page == LONG_FUNCTION
    assert on_terminal == layout.name(LONG_FUNCTION)
    assert on_terminal != LONG_FUNCTION and len(on_terminal) == 16


def test_a_terminal_makes_cells_of_its_shown_rows_only(tmp_path: Path) -> None:
    """A terminal limited to one row makes one frame-compile row (the rest are counted by
    its table); the page makes them all."""
    section = _section(tmp_path)
    assert len(shared_tables.compiles(section, TerminalLayout(limit=1)).rows) == 1
    assert len(shared_tables.compiles(section, None).rows) == 2


def _diverging_ranks(tmp_path: Path) -> Summary:
    """Four ranks of one job; rank 2 traced one graph more at its 18th compile (17/0)."""
    write_job(tmp_path, ranks=4, compiles_per_rank=30, diverging_rank=2, diverge_at=17)
    return summarize(load_telemetry([tmp_path]))


def test_the_page_says_how_a_rank_diverges_in_a_column_of_its_own(tmp_path: Path) -> None:
    """On the page the ranks keep their order; the diverging rank's count is marked bad
    and its last cell says what diverges and where first."""
    table = page_table("Ranks", *shared_tables.ranks(_diverging_ranks(tmp_path), None))
    assert table["columns"][-1] == "diverges"
    assert [row[0] for row in table["rows"]] == ["rank 0", "rank 1", "rank 2", "rank 3"]
    assert table["rows"][2][2] == ["31", "bad"]
    assert table["rows"][2][-1] == ["DIVERGES: graphs (first at 17/0)", "bad"]
    assert table["rows"][0][-1] == ""


def test_a_cut_terminal_table_shows_a_diverging_rank_first_marked(tmp_path: Path) -> None:
    """A terminal showing two rows puts the diverging rank first, its count marked with
    a "!" (colour may be off), and has no column for how it diverges (a line says it)."""
    table = shared_tables.ranks(_diverging_ranks(tmp_path), TerminalLayout(limit=2))
    assert [column.header for column in table.columns][-1] == "compile time"
    assert table.rows[0][0] == Cell("rank 2", "red_bold")
    assert table.rows[0][2] == Cell("31 !", "red_bold")


def test_an_outcome_of_no_style_is_plain_text_on_the_page() -> None:
    """An outcome with no style (interrupted, or one this version does not know: written
    by a newer one) is its text alone on the page; a styled one has its meaning's class."""
    outcomes = ["exploded", "interrupted", "failure", "no_graph", "success"]
    table = page_table("T", [Column("outcome")], [[outcome_cell(each)] for each in outcomes])
    assert table["rows"] == [
        ["exploded"], ["interrupted"], [["failure", "bad"]], [["no_graph", "warn"]],
        [["success", "ok"]],
    ]  # fmt: skip
