"""Plain-text tables that fit a given width, with optional ANSI colour per cell.

Fixed columns keep their natural width; flexible ones (names, paths, reasons) share
what is left and are cut with an ellipsis. Colour is applied after padding, so escape
codes never count towards the width.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

ELLIPSIS = "…"
COLUMN_GAP = "  "
MIN_FLEXIBLE_WIDTH = 8
MAX_FIXED_WIDTH = 24

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
    """The header line and one line per row, each at most ``width`` characters."""
    cells = [[_cell(value) for value in row] for row in rows]
    widths = _column_widths(columns, cells, width - indent)
    header = [Cell(column.header, "bold") for column in columns]
    return [" " * indent + _line(columns, widths, row, color=color) for row in [header, *cells]]


def _cell(value: CellLike) -> Cell:
    return value if isinstance(value, Cell) else Cell(value)


def _column_widths(columns: Sequence[Column], rows: list[list[Cell]], width: int) -> list[int]:
    natural = [
        max([len(column.header)] + [len(row[index].text) for row in rows])
        for index, column in enumerate(columns)
    ]
    widths = [
        natural[index] if column.flexible else min(natural[index], MAX_FIXED_WIDTH)
        for index, column in enumerate(columns)
    ]
    spare = width - len(COLUMN_GAP) * (len(columns) - 1) - sum(widths)
    flexible = [index for index, column in enumerate(columns) if column.flexible]
    if spare < 0 and flexible:
        _shrink(widths, flexible, -spare)
    return widths


def _shrink(widths: list[int], flexible: list[int], excess: int) -> None:
    """Take ``excess`` characters from the widest flexible columns first."""
    while excess > 0:
        widest = max(flexible, key=lambda index: widths[index])
        if widths[widest] <= MIN_FLEXIBLE_WIDTH:
            return
        widths[widest] -= 1
        excess -= 1


def _line(columns: Sequence[Column], widths: list[int], row: list[Cell], *, color: bool) -> str:
    parts = []
    for column, column_width, cell in zip(columns, widths, row, strict=True):
        text = truncate(cell.text, column_width, left=column.cut_left)
        padded = text.rjust(column_width) if column.right else text.ljust(column_width)
        parts.append(paint(padded, cell.style, color=color))
    return COLUMN_GAP.join(parts).rstrip()
