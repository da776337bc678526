"""Render the summary for a terminal: short tables, at most ``width`` columns wide."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TextIO, TypeVar

from otel_dynamo.causes.guards import guard_text
from otel_dynamo.report.render import causes, time_split
from otel_dynamo.report.render import exports as _exports_render
from otel_dynamo.report.render import format as _format
from otel_dynamo.report.render.table import (
    NO_BREAK_SPACE,
    Cell,
    CellLike,
    Column,
    fitted_table,
    format_table,
    paint,
    shown_name,
    truncate,
    whole_parts,
    wrapped,
)
from otel_dynamo.report.summary.build import LIMIT_REACHED
from otel_dynamo.report.summary.compiles import NO_REASON
from otel_dynamo.report.summary.function_names import FunctionNames, function_label, names_for
from otel_dynamo.report.summary.phases import PHASE_CATEGORIES, PHASE_TITLES
from otel_dynamo.report.summary.schema import (
    CompileFacts,
    CompileRow,
    GraphBreakGroup,
    ProcessDescription,
    ProcessSection,
    RankRow,
    RecompileRow,
    Summary,
)

_Row = TypeVar("_Row")

DEFAULT_WIDTH = 100
DEFAULT_ROW_LIMIT = 20
"""Rows shown per table; the rest are counted (``--json`` and ``--html`` have them all)."""

MAX_STACK_FRAMES = 3
"""Innermost user-stack frames shown under a graph break."""


_COUNT_NOUN = re.compile(r"(\d) ")
_SEVERITY_STYLE = {"ok": "green", "bad": "red", "warn": "yellow"}


def color_enabled(stream: TextIO, *, environ: Mapping[str, str] | None = None) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    environ = os.environ if environ is None else environ
    if environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


@dataclasses.dataclass(frozen=True)
class TerminalLayout:
    """How the terminal report is laid out: width, colour and rows per table (0: all)."""

    width: int = DEFAULT_WIDTH
    color: bool = False
    limit: int = DEFAULT_ROW_LIMIT


def render_terminal(
    summary: Summary,
    *,
    width: int = DEFAULT_WIDTH,
    color: bool,
    limit: int = DEFAULT_ROW_LIMIT,
    printable_text: bool = False,
) -> str:
    """The summary as text for a terminal; ``limit`` rows per table, 0 for all. Text from
    the files is made printable first: only our own colour codes reach the terminal.
    ``printable_text``: the reader found no control or bidirectional character in the
    files (``Report.printable_text``), so the processes' sections are shown as they are.
    Each process's lines are made here, as ``stream.read_report`` makes them where it
    reads the files (``Report.terminal_text``)."""
    layout = TerminalLayout(width=width, color=color, limit=limit)
    sections = summary["processes"]
    return terminal_text(
        summary,
        layout,
        [process_body(section, layout, printable_text=printable_text) for section in sections],
        causes.summary_causes(summary),
        printable_text=printable_text,
    )


def terminal_text(
    summary: Summary,
    layout: TerminalLayout,
    bodies: Sequence[list[str]],
    counts: causes.CauseCounts,
    *,
    printable_text: bool,
) -> str:
    """The terminal report of ``summary`` from its processes' ``bodies`` (``process_body``
    of each, in the summary's order, made for ``layout``) and the ``counts`` of its causes
    (``causes.process_causes`` of each, added up)."""
    view = _View(width=layout.width, color=layout.color, limit=layout.limit)
    width, color, limit = layout.width, layout.color, layout.limit
    # One process at a time: a printable copy of a large run's whole summary would double it.
    top = _format.printable_values({k: v for k, v in summary.items() if k != "processes"})
    lines = _overview(top, view)
    note = _format.source_lines(top["source"])
    lines += [view.paint(truncate(line, view.width), "dim") for line in note]
    todo = causes.what_to_do_terminal(summary, width=width, color=color, limit=limit)
    lines += ["", *todo] if todo else []
    where = time_split.terminal_lines(top["compile_time"], width=width, color=color)
    lines += ["", *where] if where else []
    why = causes.terminal_lines(summary, counts, width=width, color=color, limit=limit)
    lines += ["", *why] if why else []
    if top["ranks"]["compared"]:
        lines += ["", *_ranks(top, view)]
    for section, body in zip(summary["processes"], bodies, strict=True):
        description = _description(section)
        shown = description if printable_text else _format.printable_values(description)
        lines += ["", _process_heading(shown, view), *body]
    return "\n".join(lines) + "\n"


def process_body(
    section: ProcessSection, layout: TerminalLayout, *, printable_text: bool
) -> list[str]:
    """The lines ``render_terminal`` shows of one process below its heading: the same
    whatever the process's label, so that the process that summarized it may make them.
    ``printable_text``: as ``render_terminal`` takes it, of this process's files."""
    view = _View(width=layout.width, color=layout.color, limit=layout.limit)
    shown = section if printable_text else _format.printable_values(section)
    lines: list[str] = []
    for render in _SECTIONS:
        lines += render(shown, view)
    return lines


def _description(section: ProcessSection) -> ProcessDescription:
    """What a process's heading reads of its section (``printable_values`` of all of it
    would copy its every table)."""
    return {
        "process": section["process"],
        "rank": section["rank"],
        "local_rank": section["local_rank"],
        "world_size": section["world_size"],
        "node_rank": section["node_rank"],
        "run_id": section["run_id"],
        "host": section["host"],
        "pid": section["pid"],
        "service": section["service"],
        "torch_version": section["torch_version"],
    }


class _View:
    """Width, colour and row limit shared by every section."""

    def __init__(self, *, width: int, color: bool, limit: int) -> None:
        self.width = width
        self.color = color
        self.limit = limit

    def paint(self, text: str, style: str | None) -> str:
        return paint(text, style, color=self.color)

    def name(self, function: str) -> str:
        """A function's name in a table: cut alike in every section (``shown_name``)."""
        return shown_name(function, self.width)

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
        first were made cells (``_shown``), else ``len(rows)``."""
        return self.fitted(columns, rows, total=total)[0]

    def fitted(
        self,
        columns: list[Column],
        rows: Sequence[Sequence[CellLike]],
        *,
        total: int | None = None,
    ) -> tuple[list[str], list[Column]]:
        """``table``'s lines, and the columns it shows (``Column.leave_out``)."""
        shown = rows if self.limit <= 0 else rows[: self.limit]
        lines, kept = fitted_table(columns, shown, width=self.width, color=self.color)
        count = len(rows) if total is None else total
        if len(shown) < count:
            more = f"  … {count - len(shown)} more (all of them: --limit 0, --json or --html)"
            lines.append(self.paint(truncate(more, self.width), "dim"))
        return lines, kept


def _overview(summary: Summary, view: _View) -> list[str]:
    totals = summary["totals"]
    inputs = summary["inputs"]
    heading = (
        f"otel-dynamo report: {_format.plural(totals['processes'], 'process', 'processes')} "
        f"from {_format.plural(len(inputs['files']), 'file')}"
    )
    if summary["source"] is not None:
        heading = heading.rsplit(" from ", 1)[0] + " read from Jaeger"
    if inputs["problems"]:
        heading += f", {_format.plural(len(inputs['problems']), 'input problem')} (see stderr)"
    items = [
        _format.plural(totals["frame_compiles"], "frame compile"),
        _format.plural(totals["graphs"], "graph"),
        _format.plural(totals["graph_breaks"], "graph break"),
        _format.plural(totals["recompiles"], "recompile"),
        _format.plural(totals["failures"], "failure"),
        f"{_format.duration(totals['compile_seconds'])} compiling",
        *_exports_render.overview_items(totals),
    ]
    if totals["unfinished_compiles"]:
        items.insert(5, _format.plural(totals["unfinished_compiles"], "unfinished compile"))
    return [view.paint(truncate(heading, view.width), "bold"), *_wrap(items, view.width)]


def _wrap(items: list[str], width: int, separator: str = " · ") -> list[str]:
    """Join ``items`` into lines of at most ``width`` characters."""
    lines = [""]
    for item in items:
        joined = f"{lines[-1]}{separator}{item}" if lines[-1] else item
        if len(joined) <= width or not lines[-1]:
            lines[-1] = truncate(joined, width)
        else:
            lines.append(truncate(item, width))
    return lines


def _ranks(summary: Summary, view: _View) -> list[str]:
    ranks = summary["ranks"]
    columns = [
        Column("process", flexible=True),
        Column("compiles", right=True),
        Column("graphs", right=True),
        Column("recompiles", right=True),
        Column("guards", right=True),
        Column("breaks", right=True),
        Column("failures", right=True),
        Column("compile time", right=True),
    ]
    diverging = [row for row in ranks["rows"] if row["diverges"]]
    ordered = ranks["rows"]
    if 0 < view.limit < len(ordered):  # a cut table still shows every diverging rank
        ordered = diverging + [row for row in ordered if not row["diverges"]]
    rows = [_rank_row(row) for row in ordered]
    lines = [view.title("Ranks", len(rows)), *view.table(columns, rows)]
    if not diverging:
        return [*lines, view.paint("  all ranks agree on graphs, recompiles and guards", "green")]
    return lines + [view.paint(truncate(_divergence(row), view.width), "red") for row in diverging]


def _rank_row(row: RankRow) -> list[Cell | str]:
    def flagged(key: str, value: int) -> Cell:
        bad = key in row["diverges"]
        return Cell(f"{value}{' !' if bad else ''}", "red_bold" if bad else None)

    return [
        Cell(row["process"], "red_bold" if row["diverges"] else None),
        str(row["frame_compiles"]),
        flagged("graphs", row["graphs"]),
        flagged("recompiles", row["recompiles"]),
        flagged("guards", row["guards"]),
        str(row["graph_breaks"]),
        str(row["failures"]),
        _format.duration(row["compile_seconds"]),
    ]


def _divergence(row: RankRow) -> str:
    """ "  rank 2 DIVERGES in graphs; first at 17/0: graphs 2, guards 8 (most ranks: ...)"."""
    text = f"  {row['process']} DIVERGES in {', '.join(row['diverges'])}"
    first = row["first_difference"]
    if first is None:
        return text
    return (
        f"{text}; first at {first['compile_id']}: {_facts(first['actual'])} "
        f"(most ranks: {_facts(first['expected'])})"
    )


def _facts(facts: CompileFacts | None) -> str:
    if facts is None:
        return "no such compile"
    return ", ".join(f"{key} {value}" for key, value in facts.items())


def _process_heading(description: ProcessDescription, view: _View) -> str:
    heading = f"── {_format.process_heading(description)} "
    return view.paint(truncate(heading.ljust(view.width, "─"), view.width), "cyan")


def _compiles(section: ProcessSection, view: _View) -> list[str]:
    rows = section["compiles"]
    if not rows:
        return [view.title("Frame compiles: none")]
    with_calls = _any_calls(rows)
    with_how = _format.settings_vary(rows)
    columns = [
        Column("id"),
        Column("function", whole=True),
        Column("location", flexible=True, cut_left=True),
        Column("outcome"),
        Column("duration", right=True),
        Column("graphs", right=True, leave_out=2),
        Column("ops", right=True, leave_out=3),
        Column("guards", right=True, leave_out=1),
        *([Column("calls", right=True)] if with_calls else []),
    ]
    table: list[list[CellLike]] = [
        [
            row["compile_id"] or "?",
            view.name(function_label(row["function"], row["module"])),
            _format.location(row["file"], row["line"]),
            Cell(row["outcome"], _SEVERITY_STYLE.get(_format.severity(row["outcome"]))),
            _format.duration(row["duration_s"]),
            str(row["graphs"]),
            str(row["ops"]),
            _format.optional(row["guards"]),
            *([_calls(row)] if with_calls else []),
        ]
        for row in _shown(rows, view)
    ]
    lines, shown = view.fitted(columns, table, total=len(rows))
    with_ops = any(column.header == "ops" for column in shown)
    note = [view.paint(line, "dim") for line in wrapped(_format.OPS_NOTE, view.width)]
    return [
        view.title("Frame compiles", len(rows)),
        *lines,
        *(note if with_ops else []),
        *(_compiled_with(rows, view) if with_how else []),
    ]


def _compiled_with(rows: Sequence[CompileRow], view: _View) -> list[str]:
    """Each way the frames were asked to be compiled, with the compile ids asked so."""
    ids: dict[str, list[str]] = {}
    for row in rows:
        ids.setdefault(row["compiled_with"] or "not recorded", []).append(row["compile_id"] or "?")
    lines = [view.title("Compiled with")]
    for how, compile_ids in ids.items():
        text = f"{how}: {_format.plural(len(compile_ids), 'compile')} ({', '.join(compile_ids)})"
        lines += [f"  {line}" for line in wrapped(text, view.width - 2)]
    return lines


def _any_calls(rows: Sequence[CompileRow] | Sequence[RecompileRow]) -> bool:
    """Whether any variant's calls were recorded (telemetry may predate them)."""
    return any(row["calls"] is not None for row in rows)


def _graph_breaks(section: ProcessSection, view: _View) -> list[str]:
    groups = section["graph_breaks"]
    if not groups:
        return [view.title("Graph breaks: none")]
    total = sum(group["count"] for group in groups)
    lines = [view.title(f"Graph breaks ({total} in {_format.plural(len(groups), 'reason')})")]
    shown = groups if view.limit <= 0 else groups[: view.limit]
    function_names = names_for(section["compiles"])
    for group in shown:
        lines += _graph_break_group(group, view, function_names)
    if len(shown) < len(groups):
        lines.append(view.paint(f"  … {len(groups) - len(shown)} more reasons", "dim"))
    return lines


def _graph_break_group(
    group: GraphBreakGroup, view: _View, function_names: FunctionNames
) -> list[str]:
    count = f"{group['count']}x"
    reason_text = group["reason"] or ""
    shown_kind = group["kind"] and not reason_text.startswith(group["kind"])
    kind = f" [{group['kind']}]" if shown_kind else ""  # not when the reason starts with it
    reason = wrapped(f"{reason_text}{kind}", view.width - 10)
    lines = [f"  {view.paint(count.rjust(6), 'yellow')}  {reason[0]}"]
    lines += [f"{' ' * 10}{line}" for line in reason[1:]]
    for hint in group["torch_hints"]:
        said = wrapped(f"torch's hint: {hint}", view.width - 10)
        lines += [view.paint(f"{' ' * 10}{line}", "cyan") for line in said]
    stacks = _format.merged_stacks(group["stacks"], function_names)
    for merged in stacks[: view.limit if view.limit > 0 else None]:
        lines += _stack_lines(merged.stack, merged.count, view)
    return lines


def _stack_lines(shown: list[tuple[str, int]], count: int, view: _View) -> list[str]:
    """Innermost frame first, with the count; then the frames that called it, runs of
    torch/library frames folded into one line."""
    indent = " " * 10
    if not shown:
        return [view.paint(f"{indent}{count}x (no user stack recorded)", "dim")]
    (innermost, _), *callers = shown
    lines = view.wrapped(f"{count}x at {innermost}", indent)
    for text, _frames in callers[: MAX_STACK_FRAMES - 1]:
        prefix = "" if text.startswith("…") else "from "
        lines += view.wrapped(f"{prefix}{text}", f"{indent}   ", "dim")
    hidden = sum(frames for _text, frames in callers[MAX_STACK_FRAMES - 1 :])
    if hidden > 0:
        lines.append(view.paint(f"{indent}   … {_format.plural(hidden, 'outer frame')}", "dim"))
    return lines


def _recompiles(section: ProcessSection, view: _View) -> list[str]:
    rows = section["recompiles"]
    if not rows:
        return [view.title("Recompiles: none")]
    with_calls = _any_calls(rows)
    columns = [
        Column("id"),
        Column("function", whole=True),
        Column("location", flexible=True, cut_left=True),
        Column("cache", right=True, leave_out=1),
        *([Column("calls", right=True, leave_out=1)] if with_calls else []),
        Column("reason", wrap=True),
    ]
    table: list[list[CellLike]] = []
    for row in _shown(rows, view):
        blank = ["", "", "", "", *([""] if with_calls else [])]
        table.append(
            [
                row["compile_id"] or "?",
                view.name(function_label(row["function"], row["module"])),
                _format.location(row["file"], row["line"]),
                _format.optional(row["cache_size"]),
                *([_calls(row)] if with_calls else []),
                row["reason_plain"] or NO_REASON,
            ]
        )
        if row["reason"] and row["reason_plain"] != row["reason"]:
            table.append([*blank, Cell(f"guard: {guard_text(row['reason'])}", "dim")])
    lines = format_table(columns, table, width=view.width, color=view.color)
    if len(rows) > view.limit > 0:
        more = f"  … {len(rows) - view.limit} more (all of them: --limit 0, --json or --html)"
        lines.append(view.paint(truncate(more, view.width), "dim"))
    return [view.title("Recompiles", len(rows)), *lines]


def _calls(row: CompileRow | RecompileRow) -> Cell:
    """The calls a variant served, dimmed when cold."""
    return Cell(_format.calls(row), None if row["hot"] else "dim")


def _near_limit(section: ProcessSection, view: _View) -> list[str]:
    rows = section["near_recompile_limit"]
    if not rows:
        return []
    columns = [
        Column("status"),
        Column("function", whole=True),
        Column("location", flexible=True, cut_left=True),
        Column("compiles", right=True, leave_out=1),
        Column("cache entries", right=True),
        Column("limit", right=True),
    ]
    function_names = names_for(section["compiles"])
    table: list[list[CellLike]] = [
        [
            Cell("AT LIMIT", "red_bold")
            if row["status"] == LIMIT_REACHED
            else Cell("near limit", "yellow"),
            view.name(function_names.of_location(row)),
            _format.location(row["file"], row["line"]),
            str(row["compiles"]),
            str(row["cache_entries"]),
            str(row["limit"]),
        ]
        for row in rows
    ]
    title = view.title("Recompile limit: code close to or at it", len(rows))
    return [title, *view.table(columns, table)]


def _slowest(section: ProcessSection, view: _View) -> list[str]:
    rows = section["slowest"]
    if not rows:
        return []
    columns = [
        Column("id"),
        Column("function", whole=True),
        Column("compile", right=True),
        Column("lazy bwd", right=True, leave_out=1),  # in "compile" too
        Column("largest parts", wrap=True),
    ]
    table: list[list[CellLike]] = [
        [
            row["compile_id"] or "?",
            view.name(function_label(row["function"], row["module"])),
            _format.duration(row["compile_s"]),
            _format.duration(row["lazy_backward_s"] or None),
            _largest_parts(row["phases"]),
        ]
        for row in rows
    ]
    title = view.title("Slowest compiles (frame + lazy backward)")
    return [title, *view.table(columns, table)]


def _largest_parts(phases: Mapping[str, float | None]) -> str:
    """The compile's phases with time, largest first: "backend 1.20 s · tracing 300.0 ms"."""
    timed = [(value, phase) for phase, value in phases.items() if value]
    ranked = sorted(timed, key=lambda item: (-item[0], PHASE_CATEGORIES.index(item[1])))
    return whole_parts(
        f"{PHASE_TITLES[phase]} {_format.duration(value)}" for value, phase in ranked
    )


def _failures(section: ProcessSection, view: _View) -> list[str]:
    rows = section["failures"]
    if not rows:
        return []
    columns = [
        Column("stage"),
        Column("id"),
        Column("function", whole=True),
        Column("error", wrap=True),
    ]
    function_names = names_for(section["compiles"])
    table: list[list[CellLike]] = [
        [
            Cell(row["stage"], "red"),
            row["compile_id"] or "?",
            view.name(function_names.of_compile(row["compile_id"], row["function"])),
            _format.error(row["error_type"], row["error_message"]),
        ]
        for row in rows
    ]
    return [view.paint(view.title("Failures", len(rows)), "red"), *view.table(columns, table)]


def _unfinished(section: ProcessSection, view: _View) -> list[str]:
    rows = section["unfinished"]
    if not rows:
        return []
    columns = [
        Column("id"),
        Column("function", whole=True),
        Column("location", flexible=True, cut_left=True),
        Column("running for", right=True),
    ]
    function_names = names_for(section["compiles"])
    table: list[list[CellLike]] = [
        [
            row["compile_id"],
            view.name(function_names.of_location(row)),
            _format.location(row["file"], row["line"]),
            "?" if row["elapsed_s"] is None else f"≥ {_format.duration(row['elapsed_s'])}",
        ]
        for row in rows
    ]
    title = view.title("Compiles that never finished (last still_compiling event)", len(rows))
    return [view.paint(title, "red"), *view.table(columns, table)]


def _faults(section: ProcessSection, view: _View) -> list[str]:
    rows = section["faults"]
    if not rows:
        return []
    columns = [Column("kind"), Column("target", flexible=True), Column("id"), Column("recorded on")]
    table: list[list[CellLike]] = [
        [row["kind"] or "?", row["target"] or "", row["compile_id"] or "", row["source"]]
        for row in rows
    ]
    return [view.title("Injected faults", len(rows)), *view.table(columns, table)]


def _accuracy(section: ProcessSection, view: _View) -> list[str]:
    rows = section["accuracy"]
    if not rows:
        return []
    columns = [
        Column("id"),
        Column("result"),
        Column("max abs error", right=True),
        Column("max rel error", right=True),
        Column("recorded on", flexible=True),
    ]
    table: list[list[CellLike]] = [
        [
            row["compile_id"] or "?",
            Cell("passed", "green") if row["passed"] else Cell("FAILED", "red_bold"),
            _format.number(row["max_abs_error"]),
            _format.number(row["max_rel_error"]),
            row["source"],
        ]
        for row in rows
    ]
    return [view.title("Accuracy checks", len(rows)), *view.table(columns, table)]


def _runs(section: ProcessSection, view: _View) -> list[str]:
    runs = section["runs"]
    if not any(runs.values()):
        return []
    counts = ", ".join(f"{count} {kind}" for kind, count in runs.items() if count)
    return [f"{view.paint('Recorded runs:', 'bold')} {counts}"]


def _shown(rows: list[_Row], view: _View) -> list[_Row]:
    return rows if view.limit <= 0 else rows[: view.limit]


def _device_time(section: ProcessSection, view: _View) -> list[str]:
    rows = section["device_time"]
    if not rows:
        return []
    columns = [
        Column("id"),
        Column("kind"),
        Column("device"),
        Column("timed runs", right=True),
        Column("device total", right=True),
        Column("mean", right=True),
        Column("max", right=True),
    ]
    table: list[list[Cell | str]] = [list(_format.device_time_cells(row)) for row in rows]
    title = view.title("Device time of recorded runs, by graph (most first)", len(rows))
    return [title, *view.table(columns, table)]


def _cudagraphs(section: ProcessSection, view: _View) -> list[str]:
    graphs = section["cudagraphs"]
    if not graphs["graphs"]:
        return []
    style = "green" if not graphs["skipped"] else "yellow"
    heading = view.paint(
        f"CUDA graphs: {graphs['graphed']} of {graphs['graphs']} graphs graphed; "
        f"{graphs['skipped']} skipped",
        style,
    )
    lines = [heading]
    function_names = names_for(section["compiles"])
    for skip in _shown(graphs["skips"], view):
        where = f"{skip['compile_id']} {skip['run_kind']}, at {skip['at']}"
        if skip["function"]:
            place = _format.location(skip["file"], skip["line"])
            named = function_names.of_compile(skip["compile_id"], skip["function"])
            where = f"{named} at {place}, {where}"
        reason = _format.cudagraph_skip_reason(skip["reason"], skip["category"])
        lines += view.wrapped(f"{skip['category']} ({where}): {reason}", "  ")
    return lines


def _caches(section: ProcessSection, view: _View) -> list[str]:
    caches = section["caches"]
    counts = {"inductor_fx": caches["inductor_fx"], "aot_autograd": caches["aot_autograd"]}
    parts = [  # a cache's name stays with its first count where the line wraps
        f"{cache}{NO_BREAK_SPACE}{_format.lookups(states['hit'], states['miss'], states['bypass'])}"
        for cache, states in counts.items()
        if any(states.values())
    ]
    if not parts:
        return []
    label = "Compile caches:"
    # and a count with its noun ("0 bypasses")
    bound = [_COUNT_NOUN.sub(f"\\1{NO_BREAK_SPACE}", part) for part in parts]
    lines = view.wrapped(f"{label} " + "; ".join(bound), "")
    lines[0] = view.paint(label, "bold") + lines[0][len(label) :]
    for row in _shown(caches["bypass_reasons"], view):
        text = f"bypass ({row['cache']}, {row['count']}x): {row['reason'] or 'no reason given'}"
        lines += view.wrapped(text, "  ")
    return lines


_SECTIONS: tuple[Callable[[ProcessSection, _View], list[str]], ...] = (
    _exports_render.terminal,  # only where the process used torch.export
    _compiles,
    _graph_breaks,
    _recompiles,
    _near_limit,
    _slowest,
    _failures,
    _unfinished,
    _faults,
    _accuracy,
    _runs,
    _device_time,
    _cudagraphs,
    _caches,
)
