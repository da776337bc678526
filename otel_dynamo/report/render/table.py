"""Plain-text tables that fit a given width, with optional ANSI colour per cell; the
terminal report's layout (``TerminalLayout``: its width, colour and rows per table); and
the same cells as the page's tables take them (``page_table``).

Columns get the width their content needs before anything is cut. Where a table is
wider than the terminal, wrapping columns (reasons, errors) give up width first, down to
their longest unbreakable piece (their cells only take more lines); then flexible ones
(paths) are cut with an ellipsis, down to MIN_SECONDARY_WIDTH; then optional columns are
left out; then flexible ones are cut further, and wrapping ones below their longest
piece (a piece that no longer fits is cut, never split). Whole columns (function names,
cut beforehand to one width everywhere) give up width last. Text wraps at spaces, and a
word longer than its line at the separators of a path or a name (after ``.`` and
``/``, before ``[`` and ``(``), never inside an identifier. Colour is applied after
padding, so escape codes never count towards the width.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple, TypedDict, TypeVar

_Row = TypeVar("_Row")

ELLIPSIS = "…"
NO_BREAK_SPACE = "\u00a0"
"""Binds words a wrapped cell must not split ("10.0 ms"); written as a plain space."""
COLUMN_GAP = "  "
MIN_FLEXIBLE_WIDTH = 8
MAX_FIXED_WIDTH = 24
MIN_SECONDARY_WIDTH = 16
"""How narrow a flexible column gets before optional columns are left out (a path cut
at its start still reads at this width)."""
MIN_WRAP_WIDTH = 20
"""A wrapping column gives up width to the others only down to this, or its longest
unbreakable piece where that is longer."""
LAST_WRAP_WIDTH = 12
"""How narrow a wrapping column gets when nothing else is left to give."""
MAX_WRAPPED_LINES = 8
"""A wrapped cell longer than this many lines ends in an ellipsis."""
WORD_SCAN_PER_LINE = 200
"""Characters of a wrapping cell read per shown line for its longest piece."""
_WHITESPACE = re.compile(r"[ \t\n\r\f\v]+")
_SEPARATOR = re.compile(
    r"(?<=/)(?=[^/])|(?<=\.)(?=[^\d./])(?!(?:py|pyi|pyc|cpp|cu|h|so|json|jsonl|txt|yaml)\b)"
    r"|(?<=[^\s\[(])(?=[\[(])"
)
"""Where a word longer than its line may break: after a ``/``; after a ``.`` (not inside
a number, not before a file's extension: ``yourjob.py`` is one name); before a ``[`` or
``(``."""

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
    whole: bool = False
    """Cells shown as they are (function names, cut beforehand to the report's one
    width): the column gives up width only when nothing else is left."""
    leave_out: int = 0
    """0: always shown; else left out where the table cannot otherwise fit its width,
    the highest first."""


class Cell(NamedTuple):
    """A cell's text and the style it is painted in on a colour terminal (on the page,
    the class of that style, ``page_table``), and the text the page shows on hover. A
    tuple: a large run's page makes hundreds of thousands."""

    text: str
    style: str | None = None
    hover: str | None = None


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


MIN_NAME_WIDTH = 16
MAX_NAME_WIDTH = 40
"""A terminal report shows a function's name whole up to this many characters."""


def name_width(width: int) -> int:
    """The one width a terminal report ``width`` columns wide cuts function names to, in
    every table (``shown_name``): 16 at 60 columns, 20 at 80, 25 at 100, 40 from 160 (the
    frame-compile table then keeps its counts beside the name and the location)."""
    return max(MIN_NAME_WIDTH, min(MAX_NAME_WIDTH, width // 4))


def shown_name(name: str, width: int) -> str:
    """A function's name as a terminal report ``width`` columns wide shows it in a table:
    whole, or cut in the middle to ``name_width(width)``, so that both its start and its
    end show (``torch_dynamo…forward_at_33``: which function, resumed where)."""
    most = name_width(width)
    if len(name) <= most:
        return name
    head = (most - 1) // 2
    return name[:head] + ELLIPSIS + name[len(name) - (most - 1 - head) :]


def format_table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[CellLike]],
    *,
    width: int,
    color: bool,
    indent: int = 2,
) -> list[str]:
    """The header line and one line per row (more where a wrapping cell is long), each at
    most ``width`` characters where the fixed columns leave room for the others."""
    return fitted_table(columns, rows, width=width, color=color, indent=indent)[0]


def fitted_table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[CellLike]],
    *,
    width: int,
    color: bool,
    indent: int = 2,
) -> tuple[list[str], list[Column]]:
    """``format_table``'s lines, and the columns shown (``Column.leave_out``)."""
    cells = [[_cell(value) for value in row] for row in rows]
    kept = list(range(len(columns)))
    while True:
        shown = [columns[index] for index in kept]
        shown_cells = [[row[index] for index in kept] for row in cells]
        spare = [(column.leave_out, at) for at, column in enumerate(shown) if column.leave_out]
        widths, fits = _column_widths(shown, shown_cells, width - indent, final=not spare)
        if fits or not spare:
            break
        del kept[max(spare)[1]]
    header = [Cell(column.header, "bold") for column in shown]
    lines = [
        " " * indent + line
        for row in [header, *shown_cells]
        for line in _lines(shown, widths, row, color=color)
    ]
    return lines, shown


DEFAULT_WIDTH = 100
DEFAULT_ROW_LIMIT = 20
"""Rows shown per table; the rest are counted (``--json`` and ``--html`` have them all)."""


@dataclasses.dataclass(frozen=True)
class TerminalLayout:
    """How the terminal report is laid out: width, colour and rows per table (0: all),
    and the ways every section of it writes a title, a table or wrapped text so."""

    width: int = DEFAULT_WIDTH
    color: bool = False
    limit: int = DEFAULT_ROW_LIMIT

    def paint(self, text: str, style: str | None) -> str:
        return paint(text, style, color=self.color)

    def name(self, function: str) -> str:
        """A function's name in a table: cut alike in every section (``shown_name``)."""
        return shown_name(function, self.width)

    def shown(self, rows: Sequence[_Row]) -> Sequence[_Row]:
        """The rows a table shows (its first ``limit``)."""
        return rows if self.limit <= 0 else rows[: self.limit]

    def wrapped(self, text: str, indent: str, style: str | None = None) -> list[str]:
        """``text`` wrapped below ``indent``, continued lines indented two more."""
        lines = wrapped(text, self.width - len(indent) - 2)
        return [
            self.paint(f"{indent}{'' if at == 0 else '  '}{line}", style)
            for at, line in enumerate(lines)
        ]

    def title(self, text: str, count: int | None = None) -> str:
        shown = f"{text} ({count})" if count is not None else text
        return self.paint(truncate(shown, self.width), "bold")

    def table(
        self,
        columns: list[Column],
        rows: Sequence[Sequence[CellLike]],
        *,
        total: int | None = None,
    ) -> list[str]:
        """``rows`` up to the limit; ``total``: how many rows there are when only the
        first were made cells (``shown``), else ``len(rows)``."""
        return self.fitted(columns, rows, total=total)[0]

    def fitted(
        self,
        columns: list[Column],
        rows: Sequence[Sequence[CellLike]],
        *,
        total: int | None = None,
    ) -> tuple[list[str], list[Column]]:
        """``table``'s lines, and the columns it shows (``Column.leave_out``)."""
        shown = self.shown(rows)
        lines, kept = fitted_table(columns, shown, width=self.width, color=self.color)
        return lines + self.more(len(rows) if total is None else total, len(shown)), kept

    def more(self, total: int, shown: int) -> list[str]:
        """The line under a table that shows ``shown`` of its ``total`` rows, if it cut."""
        if shown >= total:
            return []
        text = f"  … {total - shown} more (all of them: --limit 0, --json or --html)"
        return [self.paint(truncate(text, self.width), "dim")]


def whole_parts(parts: Iterable[str]) -> str:
    """``parts`` joined by " · ", each part's words and the "·" after it bound by no-break
    spaces: wrapped, the text breaks only after a "·", never in a part nor before its "·"
    (no line starts with one, or is one)."""
    return f"{NO_BREAK_SPACE}· ".join(part.replace(" ", NO_BREAK_SPACE) for part in parts)


def wrapped(text: str, width: int) -> list[str]:
    """``text`` on lines of at most ``width`` characters, broken between words, and a word
    longer than a line at its separators (``_SEPARATOR``), at most MAX_WRAPPED_LINES of
    them, the last ending in an ellipsis if text was left."""
    lines = _first_lines(text, max(width, 1)) or [""]
    if len(lines) > MAX_WRAPPED_LINES:
        lines = lines[:MAX_WRAPPED_LINES]
        lines[-1] = _ending(lines[-1], width)
    else:  # whole: its last line is shown
        lines = _number_not_alone(lines, width)
    return [line.replace(NO_BREAK_SPACE, " ") for line in lines]


def _first_lines(text: str, width: int) -> list[str]:
    """``text`` on one line wrapped; where that makes more than MAX_WRAPPED_LINES + 1
    lines, at least that many, the first MAX_WRAPPED_LINES of them the same: only the start
    of a long text is read (a 50 MB cell costs what a short one does)."""
    # A line holds at most width characters and the space after it (more where runs of
    # white space, or no-break spaces at its ends, are dropped): this much text usually
    # makes enough lines, and twice as much is tried until it does.
    size = (MAX_WRAPPED_LINES + 3) * (width + 1)
    while True:
        whole = size >= len(text)
        # no-break spaces stay: they bind words
        flat = _WHITESPACE.sub(" ", text if whole else text[:size]).strip()
        lines = _filled(flat, width)
        # Two lines past those shown: the word cut at ``size`` cannot change them.
        if whole or len(lines) > MAX_WRAPPED_LINES + 1:
            return lines
        size *= 2


def _filled(flat: str, width: int) -> list[str]:
    """``flat`` (words between single spaces) on lines of at most ``width``: each word
    where it fits, a word longer than a line in pieces (``pieces``) the same way, and a
    piece longer than a line cut (an identifier is never split across lines)."""
    lines: list[str] = []
    line = ""
    for word in flat.split(" "):
        for at, piece in enumerate(pieces(word) if len(word) > width else [word]):
            joined = f"{line} {piece}" if line and at == 0 else line + piece
            if len(joined) <= width:
                line = joined
                continue
            if line:
                lines.append(line)
            line = truncate(piece, width)
    return [*lines, line] if line else lines


_NUMBER = re.compile(r"[(\[]?[-+]?\d+(?:[.,]\d+)*%?[)\]]?[.,;:]?")
"""A number as a text ends with it: "16", "0.5", "27)", "(3)", "12%." """


def _number_not_alone(lines: list[str], width: int) -> list[str]:
    """A number alone on the last line ("changed from 2 to" / "4") takes the word before
    it along, where the two fit: a number means nothing without what it counts."""
    if len(lines) < 2 or _NUMBER.fullmatch(lines[-1]) is None:
        return lines
    kept, _, word = lines[-2].rpartition(" ")
    if not kept or len(word) + 1 + len(lines[-1]) > width:
        return lines
    return [*lines[:-2], kept, f"{word} {lines[-1]}"]


def pieces(word: str) -> list[str]:
    """``word`` split where a long one may break (``_SEPARATOR``): ``self._modules`` and
    ``['blocks']``, ``torch.`` and ``_dynamo.``, never inside an identifier."""
    return [piece for piece in _SEPARATOR.split(word) if piece]


def _ending(line: str, width: int) -> str:
    """The last shown line of a cut cell: its whole words that leave room for " …"."""
    while len(line) + 2 > width and " " in line:
        line = line.rsplit(" ", 1)[0]
    return truncate(f"{line} {ELLIPSIS}", width)


def _cell(value: CellLike) -> Cell:
    return value if isinstance(value, Cell) else Cell(value)


def _column_widths(
    columns: Sequence[Column], rows: list[list[Cell]], width: int, *, final: bool
) -> tuple[list[int], bool]:
    """Each column's width, and whether they fit ``width``; ``final``: no optional column
    is left to leave out, so every column gives up what it must (see the module's note)."""
    natural = [
        max([len(column.header)] + [len(row[index].text) for row in rows])
        for index, column in enumerate(columns)
    ]
    widths = [
        natural[index]
        if _flexible(column) or column.whole
        else min(natural[index], MAX_FIXED_WIDTH)
        for index, column in enumerate(columns)
    ]
    spare = width - len(COLUMN_GAP) * (len(columns) - 1) - sum(widths)
    wrapping = [index for index, column in enumerate(columns) if column.wrap]
    cut = [index for index, column in enumerate(columns) if column.flexible and not column.wrap]
    if spare < 0 and wrapping:  # a wrapping cell loses nothing by being narrower
        floors = {index: _piece_floor(rows, index, widths[index]) for index in wrapping}
        for floor in sorted(set(floors.values()), reverse=True):
            same = [index for index in wrapping if floors[index] == floor]
            spare += _shrink(widths, same, -spare, floor=floor) if spare < 0 else 0
    if spare < 0 and cut:
        spare += _shrink(widths, cut, -spare, floor=MIN_SECONDARY_WIDTH)
    if spare >= 0 or not final:
        return widths, spare >= 0
    steps = (
        (cut, MIN_FLEXIBLE_WIDTH),
        (wrapping, LAST_WRAP_WIDTH),
        ([index for index, column in enumerate(columns) if column.whole], MIN_FLEXIBLE_WIDTH),
    )
    for indexes, floor in steps:
        if spare < 0 and indexes:
            spare += _shrink(widths, indexes, -spare, floor=floor)
    return widths, spare >= 0


def _piece_floor(rows: list[list[Cell]], index: int, width: int) -> int:
    """How narrow a wrapping column can be with no piece of its shown lines cut: its
    longest word, or a long word's longest piece (never under MIN_WRAP_WIDTH, never over
    its current ``width``). Only the start of each cell is read, as only that is shown."""
    longest = max(
        (
            max(map(len, pieces(word)), default=0) if len(word) > MIN_WRAP_WIDTH else 0
            for row in rows
            # split where wrapped() breaks: words bound by no-break spaces are one
            for word in _WHITESPACE.split(row[index].text[: MAX_WRAPPED_LINES * WORD_SCAN_PER_LINE])
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


PAGE_CLASS = {"green": "ok", "red": "bad", "red_bold": "bad", "yellow": "warn"}
"""The page's class for each terminal style (others: none)."""


def page_table(
    title: str, columns: Sequence[Column], rows: Iterable[Sequence[CellLike]]
) -> PageTable:
    """A table of the terminal's columns and cells as the page's: a cell is its text,
    [text, class] where styled, [text, class, hover text] with a hover text."""
    return {
        "title": title,
        "columns": [column.header for column in columns],
        "right": [index for index, column in enumerate(columns) if column.right],
        # most cells are text: no call for them (a large run's page has millions)
        "rows": [[_page_cell(c) if isinstance(c, Cell) else c for c in row] for row in rows],
    }


def _page_cell(value: Cell) -> PageCell:
    css_class = PAGE_CLASS.get(value.style or "")
    if value.hover is not None:
        return [value.text, css_class or "", value.hover]
    return value.text if css_class is None else [value.text, css_class]
