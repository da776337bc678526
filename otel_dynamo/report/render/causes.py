"""The report's opening answer to "why does my job recompile, why do its graphs break":
the most frequent recompile reasons (in plain words) and graph-break reasons over all
processes, each with where it happened. Shown right after where the compile time went;
every row is in the per-process tables below."""

from __future__ import annotations

import dataclasses
import html
import re
import textwrap
from collections import Counter
from collections.abc import Callable, Iterable

from otel_dynamo.causes.fixes import paste_lines, verdict_words
from otel_dynamo.causes.records import NOT_WORKING, VERIFIED, Fix
from otel_dynamo.report.render import format as _format
from otel_dynamo.report.render.table import (
    NO_BREAK_SPACE,
    CellLike,
    Column,
    format_table,
    paint,
    shown_name,
    truncate,
    whole_parts,
    wrapped,
)
from otel_dynamo.report.summary.compiles import NO_REASON
from otel_dynamo.report.summary.function_names import function_label, names_for
from otel_dynamo.report.summary.schema import CauseRow, ProcessSection, StackCount, Summary

SHOWN_CAUSES = 5
"""Reasons each list shows; the per-process tables have all of them."""


@dataclasses.dataclass(frozen=True)
class Cause:
    """One reason: how often it happened, in plain words, and in which function where."""

    count: int
    what: str
    function: str
    location: str


_CauseKey = tuple[str, str, str]
"""(reason, function, location) of a cause."""


@dataclasses.dataclass
class CauseCounts:
    """How often each cause happened, in one process or several (``add``): what the two
    lists are ranked from. Counted by the process that summarized a process's telemetry
    (``stream.read_report``), added up where the report is made."""

    recompiles: Counter[_CauseKey] = dataclasses.field(default_factory=Counter)
    breaks: Counter[_CauseKey] = dataclasses.field(default_factory=Counter)

    def add(self, other: CauseCounts) -> None:
        self.recompiles.update(other.recompiles)
        self.breaks.update(other.breaks)

    @classmethod
    def of(cls, parts: Iterable[CauseCounts]) -> CauseCounts:
        """``parts`` added up (several processes' causes)."""
        counts = cls()
        for part in parts:
            counts.add(part)
        return counts


def process_causes(section: ProcessSection) -> CauseCounts:
    """The causes of one process's recompiles (grouped by plain reason and function) and
    graph breaks (by reason and the user code they broke in: the innermost user frame of
    their stack)."""
    counts = CauseCounts()
    for row in section["recompiles"]:
        what = row["reason_plain"] or row["reason"] or NO_REASON
        function = function_label(row["function"], row["module"])
        counts.recompiles[(what, function, _format.location(row["file"], row["line"]))] += 1
    if section["graph_breaks"]:
        _count_breaks(section, counts.breaks)
    return counts


def _count_breaks(section: ProcessSection, counts: Counter[_CauseKey]) -> None:
    function_names = names_for(section["compiles"])
    for group in section["graph_breaks"]:
        unrecorded: StackCount = {
            "user_stack": [],
            "count": group["count"],
            "compile_ids": group["compile_ids"],
        }
        for stack in group["stacks"] or [unrecorded]:
            user_stack = function_names.stack(stack["user_stack"])
            file, function, line = _format.user_location(user_stack)
            location = f"{file}:{line}" if line is not None else file
            counts[(group["reason"] or NO_REASON, function or "?", location)] += stack["count"]


def summary_causes(summary: Summary) -> CauseCounts:
    """The causes of every process of ``summary``."""
    return CauseCounts.of(process_causes(section) for section in summary["processes"])


def ranked(counts: Counter[_CauseKey]) -> list[Cause]:
    """Causes most frequent first (then by reason, function and location)."""
    in_order = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [Cause(count, *key) for key, count in in_order]


def terminal_lines(
    summary: Summary, counts: CauseCounts, *, width: int, color: bool, limit: int
) -> list[str]:
    """The two lists for the terminal (text from the files made printable), each its first
    SHOWN_CAUSES rows (fewer with a smaller ``limit``, all with 0); nothing when nothing
    recompiled or broke. ``counts``: the summary's causes (``summary_causes``)."""
    lines: list[str] = []
    for title, causes, total in (
        ("Why it recompiled", ranked(counts.recompiles), summary["totals"]["recompiles"]),
        ("Why graphs broke", ranked(counts.breaks), summary["totals"]["graph_breaks"]),
    ):
        if not causes:
            continue
        heading = paint(truncate(f"{title} ({total})", width), "bold", color=color)
        lines += [*([""] if lines else []), heading]
        columns = [
            Column("count", right=True),
            Column("reason", wrap=True),
            Column("function", whole=True),
            Column("location", flexible=True, cut_left=True),
        ]
        rows: list[list[CellLike]] = [
            [
                f"{cause.count}x",
                _format.printable(cause.what),
                shown_name(_format.printable(cause.function), width),
                _format.printable(cause.location),
            ]
            for cause in (causes if limit <= 0 else causes[: min(limit, SHOWN_CAUSES)])
        ]
        lines += format_table(columns, rows, width=width, color=color)
        if len(causes) > len(rows):
            more = f"  … {len(causes) - len(rows)} more reasons in the tables below"
            lines.append(paint(truncate(more, width), "dim", color=color))
    return lines


def html_block(counts: CauseCounts) -> str:
    """The two lists for the page (every reason) from a summary's causes
    (``summary_causes``); empty when nothing recompiled or broke."""
    parts = []
    for title, causes in (
        ("Why it recompiled", ranked(counts.recompiles)),
        ("Why graphs broke", ranked(counts.breaks)),
    ):
        if not causes:
            continue
        body = "".join(
            f'<tr><td class="num">{cause.count}</td><td>{html.escape(cause.what)}</td>'
            f"<td>{html.escape(cause.function)}</td><td>{html.escape(cause.location)}</td></tr>"
            for cause in causes
        )
        head = '<th class="num">count</th><th>reason</th><th>function</th><th>location</th>'
        parts.append(
            f"<h3>{html.escape(title)} ({sum(cause.count for cause in causes)})</h3>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        )
    return f'<section id="causes">{"".join(parts)}</section>' if parts else ""


SHOWN_WHAT_TO_DO = 5
"""Causes the terminal's "What to do" shows (with the default row limit); --json and the
page have all of them."""


@dataclasses.dataclass
class _Todo:
    """One cause over all processes: what it made there, and its fixes."""

    where: str
    function: str
    """As every section names it (``function_label``): ``where`` starts with it."""
    what: str
    recompiles: int
    graph_breaks: int
    compile_seconds: float
    processes: int
    fixes: list[Fix]


def what_to_do(summary: Summary) -> list[_Todo]:
    """Every process's causes, the same cause of several processes (ranks) as one,
    costliest first; each function named as the frame tables name it."""
    merged: dict[tuple[object, ...], _Todo] = {}
    for section in summary["processes"]:
        for row in section["what_to_do"]:
            key = (row["kind"], row["function"], row["file"], row["line"], row["subject"])
            todo = merged.get(key)
            if todo is None:
                function = function_label(row["function"], row["module"])
                todo = _Todo(_where(row), function, row["what"], 0, 0, 0.0, 0, row["fixes"])
                merged[key] = todo
            todo.recompiles += row["recompiles"]
            todo.graph_breaks += row["graph_breaks"]
            todo.compile_seconds += row["compile_seconds"]
            todo.processes += 1
    return sorted(
        merged.values(),
        key=lambda todo: (-todo.compile_seconds, -todo.recompiles, -todo.graph_breaks, todo.where),
    )


def _where(row: CauseRow) -> str:
    """ "Block.forward (project/model.py:34)": named as every other section names it."""
    name = function_label(row["function"], row["module"])
    place = _format.location(row["file"], row["line"])
    return f"{name} ({place})" if row["file"] else name


def shown_fixes(fixes: list[Fix]) -> list[Fix]:
    """The fixes to show: all but those a try found not working."""
    return [
        fix for fix in fixes if fix["verdict"] is None or fix["verdict"]["status"] != NOT_WORKING
    ]


def _cost(todo: _Todo, *, bound: bool = False) -> str:
    """What the cause cost: "1 recompile · 2 graph breaks · 1 min 01 s compile"; ``bound``:
    each part whole where a heading wraps (``table.whole_parts``)."""
    parts = []
    if todo.recompiles:
        parts.append(f"{todo.recompiles} recompile{'s' if todo.recompiles != 1 else ''}")
    if todo.graph_breaks:
        parts.append(f"{todo.graph_breaks} graph break{'s' if todo.graph_breaks != 1 else ''}")
    parts.append(f"{_format.duration(todo.compile_seconds)} compile")
    if todo.processes > 1:
        parts.append(f"in {todo.processes} processes")
    return whole_parts(parts) if bound else " · ".join(parts)


def what_to_do_terminal(summary: Summary, *, width: int, color: bool, limit: int) -> list[str]:
    """The report's opening: each cause, costliest first, with its fix and the verdict of
    trying it; nothing when nothing recompiled or broke."""
    todos = what_to_do(summary)
    if not todos:
        return []
    shown = todos if limit <= 0 else todos[: min(limit, SHOWN_WHAT_TO_DO)]
    heading = f"What to do ({len(todos)} cause{'s' if len(todos) != 1 else ''}, costliest first)"
    lines = [paint(truncate(heading, width), "bold", color=color)]
    for number, todo in enumerate(shown, start=1):
        label = f"{number}. "
        hang = " " * len(label)  # the cause's text starts under its heading's, past "10. " too
        named = _named(todo.function, width - len(f"  {hang}fix: "))
        cost = _cost(todo, bound=True)
        heading = named(_format.printable(todo.where)) + f"{NO_BREAK_SPACE}· {cost}"
        lines += _wrapped(label, heading, width)
        lines += _wrapped(hang, _format.printable(todo.what), width)
        fixes = shown_fixes(todo.fixes)
        for fix in fixes:
            lines += _wrapped(f"{hang}fix: ", named(_format.printable(fix["summary"])), width)
            if fix["verdict"] is not None:
                verdict = _bound(verdict_words(fix["verdict"]))
                lines += [
                    paint(line, "dim", color=color)
                    for line in _wrapped(f"{hang}     ", verdict, width)
                ]
        if not fixes:
            lines += _wrapped(hang, _bound(_none_worked(todo.fixes)), width)
    if len(todos) > len(shown):
        more = f"  … {len(todos) - len(shown)} more causes in --json and the page"
        lines.append(paint(truncate(more, width), "dim", color=color))
    verified = [
        fix
        for todo in todos
        for fix in todo.fixes
        if fix["verdict"] is not None and fix["verdict"]["status"] == VERIFIED
    ]
    paste = paste_lines(verified)
    if paste:
        lines += ["", paint("Verified fixes, to paste", "bold", color=color)]
        lines += [line for entry in paste for line in _paste_lines(entry, width)]
    return lines


def _none_worked(tried: list[Fix]) -> str:
    """A cause none of whose fixes worked: said, with what its re-runs noted."""
    notes = [fix["verdict"]["note"] for fix in tried if fix["verdict"] and fix["verdict"]["note"]]
    said = "no fix worked on this job (see --json)"
    return f"{said}: {_format.printable('; '.join(notes))}" if notes else said


_NUMBER_UNIT = re.compile(r"(\d) (?=(?:ms|s|min|recompiles?|graph breaks?)\b)")
_GRAPH_BREAK = re.compile(r"\bgraph (?=breaks?\b)")


def _bound(text: str) -> str:
    """A number and its unit (``41.6 ms``), a count and its noun (``7 graph breaks``)
    kept on one line when ``text`` wraps."""
    counted = _NUMBER_UNIT.sub(f"\\1{NO_BREAK_SPACE}", text)
    return _GRAPH_BREAK.sub(f"graph{NO_BREAK_SPACE}", counted)


def _named(function: str, room: int) -> Callable[[str], str]:
    """Keeps ``function``'s name on one line where a text that names it wraps: a
    wrapper's name holds a space (``GPT2LMHeadModel (loss_function)``). A name longer
    than ``room``, the columns of a fix's wrapped line, wraps as words do: no line could
    hold it whole."""
    if " " not in function or len(function) > room:
        return lambda text: text
    bound = function.replace(" ", NO_BREAK_SPACE)
    return lambda text: text.replace(function, bound)


def _paste_lines(entry: str, width: int) -> list[str]:
    """One entry to paste within ``width``, still what it was once pasted: a comment
    wraps as comment lines, a Python line with a backslash between tokens, the shell's
    export line with a backslash between words."""
    room = max(width - 2, 20)
    lines: list[str] = []
    for text in entry.splitlines():
        if text.startswith("# "):
            lines += ["# " + line for line in wrapped(text[2:], room - 2)]
        elif text.startswith("export "):
            lines += _continued(
                textwrap.wrap(text, room - 2, break_long_words=False, break_on_hyphens=False)
            )
        else:
            lines += _continued(wrapped(text, room - 2))
    return ["  " + line for line in lines]


def _continued(lines: list[str]) -> list[str]:
    return [line + " \\" for line in lines[:-1]] + lines[-1:]


def _wrapped(first: str, text: str, width: int) -> list[str]:
    """``text`` after ``first``, wrapped as the tables wrap a cell (``table.wrapped``),
    continuation lines indented as ``first``."""
    indent = "  " + " " * len(first)
    lines = wrapped(text, max(width - len(indent), 20))
    return ["  " + first + lines[0], *(indent + line for line in lines[1:])]


def what_to_do_html(summary: Summary) -> str:
    """The page's opening: every cause with its fixes and verdicts; empty when none."""
    todos = what_to_do(summary)
    if not todos:
        return ""
    items = []
    for todo in todos:
        fixes = "".join(
            f"<li>{html.escape(fix['summary'])}"
            + (
                f' <span class="dim">({html.escape(verdict_words(fix["verdict"]))})</span>'
                if fix["verdict"] is not None
                else ""
            )
            + "</li>"
            for fix in shown_fixes(todo.fixes)
        )
        items.append(
            f"<li><b>{html.escape(todo.where)}</b> · {html.escape(_cost(todo))}"
            f"<br>{html.escape(todo.what)}<ul>{fixes}</ul></li>"
        )
    return f'<section id="what-to-do"><h3>What to do</h3><ol>{"".join(items)}</ol></section>'
