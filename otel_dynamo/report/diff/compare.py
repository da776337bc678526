"""What changed between two runs: ``otel-dynamo diff BASE NEW`` over two report summaries.

Everything is compared on the report's summaries (``read_report``), so a diff reads files
the way the report does. Processes are matched by rank (else by service, then in order);
functions by name and file (not line: a function moved by an edit is the same function);
graph breaks by reason and the user's innermost frame, file and function (robust to line
shifts); recompiles by function and reason; failures by stage, function and error type.
Counts are exact; compile times change only past ``MinChange`` (a 3 % wobble is not news).
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import TypedDict, TypeVar, cast

from otel_dynamo.report.diff.schema import (
    BreakItem,
    Change,
    ComparedSettings,
    Counted,
    Diff,
    FailureItem,
    FunctionChange,
    ProcessChange,
    RecompileItem,
    Side,
    VariantChange,
    VariantChanges,
)
from otel_dynamo.report.render.format import user_location
from otel_dynamo.report.summary import (
    COUNT_TOTALS,
    HOT_VARIANT_SHARE,
    TIME_TOTALS,
    ProcessSection,
    ProcessTotals,
    Summary,
)
from otel_dynamo.report.summary.function_names import FunctionNames, function_label, short_path
from otel_dynamo.report.summary.phases import PHASE_CATEGORIES as PHASES

DIFF_SCHEMA_VERSION = 1
RELATIVE_DECIMALS = 6
"""Relative changes are rounded to this many decimals (a millionth of the base)."""
DEFAULT_MIN_CHANGE = "10%,0.5s"
MIN_CHANGE_FORMAT = "PERCENT%,SECONDSs"
"""How ``--min-change`` is written (``DEFAULT_MIN_CHANGE`` is one)."""


@dataclasses.dataclass(frozen=True)
class MinChange:
    """A time change is news when it is at least ``relative`` of the base AND ``seconds``."""

    relative: float = 0.10
    seconds: float = 0.5

    @classmethod
    def parse(cls, raw: str) -> MinChange:
        """``"10%,0.5s"``, ``"20%"``, ``"2s"``: either part may be left out (then 0)."""
        relative, seconds = 0.0, 0.0
        for part in (piece.strip() for piece in raw.split(",") if piece.strip()):
            try:
                if part.endswith("%"):
                    relative = float(part[:-1]) / 100
                elif part.endswith("s"):
                    seconds = float(part[:-1])
                else:
                    raise ValueError(part)
            except ValueError:
                raise ValueError(
                    f"{raw!r}: {part!r} is neither a percentage nor seconds; give "
                    f"{MIN_CHANGE_FORMAT} (e.g. {DEFAULT_MIN_CHANGE}), or one of them (20% or 2s)"
                ) from None
        if not (relative >= 0 and seconds >= 0):  # also nan
            raise ValueError(f"{raw!r}: thresholds are not negative")
        return cls(relative, seconds)

    def significant(self, base: float, new: float) -> bool:
        change = abs(new - base)
        return change >= self.seconds and change >= self.relative * abs(base) and change > 0


def diff_summaries(base: Summary, new: Summary, *, min_change: MinChange) -> Diff:
    """The diff of two report summaries (see docs/diff-json.md for every key)."""
    base_sections, new_sections = base["processes"], new["processes"]
    breaks = _compared(_breaks(base_sections), _breaks(new_sections))
    recompiles = _compared(_recompiles(base_sections), _recompiles(new_sections))
    failures = _compared(_failures(base_sections), _failures(new_sections))
    return {
        "schema_version": DIFF_SCHEMA_VERSION,
        "min_change": {"relative": min_change.relative, "seconds": min_change.seconds},
        "inputs": {"base": _inputs(base), "new": _inputs(new)},
        "totals": _totals(base["totals"], new["totals"], min_change),
        "processes": _processes(base_sections, new_sections, min_change),
        "graph_breaks": {"new": breaks[0], "gone": breaks[1], "changed": breaks[2]},
        "recompiles": {"new": recompiles[0], "gone": recompiles[1], "changed": recompiles[2]},
        "failures": {"new": failures[0], "gone": failures[1], "changed": failures[2]},
        "functions": _functions(base_sections, new_sections, min_change),
        "phases": _phases(base_sections, new_sections, min_change),
        "variants": _variant_changes(_variants(base_sections), _variants(new_sections)),
    }


def _inputs(summary: Summary) -> Side:
    return {
        "files": len(summary["inputs"]["files"]),
        "problems": len(summary["inputs"]["problems"]),
        "processes": summary["totals"]["processes"],
    }


def change(base: float, new: float) -> Change:
    """base, new, their difference and the difference relative to base (None from 0)."""
    difference = new - base
    relative = None if base == 0 else round(difference / base, RELATIVE_DECIMALS)
    if isinstance(base, float) or isinstance(new, float):
        difference, base, new = round(difference, 6), round(base, 6), round(new, 6)
    return {"base": base, "new": new, "change": difference, "relative": relative}


def _totals(
    base: ProcessTotals | None, new: ProcessTotals | None, min_change: MinChange | None = None
) -> dict[str, Change]:
    """Counts and times compared (a process only in one run counts 0 in the other); a
    time also says whether it moved past ``min_change``."""
    # every value of ProcessTotals is a number
    old = cast("Mapping[str, float]", base or {})
    now = cast("Mapping[str, float]", new or {})
    totals = {key: change(old.get(key, 0), now.get(key, 0)) for key in COUNT_TOTALS}
    for key in TIME_TOTALS:
        entry = change(old.get(key, 0.0), now.get(key, 0.0))
        threshold = min_change or MinChange()
        entry["significant"] = threshold.significant(entry["base"], entry["new"])
        totals[key] = entry
    return totals


def _process_key(section: ProcessSection) -> str:
    if section["rank"] is not None:
        return f"rank {section['rank']}"
    return str(section["service"] or section["process"])


def _keyed_sections(sections: Iterable[ProcessSection]) -> dict[str, ProcessSection]:
    """Sections by process key; a key seen again gets " #2", " #3" (matched in order)."""
    seen: Counter[str] = Counter()
    keyed = {}
    for section in sections:
        key = _process_key(section)
        seen[key] += 1
        keyed[key if seen[key] == 1 else f"{key} #{seen[key]}"] = section
    return keyed


def _processes(
    base: list[ProcessSection], new: list[ProcessSection], min_change: MinChange
) -> list[ProcessChange]:
    """Per matched process (and those only in one run): the totals compared."""
    base_keyed, new_keyed = _keyed_sections(base), _keyed_sections(new)
    rows: list[ProcessChange] = []
    for key in dict.fromkeys([*base_keyed, *new_keyed]):
        old, now = base_keyed.get(key), new_keyed.get(key)
        rows.append(
            {
                "process": key,
                "in": "both" if old and now else ("base" if old else "new"),
                "totals": _totals(
                    old["totals"] if old else None, now["totals"] if now else None, min_change
                ),
            }
        )
    return rows


_Item = TypeVar("_Item", BreakItem, RecompileItem, FailureItem)
_Key = tuple[str, ...]


def _breaks(sections: Iterable[ProcessSection]) -> dict[_Key, BreakItem]:
    """Graph breaks by (reason, file, function) of the innermost user frame: counts in
    ``new_count`` until compared, and where (file:line) they were seen."""
    found: dict[_Key, BreakItem] = {}
    for section in sections:
        function_names = FunctionNames(section["compiles"])
        for group in section["graph_breaks"]:
            for stack in group["stacks"]:
                file, function, line = user_location(function_names.stack(stack["user_stack"]))
                key = (group["reason"] or "", file, function)
                entry = found.setdefault(
                    key,
                    {
                        "reason": key[0],
                        "kind": group["kind"],
                        "file": file,
                        "function": function,
                        "lines": [],
                        "base_count": 0,
                        "new_count": 0,
                    },
                )
                entry["new_count"] += stack["count"]
                _add_line(entry, line)
    return found


def _add_line(entry: Counted, line: int | None) -> None:
    if line is not None and line not in entry["lines"]:
        entry["lines"].append(line)
        entry["lines"].sort()


def _recompiles(sections: Iterable[ProcessSection]) -> dict[_Key, RecompileItem]:
    found: dict[_Key, RecompileItem] = {}
    for section in sections:
        for row in section["recompiles"]:
            file = short_path(row["file"]) if row["file"] else ""
            key = (function_label(row["function"], row["module"]), file, row["reason"] or "")
            entry = found.setdefault(
                key,
                {
                    "function": key[0],
                    "file": file,
                    "reason": key[2],
                    "lines": [],
                    "base_count": 0,
                    "new_count": 0,
                },
            )
            entry["new_count"] += 1
            _add_line(entry, row["line"])
    return found


def _failures(sections: Iterable[ProcessSection]) -> dict[_Key, FailureItem]:
    found: dict[_Key, FailureItem] = {}
    for section in sections:
        function_names = FunctionNames(section["compiles"])
        for row in section["failures"]:
            function = row["function"] and function_names.of_compile(
                row["compile_id"], row["function"]
            )
            key = (
                row["stage"] or "",
                function or row["span"] or "",
                row["error_type"] or "",
            )
            entry = found.setdefault(
                key,
                {
                    "stage": key[0],
                    "function": key[1],
                    "error_type": key[2],
                    "error_message": row["error_message"],
                    "lines": [],
                    "base_count": 0,
                    "new_count": 0,
                },
            )
            entry["new_count"] += 1
    return found


def _compared(
    base: Mapping[_Key, _Item], new: Mapping[_Key, _Item]
) -> tuple[list[_Item], list[_Item], list[_Item]]:
    """Items only in NEW, only in BASE ("gone"), and in both with another count, each list
    most frequent first. Each run's items carry their count in ``new_count``; the item shown
    is the new run's where there is one."""
    appeared: list[_Item] = []
    gone: list[_Item] = []
    changed: list[_Item] = []
    for key in dict.fromkeys([*base, *new]):
        old, now = base.get(key), new.get(key)
        if now is None and old is not None:
            old["base_count"], old["new_count"] = old["new_count"], 0
            gone.append(old)
        elif now is not None and old is None:
            appeared.append(now)
        elif now is not None and old is not None and now["new_count"] != old["new_count"]:
            now["base_count"] = old["new_count"]
            changed.append(now)
    for items in (appeared, gone, changed):
        items.sort(key=lambda item: -max(item["base_count"], item["new_count"]))
    return appeared, gone, changed


def occurrences(items: Iterable[Counted]) -> int:
    """How often ``items`` (one part of a keyed section: new, gone or changed) occurred:
    each item's count in NEW, or in BASE for one that is gone. The number ``--fail-on``
    compares (new_graph_breaks, ...) and the diff's headings show."""
    return sum(item["new_count"] or item["base_count"] for item in items)


class _VariantCalls(TypedDict):
    function: str
    file: str
    reason: str | None
    calls: int
    share: float
    hot: bool


def _variants(sections: Iterable[ProcessSection]) -> dict[_Key, _VariantCalls]:
    """Calls per variant, summed over processes: a variant is its function, file and the
    guard that failed when it was compiled ("" for the first compile), as compile ids differ
    from run to run; its share is of all calls its function's variants served."""
    calls: dict[_Key, int] = defaultdict(int)
    for section in sections:
        for row in section["compiles"]:
            if row["calls"] is None:
                continue
            file = short_path(row["file"]) if row["file"] else ""
            reason = (row["recompile_reason"] or "") if row["is_recompile"] else ""
            calls[(function_label(row["function"], row["module"]), file, reason)] += row["calls"]
    by_function: dict[_Key, int] = defaultdict(int)
    for (function, file, _reason), count in calls.items():
        by_function[(function, file)] += count
    found: dict[_Key, _VariantCalls] = {}
    for key, count in calls.items():
        total = by_function[key[:2]]
        share = count / total if total else 0.0
        found[key] = {
            "function": key[0],
            "file": key[1],
            "reason": key[2] or None,
            "calls": count,
            "share": round(share, 6),
            "hot": share >= HOT_VARIANT_SHARE,
        }
    return found


def _variant_changes(
    base: Mapping[_Key, _VariantCalls], new: Mapping[_Key, _VariantCalls]
) -> VariantChanges:
    """Variants hot in NEW that were cold or absent in BASE ("became_hot"), and the other
    way round ("became_cold"), most calls first; ``compared`` is False (and both lists
    empty) when either side recorded no calls at all."""
    result: VariantChanges = {
        "compared": bool(base) and bool(new),
        "became_hot": [],
        "became_cold": [],
    }
    if not result["compared"]:
        return result
    for key in dict.fromkeys([*base, *new]):
        old, now = base.get(key), new.get(key)
        was_hot, is_hot = bool(old and old["hot"]), bool(now and now["hot"])
        shown = now or old
        if was_hot == is_hot or shown is None:
            continue
        item: VariantChange = {
            "function": shown["function"],
            "file": shown["file"],
            "reason": shown["reason"],
            "base_calls": old["calls"] if old else 0,
            "new_calls": now["calls"] if now else 0,
            "base_share": old["share"] if old else 0.0,
            "new_share": now["share"] if now else 0.0,
        }
        result["became_hot" if is_hot else "became_cold"].append(item)
    for part in (result["became_hot"], result["became_cold"]):
        part.sort(key=lambda item: -max(item["base_calls"], item["new_calls"]))
    return result


class _FunctionTotals(TypedDict):
    frame_compiles: int
    graphs: int
    ops: int
    guards: int
    compile_seconds: float
    compiled_with: list[str]


def compiled_another_way(settings: ComparedSettings) -> bool:
    """Whether both runs recorded how a function was compiled, and it differs."""
    return bool(settings["base"]) and bool(settings["new"]) and settings["base"] != settings["new"]


def _no_totals() -> _FunctionTotals:
    """A function's totals before any compile of it."""
    return {
        "frame_compiles": 0,
        "graphs": 0,
        "ops": 0,
        "guards": 0,
        "compile_seconds": 0.0,
        "compiled_with": [],
    }


def _by_function(sections: Iterable[ProcessSection]) -> dict[tuple[str, str], _FunctionTotals]:
    found: dict[tuple[str, str], _FunctionTotals] = {}
    for section in sections:
        for row in section["compiles"]:
            file = short_path(row["file"]) if row["file"] else ""
            function = function_label(row["function"], row["module"])
            entry = found.setdefault((function, file), _no_totals())
            how = row["compiled_with"]
            if how is not None and how not in entry["compiled_with"]:
                entry["compiled_with"].append(how)
            entry["frame_compiles"] += 1
            entry["graphs"] += row["graphs"]
            entry["ops"] += row["ops"]
            entry["guards"] += row["guards"] or 0
            entry["compile_seconds"] += row["compile_s"]
    return found


_NONE = _no_totals()


def _functions(
    base: list[ProcessSection], new: list[ProcessSection], min_change: MinChange
) -> list[FunctionChange]:
    """Functions whose counts changed, or whose compile time changed past the threshold;
    largest time change first."""
    old_rows, new_rows = _by_function(base), _by_function(new)
    rows: list[FunctionChange] = []
    for key in dict.fromkeys([*old_rows, *new_rows]):
        old, now = old_rows.get(key, _NONE), new_rows.get(key, _NONE)
        row: FunctionChange = {
            "function": key[0],
            "file": key[1],
            "frame_compiles": change(old["frame_compiles"], now["frame_compiles"]),
            "graphs": change(old["graphs"], now["graphs"]),
            "ops": change(old["ops"], now["ops"]),
            "guards": change(old["guards"], now["guards"]),
            "compile_seconds": change(old["compile_seconds"], now["compile_seconds"]),
            "time_significant": min_change.significant(
                round(old["compile_seconds"], 6), round(now["compile_seconds"], 6)
            ),
            "compiled_with": {"base": old["compiled_with"], "new": now["compiled_with"]},
        }
        counts = (row["frame_compiles"], row["graphs"], row["ops"], row["guards"])
        counted = any(entry["change"] for entry in counts)
        if counted or row["time_significant"] or compiled_another_way(row["compiled_with"]):
            rows.append(row)
    rows.sort(key=lambda row: -abs(row["compile_seconds"]["change"]))
    return rows


def _phase_totals(sections: Iterable[ProcessSection]) -> dict[str, float]:
    totals = dict.fromkeys(PHASES, 0.0)
    for section in sections:
        for row in section["compiles"]:
            for phase in PHASES:
                totals[phase] += row["phases"].get(phase) or 0.0
    return totals


def _phases(
    base: list[ProcessSection], new: list[ProcessSection], min_change: MinChange
) -> dict[str, Change]:
    old, now = _phase_totals(base), _phase_totals(new)
    phases: dict[str, Change] = {}
    for phase in PHASES:
        entry = change(old[phase], now[phase])
        entry["significant"] = min_change.significant(old[phase], now[phase])
        phases[phase] = entry
    return phases
