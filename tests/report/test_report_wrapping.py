"""Wrapped cells break between words, never inside one (otel_dynamo.report.render.table)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _report_support import FakeCompile, write_traces

from otel_dynamo import cli
from otel_dynamo.report.render.table import ELLIPSIS, MAX_WRAPPED_LINES, wrapped


def _reason(number: int, length: int, count: int) -> str:
    """``count`` words of ``length`` characters that no other word of the report holds."""
    return " ".join(f"zq{number:02d}{index:03d}".ljust(length, "k") for index in range(count))


REASONS = [_reason(0, 8, 5), _reason(1, 9, 12)] + [
    _reason(number, length, 150) for number, length in enumerate(range(7, 15), start=2)
]
"""Recompile reasons of no shape the plain reading knows (shown as written): one line; two
lines; longer than a wrapped cell holds, each with its own word length, so that the cut
last line of some is full to the column."""


def test_long_reasons_at_100_columns_split_no_word(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`otel-dynamo report` on a pipe (100 columns): every piece of a reason's word in the
    output is one of the reasons' words, whole (the cut cell's last line included)."""
    compiles = [FakeCompile("0/0")] + [
        FakeCompile(f"0/{n}", start_ms=1000 * n, cache_size=n, recompile_reason=reason)
        for n, reason in enumerate(REASONS, start=1)
    ]
    write_traces(tmp_path / "traces.jsonl", compiles)
    assert cli.main(["report", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    words = {word for reason in REASONS for word in reason.split()}
    shown = {token.rstrip("…") for token in re.findall(r"zq\S*", out)}
    assert (max(map(len, out.splitlines())) <= 100, shown - words) == (True, set())


def test_a_cut_cell_ends_after_its_last_whole_word() -> None:
    """A cell longer than its lines ends in " …" after the last word that fits."""
    lines = wrapped(" ".join(["abcdefgh"] * 40), 17)
    assert lines[-2:] == ["abcdefgh abcdefgh", "abcdefgh …"]


def test_a_wrapped_split_line_never_starts_with_its_separator() -> None:
    """The "by phase" parts wrap after a " · ", so no continued line begins with "·"."""
    from otel_dynamo.report.render.time_split import _labelled

    parts = [f"phase{index} {index}.00 s ({index}%)" for index in range(12)]
    for width in range(40, 101):  # 53 broke before a separator
        lines = _labelled("by phase", " · ".join(parts), width)
        assert len(lines) > 2
        assert [line.lstrip()[:1] for line in lines[1:]] == ["p"] * (len(lines) - 1), width
        assert all(len(line) <= width for line in lines)


def test_a_word_longer_than_its_wrapped_column_breaks_only_at_its_separators() -> None:
    """At 80 columns a wrapping reason column narrower than a 59-character word (a
    parameter's source) breaks it only where ``pieces`` may: after a ``.``, before a
    ``[``; the lines rejoin to the word, and the function column keeps its width."""
    from otel_dynamo.report.render.table import Column, format_table, pieces

    word = "L['self']._modules['token_embedding']._parameters['weight']"
    function = "Model." + "f" * 40
    columns = [
        Column("count", right=True),
        Column("reason", wrap=True),
        Column("function", whole=True),
    ]
    rows = [["3", f"guard: tensor {word} dtype mismatch. expected Float", function]]
    lines = format_table(columns, rows, width=80, color=False)
    start, end = lines[0].index("reason"), lines[0].index("function")
    cells = [line[start:end].strip() for line in lines[1:]]
    assert max(map(len, lines)) <= 80
    assert lines[1].endswith(function)
    reason = rows[0][1]
    assert "".join(cells).replace(" ", "") == reason.replace(" ", ""), cells
    at, breaks = 0, set()
    for cell in cells[:-1]:  # where in the word each line ended
        at = reason.index(cell, at) + len(cell)
        breaks.add(at - reason.index(word))
    pieces_end = {len("".join(pieces(word)[:count])) for count in range(len(pieces(word)) + 1)}
    inside = {offset for offset in breaks if 0 < offset < len(word)}
    assert inside and inside <= pieces_end, cells


@pytest.mark.parametrize("width", [28, 30, 31, 32])
def test_a_number_never_ends_a_wrapped_text_alone(width: int) -> None:
    """A number that would be the last line alone ("changed from 2 to" / "4") takes the
    word before it along; the text fits its width still."""
    lines = wrapped("the size of x changed from 2 to 4", width)
    assert lines == ["the size of x changed from 2", "to 4"]


def test_a_number_in_brackets_never_ends_a_wrapped_text_alone() -> None:
    """A number closing a bracket or a sentence ("(was 27)", "16.") counts as a number."""
    assert wrapped("a Python int value changed (was 27)", 31) == [
        "a Python int value changed",
        "(was 27)",
    ]
    assert wrapped("it grew to 16.", 12) == ["it grew", "to 16."]


def test_a_number_alone_stays_where_the_word_before_it_would_not_fit() -> None:
    """A number stays alone where the word before it and the number exceed the width, and
    a line of one word gives none away."""
    assert wrapped("x limit 12345", 7) == ["x limit", "12345"]
    assert wrapped("limited 12", 7) == ["limited", "12"]


def test_a_cut_text_keeps_its_last_shown_line_whole() -> None:
    """A text cut to MAX_WRAPPED_LINES lines ends as any cut text does, whatever number
    follows unshown: its last shown line gives no word away."""
    lines = wrapped("aaaa bbbb " * MAX_WRAPPED_LINES + "77", 11)
    assert len(lines) == MAX_WRAPPED_LINES
    assert lines[-1] == f"aaaa bbbb {ELLIPSIS}"
