"""Turn :class:`Telemetry` into the report summary (:class:`~.schema.Summary`).

The summary is the contract shared by the terminal view, ``--json``, the HTML page and
the diff (docs/report-json.md). Every key is always present; lists are in a stable order.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import TypeVar, cast

from otel_dynamo import names
from otel_dynamo.causes.guards import plain_reason
from otel_dynamo.report.read.model import (
    STATUS_ERROR,
    Attributes,
    FileStats,
    LogRecord,
    Problem,
    Process,
    Span,
    Telemetry,
)
from otel_dynamo.report.read.values import integer, number, seconds, text
from otel_dynamo.report.summary import compiles as _compiles
from otel_dynamo.report.summary import exports, time_split
from otel_dynamo.report.summary import ranks as _ranks
from otel_dynamo.report.summary import runtime as _runtime
from otel_dynamo.report.summary.schema import (
    TIME_TOTALS,
    TOTAL_KEYS,
    AccuracyCheck,
    Caches,
    CompileRow,
    ErrorFields,
    Failure,
    Fault,
    GraphBreakGroup,
    Inputs,
    LimitRow,
    LimitStatus,
    Location,
    ProcessDescription,
    ProcessSection,
    ProcessTables,
    ProcessTotals,
    RecompileRow,
    SlowCompile,
    Summary,
    Totals,
    Unfinished,
)
from otel_dynamo.report.summary.tree import SpanTree
from otel_dynamo.report.summary.what_to_do import what_to_do

SCHEMA_VERSION = 2
"""Bumped when a key of the summary changes meaning or disappears (additions keep it)."""

DEFAULT_RECOMPILE_LIMIT = 8
"""torch._dynamo.config.recompile_limit's default: cache entries per code object."""

DEFAULT_SLOWEST = 5
"""How many of the slowest frame compiles each process lists."""

LIMIT_REACHED: LimitStatus = "at_limit"
LIMIT_NEAR: LimitStatus = "near_limit"
"""Status of code in ``near_recompile_limit``."""

HOT_VARIANT_SHARE = 0.1
"""A variant (compile id) is hot when it served at least this share of the calls of all
variants of its code; a recompile that served a few calls of thousands is cold."""

STAGE_COMPILE = "compile"
STAGE_RUN = "run"
"""Where a failure happened (the values of names.ATTR_STAGE)."""


def summarize(
    telemetry: Telemetry,
    *,
    recompile_limit: int = DEFAULT_RECOMPILE_LIMIT,
    slowest: int = DEFAULT_SLOWEST,
) -> Summary:
    """The report summary of ``telemetry`` (docs/report-json.md has every key)."""
    builder = SummaryBuilder(recompile_limit=recompile_limit, slowest=slowest)
    builder.add(telemetry)
    return builder.finish(telemetry.files, telemetry.problems)


class SummaryBuilder:
    """The summary built a few processes at a time: ``add`` the telemetry of whole
    processes (their spans may then be dropped), ``finish`` once all were added."""

    def __init__(self, *, recompile_limit: int, slowest: int) -> None:
        self._recompile_limit = recompile_limit
        self._slowest = slowest
        self._sections: list[BuiltSection] = []

    def add(self, telemetry: Telemetry) -> None:
        """Summarize every process of ``telemetry``; none may have been added before."""
        self.extend(self.sections(telemetry))

    def sections(self, telemetry: Telemetry) -> list[BuiltSection]:
        """The section of every process of ``telemetry``, not yet added (a worker process
        builds them; ``extend`` adds them)."""
        spans_by_process = _group(telemetry.spans)
        logs_by_process = _group(telemetry.logs)
        built = []
        for process in telemetry.processes:
            section, tally = _process_section(
                process,
                process.label,  # told apart from the others' in finish()
                spans_by_process.get(process.key, []),
                logs_by_process.get(process.key, []),
                recompile_limit=self._recompile_limit,
                slowest=self._slowest,
            )
            built.append(BuiltSection(process, section, tally))
        return built

    def extend(self, sections: list[BuiltSection]) -> None:
        """Add sections ``sections`` built; none of their processes added before."""
        self._sections += sections

    def process_keys(self) -> list[tuple[str, ...]]:
        """The processes added, in the order of the summary's ``processes``."""
        return [built.process.key for built in self._ordered()]

    def _ordered(self) -> list[BuiltSection]:
        return sorted(self._sections, key=lambda built: built.process.sort_key)

    def finish(self, files: list[FileStats], problems: list[Problem]) -> Summary:
        ordered = self._ordered()
        labels = process_labels([built.process for built in ordered])
        for built in ordered:
            built.section["process"] = labels[built.process.key]
        processes = [built.section for built in ordered]
        return {
            "schema_version": SCHEMA_VERSION,
            "recompile_limit": self._recompile_limit,
            "inputs": _inputs(files, problems),
            "source": None,
            "totals": _sum_totals(processes),
            "compile_time": time_split.combine(built.compile_time for built in ordered),
            "processes": processes,
            "ranks": _ranks.compare(processes),
        }


@dataclasses.dataclass
class BuiltSection:
    """One process summarized: its section, and the tally its compile time was split
    from (the tallies of all processes add up to the whole run's split)."""

    process: Process
    section: ProcessSection
    compile_time: time_split.Tally


def process_labels(processes: list[Process]) -> dict[tuple[str, ...], str]:
    """Process labels, told apart by run id or pid where two would read the same."""
    seen = Counter(process.label for process in processes)
    labels = {}
    for process in processes:
        detail = _distinction(process)
        if seen[process.label] > 1 and detail is not None:
            labels[process.key] = f"{process.label} ({detail})"
        else:
            labels[process.key] = process.label
    return labels


def _distinction(process: Process) -> str | None:
    if process.run_id:
        return f"run {process.run_id}"
    if process.pid is not None:
        return f"pid {process.pid}"
    return None if process.instance is None else f"instance {process.instance[:8]}"


_Record = TypeVar("_Record", Span, LogRecord)


def _group(records: Iterable[_Record]) -> dict[tuple[str, ...], list[_Record]]:
    grouped: dict[tuple[str, ...], list[_Record]] = defaultdict(list)
    for record in records:
        grouped[record.process.key].append(record)
    return grouped


def _inputs(files: list[FileStats], problems: list[Problem]) -> Inputs:
    return {
        "files": [
            {
                "path": stats.path,
                "lines": stats.lines,
                "spans": stats.spans,
                "log_records": stats.log_records,
                "metric_points": stats.metric_points,
                "bad_lines": stats.bad_lines,
            }
            for stats in files
        ],
        "problems": [
            {"path": problem.path, "line": problem.line, "message": problem.message}
            for problem in problems
        ],
    }


def _process_section(
    process: Process,
    label: str,
    spans: list[Span],
    logs: list[LogRecord],
    *,
    recompile_limit: int,
    slowest: int,
) -> tuple[ProcessSection, time_split.Tally]:
    tree = SpanTree(spans)
    notable = _notable(spans)
    frames = sorted(
        (span for span in notable if span.name == names.SPAN_FRAME),
        key=lambda span: (span.start_ns, _compiles.compile_id_sort_key(_compile_id(span))),
    )
    compiles = [_compiles.compile_row(frame, tree) for frame in frames]
    _add_variant_calls(compiles, logs)
    recompiles = _recompiles(compiles)
    graph_breaks = _graph_breaks(frames)
    near_limit = _near_recompile_limit(compiles, recompile_limit)
    causes = what_to_do(
        frames,
        compiles,
        recompiles=recompiles,
        breaks=graph_breaks,
        limits=near_limit,
        torch_version=process.torch_version,
    )
    caches = _runtime.caches(notable)
    tables: ProcessTables = {
        "compiles": compiles,
        "graph_breaks": graph_breaks,
        "recompiles": recompiles,
        "near_recompile_limit": near_limit,
        "what_to_do": causes,
        "slowest": _slowest(compiles, slowest),
        "failures": _failures(notable, tree),
        "faults": _faults(notable, logs, tree),
        "accuracy": _accuracy(notable, logs, tree),
        "runs": _runs(notable),
        "device_time": _runtime.device_time(notable),
        "cudagraphs": _runtime.cudagraphs(notable),
        "caches": caches,
        "unfinished": _unfinished(logs, {row["compile_id"] for row in compiles}),
        "torch_export": exports.section(notable),
    }
    totals = _totals(tables, _lazy_backwards_outside_frames(notable, tree))
    tally = time_split.tally({"compiles": compiles, "caches": caches, "totals": totals})
    section: ProcessSection = {
        **_describe(process, label),
        **tables,
        "totals": totals,
        "compile_time": time_split.split(tally),
    }
    return section, tally


def _totals(tables: ProcessTables, orphan_lazy_ns: int) -> ProcessTotals:
    """A process's totals, from its tables and the seconds of lazy backwards compiled
    outside any frame compile."""
    compiles, caches = tables["compiles"], tables["caches"]
    export_totals = exports.totals(tables["torch_export"])
    lazy_ns = sum(round(row["lazy_backward_s"] * 1e9) for row in compiles)
    # from each row's own compile_s, so that a process's total is the sum of its rows
    compile_ns = sum(round(row["compile_s"] * 1e9) for row in compiles) + orphan_lazy_ns
    return {
        "frame_compiles": len(compiles),
        "graphs": sum(row["graphs"] for row in compiles),
        "ops": sum(row["ops"] for row in compiles),
        "guards": sum(row["guards"] or 0 for row in compiles),
        "graph_breaks": sum(row["graph_breaks"] for row in compiles),
        "recompiles": len(tables["recompiles"]),
        "failures": len(tables["failures"]),
        "faults": len(tables["faults"]),
        "accuracy_failures": sum(1 for row in tables["accuracy"] if not row["passed"]),
        "runs": sum(tables["runs"].values()),
        "unfinished_compiles": len(tables["unfinished"]),
        "cudagraph_skips": tables["cudagraphs"]["skipped"],
        "cache_hits": _cache_total(caches, names.CACHE_HIT),
        "cache_misses": _cache_total(caches, names.CACHE_MISS),
        "cache_bypasses": _cache_total(caches, names.CACHE_BYPASS),
        "compile_seconds": seconds(compile_ns),
        "lazy_backward_seconds": seconds(lazy_ns + orphan_lazy_ns),
        "device_seconds": round(float(sum(row["device_s"] for row in tables["device_time"])), 6),
        "warm_compile_seconds": caches["warm_compile_s"],
        "exports": export_totals["exports"],
        "export_failures": export_totals["export_failures"],
        "decompositions": export_totals["decompositions"],
        "export_seconds": export_totals["export_seconds"],
    }


_NOTABLE_NAMES = frozenset(
    {names.SPAN_FRAME, names.SPAN_LAZY_BACKWARD, *_compiles.RUN_SPANS, *exports.EXPORT_SPANS}
)
"""Spans the per-process tables below the frame compiles are read from, by name: frames
(failures, cache counts, CUDA-graph locations), lazy backwards, runs and export calls."""
_NOTABLE_KEYS = frozenset(
    {
        names.ATTR_CUDAGRAPH_DECISION,
        names.ATTR_FAULT_KIND,
        names.ATTR_ACCURACY_PASSED,
        *names.CACHE_STATE_ATTRIBUTES.values(),
    }
)
"""... and by attribute: CUDA-graph decisions, faults, accuracy checks, cache states."""


def _notable(spans: list[Span]) -> list[Span]:
    """The spans the tables other than the frame compiles' read (each still picks its
    own), in their order: most spans of a process are the phases, graphs and AOT steps
    beneath its frames, which those tables would otherwise each pass over again."""
    return [
        span
        for span in spans
        if span.name in _NOTABLE_NAMES
        or span.status_code == STATUS_ERROR
        or not _NOTABLE_KEYS.isdisjoint(span.attributes)
    ]


def _cache_total(caches: Caches, state: str) -> int:
    """Lookups in ``state`` over both compile caches."""
    return caches["inductor_fx"][state] + caches["aot_autograd"][state]


def _describe(process: Process, label: str) -> ProcessDescription:
    return {
        "process": label,
        "rank": process.rank,
        "local_rank": process.local_rank,
        "world_size": process.world_size,
        "node_rank": process.node_rank,
        "run_id": process.run_id,
        "host": process.host,
        "pid": process.pid,
        "service": process.service,
        "torch_version": process.torch_version,
    }


def _compile_id(span: Span | None) -> str | None:
    return None if span is None else text(span.attributes.get(names.ATTR_COMPILE_ID))


def _location(row: Location) -> Location:
    return {"function": row["function"], "file": row["file"], "line": row["line"]}


def _graph_breaks(frames: list[Span]) -> list[GraphBreakGroup]:
    """Graph breaks grouped by reason, each with its distinct user stacks and counts."""
    groups: dict[str, _BreakGroup] = {}
    for frame in frames:
        for seen in _compiles.graph_breaks(frame):
            reason, stack = seen.reason, seen.user_stack
            group = groups.setdefault(reason, _BreakGroup())
            group.kind = group.kind or seen.kind
            group.hints = group.hints or seen.hints
            group.url = group.url or seen.url
            group.count += 1
            compile_id = _compile_id(frame)
            group.compile_ids[compile_id] = None
            group.stacks[stack] += 1
            group.stack_compile_ids.setdefault(stack, {})[compile_id] = None
    rows = [_graph_break_row(reason, group) for reason, group in groups.items()]
    return sorted(rows, key=lambda row: (-row["count"], row["reason"]))


@dataclasses.dataclass
class _BreakGroup:
    kind: str | None = None
    hints: tuple[str, ...] = ()
    url: str | None = None
    count: int = 0
    compile_ids: dict[str | None, None] = dataclasses.field(default_factory=dict)
    stacks: Counter[tuple[str, ...]] = dataclasses.field(default_factory=Counter)
    stack_compile_ids: dict[tuple[str, ...], dict[str | None, None]] = dataclasses.field(
        default_factory=dict
    )


def _graph_break_row(reason: str, group: _BreakGroup) -> GraphBreakGroup:
    stacks = sorted(group.stacks.items(), key=lambda item: (-item[1], item[0]))
    return {
        "reason": reason,
        "kind": group.kind,
        "torch_hints": list(group.hints),
        "torch_url": group.url,
        "count": group.count,
        "compile_ids": [compile_id for compile_id in group.compile_ids if compile_id],
        "stacks": [
            {
                "user_stack": list(stack),
                "count": count,
                "compile_ids": [known for known in group.stack_compile_ids[stack] if known],
            }
            for stack, count in stacks
        ],
        "fixes": [],
    }


def _add_variant_calls(compiles: list[CompileRow], logs: list[LogRecord]) -> None:
    """Each compile row's calls (from the last torch.compile.variant_calls event of its
    compile id, per run kind), its share of its code's calls, and whether it is hot."""
    calls: dict[tuple[str | None, str | None], int] = {}
    for record in logs:
        if record.event_name != names.LOG_VARIANT_CALLS:
            continue
        attributes = record.attributes
        key = (
            text(attributes.get(names.ATTR_COMPILE_ID)),
            text(attributes.get(names.ATTR_RUN_KIND)),
        )
        value = integer(attributes.get(names.ATTR_VARIANT_CALLS))
        if value is not None and value >= calls.get(key, 0):
            calls[key] = value
    by_code: dict[_Code, int] = defaultdict(int)
    for row in compiles:
        compile_id = row["compile_id"]
        forward = [calls.get((compile_id, kind)) for kind in _CALLING_KINDS]
        known = [value for value in forward if value is not None]
        row["calls"] = max(known) if known else None
        row["backward_calls"] = calls.get((compile_id, names.RUN_KIND_BACKWARD))
        by_code[_code(row)] += row["calls"] or 0
    for row in compiles:
        total = by_code[_code(row)]
        share = None if row["calls"] is None or total == 0 else row["calls"] / total
        row["call_share"] = share
        row["hot"] = None if share is None else share >= HOT_VARIANT_SHARE


_CALLING_KINDS = (names.RUN_KIND_FORWARD, names.RUN_KIND_INFERENCE)
"""Run kinds that run once per call of a variant (a backward runs only when asked)."""


_Code = tuple[str | None, int | None, str | None]


def _code(row: Location) -> _Code:
    return (row["file"], row["line"], row["function"])


def _recompiles(compiles: list[CompileRow]) -> list[RecompileRow]:
    return [
        {
            "compile_id": row["compile_id"],
            **_location(row),
            "module": row["module"],
            "reason": row["recompile_reason"],
            "reason_plain": plain_reason(row["recompile_reason"]),
            "cache_size": row["cache_size"],
            "calls": row["calls"],
            "call_share": row["call_share"],
            "hot": row["hot"],
            "fixes": [],
        }
        for row in compiles
        if row["is_recompile"]
    ]


def _near_recompile_limit(compiles: list[CompileRow], limit: int) -> list[LimitRow]:
    """Code locations whose cache entries reach the limit, or come within a quarter of it."""
    by_code: dict[_Code, list[CompileRow]] = defaultdict(list)
    for row in compiles:
        by_code[_code(row)].append(row)
    near = max(1, limit - max(1, limit // 4))
    rows = [_limit_row(rows, limit) for rows in by_code.values()]
    rows = [row for row in rows if row["cache_entries"] >= near]
    return sorted(
        rows, key=lambda row: (-row["cache_entries"], row["file"] or "", row["line"] or 0)
    )


def _limit_row(rows: list[CompileRow], limit: int) -> LimitRow:
    cache_sizes = [row["cache_size"] for row in rows if row["cache_size"] is not None]
    max_cache_size = max(cache_sizes) if cache_sizes else None
    # cache_size counts the entries held before this compile; the compile adds one.
    entries = max(len(rows), (max_cache_size + 1) if max_cache_size is not None else 0)
    return {
        **_location(rows[0]),
        "compiles": len(rows),
        "recompiles": sum(1 for row in rows if row["is_recompile"]),
        "max_cache_size": max_cache_size,
        "cache_entries": entries,
        "limit": limit,
        "status": LIMIT_REACHED if entries >= limit else LIMIT_NEAR,
    }


def _slowest(compiles: list[CompileRow], count: int) -> list[SlowCompile]:
    ranked = sorted(compiles, key=lambda row: -row["compile_s"])[:count]
    return [
        {
            "compile_id": row["compile_id"],
            **_location(row),
            "module": row["module"],
            "outcome": row["outcome"],
            "duration_s": row["duration_s"],
            "lazy_backward_s": row["lazy_backward_s"],
            "compile_s": row["compile_s"],
            "phases": row["phases"],
            "phase_details": row["phase_details"],
        }
        for row in ranked
    ]


def _failures(spans: list[Span], tree: SpanTree) -> list[Failure]:
    """Failed frame compiles and failed runs (errors inside a frame count once, on it)."""
    failures = []
    # Only a frame or a failed span can be one: the rest is left out before the sort
    # (stable, so what stays keeps its order).
    candidates = [
        span for span in spans if span.status_code == STATUS_ERROR or span.name == names.SPAN_FRAME
    ]
    for span in sorted(candidates, key=lambda span: span.start_ns):
        failure = _failure(span, tree)
        if failure is not None:
            failures.append(failure)
    return failures


def _failure(span: Span, tree: SpanTree) -> Failure | None:
    if span.name in exports.EXPORT_SPANS:
        return None  # listed in torch_export.failures
    if span.name == names.SPAN_FRAME:
        if _compiles.outcome(span) != names.OUTCOME_FAILURE and not span.is_error:
            return None
        stage = STAGE_COMPILE
    elif span.is_error and _compiles.run_kind(span) is not None:
        stage = STAGE_RUN
    elif span.is_error and tree.enclosing_frame(span) is None:
        stage = STAGE_COMPILE  # e.g. a graph span whose frame span was never exported
    else:
        return None
    frame = tree.enclosing_frame(span)
    return {
        "stage": stage,
        "compile_id": _compile_id(span) or _compile_id(frame),
        "function": None if frame is None else _compiles.function_of(frame, tree),
        "span": span.name,
        **_error_fields(span, tree),
    }


def _error_fields(span: Span, tree: SpanTree) -> ErrorFields:
    """The span's error; for a frame that recorded none, the first error beneath it."""
    fields = _compiles.error_fields(span)
    if fields["error_type"] is None and span.name == names.SPAN_FRAME:
        failed = (below for below in tree.descendants(span) if below.is_error)
        fields = next((_compiles.error_fields(below) for below in failed), fields)
    return fields


def _annotated(
    spans: list[Span], logs: list[LogRecord], tree: SpanTree, key: str
) -> list[tuple[Attributes, str, str | None]]:
    """(attributes, source, compile id) of every span and log record carrying ``key``."""
    found = []
    for span in spans:
        if key in span.attributes:
            compile_id = _compile_id(span) or _compile_id(tree.enclosing_frame(span))
            found.append((span.attributes, span.name, compile_id))
    for record in logs:
        if key in record.attributes:
            # A log record written inside a span carries its span id: use its frame.
            owner = tree.by_id.get(record.span_id)
            frame = None if owner is None else tree.enclosing_frame(owner)
            compile_id = text(record.attributes.get(names.ATTR_COMPILE_ID)) or _compile_id(frame)
            found.append((record.attributes, record.event_name or "log", compile_id))
    return found


def _faults(spans: list[Span], logs: list[LogRecord], tree: SpanTree) -> list[Fault]:
    """Injected faults; one that is both a span attribute and a log record counts once."""
    rows: dict[tuple[str | None, ...], Fault] = {}
    for attrs, source, compile_id in _annotated(spans, logs, tree, names.ATTR_FAULT_KIND):
        row: Fault = {
            "kind": text(attrs.get(names.ATTR_FAULT_KIND)),
            "target": text(attrs.get(names.ATTR_FAULT_TARGET)),
            "compile_id": compile_id,
            "source": source,
        }
        rows.setdefault((row["kind"], row["target"], compile_id), row)
    return list(rows.values())


def _accuracy(spans: list[Span], logs: list[LogRecord], tree: SpanTree) -> list[AccuracyCheck]:
    rows: dict[tuple[str | None, bool, float | None], AccuracyCheck] = {}
    for attrs, source, compile_id in _annotated(spans, logs, tree, names.ATTR_ACCURACY_PASSED):
        passed = attrs.get(names.ATTR_ACCURACY_PASSED)
        row: AccuracyCheck = {
            "compile_id": compile_id,
            "passed": passed if isinstance(passed, bool) else str(passed).lower() == "true",
            "max_abs_error": number(attrs.get(names.ATTR_ACCURACY_MAX_ABS_ERROR)),
            "max_rel_error": number(attrs.get(names.ATTR_ACCURACY_MAX_REL_ERROR)),
            "source": source,
        }
        rows.setdefault((compile_id, row["passed"], row["max_abs_error"]), row)
    return list(rows.values())


def _unfinished(logs: list[LogRecord], ended: set[str | None]) -> list[Unfinished]:
    """Compiles a still_compiling event announced and no frame span ever closed (the
    process was killed, hung, or died mid-compile): the latest word on each."""
    latest: dict[str, LogRecord] = {}
    for record in logs:
        compile_id = text(record.attributes.get(names.ATTR_COMPILE_ID))
        if record.event_name != names.LOG_STILL_COMPILING or compile_id is None:
            continue
        if compile_id in ended:
            continue
        held = latest.get(compile_id)
        if held is None or record.time_ns >= held.time_ns:
            latest[compile_id] = record
    rows = [_unfinished_row(compile_id, record) for compile_id, record in latest.items()]
    return sorted(rows, key=lambda row: _compiles.compile_id_sort_key(row["compile_id"]))


def _unfinished_row(compile_id: str, record: LogRecord) -> Unfinished:
    attributes = record.attributes
    line = attributes.get(names.ATTR_CODE_LINE)
    return {
        "compile_id": compile_id,
        "function": text(attributes.get(names.ATTR_CODE_FUNCTION)),
        "file": text(attributes.get(names.ATTR_CODE_FILE)),
        "line": line if isinstance(line, int) and not isinstance(line, bool) else None,
        "elapsed_s": number(attributes.get(names.ATTR_COMPILE_ELAPSED)),
        "last_seen_unix_nano": record.time_ns,
    }


def _runs(spans: list[Span]) -> dict[str, int]:
    counts = {
        names.RUN_KIND_FORWARD: 0,
        names.RUN_KIND_BACKWARD: 0,
        names.RUN_KIND_INFERENCE: 0,
        names.RUN_KIND_EXPORT: 0,
    }
    for span in spans:
        if span.name not in _compiles.RUN_SPANS:  # run_kind's None, without its call
            continue
        kind = _compiles.run_kind(span)
        if kind is not None:
            counts[kind] = counts.get(kind, 0) + 1
    return counts


def _lazy_backwards_outside_frames(spans: list[Span], tree: SpanTree) -> int:
    """Nanoseconds of lazy backward compiles whose frame compile was not recorded."""
    lazy = (span for span in spans if span.name == names.SPAN_LAZY_BACKWARD)
    return sum(span.duration_ns for span in lazy if tree.enclosing_frame(span) is None)


def _sum_totals(processes: list[ProcessSection]) -> Totals:
    summed: dict[str, float] = {key: 0.0 if key in TIME_TOTALS else 0 for key in TOTAL_KEYS}
    for section in processes:
        # every value of ProcessTotals is a number
        for key, value in cast("Mapping[str, float]", section["totals"]).items():
            summed[key] += value
    for key in TIME_TOTALS:
        summed[key] = round(summed[key], 6)
    # every key of ProcessTotals, summed: the type mypy cannot follow through a loop
    return cast(Totals, {"processes": len(processes), **summed})
