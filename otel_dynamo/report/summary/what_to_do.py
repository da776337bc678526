"""What to do: each cause of a process's recompiles and graph breaks, with its fixes,
ranked by what it cost.

A cause is one (code location, kind, subject): a failed guard's kind and source (or, for
a value on Dynamo's stack, its slot) at the compiled function, a break's reason at the
user code it broke in, or the recompile limit reached at a function. The fixes come from
``otel_dynamo.causes.fixes``, for the torch that ran (the resource's ``torch.version``);
each recompile and graph-break entry gets the fixes of its causes.
"""

from __future__ import annotations

import dataclasses

from otel_dynamo import names
from otel_dynamo.causes import fixes, guards
from otel_dynamo.causes.records import Fix
from otel_dynamo.report.read.model import Span
from otel_dynamo.report.read.values import strings, text
from otel_dynamo.report.summary.function_names import FunctionNames, function_label
from otel_dynamo.report.summary.schema import (
    CauseKind,
    CauseRow,
    CompileRow,
    GraphBreakGroup,
    LimitRow,
    RecompileRow,
)

_CauseKey = tuple[str | None, int | None, str | None, str, str]
"""(file, line, function, kind, subject)."""
_Failed = tuple[guards.GuardFailure, fixes.Code]
"""A failed guard and the code it failed at."""


@dataclasses.dataclass
class _Cause:
    kind: CauseKind
    code: fixes.Code
    module: str | None
    subject: str
    what: str
    fixes: list[Fix]
    recompile_ids: dict[str, None] = dataclasses.field(default_factory=dict)
    break_reasons: dict[str, None] = dataclasses.field(default_factory=dict)
    recompiles: int = 0
    graph_breaks: int = 0
    compile_ids: dict[str, None] = dataclasses.field(default_factory=dict)
    dimensions: dict[int, None] = dataclasses.field(default_factory=dict)
    """Every dimension its size guards failed on, in the order first seen."""
    last_failure: _Failed | None = None
    """A recompile cause's failed guard at its last recompile, and the code there: its
    fixes are made from it once every recompile is counted."""


def what_to_do(
    frames: list[Span],
    compiles: list[CompileRow],
    *,
    recompiles: list[RecompileRow],
    breaks: list[GraphBreakGroup],
    limits: list[LimitRow],
    torch_version: str | None,
) -> list[CauseRow]:
    """The process's causes, costliest first; fills each entry's ``fixes``."""
    arguments = {
        text(frame.attributes.get(names.ATTR_COMPILE_ID)): tuple(
            strings(frame.attributes.get(names.ATTR_CODE_ARGUMENTS))
        )
        for frame in frames
    }
    seconds = {row["compile_id"]: row["compile_s"] for row in compiles if row["compile_id"]}
    causes: dict[_CauseKey, _Cause] = {}
    recompiled = []
    for row in recompiles:
        code = fixes.Code(
            row["function"],
            row["file"],
            row["line"],
            arguments.get(row["compile_id"], ()),
            torch_version,
            function_label(row["function"], row["module"]),
        )
        recompiled.append((row, _recompile_causes(row, code, causes)))
    for cause in causes.values():
        if cause.last_failure is not None:
            failure, code = cause.last_failure
            cause.fixes = fixes.recompile_fixes(
                failure, code, recompiles=cause.recompiles, dimensions=list(cause.dimensions)
            )
    for row, found in recompiled:  # each cause's fixes as of its last recompile
        row["fixes"] = _unique(fix for cause in found for fix in cause.fixes)
    named = FunctionNames(compiles)
    for group in breaks:
        group["fixes"] = _unique(
            fix
            for cause in _break_causes(group, torch_version, named, causes)
            for fix in cause.fixes
        )
    for limit in limits:
        if limit["status"] == "at_limit":
            _limit_cause(limit, torch_version, causes)
    rows = [_row(cause, seconds) for cause in causes.values()]
    return sorted(
        rows,
        key=lambda row: (
            -row["compile_seconds"],
            -row["recompiles"],
            -row["graph_breaks"],
            row["function"] or "",
            row["line"] or 0,
            row["subject"],
        ),
    )


def _recompile_causes(
    row: RecompileRow, code: fixes.Code, causes: dict[_CauseKey, _Cause]
) -> list[_Cause]:
    found: list[_Cause] = []
    failures = guards.read_guards(row["reason"]) if row["reason"] else ()
    for failure in dict.fromkeys(failures):
        subject = f"{failure.kind} {failure.source or failure.stack_slot or failure.plain}"
        key = (code.file, code.line, code.function, "recompile", subject)
        cause = causes.get(key)
        if cause is None:
            cause = causes[key] = _Cause(
                "recompile", code, row["module"], subject, failure.plain, []
            )
        elif failure.dimension is not None and failure.dimension not in cause.dimensions:
            cause.what += f"; {failure.plain}"  # another dimension of the same value
        if failure.dimension is not None:
            cause.dimensions[failure.dimension] = None
        cause.last_failure = (failure, code)
        if any(seen is cause for seen in found):  # two of its guards failed: one recompile
            continue
        cause.recompiles += 1
        if row["compile_id"]:
            cause.recompile_ids[row["compile_id"]] = None
            cause.compile_ids[row["compile_id"]] = None
        found.append(cause)
    return found


def _break_causes(
    group: GraphBreakGroup,
    torch_version: str | None,
    named: FunctionNames,
    causes: dict[_CauseKey, _Cause],
) -> list[_Cause]:
    found: list[_Cause] = []
    stacks = group["stacks"] or [
        {"user_stack": [], "count": group["count"], "compile_ids": group["compile_ids"]}
    ]
    for stack in stacks:
        code = fixes.stack_code(stack["user_stack"], torch_version)
        module = None
        if code.file and code.function:
            module = named.module(code.file, code.function, code.line)
            code = dataclasses.replace(code, shown=function_label(code.function, module))
        key = (code.file, code.line, code.function, "graph_break", group["reason"])
        cause = causes.get(key)
        if cause is None:
            found_fixes = fixes.break_fixes(
                group["reason"], code, hints=tuple(group["torch_hints"]), url=group["torch_url"]
            )
            cause = causes[key] = _Cause(
                "graph_break", code, module, group["reason"], group["reason"], found_fixes
            )
        cause.graph_breaks += stack["count"]
        cause.break_reasons[group["reason"]] = None
        cause.compile_ids.update(dict.fromkeys(stack["compile_ids"]))
        found.append(cause)
    return found


def _limit_cause(
    limit: LimitRow, torch_version: str | None, causes: dict[_CauseKey, _Cause]
) -> None:
    code = fixes.Code(limit["function"], limit["file"], limit["line"], torch_version=torch_version)
    fix = fixes.limit_fix(code, limit=limit["limit"], recompiles=limit["recompiles"])
    subject = "recompile limit"
    what = f"reached the recompile limit ({limit['limit']} cache entries)"
    cause = _Cause("recompile_limit", code, None, subject, what, [fix])
    cause.recompiles = limit["recompiles"]
    causes[(code.file, code.line, code.function, "recompile_limit", subject)] = cause


def _row(cause: _Cause, seconds: dict[str, float]) -> CauseRow:
    return {
        "kind": cause.kind,
        "module": cause.module,
        "function": cause.code.function,
        "file": cause.code.file,
        "line": cause.code.line,
        "subject": cause.subject,
        "what": cause.what,
        "recompiles": cause.recompiles,
        "graph_breaks": cause.graph_breaks,
        "compile_seconds": round(float(sum(seconds.get(cid, 0.0) for cid in cause.compile_ids)), 6),
        "recompile_ids": list(cause.recompile_ids),
        "graph_break_reasons": list(cause.break_reasons),
        "fixes": cause.fixes,
    }


def _unique(found: object) -> list[Fix]:
    seen: dict[str, Fix] = {}
    for fix in found:  # type: ignore[attr-defined]
        seen.setdefault(fix["summary"], fix)
    return list(seen.values())
