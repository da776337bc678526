"""Plain-text tables that fit a given width, with optional ANSI colour per cell.

Fixed columns keep their natural width; flexible ones (names, paths, reasons) share
what is left and are cut with an ellipsis, except wrapping ones (reasons, errors), whose
cells continue on the next lines instead. Colour is applied after padding, so escape codes
never count towards the width.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from collections.abc import Sequence
from typing import TypedDict

ELLIPSIS = "…"
NO_BREAK_SPACE = "\u00a0"
"""Binds words a wrapped cell must not split ("10.0 ms"); written as a plain space."""
COLUMN_GAP = "  "
MIN_FLEXIBLE_WIDTH = 8
MAX_FIXED_WIDTH = 24
MIN_WRAP_WIDTH = 40
MIN_SECONDARY_WIDTH = 16
"""How narrow a flexible column gets for a table's primary column (a function name, a
path cut at its start still reads at this width)."""
"""A wrapping column gives up width to the others only down to this."""
_WHITESPACE = re.compile(r"[ \t\n\r\f\v]+")
MAX_WRAPPED_LINES = 8
WORD_SCAN_PER_LINE = 200
"""Characters of a wrapping cell read per shown line for its longest word."""
"""A wrapped cell longer than this many lines ends in an ellipsis."""

_ANSI = {
    "bold": "1",
    "dim": "2",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "cyan": "36",
    "red_bold": "1;31",
}


@dataclasses.dataclass(frozen=True)
class Column:
    """A table column: its header, alignment, and whether it absorbs spare width."""

    header: str
    right: bool = False
    flexible: bool = False
    cut_left: bool = False
    """Cut long cells at the start (paths: the file name and line matter most)."""
    wrap: bool = False
    """Flexible, and long cells continue on the next lines instead of being cut."""
    primary: bool = False
    """What the table is for (a reason): the other flexible columns give up width, down
    to MIN_SECONDARY_WIDTH, before it does."""


@dataclasses.dataclass(frozen=True)
class Cell:
    """A cell's text and the style it is painted in on a colour terminal."""

    text: str
    style: str | None = None


CellLike = Cell | str


def paint(text: str, style: str | None, *, color: bool) -> str:
    """``text`` wrapped in the ANSI codes of ``style`` (a key of _ANSI) when ``color``."""
    if not color or style is None or not text:
        return text
    return f"\033[{_ANSI[style]}m{text}\033[0m"


def truncate(text: str, width: int, *, left: bool = False) -> str:
    """``text`` cut to ``width`` characters, the cut marked with an ellipsis."""
    if len(text) <= width:
        return text
    if width <= 0:
        return ""
    kept = width - 1
    return ELLIPSIS + text[len(text) - kept :] if left else text[:kept] + ELLIPSIS


def format_table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[CellLike]],
    *,
    width: int,
    color: bool,
    indent: int = 2,
) -> list[str]:
    """The header line and one line per row (more where a wrapping cell is long), each at
    most ``width`` characters."""
    cells = [[_cell(value) for value in row] for row in rows]
    widths = _column_widths(columns, cells, width - indent)
    header = [Cell(column.header, "bold") for column in columns]
    return [
        " " * indent + line
        for row in [header, *cells]
        for line in _lines(columns, widths, row, color=color)
    ]


def wrapped(text: str, width: int) -> list[str]:
    """``text`` on lines of at most ``width`` characters (words kept whole where they fit),
    at most MAX_WRAPPED_LINES of them, the last ending in an ellipsis if text was left."""
    lines = _first_lines(text, max(width, 1)) or [""]
    if len(lines) > MAX_WRAPPED_LINES:
        lines = lines[:MAX_WRAPPED_LINES]
        lines[-1] = _ending(lines[-1], width)
    return [line.replace(NO_BREAK_SPACE, " ") for line in lines]


def _first_lines(text: str, width: int) -> list[str]:
    """``text`` on one line wrapped; where that makes more than MAX_WRAPPED_LINES + 1
    lines, at least that many, the first MAX_WRAPPED_LINES of them the same: only the start
    of a long text is read (a 50 MB cell costs what a short one does).

    Lines break between words only; a single word longer than the column (a long guard
    source, a path) is the one thing split, as it could not be shown whole anyway."""
    # A line holds at most width characters and the space after it (more where runs of
    # white space, or no-break spaces at its ends, are dropped): this much text usually
    # makes enough lines, and twice as much is tried until it does.
    size = (MAX_WRAPPED_LINES + 3) * (width + 1)
    while True:
        whole = size >= len(text)
        # no-break spaces stay: they bind words
        flat = _WHITESPACE.sub(" ", text if whole else text[:size]).strip()
        lines = textwrap.wrap(flat, width, break_on_hyphens=False)
        # Two lines past those shown: the word cut at ``size`` cannot change them.
        if whole or len(lines) > MAX_WRAPPED_LINES + 1:
            return lines
        size *= 2


def _ending(line: str, width: int) -> str:
    """The last shown line of a cut cell: its whole words that leave room for " …"."""
    while len(line) + 2 > width and " " in line:
        line = line.rsplit(" ", 1)[0]
    return truncate(f"{line} {ELLIPSIS}", width)


def _cell(value: CellLike) -> Cell:
    return value if isinstance(value, Cell) else Cell(value)


def _column_widths(columns: Sequence[Column], rows: list[list[Cell]], width: int) -> list[int]:
    natural = [
        max([len(column.header)] + [len(row[index].text) for row in rows])
        for index, column in enumerate(columns)
    ]
    widths = [
        natural[index] if _flexible(column) else min(natural[index], MAX_FIXED_WIDTH)
        for index, column in enumerate(columns)
    ]
    spare = width - len(COLUMN_GAP) * (len(columns) - 1) - sum(widths)
    wrapping = [index for index, column in enumerate(columns) if column.wrap]
    flexible = [index for index, column in enumerate(columns) if _flexible(column)]
    if spare < 0 and any(column.primary for column in columns):
        secondary = [index for index in flexible if not columns[index].primary]
        spare += _shrink(widths, secondary, -spare, floor=MIN_SECONDARY_WIDTH)
    if spare < 0 and wrapping:  # a wrapping cell loses nothing by being narrower...
        floors = {index: _word_floor(rows, index, widths[index]) for index in wrapping}
        for floor in sorted(set(floors.values()), reverse=True):
            same = [index for index in wrapping if floors[index] == floor]
            spare += _shrink(widths, same, -spare, floor=floor) if spare < 0 else 0
    cut = [index for index in flexible if not columns[index].wrap]
    if spare < 0 and cut:  # ...down to its longest word: the cut cells give up width first
        spare += _shrink(widths, cut, -spare, floor=MIN_FLEXIBLE_WIDTH)
    if spare < 0 and wrapping:  # then words split, as nothing else is left
        spare += _shrink(widths, wrapping, -spare, floor=MIN_WRAP_WIDTH)
    if spare < 0 and flexible:
        _shrink(widths, flexible, -spare, floor=MIN_FLEXIBLE_WIDTH)
    return widths


def _word_floor(rows: list[list[Cell]], index: int, width: int) -> int:
    """How narrow a wrapping column can be with no word of its shown lines split: its
    longest word (never under MIN_WRAP_WIDTH, never over its current ``width``). Only the
    start of each cell is read, as only that is shown."""
    longest = max(
        (
            len(word)
            for row in rows
            for word in row[index].text[: MAX_WRAPPED_LINES * WORD_SCAN_PER_LINE].split()
        ),
        default=0,
    )
    return min(max(longest, MIN_WRAP_WIDTH), width)


def _flexible(column: Column) -> bool:
    return column.flexible or column.wrap


def _shrink(widths: list[int], flexible: list[int], excess: int, *, floor: int) -> int:
    """Take up to ``excess`` characters from the widest of ``flexible`` first, none below
    ``floor``; returns how many were taken.

    Computed, not taken one at a time (a 50 MB cell would be 50 million passes): the
    widest columns come down to one level, and what is left to take comes one character
    each off the first columns at that level, as taking from the widest would leave them.
    """
    wider = sorted((widths[index] for index in flexible if widths[index] > floor), reverse=True)
    taken = min(excess, sum(wider) - floor * len(wider))
    if taken <= 0:
        return 0
    level, total = floor, 0
    for count, width in enumerate(wider, start=1):
        # The lowest level the widest ``count`` columns can share without taking more
        # than ``taken``; the answer where that is above the next column's width.
        total += width
        level = -(-(total - taken) // count)
        if level > (wider[count] if count < len(wider) else floor):
            break
    level = max(level, floor)
    left = taken - sum(max(widths[index] - level, 0) for index in flexible)
    for index in flexible:
        widths[index] = min(widths[index], level)
        if left and widths[index] == level:
            widths[index] -= 1
            left -= 1
    return taken


def _lines(
    columns: Sequence[Column], widths: list[int], row: list[Cell], *, color: bool
) -> list[str]:
    texts = [
        wrapped(cell.text, column_width)
        if column.wrap
        else [truncate(_WHITESPACE.sub(" ", cell.text), column_width, left=column.cut_left)]
        for column, column_width, cell in zip(columns, widths, row, strict=True)
    ]
    height = max(len(lines) for lines in texts)
    return [
        _line(
            columns,
            widths,
            row,
            [lines[at] if at < len(lines) else "" for lines in texts],
            color=color,
        )
        for at in range(height)
    ]


def _line(
    columns: Sequence[Column],
    widths: list[int],
    row: list[Cell],
    texts: list[str],
    *,
    color: bool,
) -> str:
    parts = []
    for column, column_width, cell, text in zip(columns, widths, row, texts, strict=True):
        padded = text.rjust(column_width) if column.right else text.ljust(column_width)
        parts.append(paint(padded, cell.style, color=color))
    return COLUMN_GAP.join(parts).rstrip()


PageCell = str | Sequence[str]
"""A cell of a page table: its text, [text, css class] or [text, css class, hover text]."""


class _PageTableOptions(TypedDict, total=False):
    count: int
    """The number the heading shows, where it is not the number of rows."""
    note: str
    """A line under the table saying what a column counts."""


class PageTable(_PageTableOptions):
    """A table of the HTML page, as data the page's script turns into a <table>."""

    title: str
    columns: list[str]
    right: list[int]
    rows: list[list[PageCell]]
