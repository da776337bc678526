"""Text for values shared by the terminal and HTML views: durations, locations, counts."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import msgspec

from otel_dynamo import names
from otel_dynamo.causes.fixes import USER_FRAME
from otel_dynamo.report.read.files import UNPRINTABLE
from otel_dynamo.report.render.table import Cell
from otel_dynamo.report.summary.function_names import (
    NO_FUNCTION_NAMES,
    FunctionNames,
    short_path,
)
from otel_dynamo.report.summary.schema import CompileRow, ProcessDescription, Source, StackCount

TOTAL_TITLES: dict[str, str] = {
    "frame_compiles": "frame compiles",
    "graphs": "graphs",
    "ops": "ops",
    "guards": "guards",
    "graph_breaks": "graph breaks",
    "recompiles": "recompiles",
    "failures": "failures",
    "faults": "injected faults",
    "accuracy_failures": "accuracy failures",
    "runs": "recorded runs",
    "unfinished_compiles": "unfinished compiles",
    "cudagraph_skips": "CUDA graph skips",
    "cache_hits": "cache hits",
    "cache_misses": "cache misses",
    "cache_bypasses": "cache bypasses",
    "exports": "torch.export calls",
    "export_failures": "failed torch.export calls",
    "decompositions": "run_decompositions calls",
    "compile_seconds": "compile time",
    "lazy_backward_seconds": "  of it lazy backward",
    "warm_compile_seconds": "warm compile time",
    "device_seconds": "device time",
    "export_seconds": "torch.export time",
}
"""How the terminal and the pages name each total (every key of TOTAL_KEYS)."""

OPS_NOTE = (
    "ops: call_function, call_method and call_module nodes, every compile summed "
    "(torch._dynamo.explain's op_count: call_function nodes only)"
)
"""Under the frame-compile table: what its ops column counts."""

OUTCOME_STYLE = {
    names.OUTCOME_SUCCESS: "green",
    names.OUTCOME_FAILURE: "red",
    names.OUTCOME_SKIPPED: "yellow",
    names.OUTCOME_NO_GRAPH: "yellow",
}
"""How a compile's outcome is painted (on the page, that style's class): ok, bad or a
warning; an outcome this version does not know, plain."""


def outcome_cell(outcome: str) -> Cell:
    """A compile's outcome in the style of what it means (``OUTCOME_STYLE``)."""
    return Cell(outcome, OUTCOME_STYLE.get(outcome))


_STACK_ENTRY = re.compile(r"^(?P<path>.*?):(?P<rest>\d+.*)$")


def duration(value: float | None) -> str:
    """Seconds as "120 µs", "45.0 ms", "1.23 s", "2 min 05 s" or "3 h 07 min"; "0 s" for
    none; "-" when not recorded. Each unit is chosen after rounding, so no figure reads
    "1000 µs" or "60.00 s"; the page's script (``static/duration.js``) formats the same.
    """
    if value is None:
        return "-"
    if value == 0:
        return "0 s"
    if value < 0:
        return "-" + duration(-value)
    if round(value * 1e6) < 1000:
        return f"{value * 1e6:.0f} µs"
    if round(value * 1e3, 1) < 1000:
        return f"{value * 1e3:.1f} ms"
    if round(value, 2) < 60:
        return f"{value:.2f} s"
    whole_seconds = round(value)
    if whole_seconds < 3600:
        return f"{whole_seconds // 60} min {whole_seconds % 60:02d} s"
    whole_minutes = round(value / 60)
    return f"{whole_minutes // 60} h {whole_minutes % 60:02d} min"


def settings_vary(rows: Sequence[CompileRow]) -> bool:
    """Whether the compiles were asked for in more than one way, or any beyond its backend
    (then the views say how each was compiled)."""
    shown = {row["compiled_with"] for row in rows}
    return len(shown) > 1 or any(" · " in (text or "") for text in shown)


def code_place(function: str | None, path: str | None, line: int | None) -> str:
    """Where code is, one wording everywhere: "forward at project/model.py:10"."""
    at = location(path, line) if path else ""
    if at and function:
        return f"{function} at {at}"
    return at or function or ""


def location(path: str | None, line: int | None, *, short: bool = True) -> str:
    """ "dir/file.py:12" (or the full path when not ``short``); "?" when unknown."""
    if path is None:
        return "?"
    shown = short_path(path) if short else path
    return shown if line is None else f"{shown}:{line}"


def user_location(user_stack: list[str]) -> tuple[str, str, int | None]:
    """(short file, function, line) of a stack's innermost entry ("", "", None if none)."""
    if not user_stack:
        return "", "", None
    match = USER_FRAME.match(user_stack[-1])
    if match is None:
        return user_stack[-1], "", None
    return short_path(match["path"]), match["function"], int(match["line"])


def stack_entry(entry: str) -> str:
    """A "path:line in function" user-stack entry with its path shortened."""
    match = _STACK_ENTRY.match(entry)
    return entry if match is None else f"{short_path(match['path'])}:{match['rest']}"


_LIBRARY_PATH_PARTS = ("/site-packages/", "/dist-packages/", "/lib/python3", "/torch/", "<frozen ")
"""A stack entry whose path holds one of these is torch's, a library's or Python's own."""


def folded_stack(user_stack: list[str]) -> list[tuple[str, int]]:
    """A user stack (outermost first) as shown: innermost first, each entry with its path
    shortened; a run of torch, library or standard-library frames after the innermost
    becomes one "… N torch/library frames" entry. Each item: (text, frames it stands for)."""
    shown: list[tuple[str, int]] = []
    run = 0
    for index, entry in enumerate(reversed(user_stack)):
        if index > 0 and _is_library(entry):
            run += 1
            continue
        if run:
            shown.append((f"… {plural(run, 'torch/library frame')}", run))
            run = 0
        shown.append((stack_entry(entry), 1))
    if run:
        shown.append((f"… {plural(run, 'torch/library frame')}", run))
    return shown


FoldedStack = list[tuple[str, int]]


@dataclasses.dataclass
class MergedStack:
    """Stacks of a graph-break group that read the same once folded: the folded stack,
    how many breaks it stands for, and their compile ids (in first-seen order)."""

    stack: FoldedStack
    count: int
    compile_ids: list[str]


def merged_stacks(
    stacks: list[StackCount], function_names: FunctionNames = NO_FUNCTION_NAMES
) -> list[MergedStack]:
    """A graph-break group's stacks folded (``folded_stack``), functions named as the
    frame tables name them; those that then read the same counted together, with their
    compile ids; most frequent first."""
    merged: dict[tuple[tuple[str, int], ...], MergedStack] = {}
    for stack in stacks:
        folded = folded_stack(function_names.stack(stack["user_stack"]))
        entry = merged.setdefault(tuple(folded), MergedStack(folded, 0, []))
        entry.count += stack["count"]
        entry.compile_ids += [i for i in stack["compile_ids"] if i not in entry.compile_ids]
    return sorted(merged.values(), key=lambda entry: -entry.count)


def _is_library(entry: str) -> bool:
    match = _STACK_ENTRY.match(entry)
    path = entry if match is None else match["path"]
    return any(part in path for part in _LIBRARY_PATH_PARTS)


def number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def optional(value: int | None) -> str:
    return "-" if value is None else str(value)


def lookups(hits: int, misses: int, bypasses: int) -> str:
    """ "2 hits, 3 misses, 0 bypasses": cache lookups, one wording everywhere."""
    return (
        f"{plural(hits, 'hit')}, {plural(misses, 'miss', 'misses')}, "
        f"{plural(bypasses, 'bypass', 'bypasses')}"
    )


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """ "1 graph", "2 graphs"."""
    return f"{count} {singular if count == 1 else plural_form or singular + 's'}"


def cudagraph_skip_reason(reason: str | None, category: str | None) -> str:
    """torch's reason for a CUDA-graph skip, never cut to nothing: where its text names
    nothing after its colon (a graph on the CPU reads "multiple devices: " with no device
    listed), what the skip's category says is added."""
    text = (reason or "").strip()
    if text and not text.endswith(":"):
        return text
    if category == names.CUDAGRAPH_CATEGORY_CPU_DEVICE:
        said = "the graph has no CUDA device (CUDA graphs need one)"
    else:
        said = f"torch named nothing more (category {category or 'not recorded'})"
    return f"{text} {said}" if text else said


def error(error_type: str | None, message: str | None) -> str:
    """ "Type: message" on one line, either part may be missing (``first_lines``)."""
    shown = first_lines(message) if message else None
    return ": ".join(part for part in (error_type, shown) if part) or "(no error recorded)"


def first_lines(message: str) -> str:
    """A multi-line message on one line: its first line, and where that only introduces
    the cause ("backend='inductor' raised:"), the cause's first line too."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if not lines:
        return ""
    shown = lines[0]
    if shown.endswith(":") and len(lines) > 1:
        shown = f"{shown} {lines[1]}"
    return shown + (" …" if len(lines) > (2 if shown != lines[0] else 1) else "")


def process_heading(section: ProcessDescription) -> str:
    """ "rank 3 of 8 · run job-1 · node-a · pid 1234 · train" for a process section."""
    name = section["process"]
    if section["rank"] is not None and section["world_size"] is not None:
        name += f" of {section['world_size']}"
    details = (
        section["run_id"] and f"run {section['run_id']}",
        section["host"],
        section["pid"] is not None and f"pid {section['pid']}",
        section["service"],
    )
    # Without a rank the label already names the host, pid or service: not twice.
    shown = [str(part) for part in details if part and str(part) not in name]
    return " · ".join([name, *shown])


def source_lines(source: Source | None) -> list[str]:
    """Where a run not read from files came from, and what that means for its counts
    (the terminal report's and the page's note); nothing for files."""
    if source is None:
        return []
    window = " to ".join(source["window"])
    run = "" if source["run_id"] is None else f", run {source['run_id']}"
    lines = [
        f"read from Jaeger: service {source['service']}{run}, {window}; "
        f"{plural(source['traces'], 'trace')} in {plural(source['queries'], 'query', 'queries')}",
        "counts complete under the shipped tail sampling: "
        + ", ".join(key.replace("_", " ") for key in source["complete"])
        + " (and compiles over its latency threshold); every other count may be sampled",
        "not in a trace store (log records only): variant calls, unfinished compiles",
    ]
    if source["truncated_slices"]:
        count = len(source["truncated_slices"])
        lines.append(
            f"INCOMPLETE: {plural(count, 'time slice')} still held the trace limit at the "
            "narrowest: traces may be missing there (a higher limit= in the address)"
        )
    return lines


def printable(text: str) -> str:
    """``text`` with each control or bidi character shown as its escape (``\\x1b``)."""
    if UNPRINTABLE.search(text) is None:  # the usual text: no replacement to build
        return text
    return UNPRINTABLE.sub(lambda match: ascii(match.group(0))[1:-1], text)


_INVISIBLE_IN_JSON = re.compile("[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
"""What JSON leaves raw but a terminal acts on (DEL, C1, bidi) or a JavaScript reader
splits lines at (U+2028/9); JSON itself escapes C0."""


def render_json(summary: Any) -> str:
    """The summary as indented JSON whose text is safe on a terminal (``json_chunks``)."""
    return "".join(json_chunks(summary))


def json_chunks(summary: Any) -> Iterator[str]:
    """The summary as ``json.dumps(summary, indent=2, ensure_ascii=False)`` writes it, and
    a line feed, piece by piece (a large summary is never one string beside its pieces:
    each top-level value, or each item of a top-level list, is one), each string's DEL,
    C1, bidi and line-separator characters written as ``\\uXXXX``: it parses back exactly
    as it was."""
    if not isinstance(summary, dict) or not all(isinstance(key, str) for key in summary):
        yield _json_safe(_indented(summary, depth=0) + "\n")
        return
    if not summary:
        yield "{}\n"
        return
    opening = "{"
    for index, (key, value) in enumerate(summary.items()):
        head = f"{opening if index == 0 else ','}\n  {_encoded_key(key)}: "
        if isinstance(value, list) and value:
            yield _json_safe(head + "[")
            for position, item in enumerate(value):
                yield _json_safe(f"{',' if position else ''}\n    {_indented(item, depth=2)}")
            yield "\n  ]"
        else:
            yield _json_safe(head + _indented(value, depth=1))
    yield "\n}\n"


def _encoded_key(key: str) -> str:
    return json.dumps(key, ensure_ascii=False)


def _indented(value: Any, *, depth: int) -> str:
    """``value`` as ``json.dumps(..., indent=2, ensure_ascii=False)`` writes it ``depth``
    levels in: json's compact text (its C encoder) laid out by msgspec's formatter (C),
    which keeps each token's text; json's own indenting encoder (Python) where that
    cannot be done (a NaN, a lone surrogate)."""
    try:
        compact = json.dumps(value, ensure_ascii=False).encode()
        text = msgspec.json.format(compact, indent=2).decode()
    except (msgspec.DecodeError, UnicodeEncodeError):
        text = json.dumps(value, indent=2, ensure_ascii=False)
    return text.replace("\n", "\n" + "  " * depth) if depth else text


def _json_safe(text: str) -> str:
    # Only strings hold these characters, and inside a string the escape is the same.
    return _INVISIBLE_IN_JSON.sub(lambda match: f"\\u{ord(match.group(0)):04x}", text)


def printable_values(value: Any) -> Any:
    """A summary with every string in it made ``printable`` (keys included)."""
    kind = type(value)
    if kind is int or kind is float or kind is bool or value is None:  # most of a summary
        return value
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, Mapping):
        return {printable_values(key): printable_values(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [printable_values(item) for item in value]
    return value


def calls(row: Mapping[str, Any]) -> str:
    """The calls a variant served; "cold" when a small share of its code's calls."""
    if row["calls"] is None:
        return "-"
    return f"{row['calls']:,} cold" if row["hot"] is False else f"{row['calls']:,}"
