"""Render the summary for a terminal: short tables, at most ``width`` columns wide."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TextIO

from otel_dynamo.report.render import causes, time_split
from otel_dynamo.report.render import exports as _exports_render
from otel_dynamo.report.render import format as _format
from otel_dynamo.report.render import shared_tables as _tables
from otel_dynamo.report.render.table import (
    DEFAULT_ROW_LIMIT,
    DEFAULT_WIDTH,
    NO_BREAK_SPACE,
    TerminalLayout,
    format_table,
    truncate,
    wrapped,
)
from otel_dynamo.report.summary.function_names import FunctionNames, names_for
from otel_dynamo.report.summary.schema import (
    CompileFacts,
    CompileRow,
    GraphBreakGroup,
    ProcessSection,
    RankRow,
    Summary,
)

MAX_STACK_FRAMES = 3
"""Innermost user-stack frames shown under a graph break."""


_COUNT_NOUN = re.compile(r"(\d) ")


def color_enabled(stream: TextIO, *, environ: Mapping[str, str] | None = None) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    environ = os.environ if environ is None else environ
    if environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


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
    width, color, limit = layout.width, layout.color, layout.limit
    # One process at a time: a printable copy of a large run's whole summary would double it.
    top = _format.printable_values({k: v for k, v in summary.items() if k != "processes"})
    lines = _overview(top, layout)
    note = _format.source_lines(top["source"])
    lines += [layout.paint(truncate(line, layout.width), "dim") for line in note]
    todo = causes.what_to_do_terminal(summary, width=width, color=color, limit=limit)
    lines += ["", *todo] if todo else []
    where = time_split.terminal_lines(top["compile_time"], width=width, color=color)
    lines += ["", *where] if where else []
    why = causes.terminal_lines(summary, counts, width=width, color=color, limit=limit)
    lines += ["", *why] if why else []
    if top["ranks"]["compared"]:
        lines += ["", *_ranks(top, layout)]
    for section, body in zip(summary["processes"], bodies, strict=True):
        heading = _format.process_heading(section)
        shown = heading if printable_text else _format.printable(heading)
        lines += ["", _process_heading(shown, layout), *body]
    return "\n".join(lines) + "\n"


def process_body(
    section: ProcessSection, layout: TerminalLayout, *, printable_text: bool
) -> list[str]:
    """The lines ``render_terminal`` shows of one process below its heading: the same
    whatever the process's label, so that the process that summarized it may make them.
    ``printable_text``: as ``render_terminal`` takes it, of this process's files."""
    shown = section if printable_text else _format.printable_values(section)
    lines: list[str] = []
    for render in _SECTIONS:
        lines += render(shown, layout)
    return lines


def _overview(summary: Summary, layout: TerminalLayout) -> list[str]:
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
    return [layout.paint(truncate(heading, layout.width), "bold"), *_wrap(items, layout.width)]


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


def _ranks(summary: Summary, layout: TerminalLayout) -> list[str]:
    table = _tables.ranks(summary, layout)
    lines = [layout.title("Ranks", len(table.rows)), *layout.table(*table)]
    diverging = [row for row in summary["ranks"]["rows"] if row["diverges"]]
    if not diverging:
        return [*lines, layout.paint("  all ranks agree on graphs, recompiles and guards", "green")]
    return lines + [
        layout.paint(truncate(_divergence(row), layout.width), "red") for row in diverging
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


def _process_heading(text: str, layout: TerminalLayout) -> str:
    heading = f"── {text} "
    return layout.paint(truncate(heading.ljust(layout.width, "─"), layout.width), "cyan")


def _compiles(section: ProcessSection, layout: TerminalLayout) -> list[str]:
    rows = section["compiles"]
    if not rows:
        return [layout.title("Frame compiles: none")]
    lines, shown = layout.fitted(*_tables.compiles(section, layout), total=len(rows))
    with_ops = any(column.header == "ops" for column in shown)
    note = [layout.paint(line, "dim") for line in wrapped(_format.OPS_NOTE, layout.width)]
    return [
        layout.title("Frame compiles", len(rows)),
        *lines,
        *(note if with_ops else []),
        *(_compiled_with(rows, layout) if _format.settings_vary(rows) else []),
    ]


def _compiled_with(rows: Sequence[CompileRow], layout: TerminalLayout) -> list[str]:
    """Each way the frames were asked to be compiled, with the compile ids asked so."""
    ids: dict[str, list[str]] = {}
    for row in rows:
        ids.setdefault(row["compiled_with"] or "not recorded", []).append(row["compile_id"] or "?")
    lines = [layout.title("Compiled with")]
    for how, compile_ids in ids.items():
        text = f"{how}: {_format.plural(len(compile_ids), 'compile')} ({', '.join(compile_ids)})"
        lines += [f"  {line}" for line in wrapped(text, layout.width - 2)]
    return lines


def _graph_breaks(section: ProcessSection, layout: TerminalLayout) -> list[str]:
    groups = section["graph_breaks"]
    if not groups:
        return [layout.title("Graph breaks: none")]
    total = sum(group["count"] for group in groups)
    lines = [layout.title(f"Graph breaks ({total} in {_format.plural(len(groups), 'reason')})")]
    shown = layout.shown(groups)
    function_names = names_for(section["compiles"])
    for group in shown:
        lines += _graph_break_group(group, layout, function_names)
    if len(shown) < len(groups):
        lines.append(layout.paint(f"  … {len(groups) - len(shown)} more reasons", "dim"))
    return lines


def _graph_break_group(
    group: GraphBreakGroup, layout: TerminalLayout, function_names: FunctionNames
) -> list[str]:
    count = f"{group['count']}x"
    reason_text = group["reason"] or ""
    shown_kind = group["kind"] and not reason_text.startswith(group["kind"])
    kind = f" [{group['kind']}]" if shown_kind else ""  # not when the reason starts with it
    reason = wrapped(f"{reason_text}{kind}", layout.width - 10)
    lines = [f"  {layout.paint(count.rjust(6), 'yellow')}  {reason[0]}"]
    lines += [f"{' ' * 10}{line}" for line in reason[1:]]
    for hint in group["torch_hints"]:
        said = wrapped(f"torch's hint: {hint}", layout.width - 10)
        lines += [layout.paint(f"{' ' * 10}{line}", "cyan") for line in said]
    stacks = _format.merged_stacks(group["stacks"], function_names)
    for merged in layout.shown(stacks):
        lines += _stack_lines(merged.stack, merged.count, layout)
    return lines


def _stack_lines(shown: list[tuple[str, int]], count: int, layout: TerminalLayout) -> list[str]:
    """Innermost frame first, with the count; then the frames that called it, runs of
    torch/library frames folded into one line."""
    indent = " " * 10
    if not shown:
        return [layout.paint(f"{indent}{count}x (no user stack recorded)", "dim")]
    (innermost, _), *callers = shown
    lines = layout.wrapped(f"{count}x at {innermost}", indent)
    for text, _frames in callers[: MAX_STACK_FRAMES - 1]:
        prefix = "" if text.startswith("…") else "from "
        lines += layout.wrapped(f"{prefix}{text}", f"{indent}   ", "dim")
    hidden = sum(frames for _text, frames in callers[MAX_STACK_FRAMES - 1 :])
    if hidden > 0:
        lines.append(layout.paint(f"{indent}   … {_format.plural(hidden, 'outer frame')}", "dim"))
    return lines


def _recompiles(section: ProcessSection, layout: TerminalLayout) -> list[str]:
    rows = section["recompiles"]
    if not rows:
        return [layout.title("Recompiles: none")]
    # not layout.table: a reason's guard line is a row of its own, yet not a recompile
    table = _tables.recompiles(section, layout)
    lines = format_table(*table, width=layout.width, color=layout.color)
    lines += layout.more(len(rows), len(layout.shown(rows)))
    return [layout.title("Recompiles", len(rows)), *lines]


def _near_limit(section: ProcessSection, layout: TerminalLayout) -> list[str]:
    rows = section["near_recompile_limit"]
    if not rows:
        return []
    title = layout.title("Recompile limit: code close to or at it", len(rows))
    return [title, *layout.table(*_tables.near_limit(section, layout))]


def _slowest(section: ProcessSection, layout: TerminalLayout) -> list[str]:
    if not section["slowest"]:
        return []
    title = layout.title("Slowest compiles (frame + lazy backward)")
    return [title, *layout.table(*_tables.slowest(section, layout))]


def _failures(section: ProcessSection, layout: TerminalLayout) -> list[str]:
    rows = section["failures"]
    if not rows:
        return []
    title = layout.paint(layout.title("Failures", len(rows)), "red")
    return [title, *layout.table(*_tables.failures(section, layout))]


def _unfinished(section: ProcessSection, layout: TerminalLayout) -> list[str]:
    rows = section["unfinished"]
    if not rows:
        return []
    title = layout.title("Compiles that never finished (last still_compiling event)", len(rows))
    return [layout.paint(title, "red"), *layout.table(*_tables.unfinished(section, layout))]


def _faults(section: ProcessSection, layout: TerminalLayout) -> list[str]:
    rows = section["faults"]
    if not rows:
        return []
    return [
        layout.title("Injected faults", len(rows)),
        *layout.table(*_tables.faults(section, layout)),
    ]


def _accuracy(section: ProcessSection, layout: TerminalLayout) -> list[str]:
    rows = section["accuracy"]
    if not rows:
        return []
    return [
        layout.title("Accuracy checks", len(rows)),
        *layout.table(*_tables.accuracy(section, layout)),
    ]


def _runs(section: ProcessSection, layout: TerminalLayout) -> list[str]:
    runs = section["runs"]
    if not any(runs.values()):
        return []
    counts = ", ".join(f"{count} {kind}" for kind, count in runs.items() if count)
    return [f"{layout.paint('Recorded runs:', 'bold')} {counts}"]


def _device_time(section: ProcessSection, layout: TerminalLayout) -> list[str]:
    rows = section["device_time"]
    if not rows:
        return []
    title = layout.title("Device time of recorded runs, by graph (most first)", len(rows))
    return [title, *layout.table(*_tables.device_time(section, layout))]


def _cudagraphs(section: ProcessSection, layout: TerminalLayout) -> list[str]:
    graphs = section["cudagraphs"]
    if not graphs["graphs"]:
        return []
    style = "green" if not graphs["skipped"] else "yellow"
    heading = layout.paint(
        f"CUDA graphs: {graphs['graphed']} of {graphs['graphs']} graphs graphed; "
        f"{graphs['skipped']} skipped",
        style,
    )
    lines = [heading]
    function_names = names_for(section["compiles"])
    for skip in layout.shown(graphs["skips"]):
        where = f"{skip['compile_id']} {skip['run_kind']}, at {skip['at']}"
        if skip["function"]:
            place = _format.location(skip["file"], skip["line"])
            named = function_names.of_compile(skip["compile_id"], skip["function"])
            where = f"{named} at {place}, {where}"
        reason = _format.cudagraph_skip_reason(skip["reason"], skip["category"])
        lines += layout.wrapped(f"{skip['category']} ({where}): {reason}", "  ")
    return lines


def _caches(section: ProcessSection, layout: TerminalLayout) -> list[str]:
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
    lines = layout.wrapped(f"{label} " + "; ".join(bound), "")
    lines[0] = layout.paint(label, "bold") + lines[0][len(label) :]
    for row in layout.shown(caches["bypass_reasons"]):
        text = f"bypass ({row['cache']}, {row['count']}x): {row['reason'] or 'no reason given'}"
        lines += layout.wrapped(text, "  ")
    return lines


_SECTIONS: tuple[Callable[[ProcessSection, TerminalLayout], list[str]], ...] = (
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
