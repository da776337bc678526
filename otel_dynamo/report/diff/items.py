"""The keyed sections of a diff (graph breaks, recompiles, failures) as the terminal and
the page show them: one wording for both."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from otel_dynamo.causes.guards import guard_text, plain_reason
from otel_dynamo.report.diff.compare import occurrences
from otel_dynamo.report.diff.schema import (
    BreakItem,
    Change,
    Counted,
    Diff,
    FailureItem,
    MinChangeData,
    RecompileItem,
    VariantChange,
    VariantChanges,
)
from otel_dynamo.report.render import format as _format
from otel_dynamo.report.summary import TIME_TOTALS
from otel_dynamo.report.summary.compiles import NO_REASON

ITEM_TITLES = {"graph_breaks": "graph breaks", "recompiles": "recompiles", "failures": "failures"}
PARTS = ("new", "gone", "changed")


@dataclasses.dataclass(frozen=True)
class ItemView:
    """One item: its counts, what it is, Dynamo's raw guard (recompiles whose plain
    reading differs from it) and where it was seen."""

    base_count: int
    new_count: int
    what: str
    guard: str | None
    where: str


@dataclasses.dataclass(frozen=True)
class PartView:
    """One part (new, gone or changed) of a keyed section."""

    section: str
    part: str
    items: list[ItemView]
    occurrences: int

    @property
    def title(self) -> str:
        return f"{self.part.capitalize()} {ITEM_TITLES[self.section]}"


def keyed_parts(diff: Diff) -> list[PartView]:
    """Every part of every keyed section, in the order both views show them."""
    found: list[PartView] = []
    breaks, recompiles, failures = diff["graph_breaks"], diff["recompiles"], diff["failures"]
    for part, items in zip(PARTS, (breaks["new"], breaks["gone"], breaks["changed"]), strict=True):
        found.append(_part("graph_breaks", part, items, [_break(item) for item in items]))
    changes = (recompiles["new"], recompiles["gone"], recompiles["changed"])
    for part, recompiled in zip(PARTS, changes, strict=True):
        views = [_recompile(item) for item in recompiled]
        found.append(_part("recompiles", part, recompiled, views))
    failed = (failures["new"], failures["gone"], failures["changed"])
    for part, failing in zip(PARTS, failed, strict=True):
        found.append(_part("failures", part, failing, [_failure(item) for item in failing]))
    return found


def _part(section: str, part: str, items: Sequence[Counted], views: list[ItemView]) -> PartView:
    return PartView(section, part, views, occurrences(items))


def _break(item: BreakItem) -> ItemView:
    where = _where(item["function"], item["file"], item["lines"])
    return ItemView(item["base_count"], item["new_count"], item["reason"] or NO_REASON, None, where)


def _recompile(item: RecompileItem) -> ItemView:
    raw = item["reason"]
    plain = plain_reason(raw) if raw else None
    guard = guard_text(raw) if raw and plain != raw else None
    where = _where(item["function"], item["file"], item["lines"])
    return ItemView(item["base_count"], item["new_count"], plain or NO_REASON, guard, where)


def _failure(item: FailureItem) -> ItemView:
    what = f"{item['error_type']}: {item['error_message'] or ''}"
    where = f"{item['stage']} stage" + (f" in {item['function']}" if item["function"] else "")
    return ItemView(item["base_count"], item["new_count"], what, None, where)


def _where(function: str, file: str, lines: list[int]) -> str:
    """ "decode at model.py:70,72": the function and the lines it was seen at."""
    at = f"{file}:{','.join(map(str, lines))}" if file and lines else file
    if at and function:
        return f"{function} at {at}"
    return at or function


VARIANT_TITLES = {
    "became_hot": "Variants that became hot",
    "became_cold": "Variants that became cold",
}


def variant_parts(changes: VariantChanges) -> list[tuple[str, list[VariantChange]]]:
    """The variants that became hot, then those that became cold, each with its title."""
    return [
        (VARIANT_TITLES["became_hot"], changes["became_hot"]),
        (VARIANT_TITLES["became_cold"], changes["became_cold"]),
    ]


def number_text(key: str, value: float) -> str:
    """A total's value: a duration for a time, else the number."""
    return _format.duration(value) if key in TIME_TOTALS else f"{value:g}"


UNDER_MIN_CHANGE = "~"
"""Marks a time change smaller than ``--min-change``: shown, not counted as a change."""


def threshold_text(threshold: MinChangeData) -> str:
    """What counts as a changed time, and what marks one that does not: said once, at the
    top of the terminal diff and of the page."""
    return (
        f"a compile time counts as changed past {threshold['relative']:.0%} and "
        f"{threshold['seconds']:g} s; {UNDER_MIN_CHANGE} marks a smaller change"
    )


def change_text(key: str, entry: Change) -> str:
    """ "+2 (+50%)", "-1.20 s (-30%)", "0": a change, relative where the base was not 0."""
    if entry["change"] == 0:
        return "0"
    shown = ("+" if entry["change"] > 0 else "-") + number_text(key, abs(entry["change"]))
    if entry["relative"] is not None:
        shown += f" ({entry['relative']:+.0%})"
    return shown
